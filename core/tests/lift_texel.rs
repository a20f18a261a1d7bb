//! The texel lift: counts on hand-built meshes (a UV square, mirrored charts, a seam, degenerate
//! UVs), every gaussian inside its triangle, and the real characters.

mod support;

use mien_core::lift::texel::{TexelOptions, texel_lift};
use mien_core::lift::{SurfaceColors, SurfaceOptions};

fn opts(r: u32) -> TexelOptions {
    TexelOptions {
        resolution: r,
        ..Default::default()
    }
}

fn lift(pos: &[[f32; 3]], tri: &[[u32; 3]], uv: &[[f32; 2]], r: u32) -> mien_core::lift::BoundLift {
    let nrm = vec![[0.0, 0.0, 1.0]; pos.len()];
    let colors = SurfaceColors::untextured(tri, &nrm, None);
    texel_lift(pos, &nrm, tri, uv, &colors, &opts(r)).unwrap()
}

#[test]
fn a_uv_square_gets_one_gaussian_per_texel() {
    // Two triangles covering UV [0,1]², positions = UVs: R² texels, the diagonal's centres once.
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    let uv = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let tri = [[0, 1, 2], [0, 2, 3]];
    for r in [16, 17, 64] {
        let l = lift(&pos, &tri, &uv, r);
        assert_eq!(l.gaussians.len() as u32, r * r, "R = {r}");
        // Each at its texel's centre: β's of the triangle reproduce ((i+½)/R, (j+½)/R).
        let mut seen = std::collections::HashSet::new();
        for g in &l.gaussians {
            let t = tri[g.triangle as usize];
            let b = [1.0 - g.bary[0] - g.bary[1], g.bary[0], g.bary[1]];
            let x: f32 = (0..3).map(|k| b[k] * uv[t[k] as usize][0]).sum();
            let y: f32 = (0..3).map(|k| b[k] * uv[t[k] as usize][1]).sum();
            let (i, j) = ((x * r as f32 - 0.5).round(), (y * r as f32 - 0.5).round());
            assert!((x * r as f32 - 0.5 - i).abs() < 1e-3 && (y * r as f32 - 0.5 - j).abs() < 1e-3);
            assert!(seen.insert((i as i32, j as i32)), "texel ({i}, {j}) twice");
        }
        // Texel squares of side 1/R in metres here: σ = spread·(1/R)/√12 in the plane (2.5).
        let g = &l.gaussians[0];
        let want = (2.5 / (r as f64) / 12f64.sqrt()).ln();
        let k = (1.0 + 1.0 + 2f64.sqrt()) / 3.0;
        assert!(
            (f64::from(g.log_scale[0]) - (want - k.ln())).abs() < 1e-4,
            "{:?}",
            g.log_scale
        );
    }
}

#[test]
fn mirrored_charts_both_get_their_texels() {
    // The same UV triangle used by two triangles in different places (a mirrored face).
    let pos = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [-1.0, 0.0, 1.0],
        [0.0, 1.0, 1.0],
    ];
    let uv = [
        [0.0, 0.0],
        [1.0, 0.0],
        [0.0, 1.0],
        [0.0, 0.0],
        [1.0, 0.0],
        [0.0, 1.0],
    ];
    let one = lift(&pos[..3], &[[0, 1, 2]], &uv[..3], 32);
    let two = lift(&pos, &[[0, 1, 2], [3, 4, 5]], &uv, 32);
    assert_eq!(two.gaussians.len(), 2 * one.gaussians.len());
}

