// The linear head model (GNM) forward pass on tensor cores: the same result as gnm.wgsl's
// `forward` followed by skin.wgsl (neutral + Σₑ (cₑ·sₑ)·Bₑ, eyes, seam, LBS), with the blend as a
// cooperative-matrix GEMM (SPV_KHR_cooperative_matrix through naga's `wgpu_cooperative_matrix`):
// fp16 inputs — the basis as uploaded (tiles (T,E,192) of halves) and the scaled coefficients
// rounded to fp16 by the host — and fp32 accumulation, 16×16×16 per step. Two entry points:
//
// `blend`: one workgroup is one subgroup (32 invocations; the H200's subgroup size) and owns one
// vertex tile (64 vertices = 192 columns = 12 matrices of 16 columns) and a block of IB = 16
// instances:
//   for k in 0, 16, … < E:  A = the block's coefficients [16 instances × 16 e] (row-major, the
//                            host's (N₁₆,E₁₆) f16 array, zero past N and E),
//                            B_j = basis rows e = k … k+15, columns 16j … 16j+15 (row-major, stride
//                            192 halves), C_j += A·B_j for j = 0 … 11;
// rows of B past E (the next tile's first rows, or the zero rows padded after the last tile) meet
// zero coefficients: 0·finite = 0 exactly. The accumulators are stored straight to `deltas`
// (N₁₆, 3·V₆₄) f32 — no workgroup memory, so many subgroups share an SM.
//
// `finish`: one invocation per (vertex, instance): the neutral, the eyes and the seam as in
// gnm.wgsl, then LBS as in skin.wgsl (slots in order, zero weights skipped, the instance's palette
// slice); a pack has no normals, so the posed normal is 0. It moves 12 bytes in and 24 out per
// vertex and instance, where gnm.wgsl's output read and written again by skin.wgsl moved 72.
//
// Not bit-equal to gnm.wgsl: the coefficients are rounded to fp16 (relative error ≤ 2⁻¹¹) and the
// accumulation order is the hardware's. The bound the tests use is derived in
// mien_cpu::conformance::gnm::coop_vertex_bounds.

enable f16;
enable wgpu_cooperative_matrix;

const TV: u32 = 64u;         // vertices per tile
const COLS: u32 = 192u;      // halves per tile row: 3·TV
const IB: u32 = 16u;         // instances per workgroup

struct GnmCoopParams {
    count: u32,       // vertices in this chunk
    coeffs: u32,      // E
    instances: u32,   // N
    stride: u32,      // E₁₆: E rounded up to 16, the coefficient rows' stride
}

// One instance's eye inputs, written by the CPU per frame (as gnm.wgsl).
struct GnmFrameHeader {
    eye_rot_l: mat3x3<f32>,
    eye_rot_r: mat3x3<f32>,
    eye_centre_l: vec4<f32>,
    eye_centre_r: vec4<f32>,
}

