#!/usr/bin/env bash
# Issue 8, third session, final figures (part B): the peers on mien's exported data, then the plots.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data MIEN_FONT=$PWD/DejaVuSans.ttf
R=/tmp/res; mkdir -p $R
echo "== export"; timeout 60 ./mien bench --export /tmp/exp --quiet 2>&1 | tail -3
echo "== torch"; timeout 180 python3 ../benches/peers/torch_peer.py --export /tmp/exp --batch 1,16,256 --repeat 20 --json "$R/torch.json" 2>&1 | tail -40
echo "== numpy"; timeout 120 python3 ../benches/peers/numpy_peer.py --export /tmp/exp --batch 1,16 --repeat 10 --json "$R/numpy.json" 2>&1 | tail -30
echo "== plots"; timeout 150 ./mien bench --plot "$R/plots" --quiet 2>&1 | tail -3
tar -C /tmp -cf "$OUT/res-b.tar" res
