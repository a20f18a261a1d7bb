// Linear-blend skinning, one invocation per vertex, after the morph blend.
//
//   p' = Σ wₖ·(Mₖ·(p,1)).xyz,   n' = normalize_or_zero(Σ wₖ·(Nₖ·n))
// with Mₖ the joint matrix (world · inverse bind, or a rigid node's world matrix) and Nₖ the inverse
// transpose of its 3×3 part, computed on the CPU. Slots with weight 0 are skipped; joints are summed in
// slot order. Source: glTF 2.0 §3.7.3; the CPU reference is mien_core::rig::skin::skin_vertex.
//
// Instances (a rig batch after morph.wgsl, a linear-head batch after gnm.wgsl): the dispatch's z
// dimension is the instance i of num_workgroups.z = N sharing one mesh (joints, skin weights);
// instance i reads `morphed[(i·count + v)·6 ..]`, writes `posed` there, and uses palette entries
// `[i·P/N, (i+1)·P/N)` (P = arrayLength(palette), so the palette holds N equal slices). A dispatch
// with z = 1 (a single rig or head) is the single-instance case: i = 0, the whole palette.

struct DispatchParams {
    count: u32,
    row_width: u32,
    _pad0: u32,
    _pad1: u32,
}

// One palette entry: the joint matrix and its normal matrix (3×3 in the upper-left, column-major).
struct Joint {
    m: mat4x4<f32>,
    n: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> params: DispatchParams;
// Morphed position xyz then normal xyz per instance and vertex: (N,V,6) f32.
@group(0) @binding(1) var<storage, read> morphed: array<f32>;
// Palette indices (V,4).
@group(0) @binding(2) var<storage, read> joints: array<vec4<u32>>;
// Skin weights (V,4), summing to 1.
@group(0) @binding(3) var<storage, read> skin_weights: array<vec4<f32>>;
// This frame's palette (P,).
@group(0) @binding(4) var<storage, read> palette: array<Joint>;
// Posed world position xyz then unit normal xyz per instance and vertex: (N,V,6) f32, metres.
@group(0) @binding(5) var<storage, read_write> posed: array<f32>;

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
    let first_joint = inst * (arrayLength(&palette) / groups.z);
    let b = 6u * (inst * params.count + v);
    let p = vec4<f32>(morphed[b], morphed[b + 1u], morphed[b + 2u], 1.0);
    let n = vec3<f32>(morphed[b + 3u], morphed[b + 4u], morphed[b + 5u]);
    let j = joints[v];
    let w = skin_weights[v];
    var po = vec3<f32>(0.0);
    var no = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let wk = w[k];
        if (wk == 0.0) {
            continue;
        }
        let joint = palette[first_joint + j[k]];
        po = po + wk * (joint.m * p).xyz;
        let nm = mat3x3<f32>(joint.n[0].xyz, joint.n[1].xyz, joint.n[2].xyz);
        no = no + wk * (nm * n);
    }
    let len2 = dot(no, no);
    if (len2 > 0.0 && len2 <= 3.4028235e38) {
        no = no * (1.0 / sqrt(len2));
    } else {
        no = vec3<f32>(0.0);
    }
    posed[b] = po.x;
    posed[b + 1u] = po.y;
    posed[b + 2u] = po.z;
    posed[b + 3u] = no.x;
    posed[b + 4u] = no.y;
    posed[b + 5u] = no.z;
}
