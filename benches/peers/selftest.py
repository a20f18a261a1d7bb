"""Self-test of the peer scripts' input side, and the tiny export they run on.

``python3 benches/peers/selftest.py --no-numpy`` checks, in pure Python, the
.npy reader/writer (a hand-written golden header, round trips of f32/f16/i32,
rejection of malformed files) and the manifest parser (a tiny export of every
kind, read back and recomputed with a float64 reference; rejection of bad
manifests). ``python3 benches/peers/selftest.py`` adds the numpy cross-checks
(numpy reads our files, we read numpy's). ``--write DIR`` leaves the tiny
export in DIR.

The tiny export: hand-worked cases whose answers are typed in below (M1, G1,
S1, L1), and seeded random cases whose answers come from :func:`reference` /
:func:`lift_reference` in float64 on the exactly stored (rounded) inputs (M2,
G2, G3 with a skin, S2, L2). L1 and L2 are surface lifts (kind ``lift``): a
morph, then gaussians bound to its triangles; L1 is one right triangle whose
frame is known by hand, in two rows (at rest, then turned 90° about z and
moved). ``build_export(dir, bad=True)`` adds X1, a copy of M2 whose
``expected`` is off by 1e-3 m in one element, and X2, a copy of L2 whose
``expected_cov`` is off by 1e-3 in one element: every peer must refuse to
time them.
"""

import argparse
import json
import math
import os
import random
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import manifest  # noqa: E402
import npyfile  # noqa: E402

TOL = 1e-6  # tolerance_m of the tiny export: float64 reference rounded once to f32.
GOOD = ["M1", "M2", "G1", "G2", "G3", "S1", "S2", "L1", "L2"]
BAD = ["X1", "X2"]  # each one wrong expected value: every peer must refuse them


