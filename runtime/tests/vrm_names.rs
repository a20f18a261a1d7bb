//! A VRM whose only expressions are the `look*` ones (issue 25 item 3): the runtime's face driver
//! takes a look-at point and the avatar's lookAt turns it into the look expressions (today the
//! face driver was refused: "no expression, blink or look target … exists").

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::face::FaceDef;
use mien_core::io::gltf::import_gltf_bytes;
use mien_runtime::{Asset, Device, FaceDriver, FaceSources, Runtime, RuntimeOptions, Script};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

/// Godette (VRM 0.x, lookAt of type BlendShape) with only its four look blendShapeGroups.
fn look_only_godette() -> mien_core::rig::Character {
    let b = std::fs::read(data("vrm/Godette_vrm_v4.vrm")).unwrap();
    let n = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let mut j: Value = serde_json::from_slice(&b[20..20 + n]).unwrap();
    j["extensions"]["VRM"]["blendShapeMaster"]["blendShapeGroups"]
        .as_array_mut()
        .unwrap()
        .retain(|g| g["presetName"].as_str().unwrap().starts_with("look"));
    let mut text = serde_json::to_vec(&j).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let rest = &b[20 + n..];
    let mut out = Vec::new();
    out.extend_from_slice(&b[0..8]);
    out.extend_from_slice(&((12 + 8 + text.len() + rest.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(rest);
    import_gltf_bytes(&out, None, "look_only.vrm").unwrap()
}

#[test]
fn a_look_only_vrm_follows_the_face_drivers_look_at_point() {
    let ch = look_only_godette();
    let v = ch.vrm.clone().unwrap();
    assert_eq!(v.expressions.len(), 4);
    let asset = Arc::new(Asset::from_character(ch.clone()).unwrap());
    let mut rt = Runtime::new(asset, &Device::Cpu, &RuntimeOptions::default()).unwrap();
    let head = v.bone("head").unwrap();
    let (mut l, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut l, &mut w);
    let eyes = w[head.index()].transform_point3(glam::Vec3::new(0.0, 0.146, 0.122));
    // A 0.x model faces −Z, its left is −X: a point ahead and to its left.
    let left_point = eyes + glam::Vec3::new(-1.0, 0.0, -1.0);
    let face = FaceDriver::new(
        &ch,
        FaceDef::for_character(&ch),
        Script::default(),
        Some(left_point.into()),
        0.0,
        &FaceSources::default(),
    )
    .expect("a look-only VRM takes a face driver for its look-at");
    rt.instance_mut(0).unwrap().set_face(Some(face)).unwrap();
    rt.update(0.0).unwrap();
    let pose = rt.instance(0).unwrap().pose();
    let c = v.control_node.index();
    let look = |n: &str| pose.weights[c][v.expression(n).unwrap()];
    // 45° to the character's left through Godette's lookAtHorizontalOuter curve: lookLeft only.
    assert!(look("lookLeft") > 0.1, "{}", look("lookLeft"));
    assert_eq!(look("lookRight"), 0.0);
}
