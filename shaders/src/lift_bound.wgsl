// Bound gaussians (the surface, texel and captured-splat lifts): each gaussian posed on its
// triangle's frame. One invocation per slot of an instance's range: slot i < count poses gaussian
// i, slots past the gaussian count are cleared (opacity 0, never stale). A batch of instances
// sharing one posed buffer and evenly spaced ranges is one dispatch: z is the instance, reading
// vertices from posed_base + z·posed_stride and writing slots from the bases + z·slot_stride.
//
//   p = A·(posed vertex, 1) for the triangle's three vertices (A row-major 3×4), n likewise (linear)
//   k = max(K_MIN, mean edge length);  normal = normalize(e1 × e2) unless |e1 × e2| ≤ AREA_EPS·k²,
//   then normalize(n0 + n1 + n2) (else +z);  t = e1 (then e2, then ⟂ n) minus its normal part;
//   b = n × t;  μ = Σ βᵢ pᵢ + d·k·n;  Σ = k²·R·S·Rᵀ with R = [t b n] and S the local covariance.
// Source: GaussianAvatars (Qian et al. 2024) §3.2, SplattingAvatar (Shao et al. 2024) §3.1, seed
// 000's surface lift; the CPU reference is mien_core::lift::bound::pose_bound (same operation order).

struct BoundParams {
    row0: vec4<f32>,          // A's rows
    row1: vec4<f32>,
    row2: vec4<f32>,
    gaussians: u32,           // gaussians of the setup (slots past it are cleared)
    count: u32,               // slots in this dispatch (the instance's range)
    row_width: u32,           // invocations per dispatch row
    slot_base_vec4: u32,      // first slot, relative to the bound range of center / cov_a / cov_b
    slot_base_color: u32,     // first slot, relative to the bound range of color
    posed_base: u32,          // first vertex of instance 0 in the bound posed buffer
    posed_stride: u32,        // vertices between the instances of a batch (dispatch z)
    slot_stride: u32,         // slots between the instances of a batch
}

const K_MIN: f32 = 1e-6;
const AREA_EPS: f32 = 1e-4;

@group(0) @binding(0) var<uniform> params: BoundParams;
// Posed world position xyz then unit normal xyz per vertex, from vertex posed_base: (…,6) f32.
@group(0) @binding(1) var<storage, read> posed: array<f32>;
// Triangles (T,3) in posed-vertex indices.
@group(0) @binding(2) var<storage, read> triangles: array<u32>;
// Gaussians (G,3) vec4: (bitcast triangle, β1, β2, d), (S00, S01, S02, S11), (S12, S22, bitcast colour, 0).
@group(0) @binding(3) var<storage, read> gaussians: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> center: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> color: array<u32>;
@group(0) @binding(6) var<storage, read_write> cov_a: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> cov_b: array<vec4<f32>>;

// The dispatch's instance z: its first vertex in `posed`.
var<private> base: u32;

fn vertex(v: u32) -> vec3<f32> {
    let b = 6u * (base + v);
    let x = vec4<f32>(posed[b], posed[b + 1u], posed[b + 2u], 1.0);
    return vec3<f32>(dot(params.row0, x), dot(params.row1, x), dot(params.row2, x));
}

fn vnormal(v: u32) -> vec3<f32> {
    let b = 6u * (base + v) + 3u;
    let x = vec3<f32>(posed[b], posed[b + 1u], posed[b + 2u]);
    return vec3<f32>(dot(params.row0.xyz, x), dot(params.row1.xyz, x), dot(params.row2.xyz, x));
}

fn len3(a: vec3<f32>) -> f32 {
    return sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
}

