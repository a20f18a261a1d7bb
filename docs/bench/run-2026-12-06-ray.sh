#!/usr/bin/env bash
# The Ray batch bake's scaling and fault figures on the GPU host (docs/PERFORMANCE.md, "Ray batch
# bake"): 1,000 generated takes on a local Ray with 1, 4, 8 and 16 actors, a fault run (an actor
# killed mid-run), and a run with GPU actors. Carry .gpu/ (mien312.tar.xz: the release wheel's
# contents, stripped; ray312.tar.xz: Ray 2.60.0 for CPython 3.12 without its Java jars; deps/: the
# pure-Python wheels Ray needs that the image lacks; data/: Face Cap and the aligner files).
set -euo pipefail
SITE=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
tar -C "$SITE" -xJf .gpu/ray312.tar.xz
tar -C "$SITE" -xJf .gpu/mien312.tar.xz
python3 -m pip install -q --no-deps --no-index .gpu/deps/*.whl
python3 -c "import ray, mien, sys; print('ray', ray.__version__, 'mien', mien.__version__, sys.version.split()[0])"
lscpu | grep -E "Model name|^CPU\(s\)" || true
python3 benches/ray/generate_takes.py --data .gpu/data --n 1000 --out /tmp/t1000
python3 benches/ray/scaling.py /tmp/t1000/manifest.csv --workers 1 4 8 16 --fault-workers 8 \
  --out /tmp/scale --json "$OUT/scale.json"
# GPU actors: each of 4 actors reserves a quarter of the GPU (the bake samples on the CPU).
python3 -m mien.ray_bake /tmp/t1000/manifest.csv --out /tmp/gpu --concurrency 4 --num-gpus 0.25 2>"$OUT/gpu.log" | tail -1
python3 -c "import json; s=json.load(open('/tmp/gpu/ray_bake_summary.json')); print({k: s[k] for k in ('rows','done','failed','actors','wall_s','takes_per_s')})"
