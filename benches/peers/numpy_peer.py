#!/usr/bin/env python3
"""numpy peer of ``mien bench``: the workloads' math on the CPU, float32, the way users write it.

Variants (see README.md for the formulas):
- morph ``dense``:  out = base + W @ D, W (B,T), D (T,3V), over every target.
- morph ``active``: the same over only the weights' non-zero columns:
  c = flatnonzero(W.any(0)); out = base + W[:, c] @ D[c] (the gather is timed: it is per-frame work).
- gnm ``mm``: out = neutral + (C * s) @ basisᵀ, basis converted once to float32; then lbs if skinned.
- skin ``lbs``: smplx-style, T = Wd @ A (Wd the dense (V,J) weights), v' = T·[v,1].
- skin ``lbs-gather``: T = einsum('vk,bvkij->bvij', w, A[:, joints]), v' = T·[v,1].
- lift ``surface``: the morph blend as ``dense``, then per triangle k = max(K_MIN, mean edge),
  n = normalize(e1 × e2), t = normalize(e1 − (e1·n)n), b = n × t, R = [t b n]; gathered per
  gaussian (``R[:, tri]``, GaussianAvatars' ``face_orien_mat[binding]``) with its vertices
  ``v[:, faces[tri]]``: μ = Σⱼ βⱼpⱼ + d·k·n, Σ = k²·R·S·Rᵀ packed to 6.
- lift ``surface-pergauss``: the same frame computed per gaussian from its gathered vertices.

Every variant is first compared to mien's ``expected``; one that differs by more
than the manifest's ``tolerance_m`` anywhere is reported without a time.

    python3 benches/peers/numpy_peer.py --export DIR [--workloads W1,W4] [--batch 1,16,256]
        [--repeat 50] [--warmup 10] [--json numpy.json]
    python3 benches/peers/numpy_peer.py --selftest
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import common  # noqa: E402
import manifest  # noqa: E402

NAME = "numpy"


def setup(args):
    """Nothing to set up on the CPU."""


def timer(step, warmup, repeat):
    """Per-run wall-clock µs of ``step`` (time.perf_counter_ns), after ``warmup`` runs."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        step()
        times.append((time.perf_counter_ns() - t0) / 1e3)
    return times, {"clock": "time.perf_counter_ns"}


def machine(args):
    """CPU, numpy and BLAS facts."""
    info = common.base_machine()
    info["device"] = f"CPU {info['cpu_model']} ({info.get('usable_cpus', info['logical_cpus'])} cpus)"
    return info


def dense_skin_weights(joints, weights, J):
    """(V,J) float32 matrix with Σ_k w_k at [v, j_k] (repeated joints add), as smplx stores them."""
    V = joints.shape[0]
    Wd = np.zeros((V, J), dtype=np.float32)
    np.add.at(Wd, (np.repeat(np.arange(V), 4), joints.reshape(-1)), weights.reshape(-1))
    return Wd


def lbs(Wd, A, v_homo, out):
    """smplx ``lbs`` skinning: T = Wd @ A (B,V,16) -> (B,V,4,4); out = (T·[v,1])[..., :3].

    ``v_homo`` is (V,4) or (B,V,4); ``out`` (B,V,3) receives the result. The last product is a
    plain einsum: ``optimize=True`` was tried on the H200 host (3,273 vertices) and was no
    faster at B=16 and slower at B=1 (path search per call) and B=256.
    """
    B, J = A.shape[:2]
    T = np.matmul(Wd, A.reshape(B, J, 16)).reshape(B, -1, 4, 4)
    sub = "bvij,vj->bvi" if v_homo.ndim == 2 else "bvij,bvj->bvi"
    np.einsum(sub, T[:, :, :3, :], v_homo, out=out)


def lbs_gather(joints, weights, A, v_homo, out):
    """Gather form: T = Σ_k w_k A[:, j_k] via einsum over (B,V,4,4,4); out = (T·[v,1])[..., :3]."""
    T = np.einsum("vk,bvkij->bvij", weights, A[:, joints])
    sub = "bvij,vj->bvi" if v_homo.ndim == 2 else "bvij,bvj->bvi"
    np.einsum(sub, T[:, :, :3, :], v_homo, out=out)


def homogeneous(p):
    """[p, 1] along the last axis (float32)."""
    return np.concatenate([p, np.ones(p.shape[:-1] + (1,), dtype=np.float32)], axis=-1)


def morph_variants(m, a, tol):
    V, T = m["vertices"], m["count"]
    base = a["base"].reshape(3 * V)
    D = a["deltas"].reshape(T, 3 * V)

    def make(active):
        def prepare(rows):
            W = np.ascontiguousarray(a["weights"][rows])
            out = np.empty((len(rows), 3 * V), dtype=np.float32)

            def step():
                if active:
                    c = np.flatnonzero(W.any(axis=0))
                    np.matmul(W[:, c], D[c], out=out)
                else:
                    np.matmul(W, D, out=out)
                np.add(out, base, out=out)

            return common.Case(step, lambda: out.reshape(-1, V, 3).astype(np.float64), lambda g: tol)

        return prepare

    return [
        common.Variant("dense", make(False), "base + W @ D over all targets"),
        common.Variant("active", make(True), "base + W[:,c] @ D[c], c = non-zero columns of W"),
    ]


def skin_parts(m, a):
    """(Wd, joints, weights, matrices) of the workload's skin, or None."""
    s = m["skin"]
    if s is None:
        return None
    j, w = a[s["joints"]], a[s["weights"]]
    return dense_skin_weights(j, w, m["joint_count"]), j, w, a[s["matrices"]]


