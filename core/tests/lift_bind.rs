//! Captured splats bound to a mesh: the closest-point routine against sampling, the rest pose
//! reproducing the capture, rigid motions carried, far gaussians counted, dropped or left rigid
//! to a joint, and real captures bound to a real character.

mod support;

use mien_core::io::ply::SplatCloud;
use mien_core::lift::bind::closest_on_triangle;
use mien_core::lift::{BindOptions, BoundSetup, FarGaussians, JointAnchors, bind_splats};
use proptest::prelude::*;

proptest! {
    #![proptest_config(support::proptest_config(256))]

    /// No point of the triangle (a 40 × 40 barycentric grid) is nearer than the one returned.
    #[test]
    fn closest_point_beats_every_sample(
        v in prop::array::uniform3(prop::array::uniform3(-1.0f64..1.0)),
        p in prop::array::uniform3(-2.0f64..2.0),
    ) {
        let w = closest_on_triangle(p, v[0], v[1], v[2]);
        prop_assert!(w.iter().all(|&x| (-1e-12..=1.0 + 1e-12).contains(&x)));
        prop_assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let at = |w: [f64; 3]| [0, 1, 2].map(|k| w[0] * v[0][k] + w[1] * v[1][k] + w[2] * v[2][k]);
        let d = |q: [f64; 3]| (0..3).map(|k| (q[k] - p[k]).powi(2)).sum::<f64>();
        let best = d(at(w));
        for i in 0..=40 {
            for j in 0..=(40 - i) {
                let s = [i as f64 / 40.0, j as f64 / 40.0, (40 - i - j) as f64 / 40.0];
                prop_assert!(best <= d(at(s)) + 1e-9, "{w:?} {best} vs {s:?} {}", d(at(s)));
            }
        }
    }
}

/// A bumpy 12 × 12 grid mesh in z ≈ 0 and a capture of gaussians floating near it.
fn mesh_and_cloud() -> (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[u32; 3]>, SplatCloud) {
    let n = 12u32;
    let mut pos = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (i as f32 / n as f32, j as f32 / n as f32);
            pos.push([x, y, 0.02 * (6.0 * x).sin() * (4.0 * y).cos()]);
        }
    }
    let mut tri = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let a = j * (n + 1) + i;
            tri.push([a, a + 1, a + n + 2]);
            tri.push([a, a + n + 2, a + n + 1]);
        }
    }
    let nrm = vec![[0.0, 0.0, 1.0]; pos.len()];
    let mut state = 7u64;
    let mut rnd = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) as f32
    };
    let mut cloud = SplatCloud::default();
    for _ in 0..500 {
        let c = [rnd(), rnd(), 0.04 * (rnd() - 0.5)];
        // A random symmetric positive-definite covariance of a few millimetres.
        let a: [[f32; 3]; 3] =
            std::array::from_fn(|_| std::array::from_fn(|_| 0.01 * (rnd() - 0.5)));
        let cov: [[f32; 3]; 3] = std::array::from_fn(|r| {
            std::array::from_fn(|s| {
                (0..3).map(|k| a[r][k] * a[s][k]).sum::<f32>() + if r == s { 1e-6 } else { 0.0 }
            })
        });
        cloud.center.push(c);
        cloud.covariance.push(cov);
        cloud.rgba.push([rnd(), rnd(), rnd(), 0.5 + 0.5 * rnd()]);
    }
    (pos, nrm, tri, cloud)
}

