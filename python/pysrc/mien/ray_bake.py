"""Bake a manifest of takes on Ray Data: ``python -m mien.ray_bake manifest.csv --out DIR``.

The manifest is a CSV file with a header. One row per take:

=================  =========================================================================
column             meaning
=================  =========================================================================
``character``      the character file (.glb / .vrm / .aosrig / .dna / *.character.json)
``out``            the baked file, relative to ``--out`` (``hero/line_0001.glb``); unique
``speech``         a speech timing file (TextGrid, Gentle, Rhubarb, Polly, Azure, mien JSON)
``arkit``          an ARKit-52 stream (Live Link Face .csv, Audio2Face/MediaPipe .json)
``clip``           one of the character's clips (name or index), ``all`` or ``rest``
``name``           the animation's name (default ``mien: <stem of the take's file>``)
``fps``            keys per second (default 30)
``start``          media time of the first key, seconds (default 0)
``frames``         keys (default: the take's span)
``sampler``        ``held`` (default) or ``envelope``
``audio_offset``   where the utterance starts on the media clock, seconds (default 0)
``min_hold``       envelope sampler: shortest held mouth shape, seconds (default 0)
``speech_format``  force the speech reader (``textgrid``, ``gentle``, …)
``tolerance``      key reduction ``WEIGHT;DEGREES`` (e.g. ``0.005;0.25``)
``lod``            a game-face LOD of this many triangles
=================  =========================================================================

Only ``character`` and ``out`` are required, and at least one of ``speech``, ``arkit``, ``clip``.
Relative input paths are relative to the manifest's folder. Every row's form is checked before
anything runs (columns, files, numbers and their ranges, option names, outputs unique and not
inside one another); a bad manifest is refused with its row and column (exit 2). What needs the
character or the take (a clip's name, a LOD budget, a start past the take's end) is checked by the
bake and reported as that row's failure.

How it runs: the manifest becomes a Ray Dataset; ``map_batches`` runs :class:`BakeActor` on an
actor pool of ``--concurrency`` actors with ``--batch-size`` rows a batch. Each actor loads each
character once (kept for every later row), bakes each row and writes its output itself (an atomic
rename; the name from the row, never from completion order), and returns only a small status row.
Every row is idempotent: an output that exists and passes ``mien.verify`` with the row's animation
in it, baked from this row's inputs and options, is skipped (each output's record keeps the row's
digest: a SHA-256 of its options and its input files' bytes), so a re-run, a retried batch or a
restarted actor never bakes a row twice into different bytes (the bake is deterministic) nor loses
one, and an edited row is baked again. A row that fails with an I/O or backend
error is retried ``--retries`` times, one with bad input fails at once; both are reported with
mien's message. A summary (``ray_bake_summary.json`` in ``--out``) lists rows done, skipped and
failed; the exit status is 1 when any row failed.

Point it at a cluster with ``--address ray://head:10001`` (or ``auto`` inside one; the
``RAY_ADDRESS`` variable works too); the manifest's files and ``--out`` must be on storage every
node sees. ``--num-cpus`` / ``--num-gpus`` set what each actor reserves (a bake samples on the CPU);
a request no node of the cluster can meet is refused before the run.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import sys
import time
from dataclasses import dataclass
import posixpath
from pathlib import Path, PurePosixPath
from typing import Any

SPEECH_FORMATS = ("textgrid", "gentle", "rhubarb-tsv", "rhubarb-json", "polly", "azure", "mien")
COLUMNS = (
    "character",
    "out",
    "speech",
    "arkit",
    "clip",
    "name",
    "fps",
    "start",
    "frames",
    "sampler",
    "audio_offset",
    "min_hold",
    "speech_format",
    "tolerance",
    "lod",
)
INPUTS = ("character", "speech", "arkit")
SUMMARY = "ray_bake_summary.json"
#: Most rows one manifest may hold.
MAX_ROWS = 10_000_000


class ClusterError(RuntimeError):
    """The Ray cluster named by ``--address`` could not be reached."""


class ManifestError(ValueError):
    """A manifest mien refuses: the file, the row (1 = the first after the header) and column."""


@dataclass
class Options:
    """How the pool runs."""

    out: str
    concurrency: int = 1
    batch_size: int = 8
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    retries: int = 2
    max_restarts: int = 4


def _number(text: str, what: str, kind: type, lo: float, hi: float) -> Any:
    try:
        v = kind(text)
    except ValueError:
        raise ValueError(f"{what} `{text}`: not a {kind.__name__}") from None
    if not (lo <= v <= hi):
        raise ValueError(f"{what} {text}: must be from {lo} to {hi}")
    return v


def read_manifest(path: str | os.PathLike) -> list[dict[str, str]]:
    """Read and check a manifest; the rows with absolute input paths and every column present
    (empty when not given), plus ``row`` (1-based) and ``name`` filled in.

    Raises :class:`ManifestError` naming the file, row and column of the first problem.
    """
    path = Path(path)
    base = path.resolve().parent
    try:
        raw_bytes = path.read_bytes()
    except OSError as e:
        raise ManifestError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        # utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte-order mark.
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ManifestError(f"{path}: byte {e.start}: not UTF-8 text (a manifest is a UTF-8 CSV file)") from None
    if "\0" in text:
        raise ManifestError(f"{path}: a NUL byte at character {text.index(chr(0))}: not a CSV text file")
    rows: list[dict[str, str]] = []
    outs: dict[str, int] = {}
    import io

    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        if not header:
            raise ManifestError(f"{path}: empty: a header row is required ({', '.join(COLUMNS[:3])}, …)")
        unknown = [h for h in header if h not in COLUMNS]
        if unknown:
            shown = ", ".join(repr(h) if not h.isprintable() or not h else h for h in unknown[:8])
            if len(shown) > 200:
                shown = shown[:200] + "…"
            raise ManifestError(f"{path}: header: unknown column(s) {shown}; known: {', '.join(COLUMNS)}")
        for need in ("character", "out"):
            if need not in header:
                raise ManifestError(f"{path}: header: the `{need}` column is required")
        for k, raw in enumerate(reader, start=1):
            if len(rows) >= MAX_ROWS:
                raise ManifestError(f"{path}: more than {MAX_ROWS} rows")
            if None in raw:
                hint = " (write tolerance as WEIGHT;DEGREES, with a semicolon)" if "tolerance" in header else ""
                raise ManifestError(f"{path}: row {k}: more fields than the header's {len(header)}{hint}")
            row = {c: (raw.get(c) or "").strip() for c in COLUMNS}
            where = f"{path}: row {k}"
            try:
                _check_row(row, base)
            except ValueError as e:
                raise ManifestError(f"{where}: {e}") from None
            key = os.path.normcase(row["out"])
            if key in outs:
                raise ManifestError(
                    f"{where}: out `{raw['out'].strip()}` is also row {outs[key]}'s (`{key}`): every row writes its own file"
                )
            outs[key] = k
            row["row"] = str(k)
            rows.append(row)
    if not rows:
        raise ManifestError(f"{path}: no rows after the header")
    # No output may sit inside another's path (`a.glb` and `a.glb/b.glb`).
    for key, k in outs.items():
        parent = os.path.dirname(key)
        while parent:
            if parent in outs:
                raise ManifestError(
                    f"{path}: row {k}: out `{key}` lies inside row {outs[parent]}'s output `{parent}`"
                )
            parent = os.path.dirname(parent)
    return rows


def _check_row(row: dict[str, str], base: Path) -> None:
    if not row["character"]:
        raise ValueError("character: empty")
    out = row["out"]
    if not out:
        raise ValueError("out: empty")
    p = PurePosixPath(out.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or out.startswith("~"):
        raise ValueError(f"out `{out}`: must be a path inside --out (no leading /, no ..)")
    if p.suffix.lower() not in (".glb", ".vrm"):
        raise ValueError(f"out `{out}`: a baked take is a .glb file (or .vrm)")
    # One spelling per file: `./a.glb` and `x//a.glb` are `a.glb` and `x/a.glb`.
    row["out"] = posixpath.normpath(str(p))
    if not (row["speech"] or row["arkit"] or row["clip"]):
        raise ValueError("no take: give speech, arkit or clip")
    if row["arkit"] and row["clip"]:
        raise ValueError("arkit and clip both drive the face: give one")
    for c in INPUTS:
        v = row[c]
        if not v or (c == "character" and v in ("builtin", "builtin-body")):
            continue
        q = Path(v).expanduser()
        if not q.is_absolute():
            q = base / q
        if q.is_dir():
            raise ValueError(f"{c} `{v}`: a folder, not a file ({q})")
        if not q.is_file():
            raise ValueError(f"{c} `{v}`: no such file ({q})")
        row[c] = str(q)
    if row["fps"]:
        _number(row["fps"], "fps", float, 1, 1000)
    if row["start"]:
        _number(row["start"], "start", float, 0, 1e6)
    if row["frames"]:
        _number(row["frames"], "frames", int, 1, 900_000)
    if row["audio_offset"]:
        _number(row["audio_offset"], "audio_offset", float, -1e6, 1e6)
    if row["min_hold"]:
        _number(row["min_hold"], "min_hold", float, 0, 1)
    if row["lod"]:
        _number(row["lod"], "lod", int, 1, 2**40)
    if row["sampler"] and row["sampler"] not in ("held", "envelope"):
        raise ValueError(f"sampler `{row['sampler']}`: held or envelope")
    if row["min_hold"] and float(row["min_hold"]) > 0 and row["sampler"] != "envelope":
        raise ValueError(f"min_hold {row['min_hold']}: applies to sampler envelope only")
    if row["speech_format"] and row["speech_format"] not in SPEECH_FORMATS:
        raise ValueError(f"speech_format `{row['speech_format']}`: one of {', '.join(SPEECH_FORMATS)}")
    if (row["sampler"] or row["audio_offset"] or row["min_hold"] or row["speech_format"]) and not row["speech"]:
        raise ValueError("sampler, audio_offset, min_hold and speech_format apply to a speech take: the speech column is empty")
    if row["tolerance"]:
        parts = row["tolerance"].split(";")
        if len(parts) != 2:
            raise ValueError(f"tolerance `{row['tolerance']}`: WEIGHT;DEGREES (e.g. 0.005;0.25)")
        _number(parts[0], "tolerance weight", float, 0, 1)
        _number(parts[1], "tolerance degrees", float, 0, 45)
    if not row["name"]:
        take = row["speech"] or row["arkit"]
        row["name"] = "mien: " + (Path(take).stem if take else row["clip"])


def bake_kwargs(row: dict[str, str]) -> dict[str, Any]:
    """The keyword arguments of :func:`mien.bake` for a checked row."""
    kw: dict[str, Any] = {"name": row["name"]}
    for c in ("speech", "arkit", "clip", "sampler", "speech_format"):
        if row[c]:
            kw[c] = row[c]
    for c in ("fps", "start", "audio_offset", "min_hold"):
        if row[c]:
            kw[c] = float(row[c])
    for c in ("frames", "lod"):
        if row[c]:
            kw[c] = int(row[c])
    if row["tolerance"]:
        w, d = row["tolerance"].split(";")
        kw["tolerance"] = (float(w), float(d))
    return kw


def baked_record(path: str, name: str) -> dict[str, Any] | None:
    """The mien record (``extras.mien``) of the animation ``name`` in the GLB at ``path``."""
    import struct

    try:
        with open(path, "rb") as f:
            head = f.read(20)
            if len(head) < 20 or head[:4] != b"glTF":
                return None
            n, kind = struct.unpack("<II", head[12:20])
            if kind != 0x4E4F534A or n > 1 << 28:
                return None
            doc = json.loads(f.read(n))
    except (OSError, ValueError):
        return None
    for a in doc.get("animations", []):
        if a.get("name") == name:
            rec = a.get("extras", {}).get("mien")
            return rec if isinstance(rec, dict) else None
    return None


def is_done(path: str, name: str, digest: str | None = None) -> bool:
    """The output exists, passes ``mien.verify``, holds the animation ``name``, and (given a
    ``digest``) was baked from the row with that digest."""
    import mien

    if not os.path.isfile(path):
        return False
    try:
        if name not in mien.verify(path)["takes"]:
            return False
    except mien.Error:
        return False
    if digest is None:
        return True
    rec = baked_record(path, name) or {}
    take = rec.get("take") if isinstance(rec.get("take"), dict) else {}
    caller = take.get("caller") if isinstance(take, dict) else None
    return isinstance(caller, dict) and caller.get("row_digest") == digest


def _stale_temps(path: str) -> list[str]:
    """Temporary files a killed writer of ``path`` left (``.<name>.<random>.tmp``)."""
    d, n = os.path.split(path)
    return glob.glob(os.path.join(glob.escape(d or "."), "." + glob.escape(n) + ".*.tmp"))


#: Errors a retry cannot fix: the input is wrong.
_PERMANENT = ("FormatError", "InvalidError", "LimitError", "ScenarioError")


class BakeActor:
    """One actor of the pool: its characters (each loaded once), and a ``__call__`` that bakes a
    batch of rows and returns their status columns. :func:`run` makes a subclass carrying the
    output folder and retries as class attributes (so Ray ships no constructor arguments)."""

    OUT_DIR = "."
    RETRIES = 2

    def __init__(self, out_dir: str | None = None, retries: int | None = None):
        import mien

        self.mien = mien
        self.out_dir = out_dir if out_dir is not None else self.OUT_DIR
        self.retries = retries if retries is not None else self.RETRIES
        self.characters: dict[str, Any] = {}
        self.file_digests: dict[str, str] = {}
        self.loads = 0

    def _file_digest(self, path: str) -> str:
        import hashlib

        d = self.file_digests.get(path)
        if d is None:
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            d = h.hexdigest()
            self.file_digests[path] = d
        return d

    def row_digest(self, row: dict[str, str]) -> str:
        """SHA-256 of what a row's output depends on: mien's version, the options, the input
        files' bytes."""
        import hashlib

        opts = {c: row[c] for c in COLUMNS if c not in INPUTS and c != "out"}
        inputs = {}
        for c in INPUTS:
            v = row[c]
            inputs[c] = self._file_digest(v) if v and os.path.isfile(v) else v
        text = json.dumps({"mien": self.mien.__version__, "options": opts, "inputs": inputs}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def _character(self, path: str):
        c = self.characters.get(path)
        if c is None:
            c = self.mien.Character.load(path)
            self.characters[path] = c
            self.loads += 1
        return c

    def bake_row(self, row: dict[str, str]) -> dict[str, Any]:
        """Bake one row (or skip it when its output is done); never raises."""
        mien = self.mien
        out = os.path.join(self.out_dir, row["out"])
        t0 = time.perf_counter()
        status: dict[str, Any] = {
            "row": int(row["row"]),
            "out": row["out"],
            "status": "",
            "attempts": 0,
            "error": "",
            "error_kind": "",
            "seconds": 0.0,
            "pid": os.getpid(),
            "character_loads": 0,
        }
        try:
            digest = self.row_digest(row)
        except OSError as e:
            status.update(status="failed", attempts=1, error=f"cannot read an input: {e}", error_kind="IoError")
            status["seconds"] = time.perf_counter() - t0
            return status
        if is_done(out, row["name"], digest):
            status["status"] = "skipped"
            status["character_loads"] = self.loads
            status["seconds"] = time.perf_counter() - t0
            return status
        for t in _stale_temps(out):
            try:
                os.remove(t)
            except OSError:
                pass
        kw = bake_kwargs(row)
        kw["record"] = {"row_digest": digest}
        while True:
            status["attempts"] += 1
            try:
                os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
                ch = self._character(row["character"])
                mien.bake(ch, out, **kw)
                status["status"] = "done"
                status["error"] = ""
                status["error_kind"] = ""
                break
            except Exception as e:  # noqa: BLE001 — every failure is reported, none raised
                status["error"] = str(e)
                status["error_kind"] = type(e).__name__
                permanent = type(e).__name__ in _PERMANENT
                if permanent or status["attempts"] > self.retries:
                    status["status"] = "failed"
                    break
        status["character_loads"] = self.loads
        status["seconds"] = time.perf_counter() - t0
        return status

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        n = len(batch["row"])
        rows = [{c: str(batch[c][k]) for c in batch} for k in range(n)]
        out = [self.bake_row(r) for r in rows]
        cols = {}
        for key in ("row", "out", "status", "attempts", "error", "error_kind", "seconds", "pid", "character_loads"):
            cols[key] = np.array([o[key] for o in out])
        return cols


def _check_reachable(address: str | None) -> None:
    """Refuse at once a ``host:port`` (or ``ray://host:port``) nothing listens on: Ray itself
    retries such an address for minutes."""
    import socket

    if not address or address == "auto" or address == "local":
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            pass
    except OSError as e:
        raise ClusterError(f"cannot connect to the Ray cluster at {address}: {e.strerror or e}") from None


def _map(ds, actor, opts: Options, remote: dict[str, Any]):
    import ray

    return ds.map_batches(
        actor,
        batch_size=opts.batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=opts.concurrency),
        num_cpus=opts.num_cpus,
        num_gpus=opts.num_gpus or None,
        **remote,
    )


