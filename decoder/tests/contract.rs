//! The contract check on declared ports (no ONNX Runtime needed): hand-worked cases and properties.

use mien_decoder::{Contract, Dim, Elem, INPUTS, OUTPUTS, Port};
use proptest::prelude::*;

fn t(name: &str, dims: &[Dim]) -> Port {
    Port {
        name: name.into(),
        elem: Elem::F32,
        dims: Some(dims.to_vec()),
    }
}
fn n() -> Dim {
    Dim::Dynamic("N".into())
}
fn f(v: u64) -> Dim {
    Dim::Fixed(v)
}

#[test]
fn a_full_decoder_fits() {
    let c = Contract::check(
        &[
            t("features", &[n(), f(8)]),
            t("controls", &[f(1), f(57)]),
            t("view_dir", &[n(), f(3)]),
        ],
        &[
            t("rgb", &[n(), f(3)]),
            t("opacity", &[n(), f(1)]),
            t("offset", &[n(), f(3)]),
            t("log_scale", &[n(), f(3)]),
            t("rotation", &[n(), f(4)]),
        ],
    )
    .unwrap();
    assert_eq!(
        (c.features, c.controls, c.view_dir, c.fixed_n),
        (Some(8), Some(57), true, None)
    );
    assert!(c.geometry.offset && c.geometry.log_scale && c.geometry.rotation);
}

#[test]
fn every_problem_is_named_at_once() {
    let mut half_rgb = t("rgb", &[n(), f(4)]);
    half_rgb.elem = Elem::F16;
    let p = Contract::check(
        &[
            Port {
                name: "features".into(),
                elem: Elem::Other("int64".into()),
                dims: Some(vec![n(), f(8)]),
            },
            t("image", &[f(1), f(64), f(64), f(3)]),
            t("view_dir", &[n(), f(2)]),
        ],
        &[half_rgb, t("albedo", &[n(), f(3)])],
    )
    .unwrap_err();
    let all = p.join("\n");
    for want in [
        "input `features` holds int64",
        "input `image` is not one the contract feeds",
        "input `view_dir` has width 2",
        "output `rgb` is (N, 4)",
        "output `albedo` is not one the contract reads",
        "no output `opacity`",
    ] {
        assert!(all.contains(want), "missing {want:?} in\n{all}");
    }
    assert_eq!(p.len(), 6, "{all}");
}

#[test]
fn gaussian_counts_must_agree() {
    let p = Contract::check(
        &[t("features", &[f(100), f(8)])],
        &[t("rgb", &[f(99), f(3)]), t("opacity", &[f(100), f(1)])],
    )
    .unwrap_err();
    assert!(
        p[0].contains("`rgb` has 99 gaussians where `features` has 100"),
        "{p:?}"
    );
    let c = Contract::check(
        &[t("features", &[f(100), f(8)])],
        &[t("rgb", &[f(100), f(3)]), t("opacity", &[f(100), f(1)])],
    )
    .unwrap();
    assert_eq!(c.fixed_n, Some(100));
    // Controls alone give no N: outputs must then be fixed.
    let p = Contract::check(
        &[t("controls", &[f(1), f(10)])],
        &[t("rgb", &[n(), f(3)]), t("opacity", &[n(), f(1)])],
    )
    .unwrap_err();
    assert!(p[0].contains("its outputs' N must be fixed"), "{p:?}");
}

fn any_port(names: &'static [&'static str]) -> impl Strategy<Value = Port> {
    let name = prop_oneof![
        prop::sample::select(names.to_vec()).prop_map(String::from),
        "[a-z]{1,6}"
    ];
    let dim = prop_oneof![
        (0u64..6).prop_map(Dim::Fixed),
        Just(Dim::Dynamic("N".into())),
        Just(Dim::Dynamic(String::new()))
    ];
    let elem = prop_oneof![
        Just(Elem::F32),
        Just(Elem::F16),
        Just(Elem::Other("int64".into()))
    ];
    (
        name,
        elem,
        prop::option::weighted(0.95, prop::collection::vec(dim, 0..4)),
    )
        .prop_map(|(name, elem, dims)| Port { name, elem, dims })
}

proptest! {
    /// Whatever a model declares, the check answers (never panics); a fit names only known ports
    /// and always rgb and opacity; a refusal lists at least one problem, and one per unknown name.
    #[test]
    fn check_is_total_and_sound(
        ins in prop::collection::vec(any_port(&INPUTS), 0..5),
        outs in prop::collection::vec(any_port(&OUTPUTS), 0..7),
    ) {
        match Contract::check(&ins, &outs) {
            Ok(c) => {
                prop_assert!(ins.iter().all(|p| INPUTS.contains(&p.name.as_str())));
                prop_assert!(outs.iter().all(|p| OUTPUTS.contains(&p.name.as_str())));
                prop_assert!(outs.iter().any(|p| p.name == "rgb"));
                prop_assert!(outs.iter().any(|p| p.name == "opacity"));
                prop_assert_eq!(c.view_dir, ins.iter().any(|p| p.name == "view_dir"));
                prop_assert!(ins.iter().chain(&outs).all(|p| p.elem != Elem::Other("int64".into())));
            }
            Err(p) => {
                prop_assert!(!p.is_empty());
                let unknown = ins.iter().filter(|p| !INPUTS.contains(&p.name.as_str()))
                    .chain(outs.iter().filter(|p| !OUTPUTS.contains(&p.name.as_str())))
                    .count();
                prop_assert!(p.len() >= unknown);
            }
        }
    }
}
