"""Parse and check the manifest of one workload of a ``mien bench --export DIR``.

Layout: ``DIR/<W>/manifest.json`` plus the .npy files it names::

    {"workload": "W4", "kind": "morph" | "gnm" | "skin" | "lift", "vertices": V,
     "targets" | "coefficients" | "joints": n, "batch": B,
     "arrays": {name: {"file": "x.npy", "dtype": "f32" | "f16" | "i32", "shape": [...]}},
     "tolerance_m": t, "bytes_per_character": b}

A lift workload (``W1-surface``) also has "gaussians": N, "triangles": F and "tolerance_cov"
(the covariances' bound, position units squared).

Per kind, the arrays that must be present and their shapes (V vertices,
n = targets T / coefficients E / joints J, B batch rows):

- morph: base (V,3) f32, deltas (T,V,3) f32, weights (B,T) f32, expected (B,V,3) f32
- gnm:   neutral (V,3) f32, basis (3V,E) f16 (row = vertex*3 + axis), scale (E,) f32,
         coeffs (B,E) f32, expected (B,V,3) f32; optionally a skin applied after the
         blend: joints (V,4) i32, weights (V,4) f32, matrices (B,J,4,4) f32, either
         with those names or prefixed ``skin_`` (all three, or none).
- skin:  rest (V,3) f32, joints (V,4) i32, weights (V,4) f32, matrices (B,J,4,4) f32,
         expected (B,V,3) f32
- lift:  the morph inputs base (V,3), deltas (T,V,3), weights (B,T) f32; triangles (F,3) i32
         (vertex indices); the bound gaussians triangle (N,) i32, bary (N,2) f32 (β1, β2),
         offset (N,) f32 (d, units of k), local_cov (N,6) f32 (S00 S01 S02 S11 S12 S22, units
         of k²); expected_centers (B,N,3) f32, expected_cov (B,N,6) f32 (Σ00 Σ01 Σ02 Σ11 Σ12
         Σ22); bound_centers (B,N) f32 and bound_cov (B,N) f32, each gaussian's agreement
         bound (its centre's three and its covariance's six elements). No ``expected``.

:func:`parse` needs no numpy; :func:`load_arrays` reads the arrays with numpy.
"""

import json
import os

KINDS = {"morph": "targets", "gnm": "coefficients", "skin": "joints", "lift": "targets"}
# Packed covariance order of mien (and of expected_cov / local_cov): (0,0) (0,1) (0,2) (1,1) (1,2) (2,2).
COV_ROWS = (0, 0, 0, 1, 1, 2)
COV_COLS = (0, 1, 2, 1, 2, 2)
SKIN_NAMES = ("joints", "weights", "matrices")


class ManifestError(ValueError):
    """A manifest that does not match the export layout; the message names file and field."""


def _posint(m, key, where):
    v = m.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise ManifestError(f"{where}: {key}: {v!r} is not a positive integer")
    return v


def _posnum(m, key, where):
    v = m.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not (v > 0) or v == float("inf"):
        raise ManifestError(f"{where}: {key}: {v!r} is not a positive finite number")
    return float(v)


def _skin_prefix(arrays, where):
    """'' or 'skin_' when a gnm workload carries a skin, None when it does not."""
    found = None
    for prefix in ("", "skin_"):
        present = [n for n in SKIN_NAMES if prefix + n in arrays]
        if present and len(present) != len(SKIN_NAMES):
            missing = [prefix + n for n in SKIN_NAMES if prefix + n not in arrays]
            raise ManifestError(f"{where}: arrays: skin incomplete, missing {missing}")
        if present:
            if found is not None:
                raise ManifestError(f"{where}: arrays: two skins (unprefixed and skin_)")
            found = prefix
    if found is None and "skin" in arrays:
        raise ManifestError(f"{where}: arrays.skin: give joints, weights and matrices arrays")
    return found


def expected_arrays(kind, V, n, B, skin_prefix=None, N=None, F=None):
    """{name: (dtype, shape)} that a workload of ``kind`` must carry (``N`` gaussians and ``F``
    triangles for a lift)."""
    if kind == "lift":
        return {
            "base": ("f32", (V, 3)),
            "deltas": ("f32", (n, V, 3)),
            "weights": ("f32", (B, n)),
            "triangles": ("i32", (F, 3)),
            "triangle": ("i32", (N,)),
            "bary": ("f32", (N, 2)),
            "offset": ("f32", (N,)),
            "local_cov": ("f32", (N, 6)),
            "expected_centers": ("f32", (B, N, 3)),
            "expected_cov": ("f32", (B, N, 6)),
            "bound_centers": ("f32", (B, N)),
            "bound_cov": ("f32", (B, N)),
        }
    if kind == "morph":
        want = {
            "base": ("f32", (V, 3)),
            "deltas": ("f32", (n, V, 3)),
            "weights": ("f32", (B, n)),
        }
    elif kind == "gnm":
        want = {
            "neutral": ("f32", (V, 3)),
            "basis": ("f16", (3 * V, n)),
            "scale": ("f32", (n,)),
            "coeffs": ("f32", (B, n)),
        }
    elif kind == "skin":
        want = {
            "rest": ("f32", (V, 3)),
            "joints": ("i32", (V, 4)),
            "weights": ("f32", (V, 4)),
            "matrices": ("f32", (B, n, 4, 4)),
        }
    else:
        raise ManifestError(f"kind: {kind!r} is not one of {sorted(KINDS)}")
    want["expected"] = ("f32", (B, V, 3))
    return want


