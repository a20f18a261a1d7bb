//! Animation-channel layers (`mien_core::face::layers`): hand-worked folds, an independent f64
//! fold as the reference for ordered stacks, the identities (no layers, weight 0, empty frames),
//! override-with-weight-1 replacement, clamp bounds, commutativity of adjacent add layers, refusal
//! of non-finite input, and an allocation-free composite (counted by a global allocator that counts
//! this thread's allocations).

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mien_core::Error;
use mien_core::face::layers::{
    ClampRule, ClampRules, Frame, Layer, LayerMode, MAX_CHANNEL_MAGNITUDE, composite,
    composite_in_place,
};
use proptest::prelude::*;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCS.with(Cell::get)
}

/// A layer as plain data, folded by the reference independently of the library's types.
#[derive(Clone, Debug)]
struct Spec {
    mode: LayerMode,
    weight: f32,
    values: Vec<Option<f32>>,
}

fn build(spec: &Spec) -> Layer {
    let mut frame = Frame::empty(spec.values.len()).unwrap();
    for (c, v) in spec.values.iter().enumerate() {
        if let Some(v) = v {
            frame.set(c, *v).unwrap();
        }
    }
    Layer::new(spec.mode, spec.weight, frame).unwrap()
}

fn build_all(specs: &[Spec]) -> Vec<Layer> {
    specs.iter().map(build).collect()
}

/// The specified fold in f64: add `w·v`, override `out + w·(v − out)`, absent channels untouched,
/// then the clamp.
fn reference(base: &[f32], specs: &[Spec], rules: &[ClampRule]) -> Vec<f64> {
    let mut out: Vec<f64> = base.iter().map(|&b| f64::from(b)).collect();
    for s in specs {
        let w = f64::from(s.weight);
        for (o, v) in out.iter_mut().zip(&s.values) {
            if let Some(v) = v {
                let v = f64::from(*v);
                *o = match s.mode {
                    LayerMode::Add => *o + w * v,
                    LayerMode::Override => *o + w * (v - *o),
                };
            }
        }
    }
    out.iter()
        .zip(rules)
        .map(|(&o, r)| match *r {
            ClampRule::None => o,
            ClampRule::Unit => o.clamp(0.0, 1.0),
            ClampRule::Range(lo, hi) => o.clamp(f64::from(lo), f64::from(hi)),
        })
        .collect()
}

fn run(base: &[f32], layers: &[Layer], rules: &[ClampRule]) -> Vec<f32> {
    let clamp = ClampRules::new(rules.to_vec()).unwrap();
    let mut out = vec![f32::NAN; base.len()];
    composite(base, layers, &clamp, &mut out).unwrap();
    out
}

fn mode() -> impl Strategy<Value = LayerMode> {
    prop_oneof![Just(LayerMode::Add), Just(LayerMode::Override)]
}

fn weight() -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), Just(1.0f32), 0.0f32..=1.0]
}

fn spec(c: usize) -> impl Strategy<Value = Spec> {
    (
        mode(),
        weight(),
        prop::collection::vec(prop::option::weighted(0.7, -3.0f32..3.0), c),
    )
        .prop_map(|(mode, weight, values)| Spec {
            mode,
            weight,
            values,
        })
}

fn rule() -> impl Strategy<Value = ClampRule> {
    prop_oneof![
        Just(ClampRule::None),
        Just(ClampRule::Unit),
        (-2.0f32..2.0, 0.0f32..2.0).prop_map(|(lo, span)| ClampRule::Range(lo, lo + span)),
    ]
}

type Case = (Vec<f32>, Vec<Spec>, Vec<ClampRule>);

/// A base, up to six layers and a clamp rule per channel over 1..16 channels.
fn case() -> impl Strategy<Value = Case> {
    (1usize..16).prop_flat_map(|c| {
        (
            prop::collection::vec(-3.0f32..3.0, c),
            prop::collection::vec(spec(c), 0..6),
            prop::collection::vec(rule(), c),
        )
    })
}

