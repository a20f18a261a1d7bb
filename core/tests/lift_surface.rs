//! The surface lift and its bound-gaussian posing: the triangle frame worked by hand, posing
//! against an f64 reference (rigid motions move gaussians rigidly, uniform scaling scales them),
//! degenerate and sliver triangles, the split's points and the triangle second moment checked by
//! independent means, and real characters' textures and lifts.

mod support;

use mien_core::lift::bound::{K_MIN, PackedBound, pose_bound, triangle_frame};
use mien_core::lift::surface::{split_points, triangle_covariance_2d};
use mien_core::lift::{
    BoundGaussian, SurfaceColors, SurfaceOptions, face_triangles, surface_lift,
    surface_lift_weighted,
};
use mien_core::rig::RigData;
use proptest::prelude::*;

fn packed(bary: [f32; 2], offset: f32, rotation: [f32; 4], log_scale: [f32; 3]) -> PackedBound {
    BoundGaussian {
        triangle: 0,
        bary,
        offset,
        rotation,
        log_scale,
        color: 0xff80_4020,
    }
    .pack()
    .unwrap()
}

#[test]
fn frame_of_a_right_triangle_worked_by_hand() {
    // (0,0,0), (2,0,0), (0,2,0): edges 2, 2√2, 2 → k = (4 + 2√2)/3; n = +z; t = +x; b = +y.
    let f = triangle_frame(
        [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]],
        [[0.0; 3]; 3],
    );
    let k = (4.0 + 2.0 * 2f64.sqrt()) / 3.0;
    assert!((f64::from(f.k) - k).abs() < 1e-6, "{}", f.k);
    assert_eq!(f.axes, [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    assert!(!f.fallback);

    // A gaussian at the centroid, offset 0.5·k along n, identity rotation, σ = (0.1, 0.2, 0.01)·k.
    let g = packed(
        [1.0 / 3.0, 1.0 / 3.0],
        0.5,
        [1.0, 0.0, 0.0, 0.0],
        [0.1f32.ln(), 0.2f32.ln(), 0.01f32.ln()],
    );
    let s = pose_bound(
        &g,
        [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]],
        [[0.0; 3]; 3],
    );
    let want = [2.0 / 3.0, 2.0 / 3.0, 0.5 * k];
    for i in 0..3 {
        assert!(
            (f64::from(s.center[i]) - want[i]).abs() < 1e-6,
            "{:?}",
            s.center
        );
    }
    let d = [0.01 * k * k, 0.04 * k * k, 1e-4 * k * k];
    assert!((f64::from(s.cov_a[0]) - d[0]).abs() < 1e-6);
    assert!((f64::from(s.cov_a[3]) - d[1]).abs() < 1e-6);
    assert!((f64::from(s.cov_b[1]) - d[2]).abs() < 1e-7);
    assert!(s.cov_a[1].abs() < 1e-7 && s.cov_a[2].abs() < 1e-7 && s.cov_b[0].abs() < 1e-7);
    assert_eq!(s.color, 0xff80_4020);
}

/// f64 rotation matrix from a unit quaternion (w, x, y, z).
fn rot(q: [f64; 4]) -> [[f64; 3]; 3] {
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    let [w, x, y, z] = q.map(|c| c / n);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

fn apply(r: &[[f64; 3]; 3], s: f64, t: [f64; 3], p: [f32; 3]) -> [f32; 3] {
    let p = p.map(f64::from);
    std::array::from_fn(|i| (s * (r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2]) + t[i]) as f32)
}

fn cov(s: &mien_core::lift::LiftedSplat) -> [[f64; 3]; 3] {
    let (a, b) = (s.cov_a.map(f64::from), s.cov_b.map(f64::from));
    [[a[0], a[1], a[2]], [a[1], a[3], b[0]], [a[2], b[0], b[1]]]
}

