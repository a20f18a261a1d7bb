//! The runtime refuses bad calls with a typed error naming what is wrong — before allocating
//! anything for absurd sizes — and never panics.

use std::sync::Arc;

use mien_runtime::{
    Asset, Device, Error, LiftOptions, MAX_INSTANCES, Runtime, RuntimeOptions,
};

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
        let e = Runtime::new(head(), &Device::Cpu, &options(n)).err().unwrap();
        invalid(e, &[&format!("instances {n}"), "65535"]);
    }
}

#[test]
fn bad_times_indices_poses_and_sigmas_are_refused() {
    let mut rt = Runtime::new(head(), &Device::Cpu, &options(2)).unwrap();
    for t in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        invalid(rt.update(t).err().unwrap(), &["media time", "not a finite"]);
    }
    invalid(rt.instance_mut(2).err().unwrap(), &["instance 2", "2 instance(s)"]);
    invalid(rt.splats(7).err().unwrap(), &["instance 7"]);
    assert!(rt.posed(7).is_err());
    let rest = rt.asset().character().rest_pose();
    invalid(rt.update_with_poses(0.0, &[rest.clone()]).err().unwrap(), &["1 given for 2"]);
    let mut wrong = rest.clone();
    wrong.weights.pop();
    invalid(
        rt.update_with_poses(0.0, &[rest.clone(), wrong]).err().unwrap(),
        &["poses[1]"],
    );
    rt.update_with_poses(0.0, &[rest.clone(), rest]).unwrap();
    invalid(rt.render_rest().err().unwrap(), &["already posed"]);
    for sigma in [f32::NAN, -1.0, 0.0, f32::INFINITY] {
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
    assert_eq!(rt.posed(0).unwrap().positions.len() as u32, rt.memory().vertices);
    invalid(rt.splats(0).err().unwrap(), &["no lift"]);
    assert_eq!(rt.memory().sink_slots, 0);
}

#[test]
fn speech_transport_refuses_non_finite_positions() {
    let asset = head();
    let speech = mien_runtime::Speech::from_file(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/gentle/lucier_golden.json")),
        &Default::default(),
        asset.character(),
    )
    .unwrap();
    let mut rt = Runtime::new(asset, &Device::Cpu, &options(1)).unwrap();
    rt.instance_mut(0).unwrap().set_speech(Some(speech)).unwrap();
    let mut i = rt.instance_mut(0).unwrap();
    let s = i.speech().unwrap();
    for p in [f64::NAN, f64::INFINITY] {
        assert!(s.seek(p).is_err() && s.pause(p).is_err() && s.resume(p).is_err());
    }
    assert_eq!(s.transport(), mien_core::speech::Transport::Playing);
}
