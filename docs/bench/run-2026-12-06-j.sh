#!/bin/bash
# 2026-12-06, run j: the DNA character (issue 29) on real GPUs — runtime/tests/backends.rs's
# a_dna_character_agrees_on_every_backend (CPU, wgpu, Vulkan: the Live Link take, the rig space,
# speech) and runtime/tests/dna.rs, release test binaries built on the dev machine.
set -u
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/t && tar xJf .gpu/tests.tar.xz -C /tmp/t
# The tests read ../shared/data beside the crate they were built from (/work/main/runtime).
mkdir -p /work/shared/data && tar xJf .gpu/dnadata.tar.xz -C /work/shared/data
nvidia-smi --query-gpu=name,driver_version --format=csv
/tmp/t/backends a_dna_character_agrees_on_every_backend --nocapture 2>&1 | tail -15
/tmp/t/dna 2>&1 | tail -6