def gnm_variants(m, a, tol):
    V, E = m["vertices"], m["count"]
    neutral = a["neutral"].reshape(3 * V)
    basis = a["basis"].astype(np.float32)  # (3V,E); f16 -> f32 is exact
    scale = a["scale"]
    skin = skin_parts(m, a)

    def prepare(rows):
        C = np.ascontiguousarray(a["coeffs"][rows])
        B = len(rows)
        blend = np.empty((B, 3 * V), dtype=np.float32)
        out = np.empty((B, V, 3), dtype=np.float32) if skin else blend.reshape(B, V, 3)
        A = np.ascontiguousarray(skin[3][rows]) if skin else None

        def step():
            np.matmul(C * scale, basis.T, out=blend)
            np.add(blend, neutral, out=blend)
            if skin:
                lbs(skin[0], A, homogeneous(blend.reshape(B, V, 3)), out)

        return common.Case(step, lambda: out.astype(np.float64), lambda g: tol)

    note = "neutral + (C*s) @ basis^T (f32)" + (", then smplx lbs" if skin else "")
    return [common.Variant("mm", prepare, note)]


def skin_variants(m, a, tol):
    Wd, j, w, M = skin_parts(m, a)
    v_homo = homogeneous(a["rest"])

    def make(gather):
        def prepare(rows):
            A = np.ascontiguousarray(M[rows])
            out = np.empty((len(rows), m["vertices"], 3), dtype=np.float32)

            def step():
                if gather:
                    lbs_gather(j, w, A, v_homo, out)
                else:
                    lbs(Wd, A, v_homo, out)

            return common.Case(step, lambda: out.astype(np.float64), lambda g: tol)

        return prepare

    return [
        common.Variant("lbs", make(False), "smplx lbs: T = Wd @ A, v' = T[v,1]"),
        common.Variant("lbs-gather", make(True), "T = einsum(w, A[:, joints]), v' = T[v,1]"),
    ]


K_MIN = np.float32(1e-6)  # mien_core::lift::bound::K_MIN: the smallest triangle scale
COV_ROWS = list(manifest.COV_ROWS)
COV_COLS = list(manifest.COV_COLS)


def unit(x):
    """x / |x| along the last axis."""
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def triangle_frames(tv):
    """Frames of triangles ``tv`` (..., 3 vertices, 3): k (...), R (..., 3, 3) with columns t, b, n."""
    p0, p1, p2 = tv[..., 0, :], tv[..., 1, :], tv[..., 2, :]
    e1 = p1 - p0
    e2 = p2 - p0
    norm = np.linalg.norm
    k = np.maximum((norm(e1, axis=-1) + norm(p2 - p1, axis=-1) + norm(e2, axis=-1)) / 3, K_MIN)
    n = unit(np.cross(e1, e2))
    t = unit(e1 - (e1 * n).sum(-1, keepdims=True) * n)
    b = np.cross(n, t)
    return k, np.stack([t, b, n], axis=-1)


def lift_variants(m, a, tol):
    V, T, N = m["vertices"], m["count"], m["gaussians"]
    base = a["base"].reshape(3 * V)
    D = a["deltas"].reshape(T, 3 * V)
    faces = a["triangles"].astype(np.intp)
    tri = a["triangle"].astype(np.intp)
    corners = faces[tri]  # (N,3): each gaussian's vertex indices, built once
    b1, b2 = a["bary"][:, 0], a["bary"][:, 1]
    bary = np.stack([1 - b1 - b2, b1, b2], axis=-1)  # (N,3) float32
    offset = a["offset"]
    s = a["local_cov"]
    S = np.stack([s[:, [0, 1, 2]], s[:, [1, 3, 4]], s[:, [2, 4, 5]]], axis=-2)  # (N,3,3)

    def make(per_face):
        def prepare(rows):
            W = np.ascontiguousarray(a["weights"][rows])
            B = len(rows)
            pos = np.empty((B, 3 * V), dtype=np.float32)
            last = [None, None]

            def step():
                np.matmul(W, D, out=pos)
                np.add(pos, base, out=pos)
                v = pos.reshape(B, V, 3)
                P = v[:, corners]  # (B,N,3,3)
                if per_face:
                    k, R = triangle_frames(v[:, faces])
                    k, R = k[:, tri], R[:, tri]
                else:
                    k, R = triangle_frames(P)
                n = R[..., 2]
                mu = np.einsum("nj,bnji->bni", bary, P) + (offset * k)[..., None] * n
                cov = (k * k)[..., None, None] * (R @ S @ R.swapaxes(-1, -2))
                last[0], last[1] = mu, cov[..., COV_ROWS, COV_COLS]

            def result():
                return np.concatenate(last, axis=-1).astype(np.float64)

            return common.Case(step, result, lambda g: manifest.lift_bound(a, rows))

        return prepare

    return [
        common.Variant("surface", make(True),
                       "morph, frames per triangle gathered per gaussian, mu/Sigma"),
        common.Variant("surface-pergauss", make(False),
                       "morph, each gaussian's frame from its gathered vertices, mu/Sigma"),
    ]


def variants(m, arrays, args):
    """The numpy variants of manifest ``m``."""
    tol = m["tolerance_m"]
    return {"morph": morph_variants, "gnm": gnm_variants, "skin": skin_variants,
            "lift": lift_variants}[m["kind"]](m, arrays, tol)


if __name__ == "__main__":
    sys.exit(common.main(sys.modules[__name__]))