def parse(text, where="manifest.json"):
    """Check manifest JSON ``text``; return a dict with the parsed fields.

    Keys of the result: workload, kind, vertices, count (T, E or J), batch,
    tolerance_m, bytes_per_character, arrays ({name: {file, dtype, shape}}),
    skin (None, or {joints, weights, matrices} -> array names, for gnm and skin
    kinds), joint_count (J of the skin, or None); a lift adds gaussians (N),
    triangles (F) and tolerance_cov. Unknown keys are ignored.
    """
    try:
        m = json.loads(text)
    except json.JSONDecodeError as e:
        raise ManifestError(f"{where}: not JSON ({e})") from None
    if not isinstance(m, dict):
        raise ManifestError(f"{where}: not a JSON object")
    workload = m.get("workload")
    if not isinstance(workload, str) or not workload:
        raise ManifestError(f"{where}: workload: {workload!r} is not a name")
    kind = m.get("kind")
    if kind not in KINDS:
        raise ManifestError(f"{where}: kind: {kind!r} is not one of {sorted(KINDS)}")
    V = _posint(m, "vertices", where)
    n = _posint(m, KINDS[kind], where)
    B = _posint(m, "batch", where)
    tol = _posnum(m, "tolerance_m", where)
    bpc = _posnum(m, "bytes_per_character", where)
    arrays = m.get("arrays")
    if not isinstance(arrays, dict):
        raise ManifestError(f"{where}: arrays: not an object")

    parsed = {}
    for name, a in arrays.items():
        w = f"{where}: arrays.{name}"
        if not isinstance(a, dict):
            raise ManifestError(f"{w}: not an object")
        f = a.get("file")
        if not isinstance(f, str) or not f or os.path.basename(f) != f or f in (".", ".."):
            raise ManifestError(f"{w}.file: {f!r} is not a plain file name")
        dt = a.get("dtype")
        if dt not in ("f32", "f16", "i32"):
            raise ManifestError(f"{w}.dtype: {dt!r} is not f32, f16 or i32")
        shape = a.get("shape")
        if not isinstance(shape, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in shape
        ):
            raise ManifestError(f"{w}.shape: {shape!r} is not a list of non-negative ints")
        parsed[name] = {"file": f, "dtype": dt, "shape": tuple(shape)}

    lift = {}
    if kind == "lift":
        lift = {
            "gaussians": _posint(m, "gaussians", where),
            "triangles": _posint(m, "triangles", where),
            "tolerance_cov": _posnum(m, "tolerance_cov", where),
        }
    want = expected_arrays(kind, V, n, B, N=lift.get("gaussians"), F=lift.get("triangles"))
    skin = None
    joint_count = n if kind == "skin" else None
    if kind == "skin":
        skin = {k: k for k in SKIN_NAMES}
    elif kind in ("morph", "lift"):
        extra = [k for k in ("skin", "joints", "matrices", "skin_joints", "skin_weights",
                             "skin_matrices") if k in parsed]
        if extra:
            raise ManifestError(f"{where}: arrays: {extra}: a skin after a morph is not supported")
    elif kind == "gnm":
        prefix = _skin_prefix(parsed, where)
        if prefix is not None:
            skin = {k: prefix + k for k in SKIN_NAMES}
            mats = parsed[skin["matrices"]]["shape"]
            if len(mats) != 4 or mats[0] != B or mats[2:] != (4, 4) or mats[1] <= 0:
                raise ManifestError(
                    f"{where}: arrays.{skin['matrices']}.shape: {list(mats)} is not [B={B}, J, 4, 4]"
                )
            joint_count = mats[1]
            want[skin["joints"]] = ("i32", (V, 4))
            want[skin["weights"]] = ("f32", (V, 4))
            want[skin["matrices"]] = ("f32", (B, joint_count, 4, 4))
    for name, (dt, shape) in want.items():
        if name not in parsed:
            raise ManifestError(f"{where}: arrays: missing {name!r} (a {kind} workload needs it)")
        got = parsed[name]
        if got["dtype"] != dt:
            raise ManifestError(f"{where}: arrays.{name}.dtype: {got['dtype']} (want {dt})")
        if got["shape"] != shape:
            raise ManifestError(
                f"{where}: arrays.{name}.shape: {list(got['shape'])} (want {list(shape)})"
            )
    out = {
        "workload": workload,
        "kind": kind,
        "vertices": V,
        "count": n,
        "batch": B,
        "tolerance_m": tol,
        "bytes_per_character": bpc,
        "arrays": parsed,
        "skin": skin,
        "joint_count": joint_count,
    }
    out.update(lift)
    return out


