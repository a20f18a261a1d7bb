//! Expression spaces: a rig takes ARKit-52 frames (bound by name, as a stream would be), a linear
//! head takes its own head_ext, its reduced view expanded per region, or ARKit-52 through its
//! table; a vector of another space or length is refused naming what the character takes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::anim::arkit::ARKIT_COUNT;
use mien_core::gnm::bake::{BakeOptions, bake_gltf};
use mien_core::gnm::forward;
use mien_runtime::{Asset, Device, ExpressionSpace, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn runtime(asset: Asset) -> Runtime {
    Runtime::new(
        Arc::new(asset),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap()
}

#[test]
fn a_live_arkit_frame_poses_a_rig_as_the_same_stream_frame_does() {
    let mut live = runtime(Asset::builtin());
    let mut frame = [0.0f32; ARKIT_COUNT];
    frame[mien_core::anim::arkit::arkit_index("jawOpen").unwrap()] = 0.8;
    frame[mien_core::anim::arkit::arkit_index("eyeBlinkLeft").unwrap()] = 1.0;
    live.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Arkit52, &frame)
        .unwrap();
    live.update(0.0).unwrap();
    // The same values as a one-frame stream played the ordinary way.
    let mut stream = runtime(Asset::builtin());
    let s = mien_core::anim::WeightStream {
        source: "test".into(),
        channels: mien_core::anim::arkit::ARKIT_52
            .iter()
            .map(|s| s.to_string())
            .collect(),
        times: vec![0.0],
        values: frame.to_vec(),
        aux_channels: vec![],
        aux_values: vec![],
        nominal_fps: None,
    };
    stream.instance_mut(0).unwrap().play_stream(s).unwrap();
    stream.update(0.0).unwrap();
    assert_eq!(live.posed(0).unwrap(), stream.posed(0).unwrap());
    // The next frame's values replace the last in place.
    frame.fill(0.0);
    live.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Arkit52, &frame)
        .unwrap();
    live.update(0.1).unwrap();
    let rest = runtime(Asset::builtin()).rest_positions().to_vec();
    assert_eq!(live.posed(0).unwrap().positions, rest);

    // A rig does not take head_ext; wrong lengths and NaN are refused.
    let mut i = live.instance_mut(0).unwrap();
    let e = i
        .set_controls(ExpressionSpace::Gnm, &[0.0; 387])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("a gnm vector") && e.contains("takes arkit52"),
        "{e}"
    );
    let e = i
        .set_controls(ExpressionSpace::Arkit52, &[0.0; 51])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("51 values") && e.contains("52"), "{e}");
    let mut bad = [0.0f32; ARKIT_COUNT];
    bad[7] = f32::NAN;
    let e = i
        .set_controls(ExpressionSpace::Arkit52, &bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("arkit52 value 7"), "{e}");
}

#[test]
fn a_linear_head_takes_head_ext_as_given_and_refuses_what_it_lacks() {
    let baked = bake_gltf(&data("facecap/facecap.glb"), &BakeOptions::default()).unwrap();
    let pack = baked.pack.clone();
    let asset = Asset::from_pack(baked.pack, "facecap.aosrig").unwrap();
    assert_eq!(asset.space(), ExpressionSpace::Gnm);
    let dim = pack.header.head_ext.dim();
    let mut head_ext = vec![0.0f32; dim];
    for (k, x) in head_ext.iter_mut().enumerate().take(pack.coeff_count()) {
        *x = ((k % 7) as f32 - 3.0) * 0.1;
    }
    let mut rt = runtime(asset);
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm, &head_ext)
        .unwrap();
    rt.update(0.0).unwrap();
    // The reference: the pack posed on the CPU with the same head_ext at its rest joints.
    let (mut joints, mut skipped) = (Vec::new(), Vec::new());
    forward::joint_world(&pack, &[], &mut joints, &mut skipped);
    let mut want = Vec::new();
    forward::pose(&pack, &head_ext, &joints, &mut want).unwrap();
    assert_eq!(rt.posed(0).unwrap().positions, want);
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm, &head_ext[1..])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains(&format!("{} values; the space has {dim}", dim - 1)),
        "{e}"
    );
    if pack.header.head_ext.reduced_dim().is_none() {
        let e = rt
            .instance_mut(0)
            .unwrap()
            .set_controls(ExpressionSpace::Gnm68, &[0.0; 68])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no reduced view") && e.contains("gnm ("), "{e}");
    }
}

/// A pack that declares a reduced view takes `gnm68` input: the reduced vector is expanded per
/// region (each region's first coefficients, zeros after them, the 4 gaze angles last) and poses
/// exactly as the full `gnm` vector written out by hand here; a wrong length is refused naming the
/// reduced size.
#[test]
fn a_linear_head_takes_its_reduced_view_expanded_per_region() {
    let baked = bake_gltf(&data("facecap/facecap.glb"), &BakeOptions::default()).unwrap();
    let mut pack = baked.pack;
    // Split the baked coefficients into two regions and declare a reduced view of 5 + 3.
    let e = pack.coeff_count();
    assert!(e >= 20, "{e} coefficients");
    let layout = &mut pack.header.head_ext;
    let gaze = layout.dim() - e;
    assert_eq!(gaze, 4);
    layout.regions = vec![("upper".into(), 12), ("lower".into(), e - 12)];
    layout.reduced = Some(vec![("upper".into(), 5), ("lower".into(), 3)]);
    let asset = Asset::from_pack(pack.clone(), "split.aosrig").unwrap();
    let reduced: Vec<f32> = [0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.25, -0.15]
        .into_iter()
        .chain([0.05, -0.1, 0.02, 0.08])
        .collect();
    // By hand: upper 0..5 from the reduced vector, 5..12 zero; lower 12..15, the rest zero; gaze.
    let mut full = vec![0.0f32; e + 4];
    full[..5].copy_from_slice(&reduced[..5]);
    full[12..15].copy_from_slice(&reduced[5..8]);
    full[e..].copy_from_slice(&reduced[8..]);
    let mut a = runtime(asset.clone());
    a.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm68, &reduced)
        .unwrap();
    a.update(0.0).unwrap();
    let mut b = runtime(asset);
    b.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm, &full)
        .unwrap();
    b.update(0.0).unwrap();
    let (pa, pb) = (a.posed(0).unwrap().positions, b.posed(0).unwrap().positions);
    assert_eq!(pa, pb);
    // Not the rest pose: the reduced input moved the head.
    let (mut joints, mut skipped) = (Vec::new(), Vec::new());
    forward::joint_world(&pack, &[], &mut joints, &mut skipped);
    let mut rest = Vec::new();
    forward::pose(&pack, &vec![0.0; e + 4], &joints, &mut rest).unwrap();
    assert_ne!(pa, rest);
    let err = a
        .instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm68, &reduced[1..])
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("the space has 12"), "{err}");
}