def _check_resources(opts: Options) -> None:
    """Refuse an actor no node can hold (Ray would wait for it forever)."""
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    res = [n.get("Resources", {}) for n in nodes]
    if not any(r.get("CPU", 0) >= opts.num_cpus and r.get("GPU", 0) >= opts.num_gpus for r in res):
        best = max(res, key=lambda r: (r.get("GPU", 0), r.get("CPU", 0)), default={})
        raise ClusterError(
            f"an actor asks for {opts.num_cpus:g} CPU and {opts.num_gpus:g} GPU, and no node of the "
            f"cluster has that much (the largest: {best.get('CPU', 0):g} CPU, {best.get('GPU', 0):g} GPU)"
        )


def run(rows: list[dict[str, str]], opts: Options, address: str | None = None) -> dict[str, Any]:
    """Bake ``rows`` (from :func:`read_manifest`) on Ray; the summary (also written to
    ``opts.out/ray_bake_summary.json``). Starts a local Ray unless one is running or ``address``
    names a cluster.
    """
    import ray

    out_dir = os.path.abspath(opts.out)
    if not ray.is_initialized():
        _check_reachable(address)
        try:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        except ConnectionError as e:
            cause = e.__cause__ or e.__context__
            raise ClusterError(
                f"cannot connect to the Ray cluster at {address}: {e}"
                + (f" ({type(cause).__name__}: {str(cause).split('. ')[0]})" if cause else "")
                + ". A cluster started with token authentication (`ray start`'s default in Ray 2.5x) needs "
                "RAY_AUTH_MODE=token here and its token in ~/.ray/auth_token or RAY_AUTH_TOKEN."
            ) from e
    _check_resources(opts)
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.perf_counter()
    ds = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows), 4 * opts.concurrency * 4)))
    remote: dict[str, Any] = {
        # The actor is restarted (up to max_restarts) if its process dies; its batch is retried.
        "max_restarts": opts.max_restarts,
        "max_task_retries": opts.max_restarts,
    }
    actor = type("BakeActor", (BakeActor,), {"OUT_DIR": out_dir, "RETRIES": opts.retries})
    import warnings

    with warnings.catch_warnings():
        # Bounded restarts need `max_restarts` / `max_task_retries`, which Ray 2.60 only takes
        # through its deprecated `ray_remote_args` (its default is unbounded).
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*")
        ds = _map(ds, actor, opts, remote)
    results = sorted(ds.take_all(), key=lambda r: int(r["row"]))
    wall = time.perf_counter() - t0
    summary = summarise(rows, results, out_dir, wall, opts)
    _write_json(os.path.join(out_dir, SUMMARY), summary)
    return summary