fn close(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn the_rest_pose_reproduces_the_capture() {
    let (pos, nrm, tri, cloud) = mesh_and_cloud();
    let (lift, rep) = bind_splats(&cloud, &pos, &nrm, &tri, None, &BindOptions::default()).unwrap();
    assert_eq!(rep.bound, 500);
    assert_eq!(rep.far, 0);
    let setup = BoundSetup::new(&lift.gaussians, lift.triangles).unwrap();
    for i in 0..cloud.len() {
        let s = setup.pose(i, &pos, &nrm);
        for k in 0..3 {
            assert!(
                close(s.center[k], cloud.center[i][k], 1e-5),
                "{i}: {:?} vs {:?}",
                s.center,
                cloud.center[i]
            );
        }
        let c = &cloud.covariance[i];
        let got = [
            s.cov_a[0], s.cov_a[1], s.cov_a[2], s.cov_a[3], s.cov_b[0], s.cov_b[1],
        ];
        let want = [c[0][0], c[0][1], c[0][2], c[1][1], c[1][2], c[2][2]];
        let big = want.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        for k in 0..6 {
            assert!(
                close(got[k], want[k], 1e-4 * big),
                "{i}: {got:?} vs {want:?}"
            );
        }
        let rgba = mien_core::sink::unpack4x8unorm(s.color);
        for k in 0..4 {
            assert!(close(rgba[k], cloud.rgba[i][k], 0.5 / 255.0 + 1e-6));
        }
    }
}

#[test]
fn a_rigid_motion_of_the_mesh_moves_the_capture_rigidly() {
    let (pos, nrm, tri, cloud) = mesh_and_cloud();
    let (lift, _) = bind_splats(&cloud, &pos, &nrm, &tri, None, &BindOptions::default()).unwrap();
    let setup = BoundSetup::new(&lift.gaussians, lift.triangles).unwrap();
    // A turn of 0.7 rad about z and a shift.
    let (s, c) = 0.7f32.sin_cos();
    let r = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]];
    let mv = |p: [f32; 3]| {
        [0, 1, 2].map(|i| r[i][0] * p[0] + r[i][1] * p[1] + r[i][2] * p[2] + [0.3, -0.2, 1.0][i])
    };
    let moved: Vec<[f32; 3]> = pos.iter().map(|&p| mv(p)).collect();
    for i in (0..cloud.len()).step_by(7) {
        let got = setup.pose(i, &moved, &nrm);
        let want = mv(cloud.center[i]);
        for k in 0..3 {
            assert!(close(got.center[k], want[k], 2e-5), "{i}");
        }
    }
}

#[test]
fn far_gaussians_are_counted_and_dropped_when_asked() {
    let (pos, nrm, tri, mut cloud) = mesh_and_cloud();
    cloud.center[3] = [0.5, 0.5, 2.0];
    cloud.center[9] = [-3.0, 0.5, 0.0];
    let (_, rep) = bind_splats(&cloud, &pos, &nrm, &tri, None, &BindOptions::default()).unwrap();
    assert_eq!((rep.far, rep.dropped, rep.bound), (2, 0, 500));
    assert!(
        (rep.max_distance_m - 3.0).abs() < 1e-6,
        "{}",
        rep.max_distance_m
    );
    let o = BindOptions {
        far: FarGaussians::Drop,
        ..Default::default()
    };
    let (lift, rep) = bind_splats(&cloud, &pos, &nrm, &tri, None, &o).unwrap();
    assert_eq!((rep.far, rep.dropped, rep.bound), (2, 2, 498));
    assert_eq!(lift.gaussians.len(), 498);
    // A non-finite capture is refused naming the gaussian.
    cloud.center[11][0] = f32::NAN;
    let e = bind_splats(&cloud, &pos, &nrm, &tri, None, &o)
        .unwrap_err()
        .to_string();
    assert!(e.contains("captured gaussian 11"), "{e}");
}

#[test]
fn a_real_capture_binds_to_a_real_character() {
    let d = support::data_dir();
    let ch = mien_core::io::gltf::import_gltf(&d.join("facecap/facecap.glb")).unwrap();
    let rig = mien_core::rig::RigData::from_character(&ch).unwrap();
    let cloud =
        mien_core::io::ply::read_splat_ply(&d.join("splats/fruit_drops_minimal.ply")).unwrap();
    // The fruit capture is nowhere near the face: binding it anyway takes a distance that holds
    // it (the default refuses a capture mostly far from the surface).
    let o = BindOptions {
        max_distance_m: 1e5,
        ..Default::default()
    };
    let (lift, rep) = bind_splats(
        &cloud,
        &rig.positions,
        &rig.normals,
        &rig.triangles,
        None,
        &o,
    )
    .unwrap();
    assert_eq!(rep.splats as usize, cloud.len());
    assert_eq!(rep.sh_degree_dropped, 3);
    assert_eq!(rep.bound as usize, lift.gaussians.len());
    let setup = BoundSetup::new(&lift.gaussians, lift.triangles).unwrap();
    // At rest every gaussian comes back where the capture had it, to the f32 rounding of its
    // barycentrics times the mesh's coordinates (Face Cap's mesh space is quantised: thousands).
    let mesh = rig
        .positions
        .iter()
        .flatten()
        .fold(0.0f32, |m, x| m.max(x.abs()));
    for i in (0..cloud.len()).step_by(101) {
        let s = setup.pose(i, &rig.positions, &rig.normals);
        let g = &lift.gaussians[i];
        let b = 1.0 + g.bary[0].abs() + g.bary[1].abs() + g.offset.abs();
        let scale = cloud.center[i].iter().fold(1.0f32, |m, x| m.max(x.abs())) + mesh * b;
        for k in 0..3 {
            assert!(
                close(s.center[k], cloud.center[i][k], 1e-4 * scale),
                "{i}: {:?} vs {:?}, {:?}",
                s.center,
                cloud.center[i],
                lift.gaussians[i]
            );
        }
    }
    eprintln!("fruit drops on facecap: {rep:?}");
}

