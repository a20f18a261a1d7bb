#!/usr/bin/env python3
"""A synthetic export at real workload sizes, for trying the peers before (or beside) mien's.

Writes the same layout as ``mien bench --export DIR`` (see manifest.py) with seeded random
data and float64 ``expected``; the sizes follow the benchmark issue (W1 2,694×52 morph,
W4 17,821×383 GNM, W5 24,000×669 morph with ≤32 active of targets touching 10% of the
vertices, W6 3,273 vertices × 19 joints). Names are prefixed ``S`` (SW1, SW4, ...) so they
are never mistaken for mien's exports. ``bytes_per_character`` is a stated stand-in
(output positions + active rows / basis read once per frame, divided by 16), not mien's.

    python3 benches/peers/synth_export.py OUT_DIR [--batch 16] [--tolerance 1e-5]
"""

import argparse
import json
import os

import numpy as np


def save(d, name, kind, V, n, B, arrays, tol, bpc):
    os.makedirs(d, exist_ok=True)
    entries = {}
    for a, arr in arrays.items():
        np.save(os.path.join(d, a + ".npy"), arr)
        dt = {"float32": "f32", "float16": "f16", "int32": "i32"}[str(arr.dtype)]
        entries[a] = {"file": a + ".npy", "dtype": dt, "shape": list(arr.shape)}
    key = {"morph": "targets", "gnm": "coefficients", "skin": "joints"}[kind]
    man = {"workload": name, "kind": kind, "vertices": V, key: n, "batch": B,
           "arrays": entries, "tolerance_m": tol, "bytes_per_character": bpc}
    with open(os.path.join(d, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(man, f, indent=1)


def morph(rng, V, T, B, active, touched):
    base = rng.uniform(-0.15, 0.15, (V, 3)).astype(np.float32)
    deltas = (rng.normal(0, 0.004, (T, V, 3)) * (rng.random((T, V, 1)) < touched)).astype(np.float32)
    w = np.zeros((B, T), np.float32)
    for b in range(B):
        w[b, rng.choice(T, min(active, T), replace=False)] = rng.random(min(active, T))
    exp = base.astype(np.float64) + (w.astype(np.float64) @ deltas.reshape(T, -1).astype(np.float64)).reshape(B, V, 3)
    return {"base": base, "deltas": deltas, "weights": w, "expected": exp.astype(np.float32)}


def gnm(rng, V, E, B):
    neutral = rng.uniform(-0.15, 0.15, (V, 3)).astype(np.float32)
    basis = rng.normal(0, 0.002, (3 * V, E)).astype(np.float16)
    scale = rng.uniform(0.5, 2.0, E).astype(np.float32)
    coeffs = rng.normal(0, 1, (B, E)).astype(np.float32)
    cs = coeffs.astype(np.float64) * scale.astype(np.float64)
    exp = neutral.astype(np.float64) + (cs @ basis.astype(np.float64).T).reshape(B, V, 3)
    return {"neutral": neutral, "basis": basis, "scale": scale, "coeffs": coeffs,
            "expected": exp.astype(np.float32)}


def skin(rng, V, J, B):
    rest = rng.uniform(-0.5, 0.5, (V, 3)).astype(np.float32)
    joints = rng.integers(0, J, (V, 4)).astype(np.int32)
    w = rng.random((V, 4))
    w = (w / w.sum(1, keepdims=True)).astype(np.float32)
    q = rng.normal(size=(B, J, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, s = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * s), 2 * (x * z + y * s),
                  2 * (x * y + z * s), 1 - 2 * (x * x + z * z), 2 * (y * z - x * s),
                  2 * (x * z - y * s), 2 * (y * z + x * s), 1 - 2 * (x * x + y * y)], -1)
    M = np.zeros((B, J, 4, 4))
    M[..., :3, :3] = R.reshape(B, J, 3, 3)
    M[..., :3, 3] = rng.uniform(-0.5, 0.5, (B, J, 3))
    M[..., 3, 3] = 1
    M = M.astype(np.float32)
    vh = np.concatenate([rest, np.ones((V, 1), np.float32)], 1).astype(np.float64)
    A = M.astype(np.float64)[:, joints]  # (B,V,4,4,4)
    exp = np.einsum("vk,bvkij,vj->bvi", w.astype(np.float64), A, vh)[..., :3]
    return {"rest": rest, "joints": joints, "weights": w, "matrices": M,
            "expected": exp.astype(np.float32)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tolerance", type=float, default=1e-5, help="tolerance_m written (metres)")
    args = ap.parse_args()
    rng = np.random.default_rng(20261130)
    B, tol = args.batch, args.tolerance
    out = lambda n: os.path.join(args.out, n)  # noqa: E731
    save(out("SW1"), "SW1", "morph", 2694, 52, B, morph(rng, 2694, 52, B, 32, 1.0), tol,
         2694 * 12 * 2 + 32 * 2694 * 12 / 16)
    save(out("SW4"), "SW4", "gnm", 17821, 383, B, gnm(rng, 17821, 383, B), tol,
         17821 * 12 * 2 + 3 * 17821 * 383 * 2 / 16)
    save(out("SW5"), "SW5", "morph", 24000, 669, B, morph(rng, 24000, 669, B, 32, 0.1), tol,
         24000 * 12 * 2 + 32 * 24000 * 12 / 16)
    save(out("SW6"), "SW6", "skin", 3273, 19, B, skin(rng, 3273, 19, B), tol,
         3273 * (12 * 2 + 32) + 19 * 64)


if __name__ == "__main__":
    main()
