#!/usr/bin/env bash
# Issue 8, third session: Vulkan's wait — a blocking vkWaitForFences (mien) against polling the
# fences for up to 500 µs first (mien-spin), interleaved, with GPU clocks sampled.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data
nvidia-smi --query-gpu=timestamp,clocks.sm --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
S=$!
for r in block1:mien spin1:mien-spin block2:mien spin2:mien-spin; do
  n=${r%%:*}; b=${r##*:}
  echo "== $n $(date +%T)"; timeout 100 ./$b bench --backend vulkan --batch 1,256 --lift off --frames 30 --quiet --out "$OUT/$n" 2>&1 | tail -1
done
kill $S
