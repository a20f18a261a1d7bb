"""`python -m mien.ray_bake` on a local Ray: the manifest's checks, a pool of two actors, the re-run
that skips, a failing row reported, and a worker process killed mid-run with every row still done
exactly once."""

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mien
from mien import ray_bake

pytest.importorskip("ray", reason="Ray is not installed (pip install 'ray[data]')")

ROOT = Path(__file__).resolve().parents[2]


def generate(data: Path, out: Path, n: int, fps: str = "30") -> Path:
    """n generated takes and their manifest (benches/ray/generate_takes.py)."""
    subprocess.run(
        [sys.executable, str(ROOT / "benches/ray/generate_takes.py"), "--data", str(data), "--n", str(n), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    m = out / "manifest.csv"
    if fps != "30":
        rows = list(csv.DictReader(open(m)))
        for r in rows:
            r["fps"] = fps
        with open(m, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return m


def bake(manifest: Path, out: Path, *extra: str, timeout: float = 600) -> tuple[int, str, dict]:
    env = dict(os.environ, RAY_DISABLE_USAGE_STATS="1")
    p = subprocess.run(
        [sys.executable, "-m", "mien.ray_bake", str(manifest), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    s = out / ray_bake.SUMMARY
    summary = json.loads(s.read_text()) if s.exists() else {}
    return p.returncode, p.stdout + p.stderr, summary


def check_outputs(out: Path, rows: list[dict]) -> None:
    """Every row's output verifies with its animation in it; no temporary file is left."""
    for r in rows:
        path = out / r["out"]
        assert path.is_file(), r["out"]
        name = "mien: " + Path(r["speech"]).stem
        assert mien.verify(path)["takes"] == [name]
    assert not list(out.rglob("*.tmp")), list(out.rglob("*.tmp"))


def test_bad_manifests_are_refused_with_row_and_column(data, tmp_path):
    good = f"{data}/facecap/facecap.glb"
    speech = f"{data}/gentle/lucier_golden.json"
    cases = [
        ("character,out,speech,colour\n", "unknown column(s) colour"),
        ("out,speech\n", "`character` column is required"),
        (f"character,out,speech\n{good},a.glb,{speech}\n{good},a.glb,{speech}\n", "row 2: out `a.glb` is also row 1's"),
        (f"character,out,speech\n{good},../a.glb,{speech}\n", "row 1: out `../a.glb`: must be a path inside --out"),
        (f"character,out,speech\n{good},a.txt,{speech}\n", "row 1: out `a.txt`: a baked take is a .glb"),
        (f"character,out,speech\n{tmp_path}/nope.glb,a.glb,{speech}\n", "row 1: character"),
        (f"character,out\n{good},a.glb\n", "row 1: no take"),
        (f"character,out,speech,fps\n{good},a.glb,{speech},0\n", "row 1: fps 0: must be from 1 to 1000"),
        (f"character,out,speech,fps\n{good},a.glb,{speech},fast\n", "row 1: fps `fast`: not a float"),
        ("character,out,speech\n", "no rows"),
    ]
    for k, (text, says) in enumerate(cases):
        m = tmp_path / f"m{k}.csv"
        m.write_text(text)
        with pytest.raises(ray_bake.ManifestError, match=None) as e:
            ray_bake.read_manifest(m)
        assert says in str(e.value) and str(m) in str(e.value), (says, str(e.value))
    # The command line exits 2 and writes nothing.
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "mien.ray_bake", str(tmp_path / "m2.csv"), "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 2 and "is also row 1's" in p.stderr
    assert not out.exists()


def test_a_manifest_bakes_on_two_actors_and_a_rerun_skips(data, tmp_path):
    m = generate(data, tmp_path / "gen", 12)
    rows = list(csv.DictReader(open(m)))
    # Two bad rows: a clip the character lacks (bad input: not retried), and an output folder
    # that is a file (an I/O error: retried, then reported).
    out = tmp_path / "out"
    out.mkdir()
    (out / "blocked").write_text("a file where a folder should be")
    with open(m, "a") as f:
        f.write(f"{data}/facecap/facecap.glb,bad.glb,,nope,30\n")
        f.write(f"{data}/facecap/facecap.glb,blocked/x.glb,{data}/gentle/lucier_golden.json,rest,30\n")
    code, text, s = bake(m, out, "--concurrency", "2", "--batch-size", "3", "--retries", "2")
    assert code == 1, text
    assert (s["rows"], s["done"], s["skipped"], s["failed"], s["missing"]) == (14, 12, 0, 2, 0), text
    blocked = [r for r in s["per_row"] if r["out"] == "blocked/x.glb"][0]
    assert blocked["status"] == "failed" and blocked["attempts"] == 3, blocked
    # Each actor loaded Face Cap once, however many rows it baked.
    assert set(s["character_loads_per_actor"].values()) == {1}, s["character_loads_per_actor"]
    assert s["duplicated_reports"] == [] and s["absent_outputs"] == [] and s["stale_temporaries"] == []
    bad = [r for r in s["per_row"] if r["status"] == "failed"]
    bad = [r for r in bad if r["out"] == "bad.glb"]
    assert bad[0]["row"] == 13 and "clip `nope`" in bad[0]["error"] and bad[0]["error_kind"] == "InvalidError"
    assert bad[0]["attempts"] == 1  # bad input is not retried
    assert not (out / "bad.glb").exists()
    check_outputs(out, rows)
    # Outputs are named by their rows: take_0001.glb holds take_0001's speech.
    assert mien.verify(out / "take_0001.glb")["alignments"]["mien: take_0001"]["file"] == "take_0001.tsv"
    before = {r["out"]: (out / r["out"]).stat().st_mtime_ns for r in rows}
    # A re-run finds every finished output and skips it, untouched.
    code, text, s = bake(m, out, "--concurrency", "2", "--batch-size", "3")
    assert (s["done"], s["skipped"], s["failed"]) == (0, 12, 2), text
    assert all((out / k).stat().st_mtime_ns == v for k, v in before.items())
    # A damaged output is baked again.
    (out / "take_0005.glb").write_bytes(b"glTF broken")
    code, text, s = bake(m, out, "--concurrency", "1", "--batch-size", "4")
    assert (s["done"], s["skipped"], s["failed"]) == (1, 11, 2), text
    check_outputs(out, rows)
    # An edited row (another key rate) is baked again, the others skipped.
    lines = m.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",48"
    m.write_text("\n".join(lines) + "\n")
    code, text, s = bake(m, out, "--concurrency", "1", "--batch-size", "4")
    assert (s["done"], s["skipped"], s["failed"]) == (1, 11, 2), text
    edited = [r for r in s["per_row"] if r["status"] == "done"][0]
    assert edited["row"] == 1
    rec = ray_bake.baked_record(str(out / rows[0]["out"]), "mien: take_0000")
    assert rec["fps"] == 48


def _actor_pids() -> list[int]:
    """Processes of the pool's actors (Ray titles them `ray::MapWorker(...)`), read from /proc."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                args = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if args.startswith("ray::MapWorker") or (args.startswith("ray::") and "BakeActor" in args):
            pids.append(int(d))
    return sorted(pids)


def test_a_worker_killed_mid_run_loses_no_row_and_bakes_none_twice(data, tmp_path):
    n = 24
    # 1000 keys a second: each take takes a good fraction of a second, so the kill lands mid-run.
    m = generate(data, tmp_path / "gen", n, fps="1000")
    rows = list(csv.DictReader(open(m)))
    out = tmp_path / "out"
    killed: list[int] = []

    def killer():
        deadline = time.time() + 300
        while time.time() < deadline:
            done = len(list(out.glob("take_*.glb"))) if out.exists() else 0
            pids = _actor_pids()
            if done >= 3 and pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
                return
            time.sleep(0.05)

    th = threading.Thread(target=killer)
    th.start()
    code, text, s = bake(m, out, "--concurrency", "2", "--batch-size", "2")
    th.join()
    assert killed, "no actor process was found to kill"
    assert code == 0, text
    # Every row reported exactly once, done (or found done by the retried batch), none failed.
    assert s["duplicated_reports"] == [] and s["missing_reports"] == [], s
    assert s["done"] + s["skipped"] == n and s["failed"] == 0, {k: v for k, v in s.items() if k != "per_row"}
    assert sorted(r["row"] for r in s["per_row"]) == list(range(1, n + 1))
    # The killed actor's rows were finished by another (or its restart): its pid reports none
    # that were not finished before it died.
    assert s["absent_outputs"] == [] and s["stale_temporaries"] == []
    check_outputs(out, rows)
    # The outputs are the bytes a clean run writes (the bake is deterministic).
    clean = tmp_path / "clean"
    clean.mkdir()
    actor = ray_bake.BakeActor(str(clean), 0)
    for r in ray_bake.read_manifest(m)[:3]:
        record = {"row_digest": actor.row_digest(r)}
        mien.bake(r["character"], clean / r["out"], speech=r["speech"], clip="rest", fps=1000.0, name=r["name"], record=record)
        assert (clean / r["out"]).read_bytes() == (out / r["out"]).read_bytes()
    (tmp_path / "fault.json").write_text(json.dumps({"killed": killed, **{k: v for k, v in s.items() if k != "per_row"}}))


def test_a_cluster_by_address(data, tmp_path):
    """A Ray cluster started apart (`ray start --head`) baked on through `--address`; an address
    nothing listens on is refused with exit 2 and the reason."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ray_cli = [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
    env = dict(os.environ, RAY_DISABLE_USAGE_STATS="1")
    start = subprocess.run(
        [*ray_cli, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert start.returncode == 0, start.stdout + start.stderr
    try:
        m = generate(data, tmp_path / "gen", 4)
        out = tmp_path / "out"
        p = subprocess.run(
            [sys.executable, "-m", "mien.ray_bake", str(m), "--out", str(out), "--address", f"127.0.0.1:{port}", "--concurrency", "2"],
            capture_output=True,
            text=True,
            env=dict(env, RAY_AUTH_MODE="token"),
            timeout=300,
        )
        assert p.returncode == 0, p.stdout + p.stderr
        s = json.loads((out / ray_bake.SUMMARY).read_text())
        assert s["done"] == 4
        check_outputs(out, list(csv.DictReader(open(m))))
    finally:
        subprocess.run([*ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
    # Nothing listens there now.
    p = subprocess.run(
        [sys.executable, "-m", "mien.ray_bake", str(m), "--out", str(tmp_path / "out2"), "--address", f"127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 2 and "cannot connect to the Ray cluster" in p.stderr, p.stderr[-2000:]


def test_more_bad_manifests(data, tmp_path):
    """Spellings of one output, one output inside another, encodings, folders, options that need
    a speech take, and resources no node has."""
    good = f"{data}/facecap/facecap.glb"
    speech = f"{data}/gentle/lucier_golden.json"
    cases = [
        (f"character,out,speech\n{good},a.glb,{speech}\n{good},./a.glb,{speech}\n", "is also row 1's"),
        (f"character,out,speech\n{good},x//a.glb,{speech}\n{good},x/a.glb,{speech}\n", "is also row 1's"),
        (f"character,out,speech\n{good},a.glb,{speech}\n{good},a.glb/b.glb,{speech}\n", "lies inside row 1's output `a.glb`"),
        (f"character,out,speech\n{data},a.glb,{speech}\n", "a folder, not a file"),
        (f"character,out,speech,speech_format\n{good},a.glb,{speech},klingon\n", "speech_format `klingon`: one of"),
        (f"character,out,speech,min_hold\n{good},a.glb,{speech},0.1\n", "min_hold 0.1: applies to sampler envelope only"),
        (f"character,out,clip,sampler\n{good},a.glb,rest,envelope\n", "apply to a speech take"),
        (f"character,out,speech,tolerance\n{good},a.glb,{speech},0.005,0.25\n", "WEIGHT;DEGREES"),
    ]
    for k, (text, says) in enumerate(cases):
        m = tmp_path / f"m{k}.csv"
        m.write_text(text)
        with pytest.raises(ray_bake.ManifestError) as e:
            ray_bake.read_manifest(m)
        assert says in str(e.value), (says, str(e.value))
    # A spreadsheet's byte-order mark and spaces after the commas are read; non-UTF-8 and binary
    # files are refused by name.
    m = tmp_path / "bom.csv"
    m.write_bytes(f"\ufeffcharacter, out, speech\n{good}, a.glb, {speech}\n".encode("utf-8"))
    assert ray_bake.read_manifest(m)[0]["out"] == "a.glb"
    m = tmp_path / "latin1.csv"
    m.write_bytes(f"character,out,speech\n{good},caf\xe9.glb,{speech}\n".encode("latin-1"))
    with pytest.raises(ray_bake.ManifestError, match="not UTF-8"):
        ray_bake.read_manifest(m)
    m = tmp_path / "binary.csv"
    m.write_bytes((data / "facecap/facecap.glb").read_bytes()[:3000])
    with pytest.raises(ray_bake.ManifestError) as e:
        ray_bake.read_manifest(m)
    assert "\x00" not in str(e.value) and len(str(e.value)) < 600
    # --out "" and --out under a file: exit 2, nothing made.
    ok = tmp_path / "ok.csv"
    ok.write_text(f"character,out,speech\n{good},a.glb,{speech}\n")
    (tmp_path / "afile").write_text("x")
    for out in ("", str(tmp_path / "afile" / "sub")):
        p = subprocess.run([sys.executable, "-m", "mien.ray_bake", str(ok), "--out", out], capture_output=True, text=True)
        assert p.returncode == 2 and "error: --out" in p.stderr, p.stderr[-1500:]
    # An actor asking for a GPU on a machine without one is refused, not left pending forever.
    p = subprocess.run(
        [sys.executable, "-m", "mien.ray_bake", str(ok), "--out", str(tmp_path / "g"), "--num-gpus", "64"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, RAY_DISABLE_USAGE_STATS="1"),
    )
    assert p.returncode == 2 and "no node of the cluster has that much" in p.stderr, p.stderr[-1500:]
    assert not (tmp_path / "g").exists()
