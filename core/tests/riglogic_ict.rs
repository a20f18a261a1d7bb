//! RigLogic on `mien_ict_rig.dna` (format 2.8) and its 2.1 twin against what Epic's RigLogic
//! 13.2.5 computed for it (`mien_ict_rig_outputs.json`: 15 cases × 2 LODs × 7 configurations), at
//! tolerances tighter than its README suggests (1e-6 / 1e-5), because they hold: raw, PSD,
//! blend-shape and animated-map outputs bit-identical; joints within 1e-6 absolute in every
//! configuration (measured worst: 3.0e-8 float Euler, 6.0e-8 half Euler and float quaternion,
//! 1.2e-7 half quaternion — RigLogic's SIMD summation order against mien's column order), the
//! half-float ones with mien's coefficients rounded to binary16 too (`JointPrecision::Half`).

use std::path::{Path, PathBuf};

use mien_core::io::dna::{DnaLayers, DnaLoad, LodSelection, read_dna_file, riglogic_spec};
use mien_core::rig::riglogic::{
    JointOutput, JointPrecision, RigLogic, RigLogicConfig, RigLogicInstance,
};
use serde_json::Value;

fn dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/metahuman_dna");
    if d.join("mien_ict_rig_outputs.json").exists() {
        Some(d)
    } else {
        eprintln!("skipping: {} not found", d.display());
        None
    }
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// (mien config, the oracle's configuration id, joint tolerance).
const CONFIGS: &[(JointPrecision, JointOutput, &str, f32)] = &[
    (
        JointPrecision::Float,
        JointOutput::Euler,
        "scalar_float_euler",
        1e-6,
    ),
    (
        JointPrecision::Float,
        JointOutput::Euler,
        "sse_float_euler",
        1e-6,
    ),
    (
        JointPrecision::Float,
        JointOutput::Euler,
        "default_config_scalar_only_build",
        1e-6,
    ),
    (
        JointPrecision::Half,
        JointOutput::Euler,
        "default_config",
        1e-6,
    ),
    (
        JointPrecision::Half,
        JointOutput::Euler,
        "avx_half_euler",
        1e-6,
    ),
    (
        JointPrecision::Float,
        JointOutput::Quaternion,
        "scalar_float_quaternion",
        1e-6,
    ),
    (
        JointPrecision::Half,
        JointOutput::Quaternion,
        "default_config_quaternion",
        1e-6,
    ),
];

fn check(what: &str, got: &[f32], want: &[f32], tol: f32) -> f32 {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut worst = 0.0f32;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let d = (g - w).abs();
        assert!(
            d <= tol,
            "{what}[{i}]: mien {g} vs RigLogic {w} (|Δ| {d:e} > {tol:e})"
        );
        worst = worst.max(d);
    }
    worst
}

fn run(file: &str, oracle: &Value) {
    let Some(d) = dir() else { return };
    let load = DnaLoad {
        layers: DnaLayers::Behavior,
        lods: LodSelection::All,
    };
    let dna = read_dna_file(&d.join(file), &load).unwrap();
    let spec = riglogic_spec(&dna).unwrap();
    assert!(spec.not_evaluated.is_empty(), "{:?}", spec.not_evaluated);
    let mut worst_joint = vec![0.0f32; CONFIGS.len()];
    let mut worst_rest = 0.0f32;
    for (ci, &(precision, output, id, jtol)) in CONFIGS.iter().enumerate() {
        let rig = RigLogic::new(&spec, RigLogicConfig { precision, output }).unwrap();
        for case in oracle["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            for l in case["lods"].as_array().unwrap() {
                let lod = l["lod"].as_u64().unwrap() as usize;
                let want = &l["outputs"][id];
                // A fresh instance per case and LOD, as the oracle was made.
                let mut s = RigLogicInstance::new(&rig);
                s.set_lod(&rig, lod).unwrap();
                if let Some(g) = case.get("guiInput") {
                    s.set_gui(&floats(g)).unwrap();
                    s.map_gui_to_raw(&rig);
                } else {
                    s.set_raw(&rig, &floats(&case["rawInput"])).unwrap();
                }
                s.calculate(&rig);
                let w = |k: &str| floats(&want[k]);
                let at = |k: &str| format!("{file} {name} LOD {lod} {id} {k}");
                worst_rest = worst_rest.max(check(
                    &at("rawControls"),
                    s.raw(&rig),
                    &w("rawControls"),
                    0.0,
                ));
                worst_rest = worst_rest.max(check(
                    &at("psdControls"),
                    s.psd(&rig),
                    &w("psdControls"),
                    0.0,
                ));
                worst_rest = worst_rest.max(check(
                    &at("blendShapeOutputs"),
                    s.blend_shapes(),
                    &w("blendShapeOutputs"),
                    0.0,
                ));
                worst_rest = worst_rest.max(check(
                    &at("animatedMapOutputs"),
                    s.animated_maps(),
                    &w("animatedMapOutputs"),
                    0.0,
                ));
                let j = check(&at("jointOutputs"), s.joints(), &w("jointOutputs"), jtol);
                worst_joint[ci] = worst_joint[ci].max(j);
            }
        }
    }
    eprintln!("{file}: worst |Δ| non-joint {worst_rest:e}; joints per config {worst_joint:?}");
}

