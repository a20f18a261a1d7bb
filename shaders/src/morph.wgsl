// Morph-target blend over a CSR morph set, one invocation per vertex.
//
// Each invocation walks its own CSR row (no atomics, no order dependence):
//   p = base_p + Σ w[t]·δp,   n = normalize(base_n + Σ w[t]·δn)
// Entries with w == 0 are skipped; a vertex with no entry of non-zero weight is copied bit-identical
// (its normal is not renormalised); a blended normal of zero length keeps the base normal.
// Source: DESIGN.md "Morph set"; the CPU reference is mien_core::rig::RigData::morph_vertex.
//
// Instances (N characters sharing one rig, as skin.wgsl): the dispatch's z dimension is the instance
// i of num_workgroups.z = N; every instance reads the same bind vertices and CSR, its own weights
// `[i·W, (i+1)·W)` (W = arrayLength(weights) / N, so the weights hold N equal slices) and writes
// `morphed[(i·count + v)·6 ..]`. A dispatch with z = 1 is the single rig: i = 0, all the weights.

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
// This frame's limited weights, per instance: (N,W).
@group(0) @binding(5) var<storage, read> weights: array<f32>;
// Morphed position xyz then normal xyz per instance and vertex: (N,V,6) f32.
@group(0) @binding(6) var<storage, read_write> morphed: array<f32>;

@compute @workgroup_size(64)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let v = gid.x + gid.y * params.row_width;
    if (v >= params.count) {
        return;
    }
    let inst = gid.z;
    let first_weight = inst * (arrayLength(&weights) / groups.z);
    let b = 6u * v;
    let base_p = vec3<f32>(base[b], base[b + 1u], base[b + 2u]);
    let base_n = vec3<f32>(base[b + 3u], base[b + 4u], base[b + 5u]);
    var p = base_p;
    var n = base_n;
    var touched = false;
    let first = offsets[v];
    let last = offsets[v + 1u];
    for (var e = first; e < last; e = e + 1u) {
        let w = weights[first_weight + entry_target[e]];
        if (w == 0.0) {
            continue;
        }
        touched = true;
        let d = 6u * e;
        p = p + w * vec3<f32>(entry_delta[d], entry_delta[d + 1u], entry_delta[d + 2u]);
        n = n + w * vec3<f32>(entry_delta[d + 3u], entry_delta[d + 4u], entry_delta[d + 5u]);
    }
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
