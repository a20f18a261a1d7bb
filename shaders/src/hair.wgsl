// Hair strands → gaussians (issue 27 item 4): only the guides' points are uploaded per frame; every
// child strand is interpolated from three guides with its weights, pulled toward its own guide's
// shape by the clump, and each of its S segments becomes one elongated gaussian.
// One invocation per slot i = c·S + k (child c, segment k); batched over instances along z (instance z
// reads guides from z·guide_stride and writes slots from z·slot_stride).
//
//   point k of child c:  bₖ = w₀·g₀ₖ + w₁·g₁ₖ + w₂·g₂ₖ,
//                        pₖ = bₖ + (clump·k/S)·((g₀ₖ − g₀₀) − (bₖ − b₀))
//   segment k (a = pₖ, b = pₖ₊₁, t = (k + ½)/S):  centre (a + b)/2,
//                        Σ = σ∥²·uuᵀ + σ⊥²·(I − uuᵀ),  u = (b − a)/|b − a|,  σ∥ = |b − a|/2,
//                        σ⊥ = w(t)/2 with w(t) the thickness lerped root → tip (a zero-length segment:
//                        σ⊥²·I),  colour = clamp(lerp(root, tip, t)·tint, 0, 1), opaque.
// The CPU reference is mien_core::hair::strand_splats (Groom::child_points for the points, the same
// f32 expression); mien_core::hair::splats::splat_bounds is the derived bound between the two.

struct HairParams {
    colour_root: vec4<f32>,   // rgb in [0,1]
    colour_tip: vec4<f32>,
    count: u32,               // slots C·S of one instance
    row_width: u32,           // invocations per dispatch row
    segments: u32,            // S
    slot_base_vec4: u32,      // first slot, relative to the bound range of center / cov_a / cov_b
    slot_base_color: u32,     // first slot, relative to the bound range of color
    slot_stride: u32,         // slots between instance z's range and instance z+1's
    guide_stride: u32,        // guide points G·(S+1) between instance z and z+1
    clump: f32,
    thickness_root: f32,      // metres
    thickness_tip: f32,
    _pad0: u32,
    _pad1: u32,
}

struct Child {
    guides: vec4<u32>,        // xyz: its own guide, then two neighbours (w unused)
    weights: vec4<f32>,       // xyz: their weights (sum 1), w: colour tint
}

@group(0) @binding(0) var<uniform> params: HairParams;
// Guide points xyz (w unused), (N, G·(S+1)) for N instances, guide-major.
@group(0) @binding(1) var<storage, read> guides: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> children: array<Child>;
@group(0) @binding(3) var<storage, read_write> center: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> color: array<u32>;
@group(0) @binding(5) var<storage, read_write> cov_a: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> cov_b: array<vec4<f32>>;

fn at(base: u32, guide: u32, k: u32) -> vec3<f32> {
    return guides[base + guide * (params.segments + 1u) + k].xyz;
}

fn blended(base: u32, ch: Child, k: u32) -> vec3<f32> {
    return at(base, ch.guides.x, k) * ch.weights.x + at(base, ch.guides.y, k) * ch.weights.y
        + at(base, ch.guides.z, k) * ch.weights.z;
}

fn point(base: u32, ch: Child, b0: vec3<f32>, k: u32) -> vec3<f32> {
    let bk = blended(base, ch, k);
    let own = at(base, ch.guides.x, k) - at(base, ch.guides.x, 0u);
    let t = params.clump * f32(k) / f32(params.segments);
    return bk + (own - (bk - b0)) * t;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * params.row_width;
    if (i >= params.count) {
        return;
    }
    let s = params.segments;
    let c = i / s;
    let k = i - c * s;
    let base = gid.z * params.guide_stride;
    let ch = children[c];
    let b0 = blended(base, ch, 0u);
    let a = point(base, ch, b0, k);
    let b = point(base, ch, b0, k + 1u);
    let t = (f32(k) + 0.5) / f32(s);
    let width = params.thickness_root + (params.thickness_tip - params.thickness_root) * t;
    let perp = (width * 0.5) * (width * 0.5);
    let d = b - a;
    let len2 = dot(d, d);
    var m0 = vec3<f32>(perp, 0.0, 0.0);
    var m1 = vec3<f32>(0.0, perp, 0.0);
    var m2 = vec3<f32>(0.0, 0.0, perp);
    if (len2 > 0.0) {
        let len = sqrt(len2);
        let u = d / len;
        let along = (len * 0.5) * (len * 0.5);
        let e = along - perp;
        m0 = u * (u.x * e) + vec3<f32>(perp, 0.0, 0.0);
        m1 = u * (u.y * e) + vec3<f32>(0.0, perp, 0.0);
        m2 = u * (u.z * e) + vec3<f32>(0.0, 0.0, perp);
    }
    let s4 = params.slot_base_vec4 + gid.z * params.slot_stride + i;
    let s1 = params.slot_base_color + gid.z * params.slot_stride + i;
    center[s4] = vec4<f32>((a + b) * 0.5, 0.0);
    cov_a[s4] = vec4<f32>(m0.x, m0.y, m0.z, m1.y);
    cov_b[s4] = vec4<f32>(m1.z, m2.z, 0.0, 0.0);
    let rgb = (params.colour_root.xyz + (params.colour_tip.xyz - params.colour_root.xyz) * t)
        * ch.weights.w;
    color[s1] = pack4x8unorm(vec4<f32>(clamp(rgb, vec3<f32>(0.0), vec3<f32>(1.0)), 1.0));
}
