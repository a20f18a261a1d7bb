//! The runtime refuses bad calls with a typed error naming what is wrong — before allocating
//! anything for absurd sizes — and never panics.

use std::sync::Arc;

use mien_runtime::{Asset, Device, Error, LiftOptions, MAX_INSTANCES, Runtime, RuntimeOptions};

fn head() -> Arc<Asset> {
    Arc::new(Asset::builtin())
}

fn options(instances: u32) -> RuntimeOptions {
    RuntimeOptions {
        instances,
        ..Default::default()
    }
}

fn invalid(e: Error, words: &[&str]) {
    let text = e.chain_text();
    assert!(matches!(e, Error::Invalid { .. }), "{e:?}");
    for w in words {
        assert!(text.contains(w), "`{text}` lacks `{w}`");
    }
}

#[test]
fn instance_counts_outside_the_limit_are_refused_before_allocating() {
    for n in [0, MAX_INSTANCES + 1, 4_000_000_000] {
        let e = Runtime::new(head(), &Device::Cpu, &options(n))
            .err()
            .unwrap();
        invalid(e, &[&format!("instances {n}"), "65535"]);
    }
}

#[test]
fn bad_times_indices_poses_and_sigmas_are_refused() {
    let mut rt = Runtime::new(head(), &Device::Cpu, &options(2)).unwrap();
    for t in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        invalid(rt.update(t).err().unwrap(), &["media time", "not a finite"]);
    }
    invalid(
        rt.instance_mut(2).err().unwrap(),
        &["instance 2", "2 instance(s)"],
    );
    invalid(rt.splats(7).err().unwrap(), &["instance 7"]);
    assert!(rt.posed(7).is_err());
    let rest = rt.asset().character().rest_pose();
    invalid(
        rt.update_with_poses(0.0, std::slice::from_ref(&rest))
            .err()
            .unwrap(),
        &["1 given for 2"],
    );
    let mut wrong = rest.clone();
    wrong.weights.pop();
    invalid(
        rt.update_with_poses(0.0, &[rest.clone(), wrong])
            .err()
            .unwrap(),
        &["poses[1]"],
    );
    rt.update_with_poses(0.0, &[rest.clone(), rest]).unwrap();
    invalid(rt.render_rest().err().unwrap(), &["already posed"]);
    invalid(rt.sink_range(2).err().unwrap(), &["instance 2"]);
    invalid(rt.sink_range(usize::MAX).err().unwrap(), &["instance"]);
    let mut zero = rt.asset().character().rest_pose();
    zero.locals[0].rotation = glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let rest = rt.asset().character().rest_pose();
    invalid(
        rt.update_with_poses(0.1, &[rest, zero]).err().unwrap(),
        &["poses[1].locals[0]", "unit quaternion"],
    );
    for sigma in [f32::NAN, -1.0, 0.0, f32::INFINITY, 1e20, 1e-30] {
        let o = RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions {
                sigma: Some(sigma),
                ..Default::default()
            }),
        };
        invalid(
            Runtime::new(head(), &Device::Cpu, &o).err().unwrap(),
            &["gaussian size"],
        );
    }
}

#[test]
fn a_runtime_without_a_lift_poses_and_has_no_splats() {
    let o = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let mut rt = Runtime::new(head(), &Device::Cpu, &o).unwrap();
    rt.update(0.5).unwrap();
    assert_eq!(
        rt.posed(0).unwrap().positions.len() as u32,
        rt.memory().vertices
    );
    invalid(rt.splats(0).err().unwrap(), &["no lift"]);
    assert_eq!(rt.memory().sink_slots, 0);
}

#[test]
fn speech_transport_refuses_non_finite_positions() {
    let asset = head();
    let speech = mien_runtime::Speech::from_file(
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/data/gentle/lucier_golden.json"
        )),
        &Default::default(),
        asset.character(),
    )
    .unwrap();
    let mut rt = Runtime::new(asset, &Device::Cpu, &options(1)).unwrap();
    rt.instance_mut(0)
        .unwrap()
        .set_speech(Some(speech))
        .unwrap();
    let mut i = rt.instance_mut(0).unwrap();
    let s = i.speech().unwrap();
    for p in [f64::NAN, f64::INFINITY] {
        assert!(s.seek(p).is_err() && s.pause(p).is_err() && s.resume(p).is_err());
    }
    assert_eq!(s.transport(), mien_core::speech::Transport::Playing);
}

#[test]
fn drivers_built_for_another_character_are_refused() {
    let facecap = Arc::new(
        Asset::load(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/data/facecap/facecap.glb"
        ))
        .unwrap(),
    );
    let builtin = head();
    let speech = mien_runtime::Speech::from_file(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/data/gentle/lucier_golden.json"
        ),
        &Default::default(),
        builtin.character(),
    )
    .unwrap();
    let face = mien_runtime::FaceDriver::new(
        builtin.character(),
        mien_core::face::FaceDef::arkit_default(),
        mien_runtime::Script::builtin(),
        None,
        0.0,
        &Default::default(),
    )
    .unwrap();
    let mut rt = Runtime::new(facecap, &Device::Cpu, &options(1)).unwrap();
    let mut i = rt.instance_mut(0).unwrap();
    invalid(
        i.set_speech(Some(speech)).err().unwrap(),
        &["speech", "another character"],
    );
    invalid(
        i.set_face(Some(face)).err().unwrap(),
        &["face driver", "another character"],
    );
    rt.update(0.5).unwrap();
}

