#!/usr/bin/env python3
"""Markdown tables from one benchmark run: mien's `bench.json` files against the peers' JSON.

Usage:
  compare.py gpu  MIEN_BENCH_JSON TORCH_JSON [--base BASE_BENCH_JSON]
  compare.py cpu  MIEN_BENCH_JSON NUMPY_JSON
  compare.py lift MIEN_BENCH_JSON TORCH_LIFT_JSON

mien's figures: `us_per_frame` (latency: submit -> ready, median), `in_flight_us_per_frame`
(throughput with frames in flight), `host_us_per_frame`, and the device timestamps `gpu_ms`
(morph + skin; with the lift when on). The peers': per variant the median wall time of a frame
launched and synchronised (`wall_us.median`, torch) or the CPU time (`us_per_frame`, numpy); the
best variant per workload and batch is the one compared. Ratios < 1 mean mien is faster.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def rows(d):
    return d["rows"] if "rows" in d else d["results"]


def best(peer, workload, batch, key):
    cands = [r for r in rows(peer) if r["workload"] == workload and r["batch"] == batch and r.get("agrees", True)]
    if not cands:
        return None
    return min(cands, key=key)


def torch_wall(r):
    return r["wall_us"]["median"] if "wall_us" in r else r["us_per_frame"]


def gpu_us(r):
    g = r.get("gpu_ms") or {}
    vals = [v for v in g.values() if v is not None]
    return 1000.0 * sum(vals) if vals else None


def fmt(x, nd=0):
    if x is None:
        return "—"
    return f"{x:,.{nd}f}"


def gpu(mien, torch, base=None):
    m = {(r["backend"], r["workload"], r["batch"]): r for r in rows(load(mien)) if r.get("status") == "ok"}
    t = load(torch)
    b = {}
    if base:
        b = {(r["backend"], r["workload"], r["batch"]): r for r in rows(load(base)) if r.get("status") == "ok"}
    print("| workload | batch | Vulkan latency / in flight | host | GPU | wgpu latency / in flight | torch best (variant) wall / CUDA | in flight ÷ torch wall | latency ÷ torch wall |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(w, n) for (_, w, n) in m}, key=lambda k: (k[0], k[1]))
    for w, n in keys:
        v = m.get(("vulkan", w, n))
        g = m.get(("wgpu", w, n))
        tb = best(t, w, n, torch_wall)
        tw = torch_wall(tb) if tb else None
        cells = [w, str(n)]
        cells.append(f"{fmt(v['us_per_frame'])} / {fmt(v['in_flight_us_per_frame'])}" if v else "—")
        cells.append(fmt(v["host_us_per_frame"]) if v else "—")
        cells.append(fmt(gpu_us(v)) if v else "—")
        cells.append(f"{fmt(g['us_per_frame'])} / {fmt(g['in_flight_us_per_frame'])}" if g else "—")
        cells.append(f"{fmt(tw)} ({tb['variant']}) / {fmt(tb['us_per_frame'])}" if tb else "—")
        cells.append(f"{v['in_flight_us_per_frame'] / tw:.2f}×" if v and tw else "—")
        cells.append(f"{v['us_per_frame'] / tw:.2f}×" if v and tw else "—")
        print("| " + " | ".join(cells) + " |")
    if b:
        print()
        print("| backend | workload | batch | before: latency / in flight / GPU | after: latency / in flight / GPU | GPU after ÷ before |")
        print("|---|---|---|---|---|---|")
        for k in sorted(b, key=lambda k: (k[0], k[1], k[2])):
            if k not in m:
                continue
            x, y = b[k], m[k]
            gx, gy = gpu_us(x), gpu_us(y)
            ratio = f"{gy / gx:.2f}×" if gx and gy else "—"
            print(f"| {k[0]} | {k[1]} | {k[2]} | {fmt(x['us_per_frame'])} / {fmt(x['in_flight_us_per_frame'])} / {fmt(gx)} "
                  f"| {fmt(y['us_per_frame'])} / {fmt(y['in_flight_us_per_frame'])} / {fmt(gy)} | {ratio} |")


def cpu(mien, numpy):
    m = {(r["backend"], r["workload"], r["batch"]): r for r in rows(load(mien)) if r.get("status") == "ok"}
    p = load(numpy)
    print("| workload | batch | cpu (exact) | cpu-fast | numpy best (variant) | cpu-fast ÷ numpy |")
    print("|---|---|---|---|---|---|")
    keys = sorted({(w, n) for (_, w, n) in m})
    for w, n in keys:
        e = m.get(("cpu", w, n))
        f = m.get(("cpu-fast", w, n))
        nb = best(p, w, n, lambda r: r["us_per_frame"])
        cells = [w, str(n), fmt(e["us_per_frame"]) if e else "—", fmt(f["us_per_frame"]) if f else "—"]
        cells.append(f"{fmt(nb['us_per_frame'])} ({nb['variant']})" if nb else "—")
        cells.append(f"{f['us_per_frame'] / nb['us_per_frame']:.2f}×" if f and nb else "—")
        print("| " + " | ".join(cells) + " |")


def lift(mien, torch):
    m = {(r["backend"], r["batch"]): r for r in rows(load(mien)) if r.get("status") == "ok"}
    t = load(torch)
    print("| batch | Vulkan latency / in flight | wgpu latency / in flight | torch best (variant) wall / CUDA | Vulkan latency ÷ torch wall |")
    print("|---|---|---|---|---|")
    for n in sorted({n for (_, n) in m}):
        v, g = m.get(("vulkan", n)), m.get(("wgpu", n))
        tb = best(t, "W1-surface", n, torch_wall)
        tw = torch_wall(tb) if tb else None
        cells = [str(n)]
        cells.append(f"{fmt(v['us_per_frame'])} / {fmt(v['in_flight_us_per_frame'])}" if v else "—")
        cells.append(f"{fmt(g['us_per_frame'])} / {fmt(g['in_flight_us_per_frame'])}" if g else "—")
        cells.append(f"{fmt(tw)} ({tb['variant']}) / {fmt(tb['us_per_frame'])}" if tb else "—")
        cells.append(f"{v['us_per_frame'] / tw:.3f}×" if v and tw else "—")
        print("| " + " | ".join(cells) + " |")


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    kind = argv[0]
    if kind == "gpu":
        base = argv[argv.index("--base") + 1] if "--base" in argv else None
        gpu(argv[1], argv[2], base)
    elif kind == "cpu":
        cpu(argv[1], argv[2])
    elif kind == "lift":
        lift(argv[1], argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