fn cross3(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

fn dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x + gid.y * params.row_width;
    if (i >= params.count) {
        return;
    }
    base = params.posed_base + gid.z * params.posed_stride;
    let s4 = params.slot_base_vec4 + gid.z * params.slot_stride + i;
    let s1 = params.slot_base_color + gid.z * params.slot_stride + i;
    if (i >= params.gaussians) {
        center[s4] = vec4<f32>(0.0);
        color[s1] = 0u;
        cov_a[s4] = vec4<f32>(0.0);
        cov_b[s4] = vec4<f32>(0.0);
        return;
    }
    let ga = gaussians[3u * i];
    let gb = gaussians[3u * i + 1u];
    let gc = gaussians[3u * i + 2u];
    let tri = bitcast<u32>(ga.x);
    let i0 = triangles[3u * tri];
    let i1 = triangles[3u * tri + 1u];
    let i2 = triangles[3u * tri + 2u];
    let p0 = vertex(i0);
    let p1 = vertex(i1);
    let p2 = vertex(i2);
    let e1 = p1 - p0;
    let e2 = p2 - p0;
    let k = max((len3(e1) + len3(p2 - p1) + len3(e2)) / 3.0, K_MIN);
    let c = cross3(e1, e2);
    let lc = len3(c);
    var n = vec3<f32>(0.0, 0.0, 1.0);
    if (lc > AREA_EPS * k * k) {
        n = c * (1.0 / lc);
    } else {
        let sn = vnormal(i0) + vnormal(i1) + vnormal(i2);
        let ls = len3(sn);
        if (ls > 1e-6) {
            n = sn * (1.0 / ls);
        }
    }
    var t = e1 - n * dot3(e1, n);
    if (len3(t) <= 1e-6 * k) {
        t = e2 - n * dot3(e2, n);
    }
    if (len3(t) <= 1e-6 * k) {
        var a = vec3<f32>(0.0, 1.0, 0.0);
        if (abs(n.x) < 0.9) {
            a = vec3<f32>(1.0, 0.0, 0.0);
        }
        t = cross3(a, n);
    }
    t = t * (1.0 / len3(t));
    let b = cross3(n, t);
    let b1 = ga.y;
    let b2 = ga.z;
    let b0 = 1.0 - b1 - b2;
    let off = ga.w * k;
    let mu = vec3<f32>(
        b0 * p0.x + b1 * p1.x + b2 * p2.x + off * n.x,
        b0 * p0.y + b1 * p1.y + b2 * p2.y + off * n.y,
        b0 * p0.z + b1 * p1.z + b2 * p2.z + off * n.z,
    );
    // Rows of R = [t b n]: r(j) = (t[j], b[j], n[j]); M = R·S; Σij = k²·M[i]·r(j).
    let s0 = vec3<f32>(gb.x, gb.y, gb.z);
    let s1v = vec3<f32>(gb.y, gb.w, gc.x);
    let s2 = vec3<f32>(gb.z, gc.x, gc.y);
    let r0 = vec3<f32>(t.x, b.x, n.x);
    let r1 = vec3<f32>(t.y, b.y, n.y);
    let r2 = vec3<f32>(t.z, b.z, n.z);
    let m0 = vec3<f32>(r0.x * s0.x + r0.y * s1v.x + r0.z * s2.x, r0.x * s0.y + r0.y * s1v.y + r0.z * s2.y, r0.x * s0.z + r0.y * s1v.z + r0.z * s2.z);
    let m1 = vec3<f32>(r1.x * s0.x + r1.y * s1v.x + r1.z * s2.x, r1.x * s0.y + r1.y * s1v.y + r1.z * s2.y, r1.x * s0.z + r1.y * s1v.z + r1.z * s2.z);
    let m2 = vec3<f32>(r2.x * s0.x + r2.y * s1v.x + r2.z * s2.x, r2.x * s0.y + r2.y * s1v.y + r2.z * s2.y, r2.x * s0.z + r2.y * s1v.z + r2.z * s2.z);
    let k2 = k * k;
    center[s4] = vec4<f32>(mu, 0.0);
    color[s1] = bitcast<u32>(gc.z);
    cov_a[s4] = vec4<f32>(k2 * dot3(m0, r0), k2 * dot3(m0, r1), k2 * dot3(m0, r2), k2 * dot3(m1, r1));
    cov_b[s4] = vec4<f32>(k2 * dot3(m1, r2), k2 * dot3(m2, r2), 0.0, 0.0);
}
