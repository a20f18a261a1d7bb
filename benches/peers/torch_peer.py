#!/usr/bin/env python3
"""PyTorch peer of ``mien bench``: the workloads' math on the GPU, the way users write it.

Variants (see README.md for the formulas and the agreement bounds):
- morph ``mm-fp32``: out = addmm(base, W, D), W (B,T), D (T,3V), float32 (TF32 off).
- morph ``mm-fp16``: out = base + mm(W.half(), D.half()) (fp16 operands, fp32 accumulation,
  fp16 product, added to the float32 base).
- gnm ``mm-fp32``: out = addmm(neutral, C*s, basisᵀ) with the basis in float32.
- gnm ``mm-fp16``: out = neutral + mm((C*s).half(), basisᵀ) with the basis kept in fp16.
  Both followed by smplx ``lbs`` (float32) when the workload has a skin.
- skin ``lbs``: smplx ``lbs``: T = (Wd @ A.view(B,J,16)).view(B,V,4,4), v' = (T @ [v,1])[..., :3].
- skin ``lbs-gather``: T = einsum('vk,bvkij->bvij', w, A[:, joints]), then the same.
- lift ``surface``: the morph blend as ``mm-fp32`` (addmm), then per triangle (gathered
  ``v[:, faces]``) k = max(K_MIN, mean edge), n = normalize(e1 × e2), t = normalize(e1 − (e1·n)n),
  b = n × t, R = [t b n]; gathered per gaussian as GaussianAvatars does
  (``face_orien_mat[binding]``) with its vertices ``v[:, faces[tri]]``:
  μ = Σⱼ βⱼpⱼ + d·k·n, Σ = k²·R·S·Rᵀ packed to 6. float32 on the device, batched (B,N,…).
- lift ``surface-pergauss``: the same frame computed per gaussian from its gathered vertices.
- lift ``surface-fused``: ``surface`` with Σ's six packed entries computed elementwise
  (RS = R·S by broadcasting, then Σᵢⱼ = k²·Σ_b RSᵢ_b·Rⱼ_b) instead of batched 3×3 matmuls.
- lift ``surface-compiled``: ``surface-fused`` through ``torch.compile`` (where it runs).

The frame is first compared to mien's ``expected``; a variant outside its bound anywhere
is reported without a time. Times are CUDA-event times of one frame (controls already on
the GPU), median of --repeat runs after --warmup runs, synchronised after every run.

    python3 benches/peers/torch_peer.py --export DIR [--workloads W1,W4] [--batch 1,16,256]
        [--repeat 50] [--warmup 10] [--json torch.json] [--device cuda]
    python3 benches/peers/torch_peer.py --selftest
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402
except ModuleNotFoundError:
    print("torch_peer: error: PyTorch is not installed (pip install torch); numpy_peer.py needs "
          "only numpy", file=sys.stderr)
    sys.exit(2)

import common  # noqa: E402
import manifest  # noqa: E402

NAME = "torch"
U16 = 2.0**-11  # fp16 unit roundoff (round to nearest)
ETA16 = 2.0**-25  # half the fp16 subnormal spacing 2^-24: absolute rounding error below 2^-14
U32 = 2.0**-24  # fp32 unit roundoff (round to nearest)
U_ACC = 2.0**-23  # fp32 accumulation inside tensor-core GEMMs: allow round-toward-zero (2·U32)

DEV = None


def options(ap):
    ap.add_argument("--device", default="cuda", help="torch device (default cuda)")


def setup(args):
    """Pick the device; fix the matmul precision flags (no TF32, fp32 accumulation of fp16)."""
    global DEV
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        if not args.selftest:
            sys.exit("torch_peer: CUDA is not available (give --device cpu to run on the CPU)")
        print("torch_peer: CUDA not available, self-test runs on the CPU")
        args.device = "cpu"
    DEV = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False


def timer(step, warmup, repeat):
    """Per-run µs of ``step``: CUDA events around it, synchronised after every run.

    Also returns the host wall-clock per run (launch + GPU + sync) as ``wall_us``.
    On the CPU device only the wall clock exists and is returned as the time.
    """
    for _ in range(warmup):
        step()
    cuda = DEV.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
    times, wall = [], []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        if cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) * 1e3)
        else:
            step()
            times.append((time.perf_counter_ns() - t0) / 1e3)
        wall.append((time.perf_counter_ns() - t0) / 1e3)
    clock = "cuda events" if cuda else "time.perf_counter_ns"
    return times, {"clock": clock, "wall_us": common.summarize(wall)}


def machine(args):
    """CPU, GPU, torch and numpy facts."""
    info = common.base_machine()
    info.update(torch=torch.__version__, torch_cuda=torch.version.cuda,
                torch_threads=torch.get_num_threads(), torch_device=str(DEV),
                allow_tf32=torch.backends.cuda.matmul.allow_tf32,
                allow_fp16_reduced_precision_reduction=(
                    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction))
    if DEV.type == "cuda":
        p = torch.cuda.get_device_properties(DEV)
        info.update(gpu=p.name, gpu_memory_gib=round(p.total_memory / 2**30, 1),
                    gpu_capability=f"{p.major}.{p.minor}", gpu_sms=p.multi_processor_count)
        info["device"] = f"GPU {p.name}"
    else:
        info["device"] = f"CPU {info['cpu_model']}"
    return info


def dev(x, dtype=None):
    """numpy array -> tensor on the device (contiguous)."""
    t = torch.from_numpy(np.ascontiguousarray(x)).to(DEV)
    return t if dtype is None else t.to(dtype)


def fp16_gemm_bound(L, R, rel_l, eta_l, rel_r, eta_r, add):
    """Bound on |fl(base + fp16 GEMM) - (base + L·R)| elementwise, float64 (B,N).

    ``L`` (B,K) and ``R`` (K,N) are the exact operands' absolute values; each is
    rounded to fp16 as x(1+δ)+η with |δ| ≤ rel, |η| ≤ eta. With S = L@R and the
    row/column sums Ls, Rs:
      operands: (rel_l+rel_r+rel_l·rel_r)·S + eta_l(1+rel_r)·Rs + eta_r(1+rel_l)·Ls + K·eta_l·eta_r
      P (a bound on Σ|l̂||r̂|) = (1+rel_l)(1+rel_r)·S + the same η terms
      accumulation in fp32: γ_K·P, γ_K = K·U_ACC/(1-K·U_ACC) (products of fp16 are exact in fp32)
      fp16 output: U16·(1+γ_K)·P + ETA16
      fp32 add of base: U32·(|base| + (1+U16)(1+γ_K)·P + ETA16)
    """
    K = L.shape[1]
    S = L @ R
    Ls = L.sum(dim=1, keepdim=True)
    Rs = R.sum(dim=0, keepdim=True)
    eta = eta_l * (1 + rel_r) * Rs + eta_r * (1 + rel_l) * Ls + K * eta_l * eta_r
    ops = (rel_l + rel_r + rel_l * rel_r) * S + eta
    P = (1 + rel_l) * (1 + rel_r) * S + eta
    g = K * U_ACC / (1 - K * U_ACC)
    out = U16 * (1 + g) * P + ETA16
    add_err = U32 * (add.abs() + (1 + U16) * (1 + g) * P + ETA16)
    return ops + g * P + out + add_err


class Skin:
    """smplx-style lbs on the device: dense (V,J) weights, and the gather form's (V,4) arrays."""

    def __init__(self, joints, weights, J):
        V = joints.shape[0]
        self.j = dev(joints.astype(np.int64))
        self.w = dev(weights)
        Wd = torch.zeros((V, J), dtype=torch.float32, device=DEV)
        Wd.index_put_((torch.arange(V, device=DEV).repeat_interleave(4), self.j.reshape(-1)),
                      self.w.reshape(-1), accumulate=True)
        self.Wd = Wd
        self.J = J

    def transforms(self, A, gather=False):
        """T (B,V,4,4): smplx's matmul of the dense weights, or the einsum over gathered A."""
        B = A.shape[0]
        if gather:
            return torch.einsum("vk,bvkij->bvij", self.w, A[:, self.j])
        W = self.Wd.unsqueeze(0).expand(B, -1, -1)
        return torch.matmul(W, A.view(B, self.J, 16)).view(B, -1, 4, 4)

    def apply(self, v, A, gather=False):
        """smplx lbs tail: v_homo = [v, 1]; verts = (T @ v_homo)[..., :3, 0]. ``v`` is (B,V,3)."""
        T = self.transforms(A, gather)
        ones = torch.ones(v.shape[:-1] + (1,), dtype=v.dtype, device=DEV)
        v_homo = torch.matmul(T, torch.cat([v, ones], dim=-1).unsqueeze(-1))
        return v_homo[:, :, :3, 0]