def r32(x):
    """``x`` rounded to float32."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def r16(x):
    """``x`` rounded to float16."""
    return struct.unpack("<e", struct.pack("<e", x))[0]


# ---------------------------------------------------------------- reference
def skin_ref(positions, joints, weights, matrices, V, J, b):
    """Linear blend skinning of flat (V*3) ``positions`` for batch row ``b``: Σ_k w_k M_{j_k}·[p,1]."""
    out = []
    for v in range(V):
        p = positions[3 * v : 3 * v + 3] + [1.0]
        acc = [0.0, 0.0, 0.0]
        for k in range(4):
            w = weights[4 * v + k]
            j = joints[4 * v + k]
            base = ((b * J + j) * 4) * 4
            for r in range(3):
                row = matrices[base + 4 * r : base + 4 * r + 4]
                acc[r] += w * sum(row[c] * p[c] for c in range(4))
        out += acc
    return out


def reference(m, arrays):
    """Expected (B*V*3 flat list, float64) of workload ``m`` from flat ``arrays``."""
    V, n, B = m["vertices"], m["count"], m["batch"]
    out = []
    for b in range(B):
        if m["kind"] == "morph":
            pos = list(arrays["base"])
            for t in range(n):
                w = arrays["weights"][b * n + t]
                if w != 0.0:
                    for i in range(3 * V):
                        pos[i] += w * arrays["deltas"][t * 3 * V + i]
        elif m["kind"] == "gnm":
            cs = [arrays["coeffs"][b * n + e] * arrays["scale"][e] for e in range(n)]
            pos = [
                arrays["neutral"][i] + sum(arrays["basis"][i * n + e] * cs[e] for e in range(n))
                for i in range(3 * V)
            ]
        else:
            pos = list(arrays["rest"])
        if m["skin"] is not None:
            s = m["skin"]
            pos = skin_ref(
                pos, arrays[s["joints"]], arrays[s["weights"]], arrays[s["matrices"]],
                V, m["joint_count"], b,
            )
        out += pos
    return out


def _morph_rows(arrays, V, T, B):
    """Float64 morph stage of every row: B lists of V [x, y, z]."""
    rows = []
    for b in range(B):
        pos = list(arrays["base"])
        for t in range(T):
            w = arrays["weights"][b * T + t]
            for i in range(3 * V):
                pos[i] += w * arrays["deltas"][t * 3 * V + i]
        rows.append([pos[3 * v : 3 * v + 3] for v in range(V)])
    return rows


def lift_reference(m, arrays):
    """(centres (B*N*3), packed covariances (B*N*6)) of lift workload ``m``, float64, written
    apart from the peers: μ = p0 + β1(p1 − p0) + β2(p2 − p0) + d·k·n, the tangent by Gram–Schmidt,
    Σ = k²·Σ_ab R_ia S_ab R_jb by explicit sums."""
    V, T, B, N = m["vertices"], m["count"], m["batch"], m["gaussians"]

    def sub(a, b):
        return [a[i] - b[i] for i in range(3)]

    def dot(a, b):
        return sum(a[i] * b[i] for i in range(3))

    def cross(a, b):
        return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

    def unit(a):
        n = math.sqrt(dot(a, a))
        return [x / n for x in a]

    centres, covs = [], []
    for pos in _morph_rows(arrays, V, T, B):
        for g in range(N):
            f = arrays["triangle"][g]
            p0, p1, p2 = (pos[arrays["triangles"][3 * f + j]] for j in range(3))
            e1, e2 = sub(p1, p0), sub(p2, p0)
            k = max(1e-6, (math.dist(p0, p1) + math.dist(p1, p2) + math.dist(p2, p0)) / 3)
            n = unit(cross(e1, e2))
            t = unit([e1[i] - dot(e1, n) * n[i] for i in range(3)])
            b = cross(n, t)
            b1, b2, d = arrays["bary"][2 * g], arrays["bary"][2 * g + 1], arrays["offset"][g]
            centres += [p0[i] + b1 * e1[i] + b2 * e2[i] + d * k * n[i] for i in range(3)]
            s = arrays["local_cov"][6 * g : 6 * g + 6]
            S = [[s[0], s[1], s[2]], [s[1], s[3], s[4]], [s[2], s[4], s[5]]]
            R = [[t[i], b[i], n[i]] for i in range(3)]  # rows of [t b n]
            for i, j in zip(manifest.COV_ROWS, manifest.COV_COLS):
                covs.append(k * k * sum(R[i][a] * S[a][c] * R[j][c]
                                        for a in range(3) for c in range(3)))
    return centres, covs


# ---------------------------------------------------------------- building
def _write_workload(root, name, kind, V, n, B, arrays, extra=None):
    """Write ``arrays`` ({name: (dtype, shape, flat values)}) and a manifest under root/name."""
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    entries = {}
    for a, (dt, shape, vals) in arrays.items():
        npyfile.write(os.path.join(d, a + ".npy"), dt, shape, vals)
        entries[a] = {"file": a + ".npy", "dtype": dt, "shape": list(shape)}
    man = {
        "workload": name,
        "kind": kind,
        "vertices": V,
        manifest.KINDS[kind]: n,
        "batch": B,
        "arrays": entries,
        "tolerance_m": TOL,
        "bytes_per_character": 4.0 * 3 * V * 2,
    }
    man.update(extra or {})
    with open(os.path.join(d, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(man, f, indent=1)


def _finish(root, name, kind, V, n, B, arrays, expected=None, corrupt=None):
    """Write a workload whose ``expected`` is typed in, or else computed by :func:`reference`."""
    skin = None
    if kind == "skin":
        skin = {k: k for k in manifest.SKIN_NAMES}
    elif "skin_joints" in arrays:
        skin = {k: "skin_" + k for k in manifest.SKIN_NAMES}
    J = n if kind == "skin" else (arrays["skin_matrices"][1][1] if skin else None)
    m = {"kind": kind, "vertices": V, "count": n, "batch": B, "skin": skin, "joint_count": J}
    flat = {k: v[2] for k, v in arrays.items()}
    if expected is None:
        expected = reference(m, flat)
    else:
        got = reference(m, flat)
        worst = max(abs(a - b) for a, b in zip(got, expected))
        assert worst <= 1e-12, f"{name}: reference disagrees with the hand-worked answer by {worst}"
    expected = list(expected)
    if corrupt is not None:
        expected[corrupt[0]] += corrupt[1]
    arrays["expected"] = ("f32", (B, V, 3), expected)
    _write_workload(root, name, kind, V, n, B, arrays)


def _finish_lift(root, name, V, T, B, F, N, arrays, expected=None, corrupt=None):
    """Write a lift workload: ``expected`` ((centres, covs) typed in) checked against
    :func:`lift_reference`, or taken from it; ``corrupt`` = (index into expected_cov, delta)."""
    m = {"vertices": V, "count": T, "batch": B, "gaussians": N}
    flat = {k: v[2] for k, v in arrays.items()}
    got = lift_reference(m, flat)
    if expected is not None:
        worst = max(abs(a - b) for a, b in zip(got[0] + got[1], expected[0] + expected[1]))
        assert worst <= 1e-12, f"{name}: reference disagrees with the hand-worked answer by {worst}"
    centres, covs = (list(x) for x in got)
    if corrupt is not None:
        covs[corrupt[0]] += corrupt[1]
    arrays["expected_centers"] = ("f32", (B, N, 3), centres)
    arrays["expected_cov"] = ("f32", (B, N, 6), covs)
    arrays["bound_centers"] = ("f32", (B, N), [TOL] * (B * N))
    arrays["bound_cov"] = ("f32", (B, N), [TOL] * (B * N))
    _write_workload(root, name, "lift", V, T, B, arrays,
                    {"gaussians": N, "triangles": F, "tolerance_cov": TOL})


def _rand_affine(rng):
    """A random row-major 4x4 affine: rotation (Rodrigues) times a scale in [0.8,1.2], plus a translation."""
    ax = [rng.gauss(0, 1) for _ in range(3)]
    norm = math.sqrt(sum(a * a for a in ax)) or 1.0
    x, y, z = (a / norm for a in ax)
    th = rng.uniform(-math.pi, math.pi)
    c, s, C = math.cos(th), math.sin(th), 1 - math.cos(th)
    R = [
        [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
        [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
        [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
    ]
    k = rng.uniform(0.8, 1.2)
    t = [rng.uniform(-0.5, 0.5) for _ in range(3)]
    rows = [[R[r][0] * k, R[r][1] * k, R[r][2] * k, t[r]] for r in range(3)]
    return [r32(v) for row in rows + [[0.0, 0.0, 0.0, 1.0]] for v in row]


def _rand_skin(rng, V, J, B):
    joints, weights = [], []
    for _ in range(V):
        used = rng.randrange(1, 5)  # 1..4 influences, the rest padded with weight 0
        js = [rng.randrange(J) for _ in range(used)] + [0] * (4 - used)
        raw = [rng.random() + 0.05 for _ in range(used)]
        tot = sum(raw)
        ws = [r32(r / tot) for r in raw] + [0.0] * (4 - used)
        joints += js
        weights += ws
    mats = []
    for _ in range(B * J):
        mats += _rand_affine(rng)
    return joints, weights, mats


def build_export(root, bad=False, seed=20261130):
    """Write the tiny export (workloads :data:`GOOD`, plus X1 when ``bad``) under ``root``."""
    rng = random.Random(seed)
    # M1: hand-worked morph. v0 = (1,2,3) + 0.5*(1,0,0) + 0.25*(0,2,0); v1 = 0.5*(0,1,0) + 0.25*(0,0,-1).
    _finish(root, "M1", "morph", 2, 2, 2, {
        "base": ("f32", (2, 3), [1, 2, 3, 0, 0, 0]),
        "deltas": ("f32", (2, 2, 3), [1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, -1]),
        "weights": ("f32", (2, 2), [0.5, 0.25, 1, 0]),
    }, expected=[1.5, 2.5, 3, 0, 0.5, -0.25, 2, 2, 3, 0, 1, 0])

    # M2: random morph, V=37, T=9, B=4; target 3 never active, at most 4 active per row.
    V, T, B = 37, 9, 4
    base = [r32(rng.uniform(-0.2, 0.2)) for _ in range(3 * V)]
    deltas = [r32(rng.gauss(0, 0.01)) for _ in range(T * 3 * V)]
    weights = []
    for _ in range(B):
        row = [0.0] * T
        for t in rng.sample([t for t in range(T) if t != 3], 4):
            row[t] = r32(rng.uniform(0, 1))
        weights += row
    m2 = {
        "base": ("f32", (V, 3), base),
        "deltas": ("f32", (T, V, 3), deltas),
        "weights": ("f32", (B, T), weights),
    }
    _finish(root, "M2", "morph", V, T, B, dict(m2))
    if bad:
        _finish(root, "X1", "morph", V, T, B, dict(m2), corrupt=(7, 1e-3))

    # G1: hand-worked GNM. coeffs*scale = (1, 0.5); basis rows (1,0), (0,1), (2,-1).
    _finish(root, "G1", "gnm", 1, 2, 1, {
        "neutral": ("f32", (1, 3), [0, 1, 0]),
        "basis": ("f16", (3, 2), [1, 0, 0, 1, 2, -1]),
        "scale": ("f32", (2,), [0.5, 2]),
        "coeffs": ("f32", (1, 2), [2, 0.25]),
    }, expected=[1, 1.5, 1.5])

    # G2: random GNM, V=23, E=11, B=3.  G3: random GNM with a skin_ skin, V=10, E=5, J=3, B=2.
    for name, V, E, B, J in (("G2", 23, 11, 3, 0), ("G3", 10, 5, 2, 3)):
        arr = {
            "neutral": ("f32", (V, 3), [r32(rng.uniform(-0.2, 0.2)) for _ in range(3 * V)]),
            "basis": ("f16", (3 * V, E), [r16(rng.gauss(0, 0.02)) for _ in range(3 * V * E)]),
            "scale": ("f32", (E,), [r32(rng.uniform(0.5, 2)) for _ in range(E)]),
            "coeffs": ("f32", (B, E), [r32(rng.gauss(0, 1)) for _ in range(B * E)]),
        }
        if J:
            j, w, mats = _rand_skin(rng, V, J, B)
            arr["skin_joints"] = ("i32", (V, 4), j)
            arr["skin_weights"] = ("f32", (V, 4), w)
            arr["skin_matrices"] = ("f32", (B, J, 4, 4), mats)
        _finish(root, name, "gnm", V, E, B, arr)

    # S1: hand-worked skin. M0 = translate (0,1,0); M1 = rotate +90° about z. 0.5*(1,1,0) + 0.5*(0,1,0).
    m0 = [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1]
    m1 = [0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    _finish(root, "S1", "skin", 1, 2, 1, {
        "rest": ("f32", (1, 3), [1, 0, 0]),
        "joints": ("i32", (1, 4), [0, 1, 0, 0]),
        "weights": ("f32", (1, 4), [0.5, 0.5, 0, 0]),
        "matrices": ("f32", (1, 2, 4, 4), m0 + m1),
    }, expected=[0.5, 1, 0])

    # L1: hand-worked lift. One right triangle p = (0,0,0), (0,3,0), (0,0,4): edges 3, 5, 4, so
    # k = 4; n = e1 × e2 / |·| = x, t = y, b = n × t = z. Row 1 (weight 1) turns it 90° about z
    # and moves it by (1,2,3): n = y, t = -x, b = z. S0 = (1, .5, .25, 2, -.5, .125) sits at
    # β = (.25, .25), d = .5; S1 = diag(.5, .25, .125) at β = (.5, 0), d = -.25. Σ = 16·R S Rᵀ
    # permutes (and for row 1 negates) the entries of S: row 0 maps x,y,z to local n,t,b.
    _finish_lift(root, "L1", 3, 1, 2, 1, 2, {
        "base": ("f32", (3, 3), [0, 0, 0, 0, 3, 0, 0, 0, 4]),
        "deltas": ("f32", (1, 3, 3), [1, 2, 3, -2, -1, 3, 1, 2, 3]),
        "weights": ("f32", (2, 1), [0, 1]),
        "triangles": ("i32", (1, 3), [0, 1, 2]),
        "triangle": ("i32", (2,), [0, 0]),
        "bary": ("f32", (2, 2), [0.25, 0.25, 0.5, 0]),
        "offset": ("f32", (2,), [0.5, -0.25]),
        "local_cov": ("f32", (2, 6), [1, 0.5, 0.25, 2, -0.5, 0.125, 0.5, 0, 0, 0.25, 0, 0.125]),
    }, expected=(
        [2, 0.75, 1, -1, 1.5, 0,  0.25, 4, 4, -0.5, 1, 3],
        [2, 4, -8, 16, 8, 32, 2, 0, 0, 8, 0, 4,  16, -4, -8, 2, -8, 32, 8, 0, 0, 2, 0, 4],
    ))

    # L2: random lift on a jittered 4x4 grid (18 triangles), T=3, B=3, N=40 gaussians.
    V, T, B, F, N = 16, 3, 3, 18, 40
    base = []
    for y in range(4):
        for x in range(4):
            base += [r32(0.1 * x + rng.uniform(-0.01, 0.01)), r32(0.1 * y + rng.uniform(-0.01, 0.01)),
                     r32(rng.uniform(-0.02, 0.02))]
    tris = []
    for y in range(3):
        for x in range(3):
            a = 4 * y + x
            tris += [a, a + 1, a + 5, a, a + 5, a + 4]
    local = []
    for _ in range(N):
        A = [[rng.gauss(0, 0.6) for _ in range(3)] for _ in range(3)]
        S = [[sum(A[i][c] * A[j][c] for c in range(3)) for j in range(3)] for i in range(3)]
        local += [r32(S[i][j]) for i, j in zip(manifest.COV_ROWS, manifest.COV_COLS)]
    bary = []
    for _ in range(N):
        u, v = rng.random(), rng.random()
        if u + v > 1:
            u, v = 1 - u, 1 - v
        bary += [r32(u), r32(v)]
    weights = [r32(rng.uniform(0, 1)) for _ in range(B * T)]
    weights[0] = 0.0
    l2 = {
        "base": ("f32", (V, 3), base),
        "deltas": ("f32", (T, V, 3), [r32(rng.gauss(0, 0.005)) for _ in range(T * 3 * V)]),
        "weights": ("f32", (B, T), weights),
        "triangles": ("i32", (F, 3), tris),
        "triangle": ("i32", (N,), [rng.randrange(F) for _ in range(N)]),
        "bary": ("f32", (N, 2), bary),
        "offset": ("f32", (N,), [r32(rng.uniform(-0.5, 0.5)) for _ in range(N)]),
        "local_cov": ("f32", (N, 6), local),
    }
    _finish_lift(root, "L2", V, T, B, F, N, dict(l2))
    if bad:
        _finish_lift(root, "X2", V, T, B, F, N, dict(l2), corrupt=(6 * 7 + 4, 1e-3))

    # S2: random skin, V=31, J=6, B=3.
    V, J, B = 31, 6, 3
    j, w, mats = _rand_skin(rng, V, J, B)
    _finish(root, "S2", "skin", V, J, B, {
        "rest": ("f32", (V, 3), [r32(rng.uniform(-0.5, 0.5)) for _ in range(3 * V)]),
        "joints": ("i32", (V, 4), j),
        "weights": ("f32", (V, 4), w),
        "matrices": ("f32", (B, J, 4, 4), mats),
    })


# ---------------------------------------------------------------- checks
class Checks:
    """Counts passed checks; collects failures instead of stopping at the first."""

    def __init__(self):
        self.passed = 0
        self.failed = []

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed.append(what)

    def raises(self, exc, fn, what, needle=None):
        try:
            fn()
        except exc as e:
            self.ok(needle is None or needle in str(e), f"{what}: message {str(e)!r} lacks {needle!r}")
            return
        self.failed.append(f"{what}: no {exc.__name__} raised")


def check_npy(c):
    """The .npy writer and reader, against a hand-written header and by round trips."""
    # Golden: 10 fixed bytes + a 118-byte header (59 chars of dict, 58 spaces, '\n') = 128 = 2*64.
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    golden = b"\x93NUMPY\x01\x00" + bytes([118, 0]) + text.encode() + b" " * 58 + b"\n"
    c.ok(len(text) == 59, "golden dict text is 59 characters")
    c.ok(npyfile.header_bytes("<f4", (2, 3)) == golden, "header of (2,3) f32 equals the golden bytes")
    data = npyfile.dumps("f32", (2, 3), [1.0, -2.0, 0.5, 3.0, 0.0, 1e-3])
    c.ok(data[:128] == golden, "dumps starts with the golden header")
    c.ok(data[128:132] == bytes([0, 0, 0x80, 0x3F]), "1.0f32 stored little-endian as 0x3F800000")
    c.ok(len(data) == 128 + 24, "f32 (2,3) file is 128 + 24 bytes")
    for shape in [(3,), (1,), (0,), (7, 5), (2, 3, 4, 4), (100000, 3)]:
        for dt in ("f32", "f16", "i32"):
            h = npyfile.header_bytes(npyfile.DTYPE_TO_DESCR[dt], shape)
            c.ok(len(h) % 64 == 0 and h.endswith(b"\n"), f"header of {shape} {dt} aligned to 64")
            c.ok(npyfile.parse_header(h + b"\0" * 0)[1] == shape, f"header of {shape} parses back")
    c.ok(b"'shape': (3,)" in npyfile.header_bytes("<f4", (3,)), "1-d shape written as (3,)")
    vals = [0.1, -1.5, 65504.0, 2.0**-24, 0.0, 1.0 / 3.0]
    dt, shape, back = npyfile.loads(npyfile.dumps("f16", (2, 3), vals))
    c.ok(dt == "f16" and shape == (2, 3), "f16 round trip keeps dtype and shape")
    c.ok(back[0] == 0.0999755859375, "0.1 rounds to 0.0999755859375 in f16")
    c.ok(back[1:5] == [-1.5, 65504.0, 2.0**-24, 0.0], "f16 exact values survive")
    c.ok(back[5] == 0.333251953125, "1/3 rounds to 0.333251953125 in f16")
    dt, shape, back = npyfile.loads(npyfile.dumps("i32", (4,), [0, -1, 2**31 - 1, -(2**31)]))
    c.ok(back == [0, -1, 2**31 - 1, -(2**31)] and dt == "i32", "i32 round trip")
    dt, shape, back = npyfile.loads(npyfile.dumps("f32", (3,), [0.1, 1e30, -0.0]))
    c.ok(back[0] == r32(0.1) and back[1] == r32(1e30), "f32 round trip rounds once")
    c.raises(npyfile.NpyError, lambda: npyfile.dumps("f32", (2, 2), [1.0]), "too few values", "4 elements")
    c.raises(npyfile.NpyError, lambda: npyfile.dumps("f64", (1,), [1.0]), "f64 not supported", "dtype")
    good = npyfile.dumps("f32", (2,), [1.0, 2.0])
    bad_cases = [
        (b"\x93NUMPX" + good[6:], "magic"),
        (good[:6] + bytes([2, 0]) + good[8:], "version"),
        (good[:-1], "data"),
        (good + b"\0\0\0\0", "data"),
        (good[:8] + struct.pack("<H", 1000) + good[10:], "runs past"),
        (good.replace(b"'<f4'", b"'>f4'"), "descr"),
        (good.replace(b"False", b"True "), "fortran_order"),
        (good.replace(b"(2,)", b"(-2,)"), "shape"),
        (good.replace(b"'shape'", b"'shapx'"), "missing key"),
        (good[:10] + b"[1, 2]" + good[16:], "header"),
    ]
    for data, needle in bad_cases:
        c.raises(npyfile.NpyError, lambda d=data: npyfile.loads(d, "x.npy"), f"reject {needle}", needle)


def check_export(c, root):
    """The tiny export: manifests parse, files read back, expected = float64 reference within TOL."""
    ms = manifest.discover(root)
    c.ok([m["workload"] for m in ms] == sorted(GOOD + BAD), "discover finds every workload")
    for m in ms:
        arrays = {}
        for name, a in m["arrays"].items():
            dt, shape, vals = npyfile.read(os.path.join(m["dir"], a["file"]))
            c.ok(dt == a["dtype"] and shape == a["shape"], f"{m['workload']}.{name} matches its manifest")
            arrays[name] = vals
        if m["kind"] == "lift":
            ref, exp = lift_reference(m, arrays), (arrays["expected_centers"], arrays["expected_cov"])
            worst = max(max(abs(a - b) for a, b in zip(r, e)) for r, e in zip(ref, exp))
        else:
            worst = max(abs(a - b) for a, b in zip(reference(m, arrays), arrays["expected"]))
        if m["workload"] in BAD:
            c.ok(abs(worst - 1e-3) < 1e-6, f"{m['workload']} is off by 1e-3")
        else:
            c.ok(worst <= TOL, f"{m['workload']}: expected within {TOL} of the reference ({worst:.3g})")
    l1 = manifest.read(os.path.join(root, "L1"))
    c.ok((l1["kind"], l1["count"], l1["gaussians"], l1["triangles"], l1["tolerance_cov"])
         == ("lift", 1, 2, 1, TOL), "L1 parses as a lift of 2 gaussians on 1 triangle")
    g3 = manifest.read(os.path.join(root, "G3"))
    c.ok(g3["skin"] == {k: "skin_" + k for k in manifest.SKIN_NAMES} and g3["joint_count"] == 3,
         "G3 carries a skin_ skin of 3 joints")
    c.ok(manifest.read(os.path.join(root, "G2"))["skin"] is None, "G2 has no skin")
    c.ok(manifest.batch_rows(5, 2) == [0, 1, 0, 1, 0], "batch rows tile the exported rows")


def check_manifest_errors(c, root):
    """Bad manifests are refused with the field named."""
    with open(os.path.join(root, "M2", "manifest.json"), encoding="utf-8") as f:
        good = json.load(f)

    def mutated(fn):
        m = json.loads(json.dumps(good))
        fn(m)
        return json.dumps(m)

    cases = [
        (lambda m: m.update(kind="blend"), "kind"),
        (lambda m: m.update(vertices=-1), "vertices"),
        (lambda m: m.update(vertices=True), "vertices"),
        (lambda m: m.pop("targets"), "targets"),
        (lambda m: m.update(batch=0), "batch"),
        (lambda m: m.update(tolerance_m=0), "tolerance_m"),
        (lambda m: m.update(bytes_per_character="x"), "bytes_per_character"),
        (lambda m: m["arrays"].pop("deltas"), "missing 'deltas'"),
        (lambda m: m["arrays"]["base"].update(shape=[37, 4]), "arrays.base.shape"),
        (lambda m: m["arrays"]["weights"].update(dtype="f16"), "arrays.weights.dtype"),
        (lambda m: m["arrays"]["weights"].update(dtype="f64"), "arrays.weights.dtype"),
        (lambda m: m["arrays"]["base"].update(file="../x.npy"), "arrays.base.file"),
        (lambda m: m["arrays"]["base"].update(shape=[37, "3"]), "arrays.base.shape"),
        (lambda m: m.update(vertices=38), "shape"),
        (lambda m: m["arrays"].update(skin_joints={"file": "j.npy", "dtype": "i32", "shape": [37, 4]}), "skin"),
        (lambda m: m.update(kind="gnm"), "coefficients"),
    ]
    for fn, needle in cases:
        c.raises(manifest.ManifestError, lambda t=mutated(fn): manifest.parse(t, "M2.json"),
                 f"reject manifest ({needle})", needle)
    c.raises(manifest.ManifestError, lambda: manifest.parse("{", "x.json"), "reject non-JSON", "not JSON")
    c.raises(manifest.ManifestError, lambda: manifest.parse("[]", "x.json"), "reject a list", "object")
    c.ok(manifest.parse(mutated(lambda m: m.update(extra=1)))["count"] == 9, "unknown keys ignored")
    # Lift manifests: the extra counts and arrays are checked too.
    with open(os.path.join(root, "L2", "manifest.json"), encoding="utf-8") as f:
        lift = json.load(f)

    def lift_mutated(fn):
        m = json.loads(json.dumps(lift))
        fn(m)
        return json.dumps(m)

    lift_cases = [
        (lambda m: m.pop("gaussians"), "gaussians"),
        (lambda m: m.update(triangles=0), "triangles"),
        (lambda m: m.pop("tolerance_cov"), "tolerance_cov"),
        (lambda m: m["arrays"].pop("bary"), "missing 'bary'"),
        (lambda m: m["arrays"].pop("bound_cov"), "missing 'bound_cov'"),
        (lambda m: m["arrays"]["local_cov"].update(shape=[40, 9]), "arrays.local_cov.shape"),
        (lambda m: m["arrays"]["triangle"].update(dtype="f32"), "arrays.triangle.dtype"),
        (lambda m: m["arrays"]["expected_cov"].update(shape=[3, 40, 9]), "arrays.expected_cov.shape"),
        (lambda m: m.update(gaussians=41), "shape"),
        (lambda m: m["arrays"].update(skin_joints={"file": "j.npy", "dtype": "i32", "shape": [16, 4]}),
         "skin"),
    ]
    for fn, needle in lift_cases:
        c.raises(manifest.ManifestError, lambda t=lift_mutated(fn): manifest.parse(t, "L2.json"),
                 f"reject lift manifest ({needle})", needle)
    c.ok(manifest.parse(json.dumps(lift))["gaussians"] == 40, "L2 parses: 40 gaussians")
    # A gnm with a partial skin is refused.
    with open(os.path.join(root, "G3", "manifest.json"), encoding="utf-8") as f:
        g3 = json.load(f)
    g3["arrays"].pop("skin_weights")
    c.raises(manifest.ManifestError, lambda: manifest.parse(json.dumps(g3)), "partial skin", "incomplete")
    c.raises(manifest.ManifestError, lambda: manifest.discover(root, ["W9"]), "unknown workload", "W9")
    # A truncated .npy is refused with its path named (numpy raises a bare ValueError; reading
    # arrays needs numpy, so the pure-Python run leaves this check out).
    import importlib.util
    if importlib.util.find_spec("numpy") is None:
        return
    m2 = manifest.parse(json.dumps(good), "M2.json")
    m2["dir"] = os.path.join(root, "M2")
    deltas = os.path.join(m2["dir"], m2["arrays"]["deltas"]["file"])
    with open(deltas, "rb") as f:
        whole = f.read()
    try:
        with open(deltas, "wb") as f:
            f.write(whole[: len(whole) // 2])
        c.raises(manifest.ManifestError, lambda: manifest.load_arrays(m2), "truncated .npy",
                 "not a readable .npy")
    finally:
        with open(deltas, "wb") as f:
            f.write(whole)


def check_numpy(c, root):
    """numpy reads our files; we read numpy's; load_arrays checks joints and finiteness."""
    import io

    import numpy as np

    for m in manifest.discover(root):
        arrays = manifest.load_arrays(m)
        for name, a in m["arrays"].items():
            dt, shape, vals = npyfile.read(os.path.join(m["dir"], a["file"]))
            same = arrays[name].shape == shape and np.array_equal(
                arrays[name].reshape(-1), np.array(vals, dtype=arrays[name].dtype)
            )
            c.ok(same, f"numpy reads {m['workload']}.{name} as written")
    for arr in [np.arange(6, dtype="<f4").reshape(2, 3) / 7, np.array([0.1, -2], dtype="<f2"),
                np.arange(-3, 9, dtype="<i4").reshape(3, 2, 2)]:
        buf = io.BytesIO()
        np.save(buf, arr)
        dt, shape, vals = npyfile.loads(buf.getvalue(), "np.save")
        c.ok(shape == arr.shape and np.array_equal(np.array(vals, arr.dtype).reshape(shape), arr),
             f"we read numpy's {arr.dtype} {arr.shape}")
    m = manifest.read(os.path.join(root, "S2"))
    j = np.load(os.path.join(m["dir"], "joints.npy"))
    j[5, 2] = 6
    with tempfile.TemporaryDirectory() as t:
        for f in os.listdir(m["dir"]):
            with open(os.path.join(m["dir"], f), "rb") as src, open(os.path.join(t, f), "wb") as dst:
                dst.write(src.read())
        np.save(os.path.join(t, "joints.npy"), j)
        m2 = dict(m, dir=t)
        c.raises(manifest.ManifestError, lambda: manifest.load_arrays(m2), "joint out of range", "[5,2] = 6")
        rest = np.load(os.path.join(t, "rest.npy"))
        rest[0, 0] = np.nan
        np.save(os.path.join(t, "rest.npy"), rest)
        np.save(os.path.join(t, "joints.npy"), np.load(os.path.join(m["dir"], "joints.npy")))
        c.raises(manifest.ManifestError, lambda: manifest.load_arrays(m2), "NaN refused", "not finite")
    # A lift's triangle vertices, gaussian triangles and bounds are checked on load.
    m = manifest.read(os.path.join(root, "L2"))
    for name, at, value, needle in (("triangles", (4, 1), 16, "triangles[4, 1] = 16"),
                                    ("triangle", (7,), -1, "triangle[7] = -1"),
                                    ("bound_cov", (2, 3), 0.0, "bound_cov[2, 3]")):
        with tempfile.TemporaryDirectory() as t:
            for f in os.listdir(m["dir"]):
                with open(os.path.join(m["dir"], f), "rb") as src, open(os.path.join(t, f), "wb") as dst:
                    dst.write(src.read())
            arr = np.load(os.path.join(t, name + ".npy"))
            arr[at] = value
            np.save(os.path.join(t, name + ".npy"), arr)
            c.raises(manifest.ManifestError, lambda m2=dict(m, dir=t): manifest.load_arrays(m2),
                     f"lift {name} out of range refused", needle)
    a = manifest.load_arrays(m)
    c.ok(manifest.expected_of(m, a).shape == (3, 40, 9), "a lift's expected is (B,N,9)")
    bnd = manifest.lift_bound(a, [2, 0])
    c.ok(bnd.shape == (2, 40, 9) and float(bnd.max()) == float(np.float32(TOL)),
         "a lift's bound is (B,N,9) from its bound arrays")


