#!/bin/bash
# 2026-12-06, run f: the landed tensor-core blend (`blend`: 4×4 register blocks with no branch in
# the loop; `blend_one` for batches up to 16) — its test on the device with the measured error
# ratios, the whole GPU table of .gpu/mien and torch's peer, then W3/W4 of .gpu/mien-base (before
# run d) and .gpu/mien alternated twice, in one run.
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
tar xJf .gpu/bins.tar.xz -C .gpu; mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
M=.gpu/mien; B=.gpu/mien-base; R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; nproc >> $R/gpu.txt
step test; timeout 100 .gpu/gnm_coop --test-threads 1 --nocapture > $R/gnm_coop.txt 2>&1; echo "rc $?" >> $R/gnm_coop.txt
step export; timeout 60 $M bench --export /tmp/lx --data /tmp/d > $R/export.txt 2>&1
step gpu-off; timeout 110 $M bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $R/gpu-off > /dev/null 2>&1
step torch; timeout 110 python3 benches/peers/torch_peer.py --export /tmp/lx --workloads W1,W2,W3,W4,W5,W6 --batch 1,16,256 --repeat 20 --warmup 5 --json $R/torch.json > $R/torch.txt 2>&1
for i in 1 2; do for m in mien-base mien; do
  step $m-$i; timeout 60 .gpu/$m bench --backend vulkan,wgpu --workload W3,W4 --batch 16,64,256 --lift off --quiet --data /tmp/d --out $R/gnm-$m-$i > /dev/null 2>&1
done; done
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt $R/gpu.txt; grep -E "tensor cores|test result|rc " $R/gnm_coop.txt
for f in $R/gnm-*/bench.json; do echo $f; python3 -c "
import json
d=json.load(open('$f'))
for r in d['rows']:
    print(r['backend'],r['workload'],r['batch'],'infl',round(r['in_flight_us_per_frame']),'gpu',{k:round(v*1000) for k,v in r['gpu_ms'].items() if v})
"; done
