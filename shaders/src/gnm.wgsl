// The linear head model (GNM) forward pass: expression basis, eye rotation, neck seam — head-local
// positions that skin.wgsl then skins (so this kernel writes skin.wgsl's input layout).
//
//   p = neutral + Σₑ (cₑ·sₑ)·Bₑ                                   (scaled coefficients from the CPU)
//   p ← p + w_L·(R_L(p − c_L) + c_L − p),  then the same for the right eye
//   p ← p + seam
// Source: seed 000 gnmForward / gnmPose; the CPU reference is mien_core::gnm::forward::{forward, pose}.
//
// Memory: the basis (V,E,3) fp16 is the dominant traffic (6·E bytes per vertex per pose), read as
// packed pairs (low half first) with unpack2x16float — exact for every fp16, subnormals included.
// A vertex's 3E halves are contiguous, so `lanes` invocations (a power of two, 1..64, chosen on the
// CPU from E: about four words per invocation) cooperate on one vertex: lane k reads words
// first + k, first + k + lanes, … so neighbouring invocations read neighbouring words (coalesced),
// and 64/lanes vertices share a workgroup, whose words are contiguous too. Each lane sums its halves
// in index order; the lanes' partial sums are then reduced by a fixed binary tree in workgroup
// memory (lane k += lane k + s for s = lanes/2, …, 1). No atomics: the result is a fixed function of
// the inputs, and of a vertex's position in its chunk only through the word parity (`first_half`),
// which chunking preserves — a split basis gives the same bits as an unsplit one.
// A word whose two coefficients are both exactly 0 is not read, a half whose coefficient is 0 is not
// added (as the reference skips sₑ = 0, so 0·inf never appears); both are exact, so still
// deterministic.
// Normals: a pack has none; the normal slots are written 0 (skin.wgsl keeps a zero normal zero).
//
// Instances: N characters may share one pack (one basis upload). The dispatch's z dimension is the
// instance i: it reads its own frame `heads[i]` and coefficients `scaled[i·E ..]` and writes
// `local_out[(i·count + v)·6 ..]`; every instance reads the same basis words (the same addresses at
// the same time, so the second and later instances mostly hit the cache).
// Why u32 words and not vec4<u32>: a vertex's row is 3E halves (E = 57 → 342 bytes), so rows are
// 16-byte aligned only when E is a multiple of 8; padding rows would cost memory and the verbatim
// upload. Lane k reading word k already makes each 32-lane group read 128 contiguous bytes.

struct GnmParams {
    count: u32,       // vertices in this chunk
    row_width: u32,   // workgroups per dispatch row (2D dispatches)
    coeffs: u32,      // E
    lanes: u32,       // invocations per vertex: a power of two dividing 64
    first_half: u32,  // 0 or 1: the half of basis[0] where this chunk's first vertex starts
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
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
// This chunk's basis words: fp16 pairs, vertex-major (V,E,3), verbatim from the pack.
@group(0) @binding(3) var<storage, read> basis: array<u32>;
// Per vertex two vec4: (neutral xyz, left eye weight), (seam xyz, right eye weight) — (V,2).
@group(0) @binding(4) var<storage, read> statics: array<vec4<f32>>;
// Per instance, head-local position xyz then a zero normal per vertex: (N,V,6) f32, skin.wgsl's
// `morphed` input.
@group(0) @binding(5) var<storage, read_write> local_out: array<f32>;

var<workgroup> partial: array<vec3<f32>, 64>;

fn turn(p: vec3<f32>, w: f32, r: mat3x3<f32>, c: vec3<f32>) -> vec3<f32> {
    if (w == 0.0) {
        return p;
    }
    let turned = r * (p - c) + c;
    return p + w * (turned - p);
}

@compute @workgroup_size(64)
fn forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let lanes = params.lanes;
    let lane = t % lanes;
    let v = (wg.x + wg.y * params.row_width) * (64u / lanes) + t / lanes;
    let inst = wg.z;
    let c0 = inst * params.coeffs;  // this instance's first scaled coefficient
    let live = v < params.count;
    var acc = vec3<f32>(0.0);
    if (live) {
        let n = 3u * params.coeffs;          // halves per vertex
        let h0 = params.first_half + v * n;  // first half of v in `basis`
        let w_end = (h0 + n + 1u) / 2u;
        for (var w = h0 / 2u + lane; w < w_end; w = w + lanes) {
            // Local index (within the vertex) of the word's high half; its low half is kh − 1.
            let kh = 2u * w + 1u - h0;
            let lo_in = kh >= 1u;
            let hi_in = kh < n;
            let cl = select(0.0, scaled[c0 + select(0u, (kh - 1u) / 3u, lo_in)], lo_in);
            let ch = select(0.0, scaled[c0 + select(0u, kh / 3u, hi_in)], hi_in);
            if (cl != 0.0 || ch != 0.0) {
                let b = unpack2x16float(basis[w]);
                if (cl != 0.0) {
                    let a = (kh - 1u) % 3u;
                    acc[a] = acc[a] + cl * b.x;
                }
                if (ch != 0.0) {
                    let a = kh % 3u;
                    acc[a] = acc[a] + ch * b.y;
                }
            }
        }
    }
    partial[t] = acc;
    workgroupBarrier();
    for (var s = lanes / 2u; s > 0u; s = s / 2u) {
        if (lane < s) {
            partial[t] = partial[t] + partial[t + s];
        }
        workgroupBarrier();
    }
    if (!live || lane != 0u) {
        return;
    }
    let a = statics[2u * v];
    let b = statics[2u * v + 1u];
    let h = heads[inst];
    var p = a.xyz + partial[t];
    p = turn(p, a.w, h.eye_rot_l, h.eye_centre_l.xyz);
    p = turn(p, b.w, h.eye_rot_r, h.eye_centre_r.xyz);
    p = p + b.xyz;
    let o = 6u * (inst * params.count + v);
    local_out[o] = p.x;
    local_out[o + 1u] = p.y;
    local_out[o + 2u] = p.z;
    local_out[o + 3u] = 0.0;
    local_out[o + 4u] = 0.0;
    local_out[o + 5u] = 0.0;
}
