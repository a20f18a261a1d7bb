#!/bin/bash
# 2026-12-06, run i: the rig table against torch in one machine session (host split as in run h),
# then the table again on 4 rayon threads (run h: W1/W6 b256 set 78–88 µs on 4 threads, 87–103 on 16).
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
tar xJf .gpu/bins.tar.xz -C .gpu; mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
M=.gpu/mien; R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; uptime >> $R/gpu.txt; nproc >> $R/gpu.txt
step export; timeout 60 $M bench --export /tmp/lx --data /tmp/d > $R/export.txt 2>&1
step gpu; timeout 110 $M bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $R/gpu > /dev/null 2>&1
step torch; timeout 110 python3 benches/peers/torch_peer.py --export /tmp/lx --workloads W1,W2,W3,W4,W5,W6 --batch 1,16,256 --repeat 20 --warmup 5 --json $R/torch.json > $R/torch.txt 2>&1
step gpu-t4; RAYON_NUM_THREADS=4 timeout 110 $M bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $R/gpu-t4 > /dev/null 2>&1
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt
for t in gpu gpu-t4; do echo "## $t"; python3 benches/peers/compare.py gpu $R/$t/bench.json $R/torch.json 2>&1 | tail -40; done
