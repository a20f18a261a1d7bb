"""What both peer scripts share: command line, agreement check, timing summary, table, JSON.

A peer module gives ``NAME``, ``variants(m, arrays, args)`` (a list of
:class:`Variant`), ``timer(fn, warmup, repeat)`` (returns per-frame times in
µs, plus extra per-run facts) and ``machine(args)`` (a dict). :func:`run`
walks workloads × batch sizes × variants: for each it first computes the
frame once and compares it to mien's ``expected`` (tiled to the batch), and
only a variant that agrees is timed.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import manifest  # noqa: E402


class Variant:
    """One way of computing a workload's frame.

    ``prepare(rows)`` sets up a batch made of the exported rows ``rows`` and
    returns a :class:`Case`.
    """

    def __init__(self, name, prepare, note=""):
        self.name = name
        self.prepare = prepare
        self.note = note


class Case:
    """A prepared batch: ``step()`` computes one frame into preallocated output (the timed
    work); ``result()`` returns that output as a float64 numpy array (B,V,3) — for a lift
    (B,N,9), each gaussian's centre then its packed covariance —; ``bound(got)`` returns the
    agreement bound in metres (a scalar or an array broadcasting to the result's shape)."""

    def __init__(self, step, result, bound):
        self.step = step
        self.result = result
        self.bound = bound


def parse_args(name, extra=None, argv=None):
    """The shared command line; ``extra(parser)`` adds a peer's own options."""
    ap = argparse.ArgumentParser(
        prog=f"{name}_peer.py",
        description=f"{name} peer of mien bench: times the export's workloads after checking them.",
    )
    ap.add_argument("--export", metavar="DIR", help="folder written by `mien bench --export DIR`")
    ap.add_argument("--workloads", metavar="W1,W4", help="workloads to run (default: all in DIR)")
    ap.add_argument("--batch", metavar="1,16,256", default="1,16,256", help="characters per frame")
    ap.add_argument("--repeat", metavar="N", type=int, default=50, help="timed runs (median taken)")
    ap.add_argument("--warmup", metavar="N", type=int, default=10, help="untimed runs before timing")
    ap.add_argument("--json", metavar="OUT.json", help="write machine info and results here")
    ap.add_argument("--selftest", action="store_true",
                    help="run on a tiny built-in export with known answers, then exit")
    if extra:
        extra(ap)
    args = ap.parse_args(argv)
    try:
        args.batches = [int(b) for b in args.batch.split(",") if b.strip()]
    except ValueError:
        ap.error(f"--batch: {args.batch!r} is not a comma-separated list of integers")
    if not args.batches or min(args.batches) <= 0:
        ap.error("--batch: give positive batch sizes")
    if args.repeat <= 0 or args.warmup < 0:
        ap.error("--repeat must be positive and --warmup non-negative")
    args.workload_list = (
        [w.strip() for w in args.workloads.split(",") if w.strip()] if args.workloads else None
    )
    if not args.selftest and not args.export:
        ap.error("give --export DIR (or --selftest)")
    return args


def cpu_model():
    """The CPU model name from /proc/cpuinfo, or platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def base_machine():
    """Machine facts both peers report."""
    import numpy as np

    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "numpy": np.__version__,
        "thread_env": {
            k: os.environ[k]
            for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
            if k in os.environ
        },
    }
    if hasattr(os, "sched_getaffinity"):
        info["usable_cpus"] = len(os.sched_getaffinity(0))
    try:  # numpy >= 1.25 describes its BLAS as a dict
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        info["numpy_blas"] = {k: blas.get(k) for k in ("name", "version", "openblas configuration")
                              if blas.get(k) is not None}
    except Exception:  # noqa: BLE001 - older numpy: no dict form; leave it out
        pass
    return info


def summarize(times_us):
    """Median, min and 10th/90th percentiles of a list of µs."""
    s = sorted(times_us)
    q = statistics.quantiles(s, n=10) if len(s) >= 2 else [s[0]] * 9
    return {"median": statistics.median(s), "min": s[0], "p10": q[0], "p90": q[-1]}


def agreement(got, expected, bound):
    """Compare ``got`` to ``expected`` (float64 arrays) under ``bound`` (scalar or array).

    Returns a dict: agrees, max_abs_diff, bound_max, worst_ratio (max diff/bound), and
    the index of the worst element.
    """
    import numpy as np

    diff = np.abs(got - expected)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), diff.shape)
    finite = bool(np.isfinite(got).all())
    ratio = np.where(np.isfinite(diff), diff / bound, np.inf)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return {
        "agrees": finite and bool((diff <= bound).all()),
        "max_abs_diff": float(np.nanmax(diff)) if finite else float("inf"),
        "bound_max": float(bound.max()),
        "worst_ratio": float(ratio[worst]),
        "worst_index": [int(i) for i in worst],
    }


def run(peer, args, export_dir, names):
    """Check, then time, every variant of workloads ``names`` at every batch size; returns results."""
    import numpy as np

    results = []
    for m in manifest.discover(export_dir, names):
        arrays = manifest.load_arrays(m)
        variants = peer.variants(m, arrays, args)
        lift = m["kind"] == "lift"
        for B in args.batches:
            rows = manifest.batch_rows(B, m["batch"])
            expected = manifest.expected_of(m, arrays)[rows].astype(np.float64)
            for var in variants:
                case = var.prepare(rows)
                case.step()
                got = case.result()
                rec = {
                    "workload": m["workload"],
                    "kind": m["kind"],
                    "variant": var.name,
                    "batch": B,
                    "vertices": m["vertices"],
                    "count": m["count"],
                    "bytes_per_frame": m["bytes_per_character"] * B,
                    "tolerance_m": m["tolerance_m"],
                    "note": var.note,
                }
                bound = case.bound(got)
                rec.update(agreement(got, expected, bound))
                if lift:
                    # Centres (position units) and covariances (units²) reported apart; `agrees`,
                    # `worst_ratio` and `worst_index` ([b, gaussian, 0-2 centre | 3-8 Σ]) cover both.
                    bound = np.broadcast_to(bound, got.shape)
                    c = agreement(got[..., :3], expected[..., :3], bound[..., :3])
                    v = agreement(got[..., 3:], expected[..., 3:], bound[..., 3:])
                    rec.update(
                        gaussians=m["gaussians"],
                        tolerance_cov=m["tolerance_cov"],
                        max_abs_diff=c["max_abs_diff"],
                        bound_max=c["bound_max"],
                        worst_ratio_centers=c["worst_ratio"],
                        max_abs_diff_cov=v["max_abs_diff"],
                        bound_cov_max=v["bound_max"],
                        worst_ratio_cov=v["worst_ratio"],
                    )
                del got, bound
                if rec["agrees"]:
                    times, extra = peer.timer(case.step, args.warmup, args.repeat)
                    stats = summarize(times)
                    us = stats["median"]
                    rec.update(
                        us_per_frame=us,
                        chars_per_s=B / (us * 1e-6),
                        gb_per_s=rec["bytes_per_frame"] / (us * 1e-6) / 1e9,
                        times_us=stats,
                        repeat=args.repeat,
                        warmup=args.warmup,
                        **extra,
                    )
                    if lift:
                        rec["gaussians_per_s"] = B * m["gaussians"] / (us * 1e-6)
                else:
                    rec.update(us_per_frame=None, chars_per_s=None, gb_per_s=None)
                    if lift:
                        rec["gaussians_per_s"] = None
                results.append(rec)
                del case
            del expected
    return results


def table(results, title):
    """One text table of ``results``."""
    # Differences are in the mesh's position units: metres, except where the workload's mesh is
    # quantised (W1: its integer grid), as each manifest's `tolerance_m` note says.
    head = ("workload", "variant", "B", "µs/frame", "chars/s", "GB/s", "max|Δ|", "bound", "check")
    rows = []
    lifts = []
    for r in results:
        timed = r["us_per_frame"] is not None
        lift = r["kind"] == "lift"
        rows.append((
            r["workload"],
            r["variant"],
            str(r["batch"]),
            f"{r['us_per_frame']:.2f}" if timed else "-",
            f"{r['chars_per_s']:.4g}" if timed else "-",
            f"{r['gb_per_s']:.2f}" if timed else "-",
            f"{r['max_abs_diff']:.2e}" + (f" Σ {r['max_abs_diff_cov']:.2e}" if lift else ""),
            f"{r['bound_max']:.2e}" + (f" Σ {r['bound_cov_max']:.2e}" if lift else ""),
            "ok" if r["agrees"] else f"DISAGREES x{r['worst_ratio']:.3g} at {r['worst_index']}",
        ))
        if lift:
            lifts.append(
                f"  {r['workload']} {r['variant']} B={r['batch']}: {r['gaussians']} gaussians a "
                f"character, "
                + (f"{r['gaussians_per_s']:.4g} gaussians/s, " if timed else "")
                + f"worst |Δ|/bound {r['worst_ratio_centers']:.3g} (centres), "
                f"{r['worst_ratio_cov']:.3g} (covariances)"
            )
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    lines.append("max|Δ| and bound: in the mesh's position units (metres; W1's quantised mesh: its "
                 "integer grid units)")
    if lifts:
        lines.append("lift rows: centres, then Σ the covariances (units²); each element is checked "
                     "against its own gaussian's bound, the column shows the largest")
        lines.extend(lifts)
    return "\n".join(lines)


def report(peer, args, results, machine):
    """Print the table; write --json; return the exit status (1 if any variant disagreed)."""
    print(table(results, f"{peer.NAME} peer — {machine.get('device', machine['cpu_model'])}"))
    bad = [r for r in results if not r["agrees"]]
    if bad:
        print(f"\n{len(bad)} variant(s) disagree with mien's expected: no time reported for them.")
    if args.json:
        doc = {
            "peer": peer.NAME,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": sys.argv,
            "machine": machine,
            "settings": {"batches": args.batches, "repeat": args.repeat, "warmup": args.warmup},
            "results": results,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    return 1 if bad else 0


def selftest(peer, args):
    """Run the peer on the tiny export: every good case must agree and get a time; the bad ones
    (``selftest.BAD``: X1 a morph, X2 a lift, each with one wrong expected value) must not."""
    import selftest as st

    args.batches = [1, 3, 8]
    args.repeat, args.warmup = 3, 1
    failures = []
    with tempfile.TemporaryDirectory() as root:
        st.build_export(root, bad=True)
        good = run(peer, args, root, st.GOOD)
        bad = run(peer, args, root, st.BAD)
    title = f"{peer.NAME} peer self-test (tiny export; {', '.join(st.BAD)} must disagree)"
    print(table(good + bad, title))
    for r in good:
        if not r["agrees"] or r["us_per_frame"] is None:
            failures.append(f"{r['workload']} {r['variant']} B={r['batch']} should agree")
    for r in bad:
        if r["agrees"] or r["us_per_frame"] is not None:
            failures.append(f"{r['workload']} {r['variant']} B={r['batch']} should be refused")
    seen = {(r["workload"], r["batch"]) for r in good}
    if len(seen) != len(st.GOOD) * len(args.batches) or {r["workload"] for r in bad} != set(st.BAD):
        failures.append("some workload or batch size produced no result")
    for f in failures:
        print("FAIL:", f)
    print(f"{peer.NAME} peer self-test: {len(good) + len(bad)} cases, {len(failures)} failures")
    return 1 if failures else 0


def main(peer, argv=None):
    """Entry point of a peer script: exit status 0 when every variant agreed, 1 when one
    disagreed, 2 for bad arguments or unreadable input (a message, not a traceback)."""
    args = parse_args(peer.NAME, getattr(peer, "options", None), argv)
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(folder):
            return fail(peer, f"--json {args.json}: the folder {folder} does not exist")
    try:
        peer.setup(args)
        if args.selftest:
            return selftest(peer, args)
        results = run(peer, args, args.export, args.workload_list)
        return report(peer, args, results, peer.machine(args))
    except (OSError, manifest.ManifestError) as e:
        return fail(peer, e)


def fail(peer, message):
    """Print `peer: error: message` to stderr; the exit status for bad input (2)."""
    print(f"{peer.NAME}: error: {message}", file=sys.stderr)
    return 2