/// f32 fold error bound: a few ulps of the largest magnitude met, per layer.
fn tolerance(base: &[f32], specs: &[Spec]) -> f64 {
    let big = base
        .iter()
        .map(|v| v.abs())
        .chain(
            specs
                .iter()
                .flat_map(|s| s.values.iter().flatten().map(|v| v.abs())),
        )
        .fold(1.0f32, f32::max);
    f64::from(big) * 1e-6 * (specs.len() as f64 + 1.0) * 4.0
}

#[test]
fn hand_worked_fold_and_order() {
    // Two channels, base [0.2, 0.9]; A = add 0.5 on channel 0 at weight 1;
    // O = override 0.0 on both channels at weight 0.5.
    let a = Layer::new(
        LayerMode::Add,
        1.0,
        Frame::from_pairs(2, &[(0, 0.5)]).unwrap(),
    )
    .unwrap();
    let o = Layer::new(
        LayerMode::Override,
        0.5,
        Frame::from_values(&[0.0, 0.0]).unwrap(),
    )
    .unwrap();
    let none = [ClampRule::None; 2];
    // A then O: ch0 (0.2 + 0.5) → 0.35; ch1 0.9 → 0.45.
    let ao = run(&[0.2, 0.9], &[a.clone(), o.clone()], &none);
    // O then A: ch0 0.2 → 0.1 → 0.6; ch1 0.45.
    let oa = run(&[0.2, 0.9], &[o, a], &none);
    assert!(
        (ao[0] - 0.35).abs() < 1e-6 && (ao[1] - 0.45).abs() < 1e-6,
        "{ao:?}"
    );
    assert!(
        (oa[0] - 0.6).abs() < 1e-6 && (oa[1] - 0.45).abs() < 1e-6,
        "{oa:?}"
    );

    // Clamping happens once, after the fold: 0.8 + 0.6 − 0.6 stays 0.8 under Unit, where clamping
    // between layers would give 0.4.
    let up = Layer::new(LayerMode::Add, 1.0, Frame::from_values(&[0.6]).unwrap()).unwrap();
    let down = Layer::new(LayerMode::Add, 1.0, Frame::from_values(&[-0.6]).unwrap()).unwrap();
    let r = run(&[0.8], &[up, down], &[ClampRule::Unit]);
    assert!((r[0] - 0.8).abs() < 1e-6, "{r:?}");

    // Each rule: None keeps 1.7, Unit gives 1, Range(-0.5, 0.25) gives 0.25 and -0.5.
    let r = run(
        &[1.7, 1.7, 1.7, -3.0],
        &[],
        &[
            ClampRule::None,
            ClampRule::Unit,
            ClampRule::Range(-0.5, 0.25),
            ClampRule::Range(-0.5, 0.25),
        ],
    );
    assert_eq!(r, vec![1.7, 1.0, 0.25, -0.5]);
    assert_eq!(ClampRule::default(), ClampRule::Unit);
}

#[test]
fn refuses_non_finite_and_bad_shapes() {
    let mut frame = Frame::from_pairs(3, &[(1, 0.25)]).unwrap();
    for bad in [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        2.0 * MAX_CHANNEL_MAGNITUDE,
    ] {
        assert!(matches!(frame.set(0, bad), Err(Error::Invalid { .. })));
        assert!(Frame::from_values(&[0.0, bad]).is_err());
        assert!(frame.set_all(&[0.5, 0.5, bad]).is_err());
    }
    // Nothing was written by the refused calls.
    assert_eq!(frame.present(), &[false, true, false]);
    assert_eq!(frame.values(), &[0.0, 0.25, 0.0]);
    assert!(frame.set(3, 0.5).is_err());
    // Both problems are reported at once.
    let err = Frame::from_pairs(2, &[(5, 0.0), (0, f32::NAN)]).unwrap_err();
    assert!(matches!(err, Error::Many(ref v) if v.len() == 2), "{err}");

    for w in [f32::NAN, -0.01, 1.01, f32::INFINITY] {
        assert!(
            Layer::new(LayerMode::Add, w, frame.clone()).is_err(),
            "weight {w}"
        );
    }
    let mut layer = Layer::new(LayerMode::Add, 0.3, frame.clone()).unwrap();
    assert!(layer.set_weight(f32::NAN).is_err());
    assert_eq!(layer.weight(), 0.3);

    let err = ClampRules::new(vec![
        ClampRule::Range(1.0, 0.0),
        ClampRule::Unit,
        ClampRule::Range(f32::NAN, 1.0),
    ])
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("channel 0") && text.contains("channel 2"),
        "{text}"
    );

    let clamp = ClampRules::unit(3).unwrap();
    let mut out = [7.0f32; 3];
    let err = composite(&[0.0, f32::NAN, 0.0], &[layer.clone()], &clamp, &mut out).unwrap_err();
    assert!(err.to_string().contains("channel 1"), "{err}");
    assert_eq!(out, [7.0; 3], "out written on error");
    assert!(matches!(
        composite(&[0.0; 2], &[], &clamp, &mut out),
        Err(Error::Mismatch { .. })
    ));
    assert!(composite(&[0.0; 3], &[], &clamp, &mut [0.0; 4]).is_err());
    let narrow = Layer::new(LayerMode::Add, 1.0, Frame::empty(2).unwrap()).unwrap();
    let err = composite(&[0.0; 3], &[layer, narrow], &clamp, &mut out).unwrap_err();
    assert!(err.to_string().contains("layer 1"), "{err}");
    assert_eq!(out, [7.0; 3]);
}

