#!/bin/bash
# 2026-12-06, run c: the host's set path cut (integer-key morph limiter, serial checks for small
# palettes, one rayon pass for linear heads) — the GPU table of .gpu/mien and, in the same run, of
# .gpu/mien-base (before the fused pass and these cuts), torch, then the set_batch example before
# (.gpu/set_batch_before, built at b96d9ea) and after the cuts, on 1 and 16 threads.
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
M=.gpu/mien; B=.gpu/mien-base; R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; uptime >> $R/gpu.txt; nproc >> $R/gpu.txt; lscpu | grep -i "model name" >> $R/gpu.txt
step export; timeout 60 $M bench --export /tmp/lx --data /tmp/d > $R/export.txt 2>&1
step gpu-off; timeout 110 $M bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $R/gpu-off > /dev/null 2>&1
step gpu-off-base; timeout 110 $B bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $R/gpu-off-base > /dev/null 2>&1
step torch; timeout 110 python3 benches/peers/torch_peer.py --export /tmp/lx --workloads W1,W2,W3,W4,W5,W6 --batch 1,16,256 --repeat 20 --warmup 5 --json $R/torch.json > $R/torch.txt 2>&1
step set-batch; for t in 1 16; do for b in set_batch_before set_batch; do echo "$b threads $t"; RAYON_NUM_THREADS=$t timeout 60 .gpu/$b; done; done > $R/set_batch.txt 2>&1
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt $R/gpu.txt $R/set_batch.txt
