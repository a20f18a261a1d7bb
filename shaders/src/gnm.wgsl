// The linear head model (GNM) forward pass: expression basis, eye rotation, neck seam — head-local
// positions that skin.wgsl then skins (so this kernel writes skin.wgsl's input layout).
//
//   p = neutral + Σₑ (cₑ·sₑ)·Bₑ                                   (scaled coefficients from the CPU)
//   p ← p + w_L·(R_L(p − c_L) + c_L − p),  then the same for the right eye
//   p ← p + seam
// Source: seed 000 gnmForward / gnmPose; the CPU reference is mien_core::gnm::forward::{forward, pose}.
//
// The blend is a GEMM: the coefficients of N characters sharing one pack (N,E) times the basis
// (E,3V). The basis is uploaded in vertex tiles (mien_core::gnm::tiled, TV = 64 vertices): for tile
// t and coefficient e, the 192 halves B[t·64 .. t·64+64, e, xyz] are contiguous (24 vec4<u32>).
// One workgroup owns one tile and a block of IB = 8 instances:
//   - invocation (slice k, column c), k < KS = 8, c < 24: coefficients e ≡ k (mod 8), and the 8
//     halves of columns 8c .. 8c+8 — one 16-byte load per coefficient, neighbouring invocations
//     reading neighbouring 16 bytes (coalesced; a warp reads 512 contiguous bytes);
//   - each loaded row is applied to all IB instances' coefficients (staged 64 at a time in
//     workgroup memory), so the basis is read once per 8 characters from memory, and the blocks
//     of one tile are neighbouring workgroups (dispatch x), which share it through the cache;
//   - a coefficient zero for every instance of the block is not read (the active-coefficient
//     skip; exact, as the reference skips sₑ = 0);
//   - the slices' partial sums are added in slice order 0..7 through workgroup memory, then each
//     (instance, vertex) of the tile gets the neutral, the eyes and the seam.
// No atomics and a fixed order: the result is a fixed function of the inputs (an instance's sums
// use only its own coefficients; chunks start at tile boundaries, so a split basis gives the same
// bits as an unsplit one).
// Normals: a pack has none; the normal slots are written 0 (skin.wgsl keeps a zero normal zero).

const TV: u32 = 64u;         // vertices per tile
const COLS: u32 = 192u;      // halves per tile row: 3·TV
const CT: u32 = 24u;         // column invocations per slice: COLS / 8
const KS: u32 = 8u;          // coefficient slices
const IB: u32 = 8u;          // instances per workgroup
const EC: u32 = 64u;         // coefficients staged per step
const THREADS: u32 = 192u;   // CT · KS

struct GnmParams {
    count: u32,       // vertices in this chunk
    coeffs: u32,      // E
    instances: u32,   // N
    _pad0: u32,
}

// One instance's eye inputs, written by the CPU per frame.
struct GnmFrameHeader {
    eye_rot_l: mat3x3<f32>,   // Rx(pitch_L)·Ry(yaw_L)
    eye_rot_r: mat3x3<f32>,
    eye_centre_l: vec4<f32>,  // xyz metres, head-local
    eye_centre_r: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: GnmParams;
// Per instance (N,).
@group(0) @binding(1) var<storage, read> heads: array<GnmFrameHeader>;
// Per instance the scaled coefficients cₑ·sₑ: (N,E) f32.
@group(0) @binding(2) var<storage, read> scaled: array<f32>;
// This chunk's basis tiles (T,E,192) fp16, 8 halves per vec4<u32> (low half of each word first).
@group(0) @binding(3) var<storage, read> basis: array<vec4<u32>>;
// Per vertex two vec4: (neutral xyz, left eye weight), (seam xyz, right eye weight) — (V,2).
@group(0) @binding(4) var<storage, read> statics: array<vec4<f32>>;
// Per instance, head-local position xyz then a zero normal per vertex: (N,V,6) f32, skin.wgsl's
// `morphed` input.
@group(0) @binding(5) var<storage, read_write> local_out: array<f32>;

// The block's coefficients of one step: [e − e0][instance] as two vec4 per coefficient.
var<workgroup> coef: array<vec4<f32>, 128>;
// The block's blended deltas of the tile: [instance][column].
var<workgroup> sums: array<f32, 1536>;

fn turn(p: vec3<f32>, w: f32, r: mat3x3<f32>, c: vec3<f32>) -> vec3<f32> {
    if (w == 0.0) {
        return p;
    }
    let turned = r * (p - c) + c;
    return p + w * (turned - p);
}

// One invocation's accumulators, as named members (a dynamically indexed array would live in local
// memory): lN = columns 8c..8c+4 and hN = 8c+4..8c+8 of instance i0 + N.
struct Acc {
    l0: vec4<f32>, h0: vec4<f32>, l1: vec4<f32>, h1: vec4<f32>,
    l2: vec4<f32>, h2: vec4<f32>, l3: vec4<f32>, h3: vec4<f32>,
    l4: vec4<f32>, h4: vec4<f32>, l5: vec4<f32>, h5: vec4<f32>,
    l6: vec4<f32>, h6: vec4<f32>, l7: vec4<f32>, h7: vec4<f32>,
}

// Whether staged coefficient e is non-zero for some instance of the block.
fn live(e: u32) -> bool {
    return any(coef[2u * e] != vec4<f32>(0.0)) || any(coef[2u * e + 1u] != vec4<f32>(0.0));
}

// Add one basis row's 8 halves `w`, scaled by each instance's coefficient (ca: instances 0–3,
// cb: 4–7), to the accumulators.
fn apply(a: ptr<function, Acc>, w: vec4<u32>, ca: vec4<f32>, cb: vec4<f32>) {
    let lo = vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
    let hi = vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w));
    (*a).l0 = (*a).l0 + ca.x * lo; (*a).h0 = (*a).h0 + ca.x * hi;
    (*a).l1 = (*a).l1 + ca.y * lo; (*a).h1 = (*a).h1 + ca.y * hi;
    (*a).l2 = (*a).l2 + ca.z * lo; (*a).h2 = (*a).h2 + ca.z * hi;
    (*a).l3 = (*a).l3 + ca.w * lo; (*a).h3 = (*a).h3 + ca.w * hi;
    (*a).l4 = (*a).l4 + cb.x * lo; (*a).h4 = (*a).h4 + cb.x * hi;
    (*a).l5 = (*a).l5 + cb.y * lo; (*a).h5 = (*a).h5 + cb.y * hi;
    (*a).l6 = (*a).l6 + cb.z * lo; (*a).h6 = (*a).h6 + cb.z * hi;
    (*a).l7 = (*a).l7 + cb.w * lo; (*a).h7 = (*a).h7 + cb.w * hi;
}

