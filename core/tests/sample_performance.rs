//! The built-in performance: shape of the stream, the events the script promises (speech pulses,
//! visemes, blinks, gaze both ways, a held smile, a brow raise), smoothness and determinism.

use mien_core::anim::arkit::{ARKIT_52, arkit_index};
use mien_core::anim::stream::WeightStream;
use mien_core::sample::{SAMPLE_PERFORMANCE_SECONDS, sample_performance};
use proptest::prelude::*;

fn channel(s: &WeightStream, name: &str) -> Vec<f32> {
    let c = arkit_index(name).expect("ARKit name");
    (0..s.frame_count()).map(|f| s.frame(f)[c]).collect()
}

/// Start times of the runs where `x > level`.
fn runs_above(times: &[f64], x: &[f32], level: f32) -> Vec<f64> {
    let mut starts = Vec::new();
    for f in 0..x.len() {
        if x[f] > level && (f == 0 || x[f - 1] <= level) {
            starts.push(times[f]);
        }
    }
    starts
}

#[test]
fn shape_and_range() {
    let s = sample_performance(30.0);
    s.validate().expect("valid stream");
    assert_eq!(s.channels, ARKIT_52.map(String::from).to_vec());
    assert_eq!(s.nominal_fps, Some(30.0));
    assert_eq!(s.times[0], 0.0);
    assert!(
        (s.duration() - SAMPLE_PERFORMANCE_SECONDS).abs() <= 1.0 / 30.0,
        "{}",
        s.duration()
    );
    assert_eq!(
        s.frame_count(),
        (SAMPLE_PERFORMANCE_SECONDS * 30.0).round() as usize + 1
    );
    for (f, &t) in s.times.iter().enumerate() {
        assert!((t - f as f64 / 30.0).abs() < 1e-12);
    }
    assert!(
        s.values
            .iter()
            .all(|v| v.is_finite() && (0.0..=1.0).contains(v))
    );
    assert!(s.aux_channels.is_empty() && s.aux_values.is_empty());
    // Rest at both ends, so the performance loops.
    for f in [0, s.frame_count() - 1] {
        assert!(
            s.frame(f).iter().all(|&w| w < 0.02),
            "frame {f}: {:?}",
            s.frame(f)
        );
    }
}

#[test]
fn speech_pulses_and_visemes() {
    let s = sample_performance(30.0);
    let jaw = channel(&s, "jawOpen");
    // Local maxima above 0.1 at least 0.15 s apart.
    let mut peaks: Vec<f64> = Vec::new();
    for f in 1..jaw.len() - 1 {
        if jaw[f] > 0.1
            && jaw[f] >= jaw[f - 1]
            && jaw[f] > jaw[f + 1]
            && peaks.last().is_none_or(|&t| s.times[f] - t >= 0.15)
        {
            peaks.push(s.times[f]);
        }
    }
    assert!(peaks.len() >= 6, "jawOpen peaks at {peaks:?}");
    // Syllable rate 3–5 Hz inside a phrase: neighbouring peaks 0.18–0.4 s apart for most pairs.
    let gaps: Vec<f64> = peaks.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().filter(|g| (0.18..0.4).contains(*g)).count() * 2 >= gaps.len(),
        "{gaps:?}"
    );
    // Varying amplitude.
    let heights: Vec<f32> = peaks
        .iter()
        .map(|t| jaw[(t * 30.0).round() as usize])
        .collect();
    let (lo, hi) = heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &h| (a.min(h), b.max(h)));
    assert!(hi - lo > 0.2, "{heights:?}");
    // A pause of at least 0.4 s with the jaw at rest between the phrases.
    let quiet = (0..jaw.len())
        .filter(|&f| (1.5..4.0).contains(&s.times[f]))
        .map(|f| jaw[f] < 0.02)
        .collect::<Vec<_>>();
    let longest = quiet.split(|&q| !q).map(<[bool]>::len).max().unwrap_or(0);
    assert!(
        longest as f64 / 30.0 >= 0.4,
        "longest pause {longest} frames"
    );
    // Rounded, closed and pressed lips appear.
    for name in [
        "mouthFunnel",
        "mouthPucker",
        "mouthPressLeft",
        "mouthPressRight",
        "mouthRollLower",
    ] {
        let m = channel(&s, name).into_iter().fold(0.0f32, f32::max);
        assert!(m > 0.3, "{name} peaks at {m}");
    }
}

#[test]
fn blinks_with_both_eyes() {
    let s = sample_performance(30.0);
    let (l, r) = (channel(&s, "eyeBlinkLeft"), channel(&s, "eyeBlinkRight"));
    assert_eq!(l, r);
    let shut = runs_above(&s.times, &l, 0.9);
    assert!(shut.len() >= 3, "blinks at {shut:?}");
    assert!(shut.windows(2).all(|w| w[1] - w[0] > 0.5), "{shut:?}");
    // Each blink is brief: closed (> 0.5) for less than 0.25 s.
    let half = runs_above(&s.times, &l, 0.5);
    for &t0 in &half {
        let f0 = (t0 * 30.0).round() as usize;
        let len = l[f0..].iter().take_while(|&&x| x > 0.5).count();
        assert!(
            len as f64 / 30.0 < 0.25,
            "blink at {t0} lasts {} frames",
            len
        );
    }
}

