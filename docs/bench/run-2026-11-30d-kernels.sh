#!/usr/bin/env bash
# Issue 8, third session: the active-target morph kernel (mien) against the row-walk kernel (mien-old,
# HEAD 5a4cc09 + the Morton-ordered W5), interleaved new, old, new in one machine session, GPU only.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data MIEN_FONT=$PWD/DejaVuSans.ttf
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
for r in new1:mien old:mien-old new2:mien; do
  n=${r%%:*}; b=${r##*:}
  echo "== $n"; timeout 170 ./$b bench --backend wgpu,vulkan --workload W1,W2,W5,W6 --batch 1,16,256 --lift off --frames 30 --quiet --out "$OUT/$n" 2>&1 | tail -2
done
