#!/bin/bash
# 2026-12-06, run k: the DNA character on real GPUs — the backends-equality case and the runtime
# DNA tests (as run j), then `mien bench --dynamics --workload dna` (RigLogic + morph + skin for
# every instance, no lift) on every backend and the criterion bench of RigLogic alone.
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/t && tar xJf .gpu/tests.tar.xz -C /tmp/t && tar xJf .gpu/bins.tar.xz -C /tmp/t
mkdir -p /work/shared/data && tar xJf .gpu/dnadata.tar.xz -C /work/shared/data
export MIEN_DATA=/work/shared/data
nvidia-smi --query-gpu=name,driver_version --format=csv; nproc
/tmp/t/backends a_dna_character_agrees_on_every_backend 2>&1 | tail -4
/tmp/t/dna 2>&1 | tail -4
mkdir -p $OUT/r
timeout 200 /tmp/t/mien bench --dynamics --workload dna --backend cpu,cpu-fast,vulkan,wgpu --batch 1,16,256 --frames 30 --out $OUT/r/dna > /dev/null 2>&1; cat $OUT/r/dna/table.txt | grep -v "^#"
timeout 120 /tmp/t/riglogic --bench --warm-up-time 1 --measurement-time 3 2>&1 | grep -E "^riglogic/|time:" > $OUT/r/riglogic.txt; cat $OUT/r/riglogic.txt
