#!/bin/bash
# GPU session: mien GPU table (W1–W6 + body/sintel), lift rows, torch peers (main + surface lift).
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
M=.gpu/mien
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee $OUT/gpu.txt
uptime | tee -a $OUT/gpu.txt
date -u
$M bench --export /tmp/lx --data /tmp/d > $OUT/export.txt 2>&1; tail -3 $OUT/export.txt
date -u
timeout 120 $M bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $OUT/gpu-off 2>&1 | tail -40
date -u
timeout 150 python3 benches/peers/torch_peer.py --export /tmp/lx --batch 1,16,256 --repeat 30 --warmup 5 --json $OUT/torch.json > $OUT/torch.txt 2>&1; tail -45 $OUT/torch.txt
date -u
timeout 90 $M bench --backend vulkan,wgpu --workload W1 --batch 1,16,256,1024,4096 --lift surface --frames 20 --quiet --data /tmp/d --out $OUT/gpu-lift 2>&1 | tail -14
date -u
timeout 60 python3 benches/peers/torch_peer.py --export /tmp/lx --workloads W1-surface --batch 1,16,256,1024 --repeat 30 --warmup 5 --json $OUT/torch-lift.json > $OUT/torch-lift.txt 2>&1; tail -14 $OUT/torch-lift.txt
date -u
timeout 150 $M bench --backend vulkan,wgpu --workload body,sintel --batch 1,16,256 --quiet --data /tmp/d --out $OUT/gpu-dyn 2>&1 | tail -30
date -u