def summarise(
    rows: list[dict[str, str]],
    results: list[dict[str, Any]],
    out_dir: str,
    wall_s: float,
    opts: Options,
) -> dict[str, Any]:
    """Rows done / skipped / failed, each row's status, and the checks: every row reported once,
    every done or skipped output present."""
    by_row: dict[int, list[dict[str, Any]]] = {}
    for r in results:
        by_row.setdefault(int(r["row"]), []).append(r)
    per_row = []
    missing = []
    duplicated = []
    for row in rows:
        k = int(row["row"])
        got = by_row.get(k, [])
        if not got:
            missing.append(k)
            per_row.append({"row": k, "out": row["out"], "status": "missing"})
            continue
        if len(got) > 1:
            duplicated.append(k)
        r = got[-1]
        per_row.append(
            {
                "row": k,
                "out": row["out"],
                "status": str(r["status"]),
                "attempts": int(r["attempts"]),
                "error": str(r["error"]),
                "error_kind": str(r["error_kind"]),
                "seconds": float(r["seconds"]),
                "pid": int(r["pid"]),
                "character_loads": int(r["character_loads"]),
            }
        )
    count = {s: sum(1 for r in per_row if r["status"] == s) for s in ("done", "skipped", "failed", "missing")}
    absent = [
        r["row"]
        for r in per_row
        if r["status"] in ("done", "skipped") and not os.path.isfile(os.path.join(out_dir, r["out"]))
    ]
    temps = sorted({t for row in rows for t in _stale_temps(os.path.join(out_dir, row["out"]))})
    baked = [r for r in per_row if r["status"] == "done"]
    return {
        "rows": len(rows),
        **count,
        "duplicated_reports": duplicated,
        "missing_reports": missing,
        "absent_outputs": absent,
        "stale_temporaries": temps,
        "actors": len({r["pid"] for r in per_row if "pid" in r}),
        # Characters each actor process loaded (each once, however many rows it baked).
        "character_loads_per_actor": {
            str(pid): max(r["character_loads"] for r in per_row if r.get("pid") == pid)
            for pid in sorted({r["pid"] for r in per_row if "pid" in r})
        },
        "concurrency": opts.concurrency,
        "batch_size": opts.batch_size,
        "wall_s": wall_s,
        "takes_per_s": (len(baked) / wall_s) if wall_s > 0 else 0.0,
        "per_row": per_row,
    }