/// Far gaussians left rigid to a joint: the grid's left half follows palette entry 0, its right
/// half entry 1 (a joint at x = 1). Posing entry 1 by a rigid motion `M` (entry 0 fixed) takes a
/// far gaussian beyond the right edge to exactly `M·x` — computed here in f64 from the capture —
/// and leaves one beyond the left edge where it was; near gaussians keep their triangles.
#[test]
fn far_gaussians_left_rigid_to_a_joint_move_with_it() {
    use glam::{DMat4, DQuat, DVec3, Mat4};
    use mien_core::rig::{NodeId, PaletteEntry, RigData};
    let (pos, nrm, tri, mut cloud) = mesh_and_cloud();
    let joint_at = DVec3::new(1.0, 0.5, 0.0);
    let n = pos.len();
    let rig = RigData {
        palette: vec![
            PaletteEntry::Rigid { node: NodeId(0) },
            PaletteEntry::Joint {
                node: NodeId(1),
                inverse_bind: Mat4::from_translation(-joint_at.as_vec3()),
            },
        ],
        positions: pos.clone(),
        normals: nrm.clone(),
        uvs: vec![[0.0; 2]; n],
        colors: vec![[1.0; 4]; n],
        triangles: tri.clone(),
        morph_offsets: vec![0; n + 1],
        joints: pos
            .iter()
            .map(|p| if p[0] > 0.5 { [1, 0, 0, 0] } else { [0; 4] })
            .collect(),
        weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
        ..Default::default()
    };
    let anchored = rig.with_joint_anchors().unwrap();
    let dominant = rig.dominant_palette();
    cloud.center[3] = [1.3, 0.5, 0.1];
    cloud.center[9] = [-0.4, 0.2, 0.0];
    let anchors = JointAnchors {
        first_triangle: tri.len() as u32,
        dominant: &dominant,
    };
    let o = BindOptions {
        far: FarGaussians::Joint,
        ..Default::default()
    };
    // Without the anchors the rule cannot be followed.
    assert!(bind_splats(&cloud, &pos, &nrm, &tri, None, &o).is_err());
    let (lift, rep) = bind_splats(
        &cloud,
        &anchored.positions,
        &anchored.normals,
        &anchored.triangles,
        Some(anchors),
        &o,
    )
    .unwrap();
    assert_eq!((rep.far, rep.rigid, rep.dropped, rep.bound), (2, 2, 0, 500));
    assert_eq!(lift.gaussians[3].triangle, tri.len() as u32 + 1);
    assert_eq!(lift.gaussians[9].triangle, tri.len() as u32);
    assert!(
        lift.gaussians
            .iter()
            .enumerate()
            .all(|(i, g)| i == 3 || i == 9 || (g.triangle as usize) < tri.len())
    );
    // Pose: entry 1 turned 0.7 rad about y through the joint and lifted 0.2 m; entry 0 fixed.
    let m = DMat4::from_translation(joint_at + DVec3::new(0.0, 0.2, 0.0))
        * DMat4::from_quat(DQuat::from_rotation_y(0.7))
        * DMat4::from_translation(-joint_at);
    let posed: Vec<[f32; 3]> = anchored
        .positions
        .iter()
        .zip(&anchored.joints)
        .map(|(p, j)| {
            let v = DVec3::from(p.map(f64::from));
            let w = if j[0] == 1 { m.transform_point3(v) } else { v };
            w.as_vec3().to_array()
        })
        .collect();
    let setup = BoundSetup::new(&lift.gaussians, lift.triangles.clone()).unwrap();
    let moved = setup.pose(3, &posed, &anchored.normals).center;
    let moved = DVec3::new(moved[0].into(), moved[1].into(), moved[2].into());
    let want = m.transform_point3(DVec3::from(cloud.center[3].map(f64::from)));
    assert!((moved - want).length() < 1e-5, "{moved:?} vs {want:?}");
    let still = setup.pose(9, &posed, &anchored.normals).center;
    assert!(
        (0..3).all(|k| (still[k] - cloud.center[9][k]).abs() < 1e-5),
        "{still:?}"
    );
}