#[test]
fn a_chart_boundary_between_texel_centres_leaves_no_crack() {
    // One triangle whose UV edge x = 0.3/R… lies between texel centres: the texels whose squares
    // it cuts but whose centres lie outside are kept (clamped onto the triangle).
    let r = 32u32;
    let off = 0.3 / r as f32;
    let pos = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let uv = [[off, off], [0.5 + off, off], [off, 0.5 + off]];
    let l = lift(&pos, &[[0, 1, 2]], &uv, r);
    // Inside centres: i + j ≤ 14 over i, j ≥ 0 … plus the boundary ring on the two cut edges.
    let inside = (0..16u32).map(|i| 16 - i).sum::<u32>() as usize - 16; // centres strictly inside
    assert!(
        l.gaussians.len() > inside,
        "{} vs {inside}",
        l.gaussians.len()
    );
    for g in &l.gaussians {
        let b = [1.0 - g.bary[0] - g.bary[1], g.bary[0], g.bary[1]];
        assert!(b.iter().all(|&x| x >= -1e-6), "outside its triangle: {b:?}");
    }
}

#[test]
fn triangles_without_texels_still_get_a_gaussian() {
    let pos = [[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [0.0, 0.01, 0.0]];
    // Zero UV area: one gaussian at the centroid.
    let l = lift(&pos, &[[0, 1, 2]], &[[0.2f32, 0.2]; 3], 64);
    assert_eq!(l.gaussians.len(), 1);
    assert!((l.gaussians[0].bary[0] - 1.0 / 3.0).abs() < 1e-6);
    assert!(l.gaussians[0].log_scale.iter().all(|x| x.is_finite()));
    // A UV triangle smaller than a texel, between centres: the one texel square it cuts keeps a
    // gaussian, clamped onto the triangle.
    let l = lift(
        &pos,
        &[[0, 1, 2]],
        &[[0.001, 0.001], [0.002, 0.001], [0.001, 0.002]],
        64,
    );
    assert_eq!(l.gaussians.len(), 1);
    let g = &l.gaussians[0];
    assert!(
        g.bary.iter().all(|&b| (-1e-6..=1.0).contains(&b)) && g.bary[0] + g.bary[1] <= 1.0 + 1e-6
    );
}

#[test]
fn texel_options_out_of_domain_are_refused() {
    for o in [
        TexelOptions {
            resolution: 8,
            ..Default::default()
        },
        TexelOptions {
            resolution: 9000,
            ..Default::default()
        },
        TexelOptions {
            spread: 0.0,
            ..Default::default()
        },
        TexelOptions {
            thickness: 2.0,
            ..Default::default()
        },
    ] {
        assert!(o.validate().unwrap_err().to_string().contains("texel lift"));
    }
    // UVs past the raster's gaussian cap are refused before allocating.
    let pos = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let uv = [[0.0, 0.0], [1000.0, 0.0], [0.0, 1000.0]];
    let nrm = vec![[0.0, 0.0, 1.0]; 3];
    let colors = SurfaceColors::untextured(&[[0, 1, 2]], &nrm, None);
    let e = texel_lift(&pos, &nrm, &[[0, 1, 2]], &uv, &colors, &opts(8192)).unwrap_err();
    assert!(e.to_string().contains("texel lift gaussians"), "{e}");
}

#[test]
fn facecap_texel_lift_is_textured_and_finite() {
    let ch =
        mien_core::io::gltf::import_gltf(&support::data_dir().join("facecap/facecap.glb")).unwrap();
    let rig = mien_core::rig::RigData::from_character(&ch).unwrap();
    let colors = SurfaceColors::from_character(&ch, &rig).unwrap();
    let l = texel_lift(
        &rig.positions,
        &rig.normals,
        &rig.triangles,
        &rig.uvs,
        &colors,
        &opts(256),
    )
    .unwrap();
    let s = mien_core::lift::surface_lift(
        &rig.positions,
        &rig.normals,
        &rig.triangles,
        &colors,
        &SurfaceOptions::default(),
    )
    .unwrap();
    eprintln!(
        "facecap texel 256²: {} gaussians (surface {})",
        l.gaussians.len(),
        s.gaussians.len()
    );
    assert!(l.gaussians.len() >= rig.triangles.len());
    assert_eq!(l.report.lift, "texel");
    assert!(
        l.gaussians
            .iter()
            .all(|g| g.log_scale.iter().chain(&g.bary).all(|x| x.is_finite()))
    );
}