proptest! {
    #![proptest_config(support::proptest_config(256))]

    /// A similarity transform x ↦ s·R·x + t of the triangle maps the posed gaussian's centre the
    /// same way and its covariance to s²·R·Σ·Rᵀ (checked in f64 against the transformed pose).
    #[test]
    fn posing_follows_similarity_transforms(
        p in prop::array::uniform3(prop::array::uniform3(-1.0f32..1.0)),
        q in prop::array::uniform4(-1.0f64..1.0),
        scale in 0.2f64..5.0,
        t in prop::array::uniform3(-3.0f64..3.0),
        bary in prop::array::uniform2(0.0f32..0.5),
        offset in -1.0f32..1.0,
        gq in prop::array::uniform4(-1.0f32..1.0),
        ls in prop::array::uniform3(-4.0f32..0.0),
    ) {
        let e1 = [0, 1, 2].map(|i| f64::from(p[1][i] - p[0][i]));
        let e2 = [0, 1, 2].map(|i| f64::from(p[2][i] - p[0][i]));
        let c = [e1[1]*e2[2]-e1[2]*e2[1], e1[2]*e2[0]-e1[0]*e2[2], e1[0]*e2[1]-e1[1]*e2[0]];
        let area2 = (c[0]*c[0]+c[1]*c[1]+c[2]*c[2]).sqrt();
        let e = |v: [f64;3]| (v[0]*v[0]+v[1]*v[1]+v[2]*v[2]).sqrt();
        let k = (e(e1) + e(e2) + e([0,1,2].map(|i| e2[i]-e1[i]))) / 3.0;
        // Well-shaped triangles only: the frame is then a smooth function of the vertices.
        prop_assume!(k > 0.05 && area2 > 0.2 * k * k);
        prop_assume!(q.iter().map(|x| x*x).sum::<f64>() > 0.01);
        prop_assume!(gq.iter().map(|x| x*x).sum::<f32>() > 0.01);
        let g = packed(bary, offset, gq, ls);
        let r = rot(q);
        let base = pose_bound(&g, p, [[0.0; 3]; 3]);
        let moved = pose_bound(&g, p.map(|v| apply(&r, scale, t, v)), [[0.0; 3]; 3]);
        let want_c = apply(&r, scale, t, [base.center[0], base.center[1], base.center[2]]);
        let tol = 1e-4 * (1.0 + scale * 4.0);
        for i in 0..3 {
            prop_assert!((f64::from(moved.center[i]) - f64::from(want_c[i])).abs() < tol,
                "centre {i}: {:?} vs {:?}", moved.center, want_c);
        }
        let s0 = cov(&base);
        let s1 = cov(&moved);
        let mag = s0.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        for i in 0..3 {
            for j in 0..3 {
                let mut w = 0.0;
                for a in 0..3 { for b in 0..3 { w += r[i][a] * s0[a][b] * r[j][b]; } }
                w *= scale * scale;
                prop_assert!((s1[i][j] - w).abs() <= 2e-4 * mag * scale * scale + 1e-12,
                    "Σ[{i}][{j}] {} vs {w}", s1[i][j]);
            }
        }
    }

    /// Any triangle, however degenerate: the posed splat is finite and no wider than the
    /// triangle's own scale times the gaussian's local σ (never a huge splat).
    #[test]
    fn degenerate_triangles_give_finite_bounded_splats(
        p0 in prop::array::uniform3(-1.0f32..1.0),
        d in prop::array::uniform3(-1e-3f32..1e-3),
        t in 0.0f32..1.0,
        collapse in 0u8..3,
    ) {
        // A sliver (third vertex on the first edge, nudged by d), a needle, or a point.
        let p1 = [p0[0] + 0.5, p0[1] - 0.2, p0[2] + 0.1];
        let p2 = match collapse {
            0 => [0, 1, 2].map(|i| p0[i] + t * (p1[i] - p0[i]) + d[i]),
            1 => [0, 1, 2].map(|i| p0[i] + d[i]),
            _ => p0,
        };
        let p1 = if collapse == 2 { p0 } else { p1 };
        let g = packed([0.3, 0.3], 0.1, [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0]);
        let s = pose_bound(&g, [p0, p1, p2], [[0.0, 0.0, 1.0]; 3]);
        prop_assert!(s.center.iter().chain(&s.cov_a).chain(&s.cov_b).all(|x| x.is_finite()));
        let f = triangle_frame([p0, p1, p2], [[0.0, 0.0, 1.0]; 3]);
        prop_assert!(f.k >= K_MIN);
        // σ = k in every direction (log-scale 0): the trace is 3k².
        let tr = f64::from(s.cov_a[0] + s.cov_a[3] + s.cov_b[1]);
        prop_assert!((tr - 3.0 * f64::from(f.k).powi(2)).abs() <= 1e-4 * tr.max(1e-12));
        let extent = [p1, p2].iter().map(|q| {
            (0..3).map(|i| f64::from(q[i] - p0[i]).powi(2)).sum::<f64>().sqrt()
        }).fold(0.0, f64::max);
        prop_assert!(f64::from(f.k) <= extent.max(f64::from(K_MIN)) + 1e-9);
    }
}