// sums[o .. o+8] = (lo, hi) for the first slice, += for the others.
fn put(o: u32, lo: vec4<f32>, hi: vec4<f32>, first: bool) {
    sums[o] = select(sums[o], 0.0, first) + lo.x;
    sums[o + 1u] = select(sums[o + 1u], 0.0, first) + lo.y;
    sums[o + 2u] = select(sums[o + 2u], 0.0, first) + lo.z;
    sums[o + 3u] = select(sums[o + 3u], 0.0, first) + lo.w;
    sums[o + 4u] = select(sums[o + 4u], 0.0, first) + hi.x;
    sums[o + 5u] = select(sums[o + 5u], 0.0, first) + hi.y;
    sums[o + 6u] = select(sums[o + 6u], 0.0, first) + hi.z;
    sums[o + 7u] = select(sums[o + 7u], 0.0, first) + hi.w;
}

@compute @workgroup_size(192)
fn forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let e_n = params.coeffs;
    let n = params.instances;
    let i0 = wg.x * IB;   // first instance of the block
    let tile = wg.y;
    let c = t % CT;
    let k = t / CT;
    var acc: Acc;
    for (var e0 = 0u; e0 < e_n; e0 = e0 + EC) {
        workgroupBarrier();
        for (var q = t; q < EC * IB; q = q + THREADS) {
            let e = e0 + q / IB;
            let inst = i0 + q % IB;
            let ok = e < e_n && inst < n;
            let s = scaled[select(0u, inst * e_n + e, ok)];
            coef[q / 4u][q % 4u] = select(0.0, s, ok);
        }
        workgroupBarrier();
        let steps = min(EC, e_n - e0);
        let row0 = (tile * e_n + e0) * CT + c;
        for (var el = k; el < steps; el = el + KS) {
            if (live(el)) {
                apply(&acc, basis[row0 + el * CT], coef[2u * el], coef[2u * el + 1u]);
            }
        }
    }
    // The slices' partial sums, added in slice order 0..7.
    let o = 8u * c;
    for (var s = 0u; s < KS; s = s + 1u) {
        workgroupBarrier();
        if (k == s) {
            let first = s == 0u;
            put(o, acc.l0, acc.h0, first);
            put(o + COLS, acc.l1, acc.h1, first);
            put(o + 2u * COLS, acc.l2, acc.h2, first);
            put(o + 3u * COLS, acc.l3, acc.h3, first);
            put(o + 4u * COLS, acc.l4, acc.h4, first);
            put(o + 5u * COLS, acc.l5, acc.h5, first);
            put(o + 6u * COLS, acc.l6, acc.h6, first);
            put(o + 7u * COLS, acc.l7, acc.h7, first);
        }
    }
    workgroupBarrier();
    for (var q = t; q < IB * TV; q = q + THREADS) {
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