fn oracle() -> Option<Value> {
    let d = dir()?;
    Some(
        serde_json::from_slice(&std::fs::read(d.join("mien_ict_rig_outputs.json")).unwrap())
            .unwrap(),
    )
}

#[test]
fn ict_rig_v28_equals_riglogic() {
    if let Some(o) = oracle() {
        run("mien_ict_rig.dna", &o);
    }
}

#[test]
fn ict_rig_v21_equals_riglogic() {
    if let Some(o) = oracle() {
        run("mien_ict_rig_v21.dna", &o);
    }
}

/// The LOD lists RigLogic reports (`getBlendShapeChannelIndicesForLOD`).
#[test]
fn ict_rig_channels_per_lod() {
    let (Some(d), Some(o)) = (dir(), oracle()) else {
        return;
    };
    let load = DnaLoad {
        layers: DnaLayers::Behavior,
        lods: LodSelection::All,
    };
    let dna = read_dna_file(&d.join("mien_ict_rig.dna"), &load).unwrap();
    let rig = RigLogic::new(&riglogic_spec(&dna).unwrap(), RigLogicConfig::default()).unwrap();
    for l in o["lods"].as_array().unwrap() {
        let lod = l["lod"].as_u64().unwrap() as usize;
        let want: Vec<u16> = l["blendShapeChannelIndices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u16)
            .collect();
        assert_eq!(rig.channels_at_lod(lod).unwrap(), &want[..], "LOD {lod}");
    }
}

/// A DNA read at LOD 1 only (`LodSelection::MaxLod(1)`): RigLogic builds on its renumbered tables,
/// and its LOD 0 equals the whole file's LOD 1 in Epic's outputs, element by element through the
/// kept joints, channels and maps.
#[test]
fn a_dna_read_at_one_lod_evaluates_as_that_lod() {
    let (Some(d), Some(o)) = (dir(), oracle()) else {
        return;
    };
    let load = DnaLoad {
        layers: DnaLayers::Behavior,
        lods: LodSelection::MaxLod(1),
    };
    let dna = read_dna_file(&d.join("mien_ict_rig.dna"), &load).unwrap();
    let f = dna.lod_filter.clone().expect("a LOD subset keeps a filter");
    let rig = RigLogic::new(&riglogic_spec(&dna).unwrap(), RigLogicConfig::default()).unwrap();
    assert_eq!(rig.lod_count(), 1);
    for case in o["cases"].as_array().unwrap() {
        let want = &case["lods"][1]["outputs"]["scalar_float_euler"];
        let mut s = RigLogicInstance::new(&rig);
        if let Some(g) = case.get("guiInput") {
            s.set_gui(&floats(g)).unwrap();
            s.map_gui_to_raw(&rig);
        } else {
            s.set_raw(&rig, &floats(&case["rawInput"])).unwrap();
        }
        s.calculate(&rig);
        let name = case["name"].as_str().unwrap();
        check(
            &format!("{name} raw"),
            s.raw(&rig),
            &floats(&want["rawControls"]),
            0.0,
        );
        let ch = floats(&want["blendShapeOutputs"]);
        let kept_ch: Vec<f32> = f
            .blend_shape_channels
            .iter()
            .map(|&c| ch[c as usize])
            .collect();
        check(&format!("{name} channels"), s.blend_shapes(), &kept_ch, 0.0);
        let maps = floats(&want["animatedMapOutputs"]);
        let kept_maps: Vec<f32> = f.animated_maps.iter().map(|&m| maps[m as usize]).collect();
        check(&format!("{name} maps"), s.animated_maps(), &kept_maps, 0.0);
        let j = floats(&want["jointOutputs"]);
        let kept_j: Vec<f32> = f
            .joints
            .iter()
            .flat_map(|&k| j[k as usize * 9..k as usize * 9 + 9].to_vec())
            .collect();
        check(&format!("{name} joints"), s.joints(), &kept_j, 1e-6);
    }
}