def to_np(t, V):
    return t.reshape(-1, V, 3).double().cpu().numpy()


def morph_variants(m, a, tol):
    V, T = m["vertices"], m["count"]
    base = dev(a["base"].reshape(3 * V))
    D32 = dev(a["deltas"].reshape(T, 3 * V))
    D16 = D32.half()

    def make(half):
        def prepare(rows):
            W = dev(a["weights"][rows])
            B = len(rows)
            out = torch.empty((B, 3 * V), dtype=torch.float32, device=DEV)
            W16 = torch.empty((B, T), dtype=torch.float16, device=DEV)
            tmp = torch.empty((B, 3 * V), dtype=torch.float16, device=DEV)

            def step():
                if half:
                    W16.copy_(W)
                    torch.mm(W16, D16, out=tmp)
                    torch.add(base, tmp, out=out)
                else:
                    torch.addmm(base, W, D32, out=out)

            def bound(got):
                if not half:
                    return tol
                b = fp16_gemm_bound(W.double().abs(), D32.double().abs(), U16, ETA16, U16, ETA16,
                                    base.double())
                return tol + b.reshape(B, V, 3).cpu().numpy()

            return common.Case(step, lambda: to_np(out, V), bound)

        return prepare

    return [
        common.Variant("mm-fp32", make(False), "addmm(base, W, D) fp32, TF32 off"),
        common.Variant("mm-fp16", make(True), "base + mm(W.half(), D.half()), fp32 accumulate"),
    ]


