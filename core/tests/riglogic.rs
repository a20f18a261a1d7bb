//! RigLogic on hand-built rigs: hand-worked values for each rule, an independent f64 reference
//! under proptest, the rotation sequences against closed forms, and the index checks.

use mien_core::rig::riglogic::{
    ConditionalTableSpec, JointGroupSpec, JointOutput, JointPrecision, RigLogic, RigLogicConfig,
    RigLogicInstance, RigLogicSpec, RotationSequence,
};
use proptest::prelude::*;

fn table(rows: &[(u16, u16, f32, f32, f32, f32)]) -> ConditionalTableSpec {
    ConditionalTableSpec {
        input: rows.iter().map(|r| r.0).collect(),
        output: rows.iter().map(|r| r.1).collect(),
        from: rows.iter().map(|r| r.2).collect(),
        to: rows.iter().map(|r| r.3).collect(),
        slope: rows.iter().map(|r| r.4).collect(),
        cut: rows.iter().map(|r| r.5).collect(),
    }
}

/// 2 GUI, 3 raw, 2 PSD (3, 4), 2 joints, 4 channels, 2 maps, 2 LODs.
fn small() -> RigLogicSpec {
    RigLogicSpec {
        file: "small.dna".into(),
        lod_count: 2,
        gui_count: 2,
        raw_count: 3,
        psd_count: 2,
        gui_to_raw: table(&[
            // GUI 0 → raw 0: two segments continuous at 0.5 (a run: only the first match counts)
            (0, 0, 0.0, 0.5, 1.4, 0.0),
            (0, 0, 0.5, 1.0, 0.6, 0.4),
            // GUI 0 → raw 1 from 0.5 on
            (0, 1, 0.5, 1.0, 0.8, -0.4),
            // GUI 1 → raw 2, stored with from > to (swapped)
            (1, 2, 0.0, -1.0, -1.0, 0.0),
            // GUI 1 → raw 1 as a second run: adds up
            (1, 1, 0.0, 1.0, 2.0, 0.0),
        ]),
        psd_rows: vec![3, 3, 4, 4],
        psd_columns: vec![0, 1, 0, 2],
        psd_values: vec![1.2, 1.0, 1.0, 0.5],
        joint_count: 2,
        joint_groups: vec![
            JointGroupSpec {
                lods: vec![2, 1],
                inputs: vec![0, 3],
                // joint 0 rx (3), joint 0 ty (1)
                outputs: vec![3, 1],
                values: vec![24.6, -1.3, 0.5, 0.0],
                joints: vec![0],
            },
            JointGroupSpec {
                lods: vec![1, 0],
                inputs: vec![4],
                // joint 1 sx (15)
                outputs: vec![15],
                values: vec![-0.15],
                joints: vec![1],
            },
        ],
        channel_count: 4,
        blend_shape_lods: vec![4, 2],
        blend_shape_inputs: vec![0, 3, 1, 2],
        blend_shape_outputs: vec![0, 3, 1, 2],
        map_count: 2,
        animated_map_lods: vec![3, 1],
        animated_maps: table(&[
            (0, 0, 0.0, 1.0, 0.8, 0.0),
            (4, 1, 0.0, 1.0, 1.0, 0.0),
            (2, 1, 0.2, 1.0, 1.25, -0.25),
        ]),
        rotation_sequence: RotationSequence::Xyz,
        rotation_signs: [1.0; 3],
        rotation_in_degrees: true,
        ..Default::default()
    }
}

fn rig(config: RigLogicConfig) -> RigLogic {
    RigLogic::new(&small(), config).unwrap()
}

