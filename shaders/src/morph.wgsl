// Morph-target blend over a CSR morph set, one invocation per vertex and block of 8 instances.
//
// Each invocation walks its own CSR row (no atomics, no order dependence):
//   p = base_p + Σ w[t]·δp,   n = normalize(base_n + Σ w[t]·δn)
// Entries with w == 0 are skipped; a vertex with no entry of non-zero weight is copied bit-identical
// (its normal is not renormalised); a blended normal of zero length keeps the base normal.
// Source: DESIGN.md "Morph set"; the CPU reference is mien_core::rig::RigData::morph_vertex.
//
// Instances (N characters sharing one rig): the dispatch's z dimension is the block b of 8 instances
// (num_workgroups.z = ⌈N/8⌉). An invocation reads its vertex's row once — each entry's target slot
// and delta — and applies it to the 8 instances of its block: the weights are staged blocked,
// (⌈N/8⌉, W, 8), so the 8 instances' weights of a slot are two neighbouring vec4 (one 32-byte read),
// and an entry whose 8 weights are all zero costs no delta read. Per instance the operations and
// their order are the single-instance kernel's (entries in row order, w == 0 skipped), so every
// instance's result is the same bits as posing it alone. Instance i of block b writes
// `morphed[((8b + i)·count + v)·6 ..]` when 8b + i < N, N = arrayLength(morphed) / (6·count).
// A single rig is N = 1: one block, instance 0.

