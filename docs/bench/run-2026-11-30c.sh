#!/usr/bin/env bash
# CPU rig backend with dense morph blocks: mien's CPU rows and numpy on the same exports.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data
timeout 150 ./mien bench --backend cpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16 --lift off --frames 20 --quiet --out "$OUT/cpu" 2>&1 | tail -14
timeout 60 ./mien bench --export /tmp/exp8 --workload W1,W2,W6 --quiet 2>&1 | tail -3
timeout 150 python3 ../benches/peers/numpy_peer.py --export /tmp/exp8 --batch 1,16 --repeat 10 --json "$OUT/numpy.json" 2>&1 | tail -14
rm -f "$OUT/cpu/bench.json"