#[test]
fn gui_to_raw_by_hand() {
    let r = rig(RigLogicConfig::default());
    let mut s = RigLogicInstance::new(&r);
    let cases: &[([f32; 2], [f32; 3])] = &[
        // 0.25: first segment 0.35; GUI 1 = 0 → raw 2: swapped row [-1, 0] matches 0 → 0
        ([0.25, 0.0], [0.35, 0.0, 0.0]),
        // 0.5 is in both segments of the run: counted once (1.4·0.5 = 0.7), raw 1 from 0.5: 0
        ([0.5, 0.0], [0.7, 0.0, 0.0]),
        // 1.0: 0.6 + 0.4 = 1.0; raw 1 0.4
        ([1.0, 0.0], [1.0, 0.4, 0.0]),
        // outside every interval contributes 0 (GUI 1.5 → raw 0 = 0, not clamped 1)
        ([1.5, 0.0], [0.0, 0.0, 0.0]),
        // GUI 1 = −0.5: raw 2 = 0.5 through the swapped row; raw 1 second run: out of [0, 1]
        ([0.0, -0.5], [0.0, 0.0, 0.5]),
        // two runs add, then clamp: raw 1 = 0.4 + 2·0.6 = 1.6 → 1
        ([1.0, 0.6], [1.0, 1.0, 0.0]),
    ];
    for (gui, want) in cases {
        s.set_gui(gui).unwrap();
        s.map_gui_to_raw(&r);
        for (k, (&got, &w)) in s.raw(&r).iter().zip(want).enumerate() {
            assert!((got - w).abs() < 1e-6, "gui {gui:?} raw {k}: {got} vs {w}");
        }
    }
}

#[test]
fn psd_joints_channels_maps_by_hand() {
    let r = rig(RigLogicConfig::default());
    let mut s = RigLogicInstance::new(&r);
    // Raw set directly: not clamped (1.5 reaches joints and channels as 1.5).
    s.set_raw(&r, &[1.5, 0.5, 0.4]).unwrap();
    s.calculate(&r);
    // PSD 3 = min(1, 1.2 · clamp(1.5) · clamp(0.5)) = 0.6; PSD 4 = 0.5 · 1 · 0.4 = 0.2
    let psd = s.psd(&r);
    assert!(
        (psd[0] - 0.6).abs() < 1e-6 && (psd[1] - 0.2).abs() < 1e-6,
        "{psd:?}"
    );
    // joint 0 rx = 24.6·1.5 − 1.3·0.6 = 36.12; ty = 0.5·1.5 = 0.75; joint 1 sx = −0.15·0.2
    let j = s.joints();
    assert!((j[3] - 36.12).abs() < 1e-4, "{}", j[3]);
    assert!((j[1] - 0.75).abs() < 1e-6);
    assert!((j[15] + 0.03).abs() < 1e-6);
    assert_eq!(s.blend_shapes(), &[1.5, 0.5, 0.4, 0.6]);
    // map 0: 1.5 outside [0, 1] → no row fires → 0; map 1: 1·0.2 + (1.25·0.4 − 0.25) = 0.45
    let m = s.animated_maps();
    assert_eq!(m[0], 0.0);
    assert!((m[1] - 0.45).abs() < 1e-6, "{m:?}");

    // LOD 1: joint group 0 one row, group 1 none; channels 2; maps 1 row. PSD 4 is consumed at
    // LOD 1 by nothing (group 1 has no row, map row 1 is beyond the prefix) → keeps 0.2 (stale).
    s.set_lod(&r, 1).unwrap();
    s.set_raw(&r, &[0.5, 1.0, 1.0]).unwrap();
    s.calculate(&r);
    let psd = s.psd(&r);
    assert!(
        (psd[0] - 0.6).abs() < 1e-6,
        "PSD 3 = 1.2·0.5·1 = 0.6: {psd:?}"
    );
    assert!(
        (psd[1] - 0.2).abs() < 1e-6,
        "PSD 4 is not consumed at LOD 1 and stays stale: {psd:?}"
    );
    let j = s.joints();
    assert!((j[3] - (24.6 * 0.5 - 1.3 * 0.6)).abs() < 1e-5);
    assert_eq!((j[1], j[15]), (0.0, 0.0), "rows beyond the LOD stay 0");
    assert_eq!(s.blend_shapes(), &[0.5, 0.0, 0.0, 0.6]);
    assert!((s.animated_maps()[0] - 0.4).abs() < 1e-6);
    assert_eq!(s.animated_maps()[1], 0.0);
    assert!(s.set_lod(&r, 2).is_err());
}

#[test]
fn half_precision_rounds_coefficients() {
    let r = rig(RigLogicConfig {
        precision: JointPrecision::Half,
        ..Default::default()
    });
    let mut s = RigLogicInstance::new(&r);
    s.set_raw(&r, &[1.5, 0.0, 0.0]).unwrap();
    s.calculate(&r);
    // 24.6 in binary16 is 24.59375 (the oracle README's example): 36.890625
    assert_eq!(s.joints()[3], 24.59375 * 1.5);
}