proptest! {
    #![proptest_config(support::proptest_config(256))]

    /// The fold follows the specified order and formulas: it matches an f64 fold of the same
    /// ordered stack, and every output is finite and within its clamp.
    #[test]
    fn matches_independent_f64_fold((base, specs, rules) in case()) {
        let got = run(&base, &build_all(&specs), &rules);
        let want = reference(&base, &specs, &rules);
        let tol = tolerance(&base, &specs);
        for (c, (g, w)) in got.iter().zip(&want).enumerate() {
            prop_assert!(g.is_finite());
            prop_assert!((f64::from(*g) - w).abs() <= tol, "channel {c}: {g} vs {w}");
        }
        // The in-place form agrees bit for bit.
        let mut frame = base.clone();
        composite_in_place(&mut frame, &build_all(&specs), &ClampRules::new(rules.clone()).unwrap()).unwrap();
        prop_assert_eq!(frame, got);
    }

    /// No layers, weight-0 layers and layers that carry nothing leave the base (clamped) as it is,
    /// wherever they are inserted into a stack.
    #[test]
    fn identity_layers((base, specs, rules) in case(), at in any::<prop::sample::Index>(), m in mode(), w in weight()) {
        let c = base.len();
        let clamped: Vec<f32> = base.iter().zip(&rules).map(|(&b, r)| r.apply(b)).collect();
        prop_assert_eq!(run(&base, &[], &rules), clamped);

        let plain = run(&base, &build_all(&specs), &rules);
        let zero: Vec<Spec> = specs.iter().map(|s| Spec { weight: 0.0, ..s.clone() }).collect();
        let clamped: Vec<f32> = base.iter().zip(&rules).map(|(&b, r)| r.apply(b)).collect();
        prop_assert_eq!(run(&base, &build_all(&zero), &rules), clamped);

        let pos = at.index(specs.len() + 1);
        for identity in [
            Layer::new(m, w, Frame::empty(c).unwrap()).unwrap(),
            Layer::new(m, 0.0, Frame::from_values(&vec![2.5; c]).unwrap()).unwrap(),
        ] {
            prop_assert!(identity.frame().is_empty() || identity.weight() == 0.0);
            let mut layers = build_all(&specs);
            layers.insert(pos, identity);
            prop_assert_eq!(run(&base, &layers, &rules), plain.clone());
        }
    }

    /// An override layer of weight 1 replaces the channels it carries, whatever came before;
    /// the others keep the value of the stack without it.
    #[test]
    fn override_weight_one_replaces((base, specs, rules) in case(), cover in prop::collection::vec(prop::option::of(-3.0f32..3.0), 16)) {
        let c = base.len();
        let top = Spec { mode: LayerMode::Override, weight: 1.0, values: cover[..c].to_vec() };
        let without = run(&base, &build_all(&specs), &rules);
        let mut all = specs.clone();
        all.push(top.clone());
        let with = run(&base, &build_all(&all), &rules);
        for ch in 0..c {
            let want = match top.values[ch] {
                Some(v) => rules[ch].apply(v),
                None => without[ch],
            };
            prop_assert_eq!(with[ch], want, "channel {}", ch);
        }
    }

    /// Every channel ends within its rule's bounds, and a `None` channel is the unclamped fold.
    #[test]
    fn clamp_bounds_every_channel((base, specs, rules) in case()) {
        let got = run(&base, &build_all(&specs), &rules);
        let free = run(&base, &build_all(&specs), &vec![ClampRule::None; base.len()]);
        for (c, (&g, r)) in got.iter().zip(&rules).enumerate() {
            match *r {
                ClampRule::None => prop_assert_eq!(g, free[c]),
                ClampRule::Unit => prop_assert!((0.0..=1.0).contains(&g), "channel {c}: {g}"),
                ClampRule::Range(lo, hi) => prop_assert!(lo <= g && g <= hi, "channel {c}: {g}"),
            }
        }
    }

    /// Swapping two adjacent add layers changes the result only by rounding.
    #[test]
    fn adjacent_add_layers_commute((base, specs, rules) in case(), at in any::<prop::sample::Index>(), a in spec(16), b in spec(16)) {
        let c = base.len();
        let a = Spec { mode: LayerMode::Add, values: a.values[..c].to_vec(), ..a };
        let b = Spec { mode: LayerMode::Add, values: b.values[..c].to_vec(), ..b };
        let pos = at.index(specs.len() + 1);
        let mut ab = specs.clone();
        ab.splice(pos..pos, [a.clone(), b.clone()]);
        let mut ba = specs.clone();
        ba.splice(pos..pos, [b, a]);
        let x = run(&base, &build_all(&ab), &rules);
        let y = run(&base, &build_all(&ba), &rules);
        let tol = tolerance(&base, &ab);
        for ch in 0..c {
            prop_assert!(f64::from((x[ch] - y[ch]).abs()) <= tol, "channel {}: {} vs {}", ch, x[ch], y[ch]);
        }
    }

    /// After setup, a frame's worth of work allocates nothing: rewriting layer frames and
    /// weights in place, then `composite` and `composite_in_place`.
    #[test]
    fn composite_does_not_allocate((base, specs, rules) in case(), value in -1.0f32..1.0) {
        let mut layers = build_all(&specs);
        let clamp = ClampRules::new(rules.clone()).unwrap();
        let mut out = vec![0.0f32; base.len()];
        let mut frame = base.clone();
        // Sanity: the counter sees allocations at all.
        let before = allocations();
        let v: Vec<u64> = std::hint::black_box(vec![1, 2, 3]);
        prop_assert!(allocations() > before && v.len() == 3);

        let before = allocations();
        for step in 0..4 {
            for layer in &mut layers {
                layer.set_weight(0.25 * step as f32).unwrap();
                layer.frame_mut().set(0, value).unwrap();
            }
            composite(&base, &layers, &clamp, &mut out).unwrap();
            composite_in_place(&mut frame, &layers, &clamp).unwrap();
        }
        prop_assert_eq!(allocations() - before, 0, "the per-frame path allocated");
        prop_assert!(out.iter().chain(&frame).all(|v| v.is_finite()));
    }

    /// Non-finite values are refused at every entry and never reach an output.
    #[test]
    fn non_finite_never_enters(c in 1usize..8, ch in 0usize..8, bad in prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY)]) {
        let ch = ch % c;
        let mut frame = Frame::empty(c).unwrap();
        prop_assert!(frame.set(ch, bad).is_err());
        prop_assert!(frame.is_empty());
        let mut values = vec![0.5f32; c];
        values[ch] = bad;
        prop_assert!(Frame::from_values(&values).is_err());
        prop_assert!(Frame::from_pairs(c, &[(ch, bad)]).is_err());
        prop_assert!(Layer::new(LayerMode::Override, bad, frame.clone()).is_err());
        let mut out = vec![0.0f32; c];
        prop_assert!(composite(&values, &[], &ClampRules::unit(c).unwrap(), &mut out).is_err());
        prop_assert!(out.iter().all(|&v| v == 0.0));
    }
}