def check_compare(c):
    """compare.py's tables from hand-made files: the best agreeing variant by wall time, the ratios
    (in flight ÷ wall, latency ÷ wall), the before/after GPU ratio, and the CPU table."""
    import contextlib
    import io
    import json as _json

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import compare

    def row(backend, w, b, lat, fl, host, gpu_ms):
        return {"backend": backend, "workload": w, "batch": b, "status": "ok",
                "us_per_frame": lat, "in_flight_us_per_frame": fl, "host_us_per_frame": host,
                "gpu_ms": {"morph": gpu_ms, "skin": 0.0, "lift": None}}

    def peer(w, b, variant, cuda, wall, agrees=True):
        return {"workload": w, "batch": b, "variant": variant, "us_per_frame": cuda,
                "wall_us": {"median": wall}, "agrees": agrees}

    def run(fn, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            fn(*args)
        return out.getvalue()

    with tempfile.TemporaryDirectory() as d:
        def put(name, obj):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                _json.dump(obj, f)
            return path

        mien = put("bench.json", {"rows": [row("vulkan", "W1", 256, 300.0, 150.0, 120.0, 0.05),
                                           row("cpu-fast", "W1", 1, 30.0, 30.0, 0.0, None),
                                           row("vulkan", "W1", 1024, 2000.0, 1000.0, 10.0, 0.9)]})
        # Raw `gpu_ms` None is skipped; the fastest *agreeing* variant is compared (the faster
        # one that disagrees is not).
        torch = put("torch.json", {"results": [peer("W1", 256, "mm-fp32", 40.0, 60.0),
                                               peer("W1", 256, "mm-fp16", 20.0, 50.0),
                                               peer("W1", 256, "bad", 1.0, 2.0, agrees=False),
                                               peer("W1-surface", 1024, "surface", 400.0, 500.0)]})
        base = put("base.json", {"rows": [row("vulkan", "W1", 256, 400.0, 200.0, 130.0, 0.1)]})
        numpy = put("numpy.json", {"results": [{"workload": "W1", "batch": 1, "variant": "dense",
                                                "us_per_frame": 24.0}]})
        g = run(compare.gpu, mien, torch, base)
        c.ok("| W1 | 256 | 300 / 150 | 120 | 50 |" in g, f"compare gpu row: {g}")
        c.ok("50 (mm-fp16) / 20 | 3.00× | 6.00× |" in g, f"compare gpu ratios: {g}")
        c.ok("| vulkan | W1 | 256 | 400 / 200 / 100 | 300 / 150 / 50 | 0.50× |" in g,
             f"compare before/after: {g}")
        t = run(compare.cpu, mien, numpy)
        c.ok("| W1 | 1 | — | 30 | 24 (dense) | 1.25× |" in t, f"compare cpu: {t}")
        l = run(compare.lift, mien, torch)
        c.ok("| 1024 | 2,000 / 1,000 | — | 500 (surface) / 400 | 4.000× |" in l, f"compare lift: {l}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-numpy", action="store_true", help="pure-Python checks only")
    ap.add_argument("--write", metavar="DIR", help="also leave the tiny export in DIR")
    args = ap.parse_args()
    c = Checks()
    check_npy(c)
    check_compare(c)
    with tempfile.TemporaryDirectory() as root:
        build_export(root, bad=True)
        check_export(c, root)
        check_manifest_errors(c, root)
        if not args.no_numpy:
            check_numpy(c, root)
    if args.write:
        build_export(args.write, bad=True)
    for f in c.failed:
        print("FAIL:", f)
    print(f"selftest ({'pure Python' if args.no_numpy else 'with numpy'}): "
          f"{c.passed} checks passed, {len(c.failed)} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
