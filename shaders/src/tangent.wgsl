// Tangents of a rig that carries them (glTF TANGENT, with or without tangent deltas), one invocation
// per vertex and instance, after morph.wgsl (it reads the blended normal); skin.wgsl does not need it:
//   morph:  t = base_t.xyz + Σ w[t]·δt,  t = normalize(t − n·(n·t))   (n: the blended unit normal)
//   skin:   t' = normalize_or_zero(Σ wₖ·(Lₖ·t)),  handedness base_t.w kept
// with Lₖ the 3×3 linear part of joint matrix k (tangents lie in the surface: they transform like
// edges, not like normals). Entries with w == 0 are skipped and a vertex with no entry of non-zero
// weight keeps its base tangent bit-identical before skinning; a re-orthogonalised tangent of zero
// length (parallel to the normal) keeps the base direction. Morph entries are summed in row (target)
// order and joints in slot order, as the reference. Source: glTF 2.0 §3.7.2.2 (tangent deltas are
// XYZ only) and §3.7.3; the CPU reference is mien_core::rig::RigData::pose_tangent.
//
// The CSR walk reads each vertex's row directly and the instance's dense weights: a tangent is an
// optional stream, and this pass runs only for rigs that carry one (no cost to the others).
//
// Instances: the dispatch's z is the instance i of N sharing the rig; it reads weights
// `[i·W, (i+1)·W)` (W = arrayLength(weights) / N), morphed normals at `(i·count + v)·6 + 3`, palette
// entries `[i·P/N, (i+1)·P/N)`, and writes tangent `i·count + v`.

struct DispatchParams {
    count: u32,
    row_width: u32,
    _pad0: u32,
    _pad1: u32,
}

struct Joint {
    m: mat4x4<f32>,
    n: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> params: DispatchParams;
// Row starts (count+1,), chunk-local entry indices, then the weight slot of each entry (nnz,).
@group(0) @binding(1) var<storage, read> rows: array<u32>;
// Base tangent xyzw per vertex (count,4), then the tangent delta xyz of each entry (nnz,3).
@group(0) @binding(2) var<storage, read> tangent_data: array<f32>;
// Each instance's limited weights (N,W).
@group(0) @binding(3) var<storage, read> weights: array<f32>;
// Morphed position xyz then unit normal xyz per instance and vertex: (N,V,6) f32.
@group(0) @binding(4) var<storage, read> morphed: array<f32>;
// Palette indices (V,4).
@group(0) @binding(5) var<storage, read> joints: array<vec4<u32>>;
// Skin weights (V,4), summing to 1.
@group(0) @binding(6) var<storage, read> skin_weights: array<vec4<f32>>;
// This frame's palettes (N,P).
@group(0) @binding(7) var<storage, read> palette: array<Joint>;
// Posed unit tangent xyz + handedness w per instance and vertex: (N,V,4).
@group(0) @binding(8) var<storage, read_write> tangents: array<vec4<f32>>;

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
    let n_inst = groups.z;
    let w_count = arrayLength(&weights) / n_inst;
    let base = vec4<f32>(
        tangent_data[4u * v],
        tangent_data[4u * v + 1u],
        tangent_data[4u * v + 2u],
        tangent_data[4u * v + 3u],
    );
    var t = base.xyz;
    var touched = false;
    let slots = params.count + 1u;           // where the entries' slots start in `rows`
    let deltas = 4u * params.count;          // where the deltas start in `tangent_data`
    for (var e = rows[v]; e < rows[v + 1u]; e = e + 1u) {
        let w = weights[inst * w_count + rows[slots + e]];
        if (w == 0.0) {
            continue;
        }
        touched = true;
        let d = deltas + 3u * e;
        t = t + w * vec3<f32>(tangent_data[d], tangent_data[d + 1u], tangent_data[d + 2u]);
    }
    let o = inst * params.count + v;
    if (touched) {
        let b = 6u * o;
        let n = vec3<f32>(morphed[b + 3u], morphed[b + 4u], morphed[b + 5u]);
        let d = n.x * t.x + n.y * t.y + n.z * t.z;
        let g = vec3<f32>(t.x - n.x * d, t.y - n.y * d, t.z - n.z * d);
        let len2 = dot(g, g);
        // len2 <= f32::MAX also rejects +inf; NaN fails both comparisons.
        if (len2 > 0.0 && len2 <= 3.4028235e38) {
            t = g * (1.0 / sqrt(len2));
        } else {
            t = base.xyz;
        }
    }
    let first_joint = inst * (arrayLength(&palette) / n_inst);
    let j = joints[v];
    let sw = skin_weights[v];
    var to = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let wk = sw[k];
        if (wk == 0.0) {
            continue;
        }
        let m = palette[first_joint + j[k]].m;
        to = to + wk * (mat3x3<f32>(m[0].xyz, m[1].xyz, m[2].xyz) * t);
    }
    let len2 = dot(to, to);
    if (len2 > 0.0 && len2 <= 3.4028235e38) {
        to = to * (1.0 / sqrt(len2));
    } else {
        to = vec3<f32>(0.0);
    }
    tangents[o] = vec4<f32>(to, base.w);
}
