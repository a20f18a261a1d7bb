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

@compute @workgroup_size(192)
fn forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let e_n = params.coeffs;
    let n = params.instances;
    let i0 = wg.x * IB;   // first instance of the block
    let tile = wg.y;
    let c = t % CT;
    let k = t / CT;
    var acc: array<vec4<f32>, 16>;  // [2i] columns 8c..8c+4, [2i+1] 8c+4..8c+8 of instance i0 + i
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
        for (var el = k; el < steps; el = el + KS) {
            let ca = coef[2u * el];
            let cb = coef[2u * el + 1u];
            if (all(ca == vec4<f32>(0.0)) && all(cb == vec4<f32>(0.0))) {
                continue;
            }
            let w = basis[(tile * e_n + e0 + el) * CT + c];
            let b0 = unpack2x16float(w.x);
            let b1 = unpack2x16float(w.y);
            let b2 = unpack2x16float(w.z);
            let b3 = unpack2x16float(w.w);
            let lo = vec4<f32>(b0, b1);
            let hi = vec4<f32>(b2, b3);
            for (var i = 0u; i < 4u; i = i + 1u) {
                acc[2u * i] = acc[2u * i] + ca[i] * lo;
                acc[2u * i + 1u] = acc[2u * i + 1u] + ca[i] * hi;
                acc[2u * i + 8u] = acc[2u * i + 8u] + cb[i] * lo;
                acc[2u * i + 9u] = acc[2u * i + 9u] + cb[i] * hi;
            }
        }
    }
    // The slices' partial sums, added in slice order.
    for (var s = 0u; s < KS; s = s + 1u) {
        workgroupBarrier();
        if (k == s) {
            for (var i = 0u; i < IB; i = i + 1u) {
                let o = i * COLS + 8u * c;
                let lo = acc[2u * i];
                let hi = acc[2u * i + 1u];
                if (s == 0u) {
                    sums[o] = lo.x;
                    sums[o + 1u] = lo.y;
                    sums[o + 2u] = lo.z;
                    sums[o + 3u] = lo.w;
                    sums[o + 4u] = hi.x;
                    sums[o + 5u] = hi.y;
                    sums[o + 6u] = hi.z;
                    sums[o + 7u] = hi.w;
                } else {
                    sums[o] = sums[o] + lo.x;
                    sums[o + 1u] = sums[o + 1u] + lo.y;
                    sums[o + 2u] = sums[o + 2u] + lo.z;
                    sums[o + 3u] = sums[o + 3u] + lo.w;
                    sums[o + 4u] = sums[o + 4u] + hi.x;
                    sums[o + 5u] = sums[o + 5u] + hi.y;
                    sums[o + 6u] = sums[o + 6u] + hi.z;
                    sums[o + 7u] = sums[o + 7u] + hi.w;
                }
            }
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
