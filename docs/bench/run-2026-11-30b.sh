#!/usr/bin/env bash
# Issue 8, second session, final figures: GPU table, CPU table, W1 at large batches, then the peers
# on mien's exported data and the plots — one machine session.
cd "$(dirname "$0")"
mkdir -p data && tar -C data -xJf ict.tar.xz
export MIEN_DATA=$PWD/data MIEN_FONT=$PWD/DejaVuSans.ttf
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
lscpu | grep -E "Model name|^CPU\(s\)" >> "$OUT/gpu.txt"
echo "== gpu"; timeout 150 ./mien bench --backend wgpu,vulkan --batch 1,16,256 --lift both --frames 30 --quiet --out "$OUT/gpu" 2>&1 | tail -3
echo "== cpu"; timeout 150 ./mien bench --backend cpu --batch 1,16,256 --lift both --frames 10 --quiet --out "$OUT/cpu" 2>&1 | tail -3
echo "== w1 big"; timeout 120 ./mien bench --backend vulkan,wgpu --workload W1 --batch 1024,4096 --lift on --frames 10 --quiet --out "$OUT/w1big" 2>&1 | tail -6
echo "== export"; timeout 60 ./mien bench --export /tmp/exp --quiet 2>&1 | tail -3
echo "== torch"; timeout 150 python3 ../benches/peers/torch_peer.py --export /tmp/exp --batch 1,16,256 --repeat 20 --json "$OUT/torch.json" 2>&1 | tail -40
echo "== numpy"; timeout 120 python3 ../benches/peers/numpy_peer.py --export /tmp/exp --batch 1,16 --repeat 10 --json "$OUT/numpy.json" 2>&1 | tail -30
echo "== plots"; timeout 100 ./mien bench --plot "$OUT/plots" --quiet 2>&1 | tail -3
