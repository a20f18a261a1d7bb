#!/bin/bash
# 2026-12-06, run h: where the host's time per frame goes at batch 256 — `mien bench` with the
# host split into begin / set / encode / submit, W1–W6 at batch 1, 16 and 256 on Vulkan and wgpu,
# W1 and W6 again on 1, 4 and 16 rayon threads; then the charts (`mien bench --plot`).
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
tar xJf .gpu/bins.tar.xz -C .gpu; mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
export MIEN_FONT=$PWD/.gpu/DejaVuSans.ttf
R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; nproc >> $R/gpu.txt; lscpu | grep -i "model name" >> $R/gpu.txt
step table; timeout 120 .gpu/mien bench --backend vulkan,wgpu --workload W1,W2,W3,W4,W5,W6 --batch 1,16,256 --lift off --quiet --out $R/table > /dev/null 2>&1
for t in 1 4 16; do
  step threads-$t; RAYON_NUM_THREADS=$t timeout 60 .gpu/mien bench --backend vulkan --workload W1,W6 --batch 256 --lift off --quiet --out $R/threads-$t > /dev/null 2>&1
done
step plots; timeout 330 .gpu/mien bench --plot $R/plots > $R/plots.txt 2>&1; echo "rc $?" >> $R/plots.txt
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt $R/gpu.txt; tail -3 $R/plots.txt
for f in $R/table/bench.json $R/threads-*/bench.json; do echo $f; python3 -c "
import json
d=json.load(open('$f'))
for r in d['rows']:
    g=r.get('gpu_ms') or {}
    print(r['backend'],r['workload'],r['batch'],'infl',round(r['in_flight_us_per_frame'] or 0),'host',[round(r.get(k) or 0) for k in ('host_begin_us','host_set_us','host_encode_us','host_submit_us')],'gpu',{k:round(v*1000) for k,v in g.items() if v})
"; done