#[test]
fn gaze_goes_left_then_right_then_centre() {
    let s = sample_performance(30.0);
    let out_l = channel(&s, "eyeLookOutLeft");
    let in_r = channel(&s, "eyeLookInRight");
    let in_l = channel(&s, "eyeLookInLeft");
    let out_r = channel(&s, "eyeLookOutRight");
    // Looking to the character's left: left eye out and right eye in, together.
    let left = (0..s.frame_count())
        .max_by(|&a, &b| out_l[a].total_cmp(&out_l[b]))
        .expect("frames");
    assert!(out_l[left] > 0.5 && in_r[left] > 0.5 && in_l[left] == 0.0 && out_r[left] == 0.0);
    let right = (0..s.frame_count())
        .max_by(|&a, &b| in_l[a].total_cmp(&in_l[b]))
        .expect("frames");
    assert!(in_l[right] > 0.5 && out_r[right] > 0.5 && out_l[right] == 0.0 && in_r[right] == 0.0);
    assert!(
        left < right,
        "left at {}, right at {}",
        s.times[left],
        s.times[right]
    );
    // Then back to centre.
    let last_look = (0..s.frame_count())
        .rev()
        .find(|&f| out_l[f] + in_l[f] + in_r[f] + out_r[f] > 0.0)
        .expect("some gaze");
    assert!(last_look > right && s.times[last_look] < SAMPLE_PERFORMANCE_SECONDS - 1.0);
}

#[test]
fn smile_holds_and_brows_raise() {
    let s = sample_performance(30.0);
    let smile = channel(&s, "mouthSmileLeft");
    assert_eq!(smile, channel(&s, "mouthSmileRight"));
    let longest = smile
        .split(|&x| x < 0.6)
        .map(<[f32]>::len)
        .max()
        .unwrap_or(0);
    assert!(
        longest as f64 / 30.0 >= 1.0,
        "smile held {} frames",
        longest
    );
    let brow = channel(&s, "browInnerUp")
        .into_iter()
        .fold(0.0f32, f32::max);
    assert!(brow > 0.6, "{brow}");
}

#[test]
fn smooth_and_deterministic() {
    let s = sample_performance(30.0);
    let c = s.channel_count();
    let mut worst = (0.0f32, 0, 0);
    for f in 1..s.frame_count() {
        for k in 0..c {
            let d = (s.frame(f)[k] - s.frame(f - 1)[k]).abs();
            if d > worst.0 {
                worst = (d, f, k);
            }
        }
    }
    assert!(
        worst.0 <= 0.35,
        "{} jumps by {} at frame {}",
        ARKIT_52[worst.2],
        worst.0,
        worst.1
    );
    assert_eq!(s, sample_performance(30.0));
    // The same curves at 60 fps: every other frame matches the 30 fps stream.
    let s60 = sample_performance(60.0);
    for f in 0..s.frame_count() {
        for k in 0..c {
            assert!((s60.frame(2 * f)[k] - s.frame(f)[k]).abs() < 1e-5);
        }
    }
}

#[test]
fn bad_frame_rates_stay_bounded() {
    let s = sample_performance(f64::NAN);
    assert_eq!(s.nominal_fps, Some(30.0));
    assert_eq!(sample_performance(-5.0).nominal_fps, Some(30.0));
    let huge = sample_performance(1e12);
    assert_eq!(huge.nominal_fps, Some(1000.0));
    assert_eq!(huge.frame_count(), 6001);
    let tiny = sample_performance(0.25);
    assert_eq!(tiny.nominal_fps, Some(1.0));
    tiny.validate().expect("valid");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any frame rate gives a valid, bounded stream whose frames sample the same curves.
    #[test]
    fn any_frame_rate_samples_the_same_curves(fps in 1.0f64..240.0, t in 0.0f64..SAMPLE_PERFORMANCE_SECONDS) {
        let s = sample_performance(fps);
        prop_assert!(s.validate().is_ok());
        prop_assert_eq!(s.frame_count(), (SAMPLE_PERFORMANCE_SECONDS * fps + 1e-9).floor() as usize + 1);
        prop_assert!(s.values.iter().all(|v| (0.0..=1.0).contains(v)));
        // Linear interpolation between frames stays close to a fine (1000 fps) rendering: the
        // curves are smooth, so the error is bounded by the frame spacing.
        static FINE: std::sync::OnceLock<WeightStream> = std::sync::OnceLock::new();
        let fine = FINE.get_or_init(|| sample_performance(1000.0));
        let (mut a, mut b) = (vec![0.0; 52], vec![0.0; 52]);
        s.sample(t, &mut a);
        fine.sample(t, &mut b);
        for k in 0..52 {
            prop_assert!((a[k] - b[k]).abs() <= (12.0 / fps) as f32 + 1e-3, "{} at {}: {} vs {}", ARKIT_52[k], t, a[k], b[k]);
        }
    }
}