def gnm_variants(m, a, tol):
    V, E = m["vertices"], m["count"]
    neutral = dev(a["neutral"].reshape(3 * V))
    basis16 = dev(a["basis"])  # (3V,E) fp16, as exported
    basis32 = basis16.float()
    scale = dev(a["scale"])
    s = m["skin"]
    skin = Skin(a[s["joints"]], a[s["weights"]], m["joint_count"]) if s else None

    def make(half):
        def prepare(rows):
            C = dev(a["coeffs"][rows])
            B = len(rows)
            A = dev(a[s["matrices"]][rows]) if s else None
            cs = torch.empty((B, E), dtype=torch.float32, device=DEV)
            cs16 = torch.empty((B, E), dtype=torch.float16, device=DEV)
            tmp = torch.empty((B, 3 * V), dtype=torch.float16, device=DEV)
            blend = torch.empty((B, 3 * V), dtype=torch.float32, device=DEV)
            last = [blend]

            def step():
                torch.mul(C, scale, out=cs)
                if half:
                    cs16.copy_(cs)
                    torch.mm(cs16, basis16.t(), out=tmp)
                    torch.add(neutral, tmp, out=blend)
                else:
                    torch.addmm(neutral, cs, basis32.t(), out=blend)
                if skin:
                    last[0] = skin.apply(blend.view(B, V, 3), A)

            def bound(got):
                if not half:
                    return tol
                # c·s is formed in fp32 (rel U32) then rounded to fp16; the basis is exact fp16.
                L = (C.double() * scale.double()).abs()
                rel_l = U16 + U32 + U16 * U32
                e = fp16_gemm_bound(L, basis32.double().abs().t(), rel_l, ETA16, 0.0, 0.0,
                                    neutral.double()).reshape(B, V, 3)
                if skin:  # a position error e propagates through T's 3x3 part: |T3|·e
                    T3 = skin.transforms(A).double()[:, :, :3, :3]
                    e = torch.einsum("bvij,bvj->bvi", T3.abs(), e)
                return tol + e.cpu().numpy()

            return common.Case(step, lambda: to_np(last[0], V), bound)

        return prepare

    tail = ", then smplx lbs" if skin else ""
    return [
        common.Variant("mm-fp32", make(False), "addmm(neutral, C*s, basis^T) fp32" + tail),
        common.Variant("mm-fp16", make(True), "neutral + mm((C*s).half(), basis16^T)" + tail),
    ]


def skin_variants(m, a, tol):
    V = m["vertices"]
    skin = Skin(a["joints"], a["weights"], m["joint_count"])
    rest = dev(a["rest"])

    def make(gather):
        def prepare(rows):
            A = dev(a["matrices"][rows])
            v = rest.unsqueeze(0).expand(len(rows), -1, -1)
            last = [None]

            def step():
                last[0] = skin.apply(v, A, gather)

            return common.Case(step, lambda: to_np(last[0], V), lambda g: tol)

        return prepare

    return [
        common.Variant("lbs", make(False), "smplx lbs: T = Wd @ A, v' = T[v,1]"),
        common.Variant("lbs-gather", make(True), "T = einsum(w, A[:, joints]), v' = T[v,1]"),
    ]


K_MIN = 1e-6  # mien_core::lift::bound::K_MIN: the smallest triangle scale
COV_ROWS = list(manifest.COV_ROWS)
COV_COLS = list(manifest.COV_COLS)


def unit(x):
    """x / |x| along the last axis."""
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)