#[test]
fn quaternion_output_by_hand() {
    let r = rig(RigLogicConfig {
        output: JointOutput::Quaternion,
        ..Default::default()
    });
    let mut s = RigLogicInstance::new(&r);
    s.set_raw(&r, &[1.0, 0.0, 0.0]).unwrap();
    s.calculate(&r);
    let j = s.joints();
    // joint 0: rx = 24.6° → q = (sin 12.3°, 0, 0, cos 12.3°); ty = 0.5 at slot 1
    let h = 12.3f64.to_radians();
    assert!(
        (f64::from(j[3]) - h.sin()).abs() < 1e-7 && (f64::from(j[6]) - h.cos()).abs() < 1e-7,
        "{j:?}"
    );
    assert_eq!((j[1], j[4], j[5]), (0.5, 0.0, 0.0));
    // joint 1: no rotation row → identity; sx delta at slot 17 (0 here: PSD 4 is 0)
    assert_eq!(&j[13..17], &[0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn rotation_sequences_match_closed_forms() {
    let (x, y, z) = (0.3f64, -0.7f64, 1.1f64);
    let (sx, cx, sy, cy, sz, cz) = (
        (x / 2.0).sin(),
        (x / 2.0).cos(),
        (y / 2.0).sin(),
        (y / 2.0).cos(),
        (z / 2.0).sin(),
        (z / 2.0).cos(),
    );
    // tdm's closed forms for xyz (q = qz·qy·qx) and xzy (q = qy·qz·qx).
    let xyz = [
        sx * cy * cz - cx * sy * sz,
        cx * sy * cz + sx * cy * sz,
        cx * cy * sz - sx * sy * cz,
        cx * cy * cz + sx * sy * sz,
    ];
    let xzy = [
        sx * cy * cz + cx * sy * sz,
        cx * sy * cz + sx * cy * sz,
        cx * cy * sz - sx * sy * cz,
        cx * cy * cz - sx * sy * sz,
    ];
    for (seq, want) in [(RotationSequence::Xyz, xyz), (RotationSequence::Xzy, xzy)] {
        let q = seq.quaternion([x, y, z], [1.0; 3]);
        for k in 0..4 {
            assert!(
                (q[k] - want[k]).abs() < 1e-12,
                "{seq:?} {k}: {} vs {}",
                q[k],
                want[k]
            );
        }
    }
    // Every sequence gives a unit quaternion; a negative sign equals a negated angle.
    for v in 0..6 {
        let seq = RotationSequence::from_dna(v).unwrap();
        let q = seq.quaternion([x, y, z], [1.0, -1.0, 1.0]);
        let p = seq.quaternion([x, -y, z], [1.0; 3]);
        let n: f64 = q.iter().map(|c| c * c).sum();
        assert!((n - 1.0).abs() < 1e-12);
        assert_eq!(q, p);
    }
    assert_eq!(RotationSequence::from_dna(6), None);
}

#[test]
fn bad_indices_are_named() {
    let mut s = small();
    s.psd_rows[1] = 1; // overlaps the raw controls, as Epic's reader fixtures do
    s.joint_groups[0].outputs[1] = 18; // ≥ 2 joints × 9
    s.blend_shape_outputs[2] = 9;
    s.joint_groups[1].lods = vec![1];
    let e = RigLogic::new(&s, RigLogicConfig::default())
        .unwrap_err()
        .to_string();
    for want in [
        "small.dna: behavior.controls.psdRowIndices [1]: PSD row 1 is outside [3, 5)",
        "behavior.joints.jointGroups[0].outputIndices [1]: output row 18 ≥ 18",
        "behavior.blendShapeChannels.outputIndices [2]: channel 9 ≥ 4",
        "behavior.joints.jointGroups[1].lods [1]: 1 LOD entries for 2 LODs",
    ] {
        assert!(e.contains(want), "missing {want:?} in\n{e}");
    }
}

/// An independent f64 evaluation of rules 1–6 written straight from the README's statement.
fn reference(
    spec: &RigLogicSpec,
    gui: Option<&[f32]>,
    raw: &[f32],
    lod: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let nraw = spec.raw_count as usize;
    let mut c = vec![0.0f64; spec.control_count()];
    let cond = |t: &ConditionalTableSpec, rows: usize, inp: &[f64], out: &mut [f64]| {
        out.iter_mut().for_each(|o| *o = 0.0);
        let mut prev: Option<(u16, u16)> = None;
        let mut run_done = false;
        for r in 0..rows {
            let key = (t.input[r], t.output[r]);
            if prev != Some(key) {
                run_done = false;
            }
            prev = Some(key);
            let (lo, hi) = if t.from[r] <= t.to[r] {
                (t.from[r], t.to[r])
            } else {
                (t.to[r], t.from[r])
            };
            let g = inp[t.input[r] as usize];
            if !run_done && f64::from(lo) <= g && g <= f64::from(hi) {
                out[t.output[r] as usize] += f64::from(t.slope[r]) * g + f64::from(t.cut[r]);
                run_done = true;
            }
        }
        out.iter_mut().for_each(|o| *o = o.clamp(0.0, 1.0));
    };
    match gui {
        Some(g) => {
            let g: Vec<f64> = g.iter().map(|&v| f64::from(v)).collect();
            cond(
                &spec.gui_to_raw,
                spec.gui_to_raw.input.len(),
                &g,
                &mut c[..nraw],
            );
        }
        None => c[..nraw]
            .iter_mut()
            .zip(raw)
            .for_each(|(o, &v)| *o = f64::from(v)),
    }
    for k in 0..spec.psd_count as usize {
        let row = (nraw + k) as u16;
        let mut w = 1.0;
        let mut p = 1.0;
        for i in 0..spec.psd_rows.len() {
            if spec.psd_rows[i] == row {
                w *= f64::from(spec.psd_values[i]);
                p *= c[spec.psd_columns[i] as usize].clamp(0.0, 1.0);
            }
        }
        c[nraw + k] = (w * p).min(1.0);
    }
    let mut joints = vec![0.0; spec.joint_count as usize * 9];
    for g in &spec.joint_groups {
        for r in 0..g.lods[lod] as usize {
            joints[g.outputs[r] as usize] = (0..g.inputs.len())
                .map(|k| f64::from(g.values[r * g.inputs.len() + k]) * c[g.inputs[k] as usize])
                .sum();
        }
    }
    let mut ch = vec![0.0; spec.channel_count as usize];
    for i in 0..spec.blend_shape_lods[lod] as usize {
        ch[spec.blend_shape_outputs[i] as usize] = c[spec.blend_shape_inputs[i] as usize];
    }
    let mut maps = vec![0.0; spec.map_count as usize];
    cond(
        &spec.animated_maps,
        spec.animated_map_lods[lod] as usize,
        &c,
        &mut maps,
    );
    (c, joints, ch, maps)
}

fn close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(g) - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(29), ..ProptestConfig::default() })]

    /// At LOD 0 (every PSD consumed) the f32 evaluation equals the f64 reference within 1e-5
    /// relative, from GUI or raw inputs, and the documented ranges hold.
    #[test]
    fn equals_f64_reference(gui in prop::array::uniform2(-1.5f32..1.5), raw in prop::array::uniform3(-0.5f32..2.0), from_gui in any::<bool>()) {
        let spec = small();
        let r = RigLogic::new(&spec, RigLogicConfig::default()).unwrap();
        let mut s = RigLogicInstance::new(&r);
        if from_gui {
            s.set_gui(&gui).unwrap();
            s.map_gui_to_raw(&r);
            prop_assert!(s.raw(&r).iter().all(|v| (0.0..=1.0).contains(v)));
        } else {
            s.set_raw(&r, &raw).unwrap();
        }
        s.calculate(&r);
        let (c, j, ch, m) = reference(&spec, from_gui.then_some(&gui[..]), &raw, 0);
        close("controls", s.controls(), &c, 1e-5);
        close("joints", s.joints(), &j, 1e-5);
        close("channels", s.blend_shapes(), &ch, 1e-6);
        close("maps", s.animated_maps(), &m, 1e-6);
        prop_assert!(s.psd(&r).iter().all(|v| *v <= 1.0));
        prop_assert!(s.animated_maps().iter().all(|v| (0.0..=1.0).contains(v)));
    }
}
