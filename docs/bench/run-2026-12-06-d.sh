#!/bin/bash
# 2026-12-06, run d: the tensor-core blend register-blocked (64 instances × 64 columns per
# subgroup, 4×4 accumulators) — gpu/tests/gnm_coop.rs on the device (.gpu/gnm_coop), then
# `mien bench` W3/W4 at batch 16 and 256 for .gpu/mien (new, with
# `blend_posed`: blend and finish in one pass, deltas in workgroup memory), .gpu/mien-two (the
# blocked blend then finish) and .gpu/mien-base (before), in one run. (A first run also timed a
# finish writing positions only over zeroed normals: slower — partial writes.)
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
tar xJf .gpu/bins.tar.xz -C .gpu; mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; nproc >> $R/gpu.txt
step test; timeout 120 .gpu/gnm_coop --test-threads 1 > $R/gnm_coop.txt 2>&1; echo "rc $?" >> $R/gnm_coop.txt
i=0; for m in mien mien-two mien-base mien; do i=$((i+1))
  [ -x .gpu/$m ] || continue
  step bench-$m; timeout 100 .gpu/$m bench --backend vulkan,wgpu --workload W3,W4 --batch 16,256 --lift off --quiet --data /tmp/d --out $R/gnm-$i-$m > /dev/null 2>&1
done
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt; tail -5 $R/gnm_coop.txt
for f in $R/gnm-*/bench.json; do echo $f; python3 -c "
import json,sys
d=json.load(open('$f'))
for r in d['rows']:
    print(r['backend'],r['workload'],r['batch'],'infl',round(r['in_flight_us_per_frame']),'gpu',{k:round(v*1000) for k,v in r['gpu_ms'].items() if v})
"; done
