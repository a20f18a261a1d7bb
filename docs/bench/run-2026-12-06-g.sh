#!/bin/bash
# 2026-12-06, run g: the morph walk applying four staged slots per step with their deltas loaded
# together — gpu/tests/rig_equals_cpu.rs and rig_batch.rs on the device (bit-equality with the CPU
# reference), `mien bench` W1/W2/W5/W6 at batch 1, 16 and 256 for .gpu/mien-base (before, 5faa354+)
# and .gpu/mien alternated twice, then the charts (`mien bench --plot`) of .gpu/mien.
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
tar xJf .gpu/bins.tar.xz -C .gpu; mkdir -p /tmp/d && tar xJf .gpu/data.tar.xz -C /tmp/d; export MIEN_DATA=/tmp/d
export MIEN_FONT=$PWD/.gpu/DejaVuSans.ttf
R=/tmp/r; mkdir -p $R
step() { tar czf $OUT/r.tgz -C /tmp r 2>/dev/null; echo "== $(date -u +%T) $*" | tee -a $R/log.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; nproc >> $R/gpu.txt
step tests; for t in rig_equals_cpu rig_batch; do timeout 100 .gpu/$t --test-threads 2 > $R/$t.txt 2>&1; echo "rc $?" >> $R/$t.txt; done
for i in 1 2; do for m in mien-base mien; do
  step $m-$i; timeout 60 .gpu/$m bench --backend vulkan,wgpu --workload W1,W2,W5,W6 --batch 1,16,256 --lift off --quiet --data /tmp/d --out $R/rig-$m-$i > /dev/null 2>&1
done; done
step plots; timeout 300 .gpu/mien bench --plot $R/plots --data /tmp/d > $R/plots.txt 2>&1; echo "rc $?" >> $R/plots.txt
step done
tar czf $OUT/r.tgz -C /tmp r
cat $R/log.txt $R/gpu.txt; grep -E "test result|rc |panicked" $R/rig_*.txt; tail -3 $R/plots.txt
for f in $R/rig-*/bench.json; do echo $f; python3 -c "
import json
d=json.load(open('$f'))
for r in d['rows']:
    print(r['backend'],r['workload'],r['batch'],'infl',round(r['in_flight_us_per_frame']),'gpu',{k:round(v*1000) for k,v in r['gpu_ms'].items() if v})
"; done