#[test]
fn split_points_are_the_sub_triangle_centroids() {
    for m in 1..12u32 {
        let pts: Vec<[f32; 2]> = split_points(m).collect();
        assert_eq!(pts.len(), (m * m) as usize, "m = {m}");
        // Inside, distinct, and centred on the triangle's centroid (the mean of an even cover).
        let mut mean = [0.0f64; 2];
        for (i, p) in pts.iter().enumerate() {
            assert!(p[0] > 0.0 && p[1] > 0.0 && p[0] + p[1] < 1.0, "{p:?}");
            for q in &pts[..i] {
                assert!((p[0] - q[0]).abs() + (p[1] - q[1]).abs() > 1e-4 / m as f32);
            }
            mean[0] += f64::from(p[0]) / pts.len() as f64;
            mean[1] += f64::from(p[1]) / pts.len() as f64;
        }
        assert!((mean[0] - 1.0 / 3.0).abs() < 1e-5 && (mean[1] - 1.0 / 3.0).abs() < 1e-5);
    }
}

#[test]
fn triangle_second_moment_matches_sampling() {
    // Uniform points by the square-root method (Osada et al. 2002), a fixed LCG, 200 000 samples.
    let p = [[0.0f32, 0.0, 0.0], [3.0, 0.5, 0.0], [1.0, 2.0, 0.0]];
    let c = triangle_covariance_2d(p, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut rnd = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = 200_000;
    let (mut sx, mut sy, mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for _ in 0..n {
        let (r1, r2) = (rnd().sqrt(), rnd());
        let w = [1.0 - r1, r1 * (1.0 - r2), r1 * r2];
        let x: f64 = (0..3).map(|i| w[i] * f64::from(p[i][0])).sum();
        let y: f64 = (0..3).map(|i| w[i] * f64::from(p[i][1])).sum();
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
    }
    let nf = n as f64;
    let (mx, my) = (sx / nf, sy / nf);
    let got = [sxx / nf - mx * mx, sxy / nf - mx * my, syy / nf - my * my];
    for k in 0..3 {
        assert!(
            (c[k] - got[k]).abs() < 0.01 * c[0].max(c[2]),
            "{c:?} vs {got:?}"
        );
    }
}

#[test]
fn a_flat_square_lifts_to_the_target_count_with_an_even_cover() {
    // Two triangles of a 1 m square in z = 0, no material: normal colours (+z → (0.5, 0.5, 1)).
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let nrm = [[0.0, 0.0, 1.0]; 4];
    let tri = [[0, 1, 2], [0, 2, 3]];
    let colors = SurfaceColors::untextured(&tri, &nrm, None);
    let opts = SurfaceOptions {
        target: 2 * 20 * 20,
        ..Default::default()
    };
    let lift = surface_lift(&pos, &nrm, &tri, &colors, &opts).unwrap();
    // Each triangle has area ½ = 400 × (1/800): m = 20, 400 gaussians each.
    assert_eq!(lift.gaussians.len(), 800);
    let c = mien_core::sink::unpack4x8unorm(lift.gaussians[0].color);
    assert!(
        (c[0] - 0.5).abs() < 0.01 && (c[2] - 1.0).abs() < 0.01,
        "{c:?}"
    );
    // Every gaussian is flat: its thickness σ is a tenth of its larger in-plane σ.
    for g in &lift.gaussians {
        assert!((g.log_scale[2] - (g.log_scale[0] + 0.1f32.ln())).abs() < 1e-4);
        assert!(g.log_scale[1] <= g.log_scale[0] + 1e-6);
    }
}

/// A sliver 1 m long and 1 mm wide beside a 1 m square, target 200: the area rule gives the sliver
/// one gaussian, whose long σ (spread 2.5 × √(1/18) ≈ 0.59 m) would reach far past its ends. The
/// sliver rule splits it at least ⌈L / 2ℓ⌉ = ⌈1 / (2 · 0.1075)⌉ = 5 times (ℓ = √(4s/√3), s =
/// 1.0005 / 200 m²), so its gaussians' long σ is at most 0.59 / 5 m; the total stays within 5 % of
/// the target.
#[test]
fn a_sliver_is_split_along_its_length_within_the_budget() {
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 2.0, 0.0],
        [1.0, 2.0, 0.0],
        [0.0, 2.001, 0.0],
    ];
    let nrm = [[0.0, 0.0, 1.0]; 7];
    let tri = [[0, 1, 2], [0, 2, 3], [4, 5, 6]];
    let colors = SurfaceColors::untextured(&tri, &nrm, None);
    let opts = SurfaceOptions {
        target: 200,
        ..Default::default()
    };
    let lift = surface_lift(&pos, &nrm, &tri, &colors, &opts).unwrap();
    let sliver: Vec<_> = lift.gaussians.iter().filter(|g| g.triangle == 2).collect();
    assert!(
        sliver.len() >= 25,
        "{} gaussians on the sliver",
        sliver.len()
    );
    let k = triangle_frame([pos[4], pos[5], pos[6]], [nrm[0]; 3]).k;
    for g in &sliver {
        let long = f64::from(k) * f64::from(g.log_scale[0]).exp();
        assert!(long <= 0.59 / 5.0 + 1e-3, "long σ {long} m");
    }
    assert!(lift.gaussians.len() <= 210, "{}", lift.gaussians.len());

    // A fan of 200 slivers (each 1 m × 2 mm) asks for far more than the target by the sliver
    // rule alone: the area per gaussian grows until the total is within 5 % of it.
    let mut pos = vec![[0.0f32, 0.0, 0.0]];
    let mut tri = Vec::new();
    for i in 0..200u32 {
        let x = i as f32 * 0.002;
        pos.push([x, 1.0, 0.0]);
        pos.push([x + 0.002, 1.0, 0.0]);
        tri.push([0, 2 * i + 1, 2 * i + 2]);
    }
    let nrm = vec![[0.0, 0.0, 1.0]; pos.len()];
    let colors = SurfaceColors::untextured(&tri, &nrm, None);
    let opts = SurfaceOptions {
        target: 5_000,
        ..Default::default()
    };
    let lift = surface_lift(&pos, &nrm, &tri, &colors, &opts).unwrap();
    let n = lift.gaussians.len();
    assert!((200..=5_250).contains(&n), "{n} gaussians");
}

