"""Scaling and fault figures of `python -m mien.ray_bake` on a local Ray (docs/PERFORMANCE.md,
"Ray batch bake").

    python benches/ray/scaling.py MANIFEST --workers 1 2 --fault-workers 2 --out /tmp/scale --json scale.json

For each worker count W: a fresh output folder, `python -m mien.ray_bake MANIFEST --concurrency W`,
and from its summary the wall time (from the dataset's creation to the last status row: Ray's own
start is not counted, the actors' start and character loads are), takes per second and the
speed-up over the first count. Then the fault run: the same manifest on `--fault-workers` actors,
one actor process killed (SIGKILL) once a fifth of the outputs exist; the summary must show every
row done exactly once (no duplicated or missing report, every output present and verified, no
temporary file left).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time


def actor_pids():
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if cmd.startswith("ray::MapWorker") or (cmd.startswith("ray::") and "BakeActor" in cmd):
            pids.append(int(d))
    return sorted(pids)


def bake(manifest, out, workers, batch, extra=()):
    env = dict(os.environ, RAY_DISABLE_USAGE_STATS="1")
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "mien.ray_bake", manifest, "--out", out, "--concurrency", str(workers), "--batch-size", str(batch), *extra],
        capture_output=True,
        text=True,
        env=env,
    )
    total = time.perf_counter() - t
    summary = json.load(open(os.path.join(out, "ray_bake_summary.json")))
    return p.returncode, total, summary, p.stdout[-2000:] + p.stderr[-2000:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--fault-workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--out", required=True)
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    rows = sum(1 for _ in open(a.manifest)) - 1
    result = {"rows": rows, "batch_size": a.batch_size, "cpus": os.cpu_count(), "runs": []}
    base = None
    for w in a.workers:
        out = os.path.join(a.out, f"w{w}")
        subprocess.run(["rm", "-rf", out])
        code, total, s, tail = bake(a.manifest, out, w, a.batch_size)
        tps = s["done"] / s["wall_s"]
        base = base or tps
        run = {
            "workers": w,
            "exit": code,
            "done": s["done"],
            "failed": s["failed"],
            "wall_s": round(s["wall_s"], 2),
            "process_s": round(total, 2),
            "takes_per_s": round(tps, 1),
            "speedup": round(tps / base, 2),
            "per_worker": round(tps / base / w, 2),
            "bake_s_sum": round(sum(r["seconds"] for r in s["per_row"]), 2),
        }
        result["runs"].append(run)
        print(json.dumps(run), flush=True)
        if code != 0:
            print(tail, file=sys.stderr)
    # The fault run.
    out = os.path.join(a.out, "fault")
    subprocess.run(["rm", "-rf", out])
    killed = []

    def killer():
        deadline = time.time() + 600
        while time.time() < deadline:
            n = len([f for f in os.listdir(out) if f.endswith(".glb")]) if os.path.isdir(out) else 0
            pids = actor_pids()
            if n >= rows // 5 and pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append({"pid": pids[0], "outputs_before": n, "actors_seen": len(pids)})
                return
            time.sleep(0.02)

    th = threading.Thread(target=killer)
    th.start()
    code, total, s, tail = bake(a.manifest, out, a.fault_workers, a.batch_size)
    th.join()
    from mien import verify

    verified = sum(1 for r in s["per_row"] if verify(os.path.join(out, r["out"]))["takes"])
    temps = [f for f in os.listdir(out) if f.endswith(".tmp")]
    fault = {
        "workers": a.fault_workers,
        "killed": killed,
        "exit": code,
        "rows": s["rows"],
        "done": s["done"],
        "skipped_after_retry": s["skipped"],
        "failed": s["failed"],
        "missing_reports": s["missing_reports"],
        "duplicated_reports": s["duplicated_reports"],
        "absent_outputs": s["absent_outputs"],
        "outputs_verified": verified,
        "temporaries_left": len(temps),
        "pids_reporting": len({r["pid"] for r in s["per_row"]}),
        "wall_s": round(s["wall_s"], 2),
    }
    result["fault"] = fault
    print(json.dumps(fault), flush=True)
    if code != 0:
        print(tail, file=sys.stderr)
    json.dump(result, open(a.json, "w"), indent=1)
    ok = killed and code == 0 and s["done"] + s["skipped"] == rows and not s["duplicated_reports"] and not s["missing_reports"] and verified == rows and not temps
    print("fault run:", "every row done exactly once" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