#[test]
fn the_debug_form_of_an_error_is_its_chain() {
    let e = Asset::load("/nonexistent/head.glb").unwrap_err();
    let d = format!("{e:?}");
    assert!(
        d.starts_with("cannot load character /nonexistent/head.glb: ") && !d.contains("Context {"),
        "{d}"
    );
}

#[test]
fn dropped_pairs_have_names() {
    let a = Asset::builtin();
    let (mesh, target) = a.target_label(0, 0).unwrap();
    assert_eq!(
        target,
        a.character().meshes[a.rig().unwrap().instances[0].mesh.index()].target_names[0]
    );
    assert!(!mesh.is_empty());
    assert!(a.target_label(0, 10_000).is_none() && a.target_label(99, 0).is_none());
}

#[test]
fn drive_timing_offsets_and_loops_the_stream() {
    let stream = mien_core::sample::sample_performance(60.0);
    let end = stream.duration();
    let posed_at = |offset: f64, looping: bool, t: f64| {
        let mut rt = Runtime::new(head(), &Device::Cpu, &options(1)).unwrap();
        rt.instance_mut(0)
            .unwrap()
            .play_stream(stream.clone())
            .unwrap()
            .set_drive_timing(offset, looping)
            .unwrap();
        rt.update(t).unwrap();
        rt.posed(0).unwrap()
    };
    // Offset: media time 2.0 with the take starting at −0.5 s is the take's 2.5 s.
    assert_eq!(posed_at(-0.5, false, 2.0), posed_at(0.0, false, 2.5));
    // Looping: one span later is the same pose; without looping the last frame holds.
    assert_eq!(posed_at(0.0, true, 1.25 + end), posed_at(0.0, false, 1.25));
    assert_eq!(posed_at(0.0, false, 1.25 + end), posed_at(0.0, false, end));
    let mut rt = Runtime::new(head(), &Device::Cpu, &options(1)).unwrap();
    invalid(
        rt.instance_mut(0)
            .unwrap()
            .set_drive_timing(f64::NAN, true)
            .err()
            .unwrap(),
        &["drive offset"],
    );
}

/// The media clock takes any finite time in any order: a time before the start holds the
/// stream's first frame (the same splats as t = 0), going back replays a frame exactly.
#[test]
fn the_media_clock_takes_times_before_the_start_and_going_back() {
    let mut rt = Runtime::new(head(), &Device::Cpu, &options(1)).unwrap();
    rt.instance_mut(0)
        .unwrap()
        .play_stream(mien_core::sample::sample_performance(60.0))
        .unwrap();
    rt.update(0.0).unwrap();
    let at0 = rt.splats(0).unwrap();
    rt.update(1.3).unwrap();
    let at13 = rt.splats(0).unwrap();
    assert_ne!(at0, at13, "the performance moves the head");
    rt.update(-5.0).unwrap();
    assert_eq!(
        rt.splats(0).unwrap(),
        at0,
        "before the start: the first frame"
    );
    rt.update(1.3).unwrap();
    assert_eq!(rt.splats(0).unwrap(), at13, "back to 1.3 s: the same frame");
}

/// `play_stream_file` reads an Audio2Face export by its extension and reports its joint tracks as
/// not applied; the stream moves the face.
#[test]
fn an_audio2face_export_plays_from_its_file() {
    let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let asset = Arc::new(Asset::load(d.join("facecap/facecap.glb")).unwrap());
    let mut rt = Runtime::new(asset, &Device::Cpu, &options(1)).unwrap();
    rt.update(0.0).unwrap();
    let rest = rt.posed(0).unwrap().positions;
    let notes = rt
        .instance_mut(0)
        .unwrap()
        .play_stream_file(d.join("audio2face/a2f_export_bsweight-default-audio-EN-joy.json"))
        .unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("jaw, eye_L, eye_R"), "{notes:?}");
    rt.update(2.0).unwrap();
    assert_ne!(rt.posed(0).unwrap().positions, rest);
    let e = rt
        .instance_mut(0)
        .unwrap()
        .play_stream_file("take.fbx")
        .unwrap_err()
        .chain_text();
    assert!(e.contains("take.fbx") && e.contains("Audio2Face"), "{e}");
}

/// A lift's options out of their domain are refused by `Runtime::new` before anything is built,
/// with the field and its range in the top-level message.
#[test]
fn lift_options_out_of_range_are_refused_up_front() {
    let o = mien_core::lift::SurfaceOptions {
        target: 0,
        ..Default::default()
    };
    let opts = RuntimeOptions {
        instances: 1,
        lift: Some(mien_runtime::LiftOptions {
            kind: mien_runtime::LiftKind::Surface(o),
            ..Default::default()
        }),
    };
    let e = Runtime::new(head(), &Device::Cpu, &opts)
        .err()
        .unwrap()
        .to_string();
    // The reason is in the message itself (it was only in the error's source chain).
    assert!(
        e.contains("surface lift target") && e.contains("must be 1 to"),
        "{e}"
    );
}