/// Two equal triangles, the first weighted 4: `m = round(√(w·a / s))` with `s = 5a / 1000` gives
/// 28² = 784 and 14² = 196 gaussians (hand-worked). `face_triangles` marks a triangle with a vertex
/// whose dominant palette entry is the head's; bad weights are refused.
#[test]
fn density_weights_share_the_target_and_mark_the_face() {
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let nrm = [[0.0, 0.0, 1.0]; 4];
    let tri = [[0, 1, 2], [0, 2, 3]];
    let colors = SurfaceColors::untextured(&tri, &nrm, None);
    let opts = SurfaceOptions {
        target: 1000,
        ..Default::default()
    };
    let lift = surface_lift_weighted(&pos, &nrm, &tri, &colors, &[4.0, 1.0], &opts).unwrap();
    let first = lift.gaussians.iter().filter(|g| g.triangle == 0).count();
    assert_eq!((first, lift.gaussians.len() - first), (784, 196));
    for bad in [&[1.0f32][..], &[1.0, -1.0], &[1.0, f32::NAN]] {
        assert!(surface_lift_weighted(&pos, &nrm, &tri, &colors, bad, &opts).is_err());
    }
    // Vertex 1 follows palette entry 1 (the head), the others entry 0.
    assert_eq!(
        face_triangles(&tri, &[0, 1, 0, 0], &[false, true]),
        vec![true, false]
    );
}

