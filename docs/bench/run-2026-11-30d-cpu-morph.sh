#!/usr/bin/env bash
# Issue 8, third session: the CPU rig's dense blocks register-blocked per component (mien) against
# the block loop (mien-old), W1/W2 at batches 1 and 16, interleaved, then numpy on W1/W2.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data
for r in new1:mien old:mien-old new2:mien; do
  n=${r%%:*}; b=${r##*:}
  echo "== $n"; timeout 100 ./$b bench --backend cpu --workload W1,W2 --batch 1,16 --lift off --frames 20 --quiet --out "$OUT/$n" 2>&1 | tail -1
done
timeout 60 ./mien bench --export /tmp/exp19 --workload W1,W2 --quiet 2>&1 | tail -1
timeout 120 python3 ../benches/peers/numpy_peer.py --export /tmp/exp19 --batch 1,16 --repeat 10 --json "$OUT/numpy.json" 2>&1 | tail -10
