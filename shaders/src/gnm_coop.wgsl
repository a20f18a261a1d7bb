// The linear head model (GNM) forward pass on tensor cores: the same result as gnm.wgsl's
// `forward` followed by skin.wgsl (neutral + Σₑ (cₑ·sₑ)·Bₑ, eyes, seam, LBS), with the blend as a
// cooperative-matrix GEMM (SPV_KHR_cooperative_matrix through naga's `wgpu_cooperative_matrix`):
// fp16 inputs — the basis as uploaded (tiles (T,E,192) of halves) and the scaled coefficients
// rounded to fp16 by the host — and fp32 accumulation, 16×16×16 per step. Three entry points:
//
// `blend`: one workgroup is one subgroup (32 invocations; the H200's subgroup size) and owns a
// third of a vertex tile (CB = 64 of the tile's 192 columns = 4 matrices of 16 columns) for a
// block of IB = 64 instances (4 row blocks of 16): a 4×4 register block, so each B fragment
// loaded serves 4 row blocks and each A fragment 4 column blocks (8 loads per 16 products, where
// one row block of 12 column blocks took 13 per 12):
//   for k in 0, 16, … < E:  A_b = coefficients of instances i0+16b … i0+16b+15, e = k … k+15
//                            (row-major, the host's (N₆₄,E₁₆) f16 array, zero past N and E),
//                            B_j = basis rows e = k … k+15, columns col+16j … col+16j+15
//                            (row-major, stride 192 halves), C_bj += A_b·B_j;
// rows of B past E (the next tile's first rows, or the zero rows padded after the last tile) meet
// zero coefficients: 0·finite = 0 exactly. The accumulators are stored straight to `deltas`
// (N₁₆, 3·V₆₄) f32 — no workgroup memory, so many subgroups share an SM; row blocks at or past N
// (zero coefficients only) are not stored. Workgroup x is the instance block, y the tile's third:
// the blocks sharing a column range run side by side and read its basis through the same cache.
// The loop has no branch: skipping the products of zero row blocks inside it cost 16% at batch
// 256 on the H100 (loads no longer issued ahead); `blend_one` serves batches of up to 16.
// (Tried and measured slower, docs/PERFORMANCE.md 2026-12-06 run d: blend and finish in one pass
// through workgroup memory, 2×; finish writing positions only over zeroed normals, 1.5×.)
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
const IB: u32 = 64u;         // instances per workgroup: 4 row blocks of 16
const CB: u32 = 64u;         // columns per workgroup: 4 matrices of 16, a third of a tile

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
// The scaled coefficients cₑ·sₑ rounded to fp16: (N₆₄, E₁₆), zero past N and E.
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
    let i0 = wg.x * 64u;
    let tile = wg.y / 3u;
    let col = (wg.y % 3u) * CB;
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c02 = coop_mat16x16<f32, C>();
    var c03 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    var c12 = coop_mat16x16<f32, C>();
    var c13 = coop_mat16x16<f32, C>();
    var c20 = coop_mat16x16<f32, C>();
    var c21 = coop_mat16x16<f32, C>();
    var c22 = coop_mat16x16<f32, C>();
    var c23 = coop_mat16x16<f32, C>();
    var c30 = coop_mat16x16<f32, C>();
    var c31 = coop_mat16x16<f32, C>();
    var c32 = coop_mat16x16<f32, C>();
    var c33 = coop_mat16x16<f32, C>();
    for (var k = 0u; k < e_n; k = k + 16u) {
        let a0 = coopLoadT<coop_mat16x16<f16, A>>(&scaled_h[(i0 + 0u) * stride + k], stride);
        let a1 = coopLoadT<coop_mat16x16<f16, A>>(&scaled_h[(i0 + 16u) * stride + k], stride);
        let a2 = coopLoadT<coop_mat16x16<f16, A>>(&scaled_h[(i0 + 32u) * stride + k], stride);
        let a3 = coopLoadT<coop_mat16x16<f16, A>>(&scaled_h[(i0 + 48u) * stride + k], stride);
        let r = (tile * e_n + k) * COLS + col;
        let b0 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 0u], COLS);
        let b1 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 16u], COLS);
        let b2 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 32u], COLS);
        let b3 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 48u], COLS);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
    }
    // row_len(), inlined: naga 30's SPIR-V writer panics on a call's result inside a
    // cooperative store's pointer ("Expression … is not cached").
    let rl = 3u * ((params.count + TV - 1u) / TV) * TV;
    let o = i0 * rl + tile * COLS + col;
    // Each offset its own `let`: naga 30's WGSL front end does not emit an index computed inside
    // a cooperative store's pointer argument (its SPIR-V writer then panics).
    {
        let o00 = o + 0u * rl + 0u;
        let o01 = o + 0u * rl + 16u;
        let o02 = o + 0u * rl + 32u;
        let o03 = o + 0u * rl + 48u;
        coopStoreT(c00, &deltas[o00], rl);
        coopStoreT(c01, &deltas[o01], rl);
        coopStoreT(c02, &deltas[o02], rl);
        coopStoreT(c03, &deltas[o03], rl);
    }
    if (i0 + 16u < params.instances) {
        let o10 = o + 16u * rl + 0u;
        let o11 = o + 16u * rl + 16u;
        let o12 = o + 16u * rl + 32u;
        let o13 = o + 16u * rl + 48u;
        coopStoreT(c10, &deltas[o10], rl);
        coopStoreT(c11, &deltas[o11], rl);
        coopStoreT(c12, &deltas[o12], rl);
        coopStoreT(c13, &deltas[o13], rl);
    }
    if (i0 + 32u < params.instances) {
        let o20 = o + 32u * rl + 0u;
        let o21 = o + 32u * rl + 16u;
        let o22 = o + 32u * rl + 32u;
        let o23 = o + 32u * rl + 48u;
        coopStoreT(c20, &deltas[o20], rl);
        coopStoreT(c21, &deltas[o21], rl);
        coopStoreT(c22, &deltas[o22], rl);
        coopStoreT(c23, &deltas[o23], rl);
    }
    if (i0 + 48u < params.instances) {
        let o30 = o + 48u * rl + 0u;
        let o31 = o + 48u * rl + 16u;
        let o32 = o + 48u * rl + 32u;
        let o33 = o + 48u * rl + 48u;
        coopStoreT(c30, &deltas[o30], rl);
        coopStoreT(c31, &deltas[o31], rl);
        coopStoreT(c32, &deltas[o32], rl);
        coopStoreT(c33, &deltas[o33], rl);
    }
}

