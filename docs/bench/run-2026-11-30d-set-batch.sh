#!/usr/bin/env bash
# Issue 8, third session: set_batch in one rayon pass per block of 8 (mien) against three passes
# (mien-old), wgpu and Vulkan, W1/W2/W5 at batches 16 and 256, lift off, interleaved.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data
for r in new1:mien old:mien-old new2:mien; do
  n=${r%%:*}; b=${r##*:}
  echo "== $n"; timeout 100 ./$b bench --backend wgpu,vulkan --workload W1,W2,W5 --batch 16,256 --lift off --frames 50 --quiet --out "$OUT/$n" 2>&1 | tail -1
done
