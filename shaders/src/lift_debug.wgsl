// The debug vertex lift: one isotropic gaussian per posed vertex into a splat sink's slots, and a
// clear pass for the slots of the range past the vertex count (opacity 0, never stale).
// Batched (N instances of one rig or head in one dispatch, z = instance): instance z reads posed
// vertices from posed_base + z·posed_stride and writes slots from slot_base + z·slot_stride, with the
// same transform, shading and tints; a single lift is z = 0 with both strides 0.
//
//   centre = A·(v,1)  (A row-major 3×4),  Σ = σ²·L·Lᵀ (L = A's 3×3 part; precomputed on the CPU),
//   colour = tint | 0.5 + 0.5·normalize(L·n) | flat,   color = pack4x8unorm(r, g, b, opacity).
// Source: DESIGN.md "Debug vertex lift", seed 000 DebugVertexLift; the CPU reference is
// mien_core::lift::lift_vertex.

struct LiftParams {
    row0: vec4<f32>,          // A's rows
    row1: vec4<f32>,
    row2: vec4<f32>,
    cov_a: vec4<f32>,         // (c00, c01, c02, c11)
    cov_b: vec4<f32>,         // (c12, c22, 0, 0)
    flat_color: vec4<f32>,    // rgb for flat shading, w = opacity
    centroid: vec4<f32>,      // xyz: what normal shading points away from when a normal is zero
    count: u32,               // vertices (lift) or slots (clear) in this dispatch
    row_width: u32,           // invocations per dispatch row
    slot_base_vec4: u32,      // first slot, relative to the bound range of center / cov_a / cov_b
    slot_base_color: u32,     // first slot, relative to the bound range of color
    shading: u32,             // 0 tint, 1 normal, 2 flat
    posed_base: u32,          // first vertex in the bound posed buffer (instance i of a batch: i·count)
    slot_stride: u32,         // batched lift: slots between instance z's range and instance z+1's
    posed_stride: u32,        // batched lift: posed vertices between instance z and instance z+1
}

@group(0) @binding(0) var<uniform> params: LiftParams;
// Posed world position xyz then unit normal xyz per vertex, from vertex posed_base: (…,6) f32.
@group(0) @binding(1) var<storage, read> posed: array<f32>;
// pack4x8unorm tint per vertex (V,).
@group(0) @binding(2) var<storage, read> tint: array<u32>;
@group(0) @binding(3) var<storage, read_write> center: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> color: array<u32>;
@group(0) @binding(5) var<storage, read_write> cov_a: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> cov_b: array<vec4<f32>>;

fn normalize_or(v: vec3<f32>, fallback: vec3<f32>) -> vec3<f32> {
    let len2 = dot(v, v);
    if (len2 > 0.0 && len2 <= 3.4028235e38) {
        return v * (1.0 / sqrt(len2));
    }
    return fallback;
}

@compute @workgroup_size(64)
fn lift(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = gid.x + gid.y * params.row_width;
    if (v >= params.count) {
        return;
    }
    // Instance z of a batched lift (z = 0 for a single one): its posed vertices and its slots.
    let z = gid.z;
    let b = 6u * (params.posed_base + z * params.posed_stride + v);
    let s4 = params.slot_base_vec4 + z * params.slot_stride + v;
    let s1 = params.slot_base_color + z * params.slot_stride + v;
    let x = vec4<f32>(posed[b], posed[b + 1u], posed[b + 2u], 1.0);
    let n = vec3<f32>(posed[b + 3u], posed[b + 4u], posed[b + 5u]);
    let c = vec3<f32>(dot(params.row0, x), dot(params.row1, x), dot(params.row2, x));
    var rgb = params.flat_color.xyz;
    if (params.shading == 0u) {
        rgb = unpack4x8unorm(tint[v]).xyz;
    } else if (params.shading == 1u) {
        let m = vec3<f32>(dot(params.row0.xyz, n), dot(params.row1.xyz, n), dot(params.row2.xyz, n));
        let away = normalize_or(c - params.centroid.xyz, vec3<f32>(0.0, 0.0, 1.0));
        let d = normalize_or(m, away);
        rgb = vec3<f32>(0.5) + 0.5 * d;
    }
    center[s4] = vec4<f32>(c, 0.0);
    color[s1] = pack4x8unorm(vec4<f32>(rgb, params.flat_color.w));
    cov_a[s4] = params.cov_a;
    cov_b[s4] = params.cov_b;
}

@compute @workgroup_size(64)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * params.row_width;
    if (i >= params.count) {
        return;
    }
    let s4 = params.slot_base_vec4 + gid.z * params.slot_stride + i;
    let s1 = params.slot_base_color + gid.z * params.slot_stride + i;
    center[s4] = vec4<f32>(0.0);
    color[s1] = 0u;
    cov_a[s4] = vec4<f32>(0.0);
    cov_b[s4] = vec4<f32>(0.0);
}
