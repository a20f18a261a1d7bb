//! A linear head exported as a morph-target glTF (`gnm::export::pack_to_glb`) poses as the pack
//! does: the ICT-FaceKit pack (57 coefficients, eyes) with seeded coefficients and both eyes
//! turned, posed once by the pack's own forward model and skinning (`gnm::forward::pose`) and once
//! as a glTF character (morph weights = the coefficients, the eye joints' local rotations =
//! `Q·R·Q⁻¹`) through mien's rig path — every vertex within 1e-5 of the head's extent; the eyes
//! really move, and a wrong eye frame fails the comparison.

mod support;

use glam::Quat;
use mien_core::gnm::bake::{BakeOptions, bake_obj_folder};
use mien_core::gnm::export::pack_to_glb;
use mien_core::gnm::forward::{eye_rotation, joint_world, pose};
use mien_core::io::gltf::import_gltf_bytes;
use mien_core::rig::{RigControls, RigData};

#[test]
fn the_ict_pack_exported_as_gltf_poses_as_the_pack() {
    let dir = support::data_dir().join("ict-facekit");
    let baked = bake_obj_folder(&dir, &BakeOptions::default(), &mut |_, _, _| {}).unwrap();
    let pack = &baked.pack;
    let out = pack_to_glb(pack, "ict.aosrig").unwrap();
    let ch = import_gltf_bytes(&out.glb, None, "ict.glb").unwrap();
    let rig = RigData::from_character(&ch).unwrap();
    assert_eq!(rig.vertex_count(), pack.vertex_count());
    assert_eq!(ch.meshes[0].target_names.len(), pack.coeff_count());

    // Seeded coefficients in [−0.3, 0.9] and a gaze per eye.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f32 / (1u64 << 53) as f32
    };
    let coeffs: Vec<f32> = (0..pack.coeff_count())
        .map(|_| -0.3 + 1.2 * rnd())
        .collect();
    let gaze = [0.2f32, -0.15, 0.1, 0.25];
    let mut head_ext = coeffs.clone();
    head_ext.extend_from_slice(&gaze);
    assert_eq!(head_ext.len(), pack.header.head_ext.dim());
    let (mut world, mut skipped) = (Vec::new(), Vec::new());
    joint_world(pack, &[], &mut world, &mut skipped);
    let mut want = Vec::new();
    pose(pack, &head_ext, &world, &mut want).unwrap();

    let posed = |frame: Quat| -> Vec<[f32; 3]> {
        let mut p = ch.rest_pose();
        p.weights[out.mesh_node].copy_from_slice(&coeffs);
        for i in 0..2 {
            let r = eye_rotation(gaze[2 * i], gaze[2 * i + 1]);
            p.locals[out.eye_nodes[i]].rotation = (frame * r * frame.inverse()).normalize();
        }
        let (mut scratch, mut w) = (Vec::new(), Vec::new());
        ch.world_matrices(&p, &mut scratch, &mut w);
        let mut c = RigControls::default();
        rig.controls_from_pose(&p, &w, &mut c);
        let mut np = Vec::new();
        RigData::normal_palette(&c.palette, &mut np);
        (0..rig.vertex_count())
            .map(|v| rig.pose_vertex(v, &c.weights, &c.palette, &np).0)
            .collect()
    };
    let got = posed(out.eye_frame);
    let big = want.iter().flatten().fold(1e-6f32, |m, x| m.max(x.abs()));
    let diff = |a: &[[f32; 3]], b: &[[f32; 3]]| {
        a.iter()
            .zip(b)
            .flat_map(|(p, q)| (0..3).map(move |k| (p[k] - q[k]).abs()))
            .fold(0.0f32, f32::max)
            / big
    };
    let d = diff(&got, &want);
    eprintln!("ICT glTF vs pack: largest difference {d:e} of the extent {big} m");
    assert!(d <= 1e-5, "{d:e}");
    // The eyes move (the rest pose is far), and a wrong eye frame is caught.
    let mut rest = Vec::new();
    pose(pack, &vec![0.0; head_ext.len()], &world, &mut rest).unwrap();
    assert!(diff(&want, &rest) > 1e-3);
    let wrong = posed(out.eye_frame * Quat::from_rotation_z(0.5));
    assert!(diff(&wrong, &want) > 1e-4, "{:e}", diff(&wrong, &want));
}