def _write_json(path: str, value: Any) -> None:
    tmp = f"{path}.{os.getpid()}.part"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mien.ray_bake",
        description="Bake a manifest of takes (character × speech timing or ARKit take) on Ray Data: "
        "an actor pool whose actors load each character once and write their outputs themselves. "
        "Idempotent: finished outputs are skipped, so a re-run completes what is missing.",
        epilog="Manifest columns: " + ", ".join(COLUMNS) + " (see the module's documentation).",
    )
    ap.add_argument("manifest", help="the manifest CSV")
    ap.add_argument("--out", required=True, help="the folder the outputs are written under")
    ap.add_argument("--address", default=None, help="a Ray cluster (ray://host:10001, or auto); default: a local Ray")
    ap.add_argument("--concurrency", type=int, default=max(1, (os.cpu_count() or 1)), help="actors in the pool (default: the CPU count)")
    ap.add_argument("--batch-size", type=int, default=8, help="rows per batch (default 8)")
    ap.add_argument("--num-cpus", type=float, default=1.0, help="CPUs reserved per actor (default 1)")
    ap.add_argument("--num-gpus", type=float, default=0.0, help="GPUs reserved per actor (default 0)")
    ap.add_argument("--retries", type=int, default=2, help="retries of a row failing with an I/O or backend error (default 2)")
    ap.add_argument("--max-restarts", type=int, default=4, help="restarts of an actor whose process died (default 4)")
    a = ap.parse_args(argv)
    for flag, v, lo in (("--concurrency", a.concurrency, 1), ("--batch-size", a.batch_size, 1), ("--retries", a.retries, 0), ("--max-restarts", a.max_restarts, 0)):
        if v < lo:
            print(f"error: {flag} {v}: must be at least {lo}", file=sys.stderr)
            return 2
    if a.num_gpus < 0 or a.num_cpus <= 0:
        print("error: --num-cpus must be > 0 and --num-gpus ≥ 0", file=sys.stderr)
        return 2
    try:
        rows = read_manifest(a.manifest)
    except ManifestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not a.out.strip():
        print("error: --out: empty: name the folder the outputs go under", file=sys.stderr)
        return 2
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        print(f"error: --out {a.out}: not a folder", file=sys.stderr)
        return 2
    parent = os.path.dirname(os.path.abspath(a.out))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        print(f"error: --out {a.out}: {parent} is a file, not a folder", file=sys.stderr)
        return 2
    opts = Options(
        out=a.out,
        concurrency=a.concurrency,
        batch_size=a.batch_size,
        num_cpus=a.num_cpus,
        num_gpus=a.num_gpus,
        retries=a.retries,
        max_restarts=a.max_restarts,
    )
    try:
        s = run(rows, opts, address=a.address)
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: --out {a.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"interrupted: the outputs written so far are complete; run the same command again to bake the rest ({a.out})",
            file=sys.stderr,
        )
        return 130
    print(
        f"{a.out}: {s['rows']} rows — {s['done']} baked, {s['skipped']} already done, "
        f"{s['failed']} failed, {s['missing']} missing; {s['wall_s']:.1f} s, "
        f"{s['takes_per_s']:.1f} takes/s on {s['actors']} actor(s); summary in {os.path.join(a.out, SUMMARY)}"
    )
    for r in s["per_row"]:
        if r["status"] in ("failed", "missing"):
            print(f"  row {r['row']} ({r['out']}): {r['status']}: {r.get('error', '')}", file=sys.stderr)
    return 0 if s["failed"] == 0 and s["missing"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