// `blend_one`: `blend` for batches of at most 16 instances — one row block, 4 column blocks (a
// 4-row-block workgroup would multiply three blocks of zeros).
@compute @workgroup_size(32)
fn blend_one(@builtin(workgroup_id) wg: vec3<u32>) {
    let e_n = params.coeffs;
    let stride = params.stride;
    let i0 = wg.x * 16u;
    let tile = wg.y / 3u;
    let col = (wg.y % 3u) * CB;
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c02 = coop_mat16x16<f32, C>();
    var c03 = coop_mat16x16<f32, C>();
    for (var k = 0u; k < e_n; k = k + 16u) {
        let a0 = coopLoadT<coop_mat16x16<f16, A>>(&scaled_h[(i0 + 0u) * stride + k], stride);
        let r = (tile * e_n + k) * COLS + col;
        let b0 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 0u], COLS);
        let b1 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 16u], COLS);
        let b2 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 32u], COLS);
        let b3 = coopLoadT<coop_mat16x16<f16, B>>(&basis[r + 48u], COLS);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
    }
    // row_len(), inlined: naga 30's SPIR-V writer panics on a call's result inside a
    // cooperative store's pointer ("Expression … is not cached").
    let rl = 3u * ((params.count + TV - 1u) / TV) * TV;
    let o = i0 * rl + tile * COLS + col;
    // Each offset its own `let`: naga 30's WGSL front end does not emit an index computed inside
    // a cooperative store's pointer argument (its SPIR-V writer then panics).
    let o00 = o + 0u * rl + 0u;
    let o01 = o + 0u * rl + 16u;
    let o02 = o + 0u * rl + 32u;
    let o03 = o + 0u * rl + 48u;
    coopStoreT(c00, &deltas[o00], rl);
    coopStoreT(c01, &deltas[o01], rl);
    coopStoreT(c02, &deltas[o02], rl);
    coopStoreT(c03, &deltas[o03], rl);
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