def triangle_frames(tv):
    """Frames of triangles ``tv`` (..., 3 vertices, 3): k (...), R (..., 3, 3) with columns t, b, n."""
    p0, p1, p2 = tv.unbind(-2)
    e1 = p1 - p0
    e2 = p2 - p0
    norm = torch.linalg.vector_norm
    k = ((norm(e1, dim=-1) + norm(p2 - p1, dim=-1) + norm(e2, dim=-1)) / 3).clamp_min(K_MIN)
    n = unit(torch.linalg.cross(e1, e2, dim=-1))
    t = unit(e1 - (e1 * n).sum(-1, keepdim=True) * n)
    b = torch.linalg.cross(n, t, dim=-1)
    return k, torch.stack([t, b, n], dim=-1)


def lift_variants(m, a, tol):
    V, T = m["vertices"], m["count"]
    base = dev(a["base"].reshape(3 * V))
    D = dev(a["deltas"].reshape(T, 3 * V))
    faces = dev(a["triangles"].astype(np.int64))
    tri = dev(a["triangle"].astype(np.int64))
    corners = faces[tri]  # (N,3): each gaussian's vertex indices, built once
    bary = dev(a["bary"])
    bary = torch.stack([1 - bary[:, 0] - bary[:, 1], bary[:, 0], bary[:, 1]], dim=-1)  # (N,3)
    offset = dev(a["offset"])
    s = dev(a["local_cov"])
    S = torch.stack([s[:, [0, 1, 2]], s[:, [1, 3, 4]], s[:, [2, 4, 5]]], dim=-2)  # (N,3,3)

    def frame(pos, B, per_face, fused):
        """One frame's centres (B,N,3) and packed covariances (B,N,6) from the posed ``pos``."""
        v = pos.view(B, V, 3)
        P = v[:, corners]  # (B,N,3,3)
        if per_face:
            k, R = triangle_frames(v[:, faces])
            k, R = k[:, tri], R[:, tri]
        else:
            k, R = triangle_frames(P)
        n = R[..., 2]
        mu = torch.einsum("nj,bnji->bni", bary, P) + (offset * k).unsqueeze(-1) * n
        if fused:
            # Elementwise instead of batched 3×3 matmuls: RS = R·S, then the six entries
            # Σ_b RS[i,b]·R[j,b] the packing keeps.
            RS = (R.unsqueeze(-1) * S.unsqueeze(-3)).sum(-2)
            cov = (RS[..., COV_ROWS, :] * R[..., COV_COLS, :]).sum(-1) * (k * k).unsqueeze(-1)
        else:
            cov = (k * k)[..., None, None] * (R @ S @ R.transpose(-1, -2))
            cov = cov[..., COV_ROWS, COV_COLS]
        return mu, cov

    def make(per_face, fused=False, compiled=False):
        lift = torch.compile(frame, dynamic=False) if compiled else frame

        def prepare(rows):
            W = dev(a["weights"][rows])
            B = len(rows)
            pos = torch.empty((B, 3 * V), dtype=torch.float32, device=DEV)
            last = [None, None]

            def step():
                torch.addmm(base, W, D, out=pos)
                last[0], last[1] = lift(pos, B, per_face, fused)

            def result():
                return torch.cat(last, dim=-1).double().cpu().numpy()

            return common.Case(step, result, lambda g: manifest.lift_bound(a, rows))

        return prepare

    out = [
        common.Variant("surface", make(True),
                       "addmm morph, frames per triangle gathered per gaussian, mu/Sigma fp32"),
        common.Variant("surface-pergauss", make(False),
                       "addmm morph, each gaussian's frame from its gathered vertices, fp32"),
        common.Variant("surface-fused", make(True, fused=True),
                       "as surface, Sigma's six entries elementwise (no batched 3x3 matmuls)"),
    ]
    if compile_works():
        out.append(common.Variant("surface-compiled", make(True, fused=True, compiled=True),
                                  "surface-fused through torch.compile (Inductor, one graph)"))
    return out


def compile_works():
    """Whether ``torch.compile`` runs here (Inductor needs Triton on CUDA, a C++ compiler on the
    CPU): a tiny function compiled and run once; ``MIEN_PEER_NO_COMPILE=1`` skips it."""
    if os.environ.get("MIEN_PEER_NO_COMPILE") == "1":
        return False
    try:
        f = torch.compile(lambda x: (x * 2).sum(-1), dynamic=False)
        f(torch.ones((4, 3), device=DEV))
        return True
    except Exception as e:  # noqa: BLE001 - any failure means: no compiled variant here
        print(f"torch_peer: note: torch.compile unavailable ({type(e).__name__}): "
              "no surface-compiled variant", file=sys.stderr)
        return False


def variants(m, arrays, args):
    """The torch variants of manifest ``m``."""
    tol = m["tolerance_m"]
    return {"morph": morph_variants, "gnm": gnm_variants, "skin": skin_variants,
            "lift": lift_variants}[m["kind"]](m, arrays, tol)


if __name__ == "__main__":
    sys.exit(common.main(sys.modules[__name__]))
