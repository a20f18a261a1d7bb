#!/usr/bin/env bash
# Issue 8, third session, final figures (part A): GPU table, CPU table, W1 at large batches.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data MIEN_FONT=$PWD/DejaVuSans.ttf
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv > "$R/gpu.txt" 2>&1
lscpu | grep -E "Model name|^CPU\(s\)" >> "$R/gpu.txt"
echo "== gpu"; timeout 200 ./mien bench --backend wgpu,vulkan --batch 1,16,256 --lift both --frames 30 --quiet --out "$R/gpu" 2>&1 | tail -2
echo "== cpu"; timeout 200 ./mien bench --backend cpu --batch 1,16,256 --lift both --frames 10 --quiet --out "$R/cpu" 2>&1 | tail -2
echo "== w1 big"; timeout 150 ./mien bench --backend vulkan,wgpu --workload W1 --batch 1024,4096,10000 --lift on --frames 10 --quiet --out "$R/w1big" 2>&1 | tail -5
tar -C /tmp -cf "$OUT/res-a.tar" res
