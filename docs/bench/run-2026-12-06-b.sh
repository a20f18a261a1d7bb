#!/bin/bash
# 2026-12-06, part b: the surface lift against torch, the CPU against numpy (same binary as part a).
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
M=.gpu/mien; R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; uptime >> $R/gpu.txt; nproc >> $R/gpu.txt
[ -d /tmp/lx ] || { step export; timeout 60 $M bench --export /tmp/lx --data /tmp/d > $R/export.txt 2>&1; }
step gpu-lift; timeout 70 $M bench --backend vulkan,wgpu --workload W1 --batch 1,16,256,1024 --lift surface --frames 20 --quiet --data /tmp/d --out $R/gpu-lift > /dev/null 2>&1
step torch-lift; timeout 100 python3 benches/peers/torch_peer.py --export /tmp/lx --workloads W1-surface --batch 1,16,256 --repeat 20 --warmup 5 --json $R/torch-lift.json > $R/torch-lift.txt 2>&1
step cpu; uptime >> $R/log.txt; timeout 90 $M bench --backend cpu,cpu-fast --workload W1,W2,W3,W4,W5,W6 --batch 1,16 --lift off --quiet --data /tmp/d --out $R/cpu > /dev/null 2>&1
step numpy; timeout 90 python3 benches/peers/numpy_peer.py --export /tmp/lx --workloads W1,W2,W3,W4,W5,W6 --batch 1,16 --repeat 30 --warmup 5 --json $R/numpy.json > $R/numpy.txt 2>&1
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt; for t in gpu-lift cpu; do echo "## $t"; grep -v "^#" $R/$t/table.txt; done; tail -12 $R/torch-lift.txt; tail -30 $R/numpy.txt