// One palette entry: the joint matrix and its normal matrix (skin.wgsl's `Joint`).
struct Joint {
    m: mat4x4<f32>,
    n: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> params: GnmCoopParams;
// Per instance (N,).
@group(0) @binding(1) var<storage, read> heads: array<GnmFrameHeader>;
// The scaled coefficients cₑ·sₑ rounded to fp16: (N₁₆, E₁₆), zero past N and E.
@group(0) @binding(2) var<storage, read> scaled_h: array<f16>;
// This chunk's basis tiles (T,E,192) fp16, then 16 rows of zeros.
@group(0) @binding(3) var<storage, read> basis: array<f16>;
// Per vertex (neutral xyz, left eye weight), (seam xyz, right eye weight): (V,2).
@group(0) @binding(4) var<storage, read> statics: array<vec4<f32>>;
// Palette indices (V,4) and skin weights (V,4) summing to 1 (skin.wgsl's).
@group(0) @binding(5) var<storage, read> joints: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> skin_weights: array<vec4<f32>>;
// This frame's palettes (N·P,): instance i's slice [i·P, (i+1)·P).
@group(0) @binding(7) var<storage, read> palette: array<Joint>;
// The blended deltas Σₑ(cₑ·sₑ)·Bₑ: (N₁₆, 3·V₆₄) f32, instance rows (`blend` writes, `finish` reads).
@group(0) @binding(8) var<storage, read_write> deltas: array<f32>;
// Posed position xyz then a zero normal per instance and vertex: (N,V,6) f32, metres, written as
// three vec2 (8-byte stores: every vertex starts 24 bytes after the last).
@group(0) @binding(9) var<storage, read_write> posed: array<vec2<f32>>;

fn turn(p: vec3<f32>, w: f32, r: mat3x3<f32>, c: vec3<f32>) -> vec3<f32> {
    if (w == 0.0) {
        return p;
    }
    let turned = r * (p - c) + c;
    return p + w * (turned - p);
}

// The deltas' row length: 3 × the chunk's vertices rounded up to whole tiles.
fn row_len() -> u32 {
    return 3u * ((params.count + TV - 1u) / TV) * TV;
}

@compute @workgroup_size(32)
fn blend(@builtin(workgroup_id) wg: vec3<u32>) {
    let e_n = params.coeffs;
    let stride = params.stride;
    let i0 = wg.x * IB;
    let tile = wg.y;
    var c0 = coop_mat16x16<f32, C>();
    var c1 = coop_mat16x16<f32, C>();
    var c2 = coop_mat16x16<f32, C>();
    var c3 = coop_mat16x16<f32, C>();
    var c4 = coop_mat16x16<f32, C>();
    var c5 = coop_mat16x16<f32, C>();
    var c6 = coop_mat16x16<f32, C>();
    var c7 = coop_mat16x16<f32, C>();
    var c8 = coop_mat16x16<f32, C>();
    var c9 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    for (var k = 0u; k < e_n; k = k + 16u) {
        let a = coopLoadT<coop_mat16x16<f16, A>>(&scaled_h[i0 * stride + k], stride);
        let r = (tile * e_n + k) * COLS;
        c0 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r], COLS), c0);
        c1 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 16u], COLS), c1);
        c2 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 32u], COLS), c2);
        c3 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 48u], COLS), c3);
        c4 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 64u], COLS), c4);
        c5 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 80u], COLS), c5);
        c6 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 96u], COLS), c6);
        c7 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 112u], COLS), c7);
        c8 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 128u], COLS), c8);
        c9 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 144u], COLS), c9);
        c10 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 160u], COLS), c10);
        c11 = coopMultiplyAdd(a, coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 176u], COLS), c11);
    }
    // row_len(), inlined: naga 30's SPIR-V writer panics on a call's result inside a
    // cooperative store's pointer ("Expression … is not cached").
    let rl = 3u * ((params.count + TV - 1u) / TV) * TV;
    let o = i0 * rl + tile * COLS;
    // Each offset its own `let`: naga 30's WGSL front end does not emit an index computed inside
    // a cooperative store's pointer argument (its SPIR-V writer then panics).
    let o0 = o;
    let o1 = o + 16u;
    let o2 = o + 32u;
    let o3 = o + 48u;
    let o4 = o + 64u;
    let o5 = o + 80u;
    let o6 = o + 96u;
    let o7 = o + 112u;
    let o8 = o + 128u;
    let o9 = o + 144u;
    let o10 = o + 160u;
    let o11 = o + 176u;
    coopStoreT(c0, &deltas[o0], rl);
    coopStoreT(c1, &deltas[o1], rl);
    coopStoreT(c2, &deltas[o2], rl);
    coopStoreT(c3, &deltas[o3], rl);
    coopStoreT(c4, &deltas[o4], rl);
    coopStoreT(c5, &deltas[o5], rl);
    coopStoreT(c6, &deltas[o6], rl);
    coopStoreT(c7, &deltas[o7], rl);
    coopStoreT(c8, &deltas[o8], rl);
    coopStoreT(c9, &deltas[o9], rl);
    coopStoreT(c10, &deltas[o10], rl);
    coopStoreT(c11, &deltas[o11], rl);
}

// x: vertices (64 per workgroup), y: instances.
@compute @workgroup_size(64)
fn finish(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = gid.x;
    let inst = gid.y;
    if (v >= params.count || inst >= params.instances) {
        return;
    }
    let d = inst * row_len() + 3u * v;
    let a = statics[2u * v];
    let b = statics[2u * v + 1u];
    let h = heads[inst];
    var p = a.xyz + vec3<f32>(deltas[d], deltas[d + 1u], deltas[d + 2u]);
    p = turn(p, a.w, h.eye_rot_l, h.eye_centre_l.xyz);
    p = turn(p, b.w, h.eye_rot_r, h.eye_centre_r.xyz);
    p = p + b.xyz;
    // skin.wgsl's LBS, slots in order, zero weights skipped.
    let first_joint = inst * (arrayLength(&palette) / params.instances);
    let jv = joints[v];
    let wv = skin_weights[v];
    let p4 = vec4<f32>(p, 1.0);
    var po = vec3<f32>(0.0);
    for (var s = 0u; s < 4u; s = s + 1u) {
        let wk = wv[s];
        if (wk == 0.0) {
            continue;
        }
        po = po + wk * (palette[first_joint + jv[s]].m * p4).xyz;
    }
    let out = 3u * (inst * params.count + v);
    posed[out] = po.xy;
    posed[out + 1u] = vec2<f32>(po.z, 0.0);
    posed[out + 2u] = vec2<f32>(0.0);
}