struct DispatchParams {
    count: u32,       // vertices in this chunk
    row_width: u32,   // invocations per dispatch row (workgroups_x · 64), for 2D dispatches
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: DispatchParams;
// Bind position xyz then normal xyz per vertex: (V,6) f32.
@group(0) @binding(1) var<storage, read> base: array<f32>;
// CSR row starts (V+1,), local to the chunk.
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
// Global weight slot of each entry (nnz,).
@group(0) @binding(3) var<storage, read> entry_target: array<u32>;
// Position delta xyz then normal delta xyz per entry: (nnz,6) f32.
@group(0) @binding(4) var<storage, read> entry_delta: array<f32>;
// This frame's limited weights, blocked: (⌈N/8⌉, W, 8) f32 as vec4 pairs.
@group(0) @binding(5) var<storage, read> weights: array<vec4<f32>>;
// Morphed position xyz then normal xyz per instance and vertex: (N,V,6) f32.
@group(0) @binding(6) var<storage, read_write> morphed: array<f32>;

// The block's 8 blended positions and normals, as named members (a dynamically indexed array
// would live in local memory).
struct Blend {
    p0: vec3<f32>,
    n0: vec3<f32>,
    p1: vec3<f32>,
    n1: vec3<f32>,
    p2: vec3<f32>,
    n2: vec3<f32>,
    p3: vec3<f32>,
    n3: vec3<f32>,
    p4: vec3<f32>,
    n4: vec3<f32>,
    p5: vec3<f32>,
    n5: vec3<f32>,
    p6: vec3<f32>,
    n6: vec3<f32>,
    p7: vec3<f32>,
    n7: vec3<f32>,
}

// Instance `inst`'s result for vertex v: the normal renormalised when an entry touched it.
fn put(inst: u32, v: u32, n_inst: u32, p: vec3<f32>, n_in: vec3<f32>, base_n: vec3<f32>, touched: bool) {
    if (inst >= n_inst) {
        return;
    }
    var n = n_in;
    if (touched) {
        let len2 = dot(n, n);
        // len2 < f32::MAX also rejects +inf; NaN fails both comparisons.
        if (len2 > 0.0 && len2 <= 3.4028235e38) {
            n = n * (1.0 / sqrt(len2));
        } else {
            n = base_n;
        }
    }
    let o = 6u * (inst * params.count + v);
    morphed[o] = p.x;
    morphed[o + 1u] = p.y;
    morphed[o + 2u] = p.z;
    morphed[o + 3u] = n.x;
    morphed[o + 4u] = n.y;
    morphed[o + 5u] = n.z;
}

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let v = gid.x + gid.y * params.row_width;
    if (v >= params.count) {
        return;
    }
    let block = gid.z;
    let slots = arrayLength(&weights) / (2u * groups.z);  // W
    let n_inst = arrayLength(&morphed) / (6u * params.count);
    let first_inst = 8u * block;
    let w0 = 2u * block * slots;  // this block's first vec4
    let b = 6u * v;
    let base_p = vec3<f32>(base[b], base[b + 1u], base[b + 2u]);
    let base_n = vec3<f32>(base[b + 3u], base[b + 4u], base[b + 5u]);
    var s: Blend;
    s.p0 = base_p; s.n0 = base_n;
    s.p1 = base_p; s.n1 = base_n;
    s.p2 = base_p; s.n2 = base_n;
    s.p3 = base_p; s.n3 = base_n;
    s.p4 = base_p; s.n4 = base_n;
    s.p5 = base_p; s.n5 = base_n;
    s.p6 = base_p; s.n6 = base_n;
    s.p7 = base_p; s.n7 = base_n;
    var touched = 0u;
    let first = offsets[v];
    let last = offsets[v + 1u];
    for (var e = first; e < last; e = e + 1u) {
        let t = entry_target[e];
        let wa = weights[w0 + 2u * t];
        let wb = weights[w0 + 2u * t + 1u];
        if (all(wa == vec4<f32>(0.0)) && all(wb == vec4<f32>(0.0))) {
            continue;
        }
        let d = 6u * e;
        let dp = vec3<f32>(entry_delta[d], entry_delta[d + 1u], entry_delta[d + 2u]);
        let dn = vec3<f32>(entry_delta[d + 3u], entry_delta[d + 4u], entry_delta[d + 5u]);
        if (wa.x != 0.0) { s.p0 = s.p0 + wa.x * dp; s.n0 = s.n0 + wa.x * dn; touched = touched | 1u; }
        if (wa.y != 0.0) { s.p1 = s.p1 + wa.y * dp; s.n1 = s.n1 + wa.y * dn; touched = touched | 2u; }
        if (wa.z != 0.0) { s.p2 = s.p2 + wa.z * dp; s.n2 = s.n2 + wa.z * dn; touched = touched | 4u; }
        if (wa.w != 0.0) { s.p3 = s.p3 + wa.w * dp; s.n3 = s.n3 + wa.w * dn; touched = touched | 8u; }
        if (wb.x != 0.0) { s.p4 = s.p4 + wb.x * dp; s.n4 = s.n4 + wb.x * dn; touched = touched | 16u; }
        if (wb.y != 0.0) { s.p5 = s.p5 + wb.y * dp; s.n5 = s.n5 + wb.y * dn; touched = touched | 32u; }
        if (wb.z != 0.0) { s.p6 = s.p6 + wb.z * dp; s.n6 = s.n6 + wb.z * dn; touched = touched | 64u; }
        if (wb.w != 0.0) { s.p7 = s.p7 + wb.w * dp; s.n7 = s.n7 + wb.w * dn; touched = touched | 128u; }
    }
    put(first_inst + 0u, v, n_inst, s.p0, s.n0, base_n, (touched & 1u) != 0u);
    put(first_inst + 1u, v, n_inst, s.p1, s.n1, base_n, (touched & 2u) != 0u);
    put(first_inst + 2u, v, n_inst, s.p2, s.n2, base_n, (touched & 4u) != 0u);
    put(first_inst + 3u, v, n_inst, s.p3, s.n3, base_n, (touched & 8u) != 0u);
    put(first_inst + 4u, v, n_inst, s.p4, s.n4, base_n, (touched & 16u) != 0u);
    put(first_inst + 5u, v, n_inst, s.p5, s.n5, base_n, (touched & 32u) != 0u);
    put(first_inst + 6u, v, n_inst, s.p6, s.n6, base_n, (touched & 64u) != 0u);
    put(first_inst + 7u, v, n_inst, s.p7, s.n7, base_n, (touched & 128u) != 0u);
}