def read(dir_):
    """Parse ``dir_/manifest.json`` (see :func:`parse`); adds ``dir`` to the result."""
    path = os.path.join(dir_, "manifest.json")
    with open(path, encoding="utf-8") as f:
        m = parse(f.read(), path)
    m["dir"] = dir_
    return m


def discover(export_dir, names=None):
    """Manifests of ``export_dir``: the workloads ``names`` (a list) or every subfolder with one."""
    if names is None:
        names = sorted(
            d
            for d in os.listdir(export_dir)
            if os.path.isfile(os.path.join(export_dir, d, "manifest.json"))
        )
        if not names:
            raise ManifestError(f"{export_dir}: no <workload>/manifest.json inside")
    out = []
    for name in names:
        d = os.path.join(export_dir, name)
        if not os.path.isfile(os.path.join(d, "manifest.json")):
            raise ManifestError(f"{d}: no manifest.json (workload {name!r} not exported)")
        m = read(d)
        if m["workload"] != name:
            raise ManifestError(f"{d}/manifest.json: workload: {m['workload']!r} in folder {name!r}")
        out.append(m)
    return out


NP_DTYPES = {"f32": "<f4", "f16": "<f2", "i32": "<i4"}


def load_arrays(m):
    """Read every array of manifest ``m`` with numpy; checks dtype, shape, finiteness and joints.

    Returns {name: ndarray}. Float arrays must be finite; joint indices must lie
    in [0, J) and skin weights must be finite; a lift's triangle vertices must lie in
    [0, V), its gaussians' triangles in [0, F), its bounds must be positive.
    """
    import numpy as np

    out = {}
    for name, a in m["arrays"].items():
        path = os.path.join(m["dir"], a["file"])
        with open(path, "rb") as f:
            magic = f.read(6)
        if magic != b"\x93NUMPY":  # numpy would call a short file "pickled data"
            raise ManifestError(f"{path}: not a .npy file (no \\x93NUMPY magic at its start)")
        try:
            arr = np.load(path, allow_pickle=False)
        except ValueError as e:  # a truncated or malformed .npy: numpy's own message, no traceback
            raise ManifestError(f"{path}: not a readable .npy file ({e})") from None
        if arr.dtype != np.dtype(NP_DTYPES[a["dtype"]]):
            raise ManifestError(f"{path}: dtype {arr.dtype} (manifest says {a['dtype']})")
        if tuple(arr.shape) != a["shape"]:
            raise ManifestError(f"{path}: shape {arr.shape} (manifest says {list(a['shape'])})")
        if a["dtype"] != "i32" and not np.isfinite(arr).all():
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ManifestError(f"{path}: element {tuple(int(i) for i in bad)} is not finite")
        out[name] = np.ascontiguousarray(arr)
    if m["skin"] is not None:
        name = m["skin"]["joints"]
        j = out[name]
        J = m["joint_count"]
        bad = np.argwhere((j < 0) | (j >= J))
        if len(bad):
            v, k = (int(i) for i in bad[0])
            raise ManifestError(f"{m['dir']}: {name}[{v},{k}] = {int(j[v, k])} not in [0, {J})")
    if m["kind"] == "lift":
        for name, top in (("triangles", m["vertices"]), ("triangle", m["triangles"])):
            bad = np.argwhere((out[name] < 0) | (out[name] >= top))
            if len(bad):
                at = tuple(int(i) for i in bad[0])
                raise ManifestError(
                    f"{m['dir']}: {name}{list(at)} = {int(out[name][at])} not in [0, {top})"
                )
        for name in ("bound_centers", "bound_cov"):
            bad = np.argwhere(~(out[name] > 0))
            if len(bad):
                at = tuple(int(i) for i in bad[0])
                raise ManifestError(f"{m['dir']}: {name}{list(at)} = {out[name][at]} is not positive")
    return out


def expected_of(m, arrays):
    """mien's expected values of ``m`` as one float32 array: ``expected`` (B,V,3), or for a lift
    the centres and packed covariances side by side, (B,N,9)."""
    import numpy as np

    if m["kind"] == "lift":
        return np.concatenate([arrays["expected_centers"], arrays["expected_cov"]], axis=-1)
    return arrays["expected"]


def lift_bound(arrays, rows):
    """A lift's agreement bound for the batch ``rows``, float64 (B,N,9): each gaussian's
    ``bound_centers`` on its three centre elements, its ``bound_cov`` on its six covariance ones."""
    import numpy as np

    bc = arrays["bound_centers"][rows].astype(np.float64)[..., None]
    bs = arrays["bound_cov"][rows].astype(np.float64)[..., None]
    return np.concatenate([np.repeat(bc, 3, axis=-1), np.repeat(bs, 6, axis=-1)], axis=-1)


def batch_rows(batch, exported):
    """Row indices that make ``batch`` characters from ``exported`` rows (tiled: i % exported)."""
    return [i % exported for i in range(batch)]