#[test]
fn surface_options_out_of_domain_are_refused() {
    for o in [
        SurfaceOptions {
            target: 0,
            ..Default::default()
        },
        SurfaceOptions {
            spread: 0.5,
            ..Default::default()
        },
        SurfaceOptions {
            spread: f32::NAN,
            ..Default::default()
        },
        SurfaceOptions {
            thickness: 0.0,
            ..Default::default()
        },
        SurfaceOptions {
            max_split: 0,
            ..Default::default()
        },
        SurfaceOptions {
            face_density: 0.5,
            ..Default::default()
        },
    ] {
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("surface lift"), "{e}");
    }
    // A triangle past the vertices is named.
    let nrm = [[0.0, 0.0, 1.0]; 3];
    let colors = SurfaceColors::untextured(&[[0, 1, 3]], &nrm, None);
    let e = surface_lift(
        &[[0.0; 3]; 3],
        &nrm,
        &[[0, 1, 3]],
        &colors,
        &SurfaceOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("triangle 0"), "{e}");
}

fn lift_of(path: &str) -> (mien_core::lift::BoundLift, RigData) {
    let ch = mien_core::io::gltf::import_gltf(&support::data_dir().join(path)).unwrap();
    let rig = RigData::from_character(&ch).unwrap();
    let colors = SurfaceColors::from_character(&ch, &rig).unwrap();
    let lift = surface_lift(
        &rig.positions,
        &rig.normals,
        &rig.triangles,
        &colors,
        &SurfaceOptions::default(),
    )
    .unwrap();
    (lift, rig)
}

/// The mean display colour of a lift's gaussians.
fn mean_rgb(lift: &mien_core::lift::BoundLift) -> [f32; 3] {
    let mut m = [0.0f64; 3];
    for g in &lift.gaussians {
        let c = mien_core::sink::unpack4x8unorm(g.color);
        for k in 0..3 {
            m[k] += f64::from(c[k]);
        }
    }
    m.map(|x| (x / lift.gaussians.len() as f64) as f32)
}

#[test]
fn facecap_ktx2_texture_colours_its_skin() {
    let (lift, rig) = lift_of("facecap/facecap.glb");
    let r = &lift.report;
    assert_eq!(r.colors.textures.len(), 1, "{:?}", r.colors);
    let (_, format, w, h) = &r.colors.textures[0];
    assert_eq!((*w, *h), (1024, 1024));
    assert!(format.starts_with("ktx2"), "{format}");
    assert_eq!(r.colors.textured_triangles, rig.triangles.len() as u64);
    // Face Cap's texture is a grey head with pink cheeks; its mean is a mid grey.
    let m = mean_rgb(&lift);
    assert!(m.iter().all(|&c| (0.4..0.8).contains(&c)), "{m:?}");
    // Texels read off the image by eye: the dark scalp cap, the grey crown, a pink cheek.
    let ch =
        mien_core::io::gltf::import_gltf(&support::data_dir().join("facecap/facecap.glb")).unwrap();
    let tex = mien_core::texture::decode(ch.images[0].as_ref().unwrap()).unwrap();
    let at = |x: usize, y: usize| tex.texels[y * 1024 + x];
    assert!(at(300, 380)[0] < 70, "{:?}", at(300, 380));
    assert!((120..200).contains(&at(512, 100)[0]), "{:?}", at(512, 100));
    let cheek = at(360, 740);
    assert!(cheek[0] > cheek[2] + 5, "{cheek:?}");
    assert!(lift.gaussians.len() >= rig.triangles.len());
    eprintln!(
        "facecap: {} gaussians over {} triangles, mean {m:?}",
        lift.gaussians.len(),
        rig.triangles.len()
    );
}

#[test]
fn ready_player_me_jpeg_textures_are_all_decoded() {
    let (lift, rig) = lift_of("avatars/rpm_male.glb");
    let r = &lift.report;
    assert!(r.colors.failed.is_empty(), "{:?}", r.colors.failed);
    assert!(
        r.colors.textures.iter().all(|t| t.1 == "jpeg"),
        "{:?}",
        r.colors.textures
    );
    assert_eq!(r.colors.textured_triangles, rig.triangles.len() as u64);
    eprintln!(
        "rpm: {} gaussians, textures {:?}",
        lift.gaussians.len(),
        r.colors.textures
    );
}

