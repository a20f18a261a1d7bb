// The linear head model (GNM) forward pass on tensor cores: the same result as gnm.wgsl's
// `forward` (neutral + Σₑ (cₑ·sₑ)·Bₑ, eyes, seam; skin.wgsl's input layout), with the blend as a
// cooperative-matrix GEMM (SPV_KHR_cooperative_matrix through naga's `wgpu_cooperative_matrix`):
// fp16 inputs — the basis as uploaded (tiles (T,E,192) of halves) and the scaled coefficients
// rounded to fp16 by the host — and fp32 accumulation, 16×16×16 per step.
//
// One workgroup is one subgroup (32 invocations; the H200's subgroup size) and owns one vertex tile
// (64 vertices = 192 columns = 12 matrices of 16 columns) and a block of IB = 16 instances:
//   for k in 0, 16, … < E:  A = the block's coefficients [16 instances × 16 e] (row-major, the
//                            host's (N₁₆,E₁₆) f16 array, zero past N and E),
//                            B_j = basis rows e = k … k+15, columns 16j … 16j+15 (row-major, stride
//                            192 halves), C_j += A·B_j for j = 0 … 11;
// rows of B past E (the next tile's first rows, or the zero rows padded after the last tile) meet
// zero coefficients: 0·finite = 0 exactly. Then the 12 accumulators go to workgroup memory and each
// (instance, vertex) gets the neutral, the eyes and the seam as in gnm.wgsl.
//
// Not bit-equal to gnm.wgsl: the coefficients are rounded to fp16 (relative error ≤ 2⁻¹¹) and the
// accumulation order is the hardware's. The bound the tests use is derived in
// mien_cpu::conformance::gnm::coop_bound.

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

@group(0) @binding(0) var<uniform> params: GnmCoopParams;
// Per instance (N,).
@group(0) @binding(1) var<storage, read> heads: array<GnmFrameHeader>;
// The scaled coefficients cₑ·sₑ rounded to fp16: (N₁₆, E₁₆), zero past N and E.
@group(0) @binding(2) var<storage, read> scaled_h: array<f16>;
// This chunk's basis tiles (T,E,192) fp16, then 16 rows of zeros.
@group(0) @binding(3) var<storage, read> basis: array<f16>;
// Per vertex (neutral xyz, left eye weight), (seam xyz, right eye weight): (V,2).
@group(0) @binding(4) var<storage, read> statics: array<vec4<f32>>;
// Per instance, head-local position xyz then a zero normal per vertex: (N,V,6) f32.
@group(0) @binding(5) var<storage, read_write> local_out: array<f32>;

// The block's blended deltas of the tile: [instance][column].
var<workgroup> sums: array<f32, 3072>;

fn turn(p: vec3<f32>, w: f32, r: mat3x3<f32>, c: vec3<f32>) -> vec3<f32> {
    if (w == 0.0) {
        return p;
    }
    let turned = r * (p - c) + c;
    return p + w * (turned - p);
}

@compute @workgroup_size(32)
fn forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let e_n = params.coeffs;
    let n = params.instances;
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
    coopStoreT(c0, &sums[0u], COLS);
    coopStoreT(c1, &sums[16u], COLS);
    coopStoreT(c2, &sums[32u], COLS);
    coopStoreT(c3, &sums[48u], COLS);
    coopStoreT(c4, &sums[64u], COLS);
    coopStoreT(c5, &sums[80u], COLS);
    coopStoreT(c6, &sums[96u], COLS);
    coopStoreT(c7, &sums[112u], COLS);
    coopStoreT(c8, &sums[128u], COLS);
    coopStoreT(c9, &sums[144u], COLS);
    coopStoreT(c10, &sums[160u], COLS);
    coopStoreT(c11, &sums[176u], COLS);
    workgroupBarrier();
    for (var q = t; q < IB * TV; q = q + 32u) {
        let i = q / TV;
        let j = q % TV;
        let inst = i0 + i;
        let v = tile * TV + j;
        if (inst >= n || v >= params.count) {
            continue;
        }
        let o = i * COLS + 3u * j;
        let a = statics[2u * v];
        let b = statics[2u * v + 1u];
        let h = heads[inst];
        var p = a.xyz + vec3<f32>(sums[o], sums[o + 1u], sums[o + 2u]);
        p = turn(p, a.w, h.eye_rot_l, h.eye_centre_l.xyz);
        p = turn(p, b.w, h.eye_rot_r, h.eye_centre_r.xyz);
        p = p + b.xyz;
        let out = 6u * (inst * params.count + v);
        local_out[out] = p.x;
        local_out[out + 1u] = p.y;
        local_out[out + 2u] = p.z;
        local_out[out + 3u] = 0.0;
        local_out[out + 4u] = 0.0;
        local_out[out + 5u] = 0.0;
    }
}