#[test]
fn vrm_textures_are_decoded() {
    // Godette's base colours are three PNGs (its JPEGs are a metallic-roughness map and an
    // unused image: never read).
    let (lift, rig) = lift_of("vrm/Godette_vrm_v4.vrm");
    let r = &lift.report;
    assert!(r.colors.failed.is_empty(), "{:?}", r.colors.failed);
    let kinds: Vec<&str> = r.colors.textures.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(kinds, ["png"; 3]);
    assert_eq!(r.colors.textured_triangles, rig.triangles.len() as u64);
    eprintln!(
        "godette: {} gaussians, {:?}",
        lift.gaussians.len(),
        r.colors
    );
}

#[test]
fn vertex_normals_of_surfaces_posed_without_them() {
    use mien_core::lift::color::vertex_normals;
    // A square in z = 0 wound counter-clockwise seen from +z: every normal is +z.
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let n = vertex_normals(&pos, &[[0, 1, 2], [0, 2, 3]]);
    assert!(n.iter().all(|v| (v[2] - 1.0).abs() < 1e-6), "{n:?}");
    // A roof of two faces meeting at 90°: an eave keeps its face's normal; the ridge vertex 2
    // sums its three triangles' cross products, (0,−1,1) + (0,1,1) + (0,1,1) = (0,1,3).
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 2.0, 0.0],
        [1.0, 2.0, 0.0],
    ];
    let tris = [[0, 1, 3], [0, 3, 2], [2, 3, 5], [2, 5, 4]];
    let n = vertex_normals(&pos, &tris);
    let s = std::f32::consts::FRAC_1_SQRT_2;
    assert!(
        (n[0][1] + s).abs() < 1e-6 && (n[0][2] - s).abs() < 1e-6,
        "{:?}",
        n[0]
    );
    let l = 10f32.sqrt();
    assert!(
        (n[2][1] - 1.0 / l).abs() < 1e-6 && (n[2][2] - 3.0 / l).abs() < 1e-6,
        "{:?}",
        n[2]
    );
    // A vertex on no triangle: +z.
    assert_eq!(vertex_normals(&[[0.0; 3]], &[]), vec![[0.0, 0.0, 1.0]]);
}

/// The Ready Player Me avatar: its head (the triangles its `Head` joint and the joints below it
/// drive most) is a small part of its area, and with the default face density 4 it takes well
/// over twice the share of gaussians it gets at density 1, within the same total.
#[test]
fn a_full_body_avatars_face_gets_the_density() {
    let ch = mien_core::io::gltf::import_gltf(&support::data_dir().join("avatars/rpm_male.glb"))
        .unwrap();
    let rig = RigData::from_character(&ch).unwrap();
    let colors = SurfaceColors::from_character(&ch, &rig).unwrap();
    // The palette entries of `Head` and every node below it.
    let head = ch
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("Head"))
        .unwrap();
    let mut below = vec![false; ch.nodes.len()];
    for &id in ch.hierarchy.order() {
        let i = id.index();
        below[i] = i == head || ch.nodes[i].parent.is_some_and(|p| below[p.index()]);
    }
    let head_entries: Vec<bool> = rig
        .palette
        .iter()
        .map(|e| match e {
            mien_core::rig::PaletteEntry::Joint { node, .. }
            | mien_core::rig::PaletteEntry::Rigid { node } => below[node.index()],
        })
        .collect();
    let face = face_triangles(&rig.triangles, &rig.dominant_palette(), &head_entries);
    let opts = SurfaceOptions::default();
    let share = |density: &[f32]| {
        let lift = surface_lift_weighted(
            &rig.positions,
            &rig.normals,
            &rig.triangles,
            &colors,
            density,
            &opts,
        )
        .unwrap();
        let on_face = lift
            .gaussians
            .iter()
            .filter(|g| face[g.triangle as usize])
            .count();
        (
            on_face as f64 / lift.gaussians.len() as f64,
            lift.gaussians.len(),
        )
    };
    let (plain, n1) = share(&[]);
    let weights: Vec<f32> = face
        .iter()
        .map(|&f| if f { opts.face_density } else { 1.0 })
        .collect();
    let (dense, n4) = share(&weights);
    eprintln!("RPM head share: {plain:.3} of {n1} → {dense:.3} of {n4}");
    assert!(face.iter().any(|&f| f) && !face.iter().all(|&f| f));
    assert!(plain < 0.15, "{plain}");
    assert!(dense > 2.2 * plain, "{plain} → {dense}");
    for n in [n1, n4] {
        assert!(n as f64 <= 1.05 * f64::from(opts.target), "{n}");
    }
}
