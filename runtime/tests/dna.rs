//! A MetaHuman DNA character through the runtime (`metahuman_dna/mien_ict_rig.dna`): ARKit-52 onto
//! its face board, RigLogic, the skin and the morph blend. The posed chin is computed here
//! independently in f64 — from the DNA's neutral joints (cm, degrees, `xyz`), Epic's own RigLogic
//! outputs for jaw-open (`mien_ict_rig_outputs.json`), the chin's skin weights and blend-shape
//! deltas, composed as `R_neutral · R_delta` — and the runtime must land on it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::anim::arkit::arkit_index;
use mien_core::io::dna::{DnaLoad, read_dna_file};
use mien_runtime::{Asset, Device, ExpressionSpace, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn present() -> bool {
    let ok = data("metahuman_dna/mien_ict_rig.dna").exists();
    if !ok {
        eprintln!("skipping: ../shared/data/metahuman_dna not found");
    }
    ok
}

type M4 = [[f64; 4]; 4];

fn mul(a: &M4, b: &M4) -> M4 {
    let mut o = [[0.0; 4]; 4];
    for (i, row) in o.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    o
}

/// Translation then rotation `R = Rz·Ry·Rx` (degrees), row-major for column vectors.
fn tr(t: [f64; 3], r: [f64; 3]) -> M4 {
    let (sx, cx) = r[0].to_radians().sin_cos();
    let (sy, cy) = r[1].to_radians().sin_cos();
    let (sz, cz) = r[2].to_radians().sin_cos();
    let rx = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, cx, -sx, 0.0],
        [0.0, sx, cx, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let ry = [
        [cy, 0.0, sy, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [-sy, 0.0, cy, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let rz = [
        [cz, -sz, 0.0, 0.0],
        [sz, cz, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let mut m = mul(&rz, &mul(&ry, &rx));
    for k in 0..3 {
        m[k][3] = t[k];
    }
    m
}

fn inverse_rigid(m: &M4) -> M4 {
    let mut o = [[0.0; 4]; 4];
    for i in 0..3 {
        for j in 0..3 {
            o[i][j] = m[j][i];
        }
        o[i][3] = -(0..3).map(|k| m[k][i] * m[k][3]).sum::<f64>();
    }
    o[3][3] = 1.0;
    o
}

/// Jaw-open through ARKit (`jawOpen` = 1 → raw `CTRL_expressions_jawOpen` = 1): the chin
/// (DNA vertex 966) posed by the runtime equals the f64 composition of Epic's outputs.
#[test]
fn jaw_open_chin_equals_an_f64_composition_of_riglogic_outputs() {
    if !present() {
        return;
    }
    let path = data("metahuman_dna/mien_ict_rig.dna");
    let dna = read_dna_file(&path, &DnaLoad::default()).unwrap();
    let oracle: serde_json::Value = serde_json::from_slice(
        &std::fs::read(data("metahuman_dna/mien_ict_rig_outputs.json")).unwrap(),
    )
    .unwrap();
    let case = oracle["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "single_jaw_open")
        .unwrap();
    let out = &case["lods"][0]["outputs"]["scalar_float_euler"];
    let f = |k: &str| -> Vec<f64> {
        out[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (joints, channels) = (f("jointOutputs"), f("blendShapeOutputs"));

    // Joint worlds, neutral and posed (delta translation added, R_neutral · R_delta).
    let df = &dna.definition;
    let nj = df.joint_names.len();
    let (mut bind, mut posed) = (Vec::<M4>::new(), Vec::<M4>::new());
    for j in 0..nj {
        let t = df.neutral_joint_translations[j].map(f64::from);
        let r = df.neutral_joint_rotations[j].map(f64::from);
        let d = &joints[j * 9..j * 9 + 9];
        let n = tr(t, r);
        let p = mul(
            &tr([t[0] + d[0], t[1] + d[1], t[2] + d[2]], r),
            &tr([0.0; 3], [d[3], d[4], d[5]]),
        );
        let parent = usize::from(df.joint_parents[j]);
        if parent == j {
            bind.push(n);
            posed.push(p);
        } else {
            bind.push(mul(&bind[parent], &n));
            posed.push(mul(&posed[parent], &p));
        }
    }
    // The chin: rest + Σ channel · delta, skinned.
    let mesh = &dna.meshes[0];
    let v = 966usize;
    let mut p = mesh.positions[v].map(f64::from);
    for t in &mesh.blend_shape_targets {
        if let Some(k) = t.vertex_indices.iter().position(|&x| x as usize == v) {
            for a in 0..3 {
                p[a] += channels[usize::from(t.channel)] * f64::from(t.deltas[k][a]);
            }
        }
    }
    let (o0, o1) = (
        mesh.skin.offsets[v] as usize,
        mesh.skin.offsets[v + 1] as usize,
    );
    let mut want = [0.0f64; 3];
    for k in o0..o1 {
        let j = usize::from(mesh.skin.joint_indices[k]);
        let m = mul(&posed[j], &inverse_rigid(&bind[j]));
        for a in 0..3 {
            want[a] += f64::from(mesh.skin.weights[k])
                * ((0..3).map(|b| m[a][b] * p[b]).sum::<f64>() + m[a][3]);
        }
    }
    let want = want.map(|x| x * 0.01); // cm → m (the rig's axes are mien's)

    let asset = Arc::new(Asset::load(&path).unwrap());
    assert_eq!(asset.space(), ExpressionSpace::Rig);
    let mut rt = Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    let mut arkit = [0.0f32; 52];
    arkit[arkit_index("jawOpen").unwrap()] = 1.0;
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Arkit52, &arkit)
        .unwrap();
    rt.update(0.0).unwrap();
    let posed = rt.posed(0).unwrap();
    // The mien vertex of DNA position 966: its first vertex layout.
    let layout = mesh
        .layouts
        .iter()
        .position(|l| l.position as usize == v)
        .unwrap();
    let got = posed.positions[layout].map(f64::from);
    let rest = mesh.positions[v].map(|x| f64::from(x) * 0.01);
    for a in 0..3 {
        assert!(
            (got[a] - want[a]).abs() < 2e-6,
            "axis {a}: runtime {got:?} vs f64 {want:?}"
        );
    }
    // The chin moved down and back by centimetres (jaw rotation + the jaw_open shape).
    assert!(
        want[1] - rest[1] < -0.04 && want[2] - rest[2] < -0.04,
        "{want:?} from {rest:?}"
    );

    // At rest (ARKit zero, rest vector zero) the chin is where the DNA puts it.
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Arkit52, &[0.0; 52])
        .unwrap();
    rt.update(0.1).unwrap();
    let got = rt.posed(0).unwrap().positions[layout].map(f64::from);
    for a in 0..3 {
        assert!(
            (got[a] - rest[a]).abs() < 1e-6,
            "rest axis {a}: {got:?} vs {rest:?}"
        );
    }
}

/// The raw-control space: `set_controls(Rig, …)` drives RigLogic directly, refusing a wrong
/// length; the ARKit reach report lists what ARKit cannot reach on this board.
#[test]
fn the_rig_space_and_the_reach_report() {
    if !present() {
        return;
    }
    let asset = Arc::new(Asset::load(data("metahuman_dna/mien_ict_rig.dna")).unwrap());
    let rl = asset.character().rig_logic.clone().unwrap();
    let reach = rl.arkit.reach(&rl.raw_names);
    // ICT's 57 expressions: ARKit's 52 minus tongueOut reach 55 of them (browInnerUp and cheekPuff
    // drive both sides); cheekRaiser and pupilDilate L/R are out of ARKit's reach.
    assert_eq!(reach.unmapped_arkit, vec!["tongueOut".to_string()]);
    let mut unreached = reach.unreached.clone();
    unreached.sort();
    assert_eq!(
        unreached,
        [
            "CTRL_expressions_cheekRaiserL",
            "CTRL_expressions_cheekRaiserR",
            "CTRL_expressions_pupilDilateL",
            "CTRL_expressions_pupilDilateR"
        ]
    );
    let mut rt = Runtime::new(
        asset.clone(),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    let n = asset.space_len(ExpressionSpace::Rig).unwrap();
    assert_eq!(n, 57);
    assert!(
        rt.instance_mut(0)
            .unwrap()
            .set_controls(ExpressionSpace::Rig, &vec![0.0; 56])
            .is_err()
    );
    let mut raw = vec![0.0f32; n];
    raw[12] = 1.0; // CTRL_expressions_eyeBlinkL
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Rig, &raw)
        .unwrap();
    rt.update(0.0).unwrap();
    let a = rt.posed(0).unwrap();
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Rig, &vec![0.0; n])
        .unwrap();
    rt.update(0.1).unwrap();
    let b = rt.posed(0).unwrap();
    let moved = a
        .positions
        .iter()
        .zip(&b.positions)
        .filter(|(p, q)| (p[1] - q[1]).abs() > 1e-4)
        .count();
    assert!(
        moved > 100,
        "a blink moves the upper lid: {moved} vertices moved > 0.1 mm"
    );
}

/// Speech drives a DNA character: Gentle timings → visemes → ARKit on the control node → the face
/// board → RigLogic: the jaw joint opens on the open vowels.
#[test]
fn speech_moves_the_jaw_through_riglogic() {
    if !present() {
        return;
    }
    let asset = Arc::new(Asset::load(data("metahuman_dna/mien_ict_rig.dna")).unwrap());
    let speech = mien_runtime::Speech::from_file(
        &data("gentle/lucier_golden.json"),
        &Default::default(),
        asset.character(),
    )
    .unwrap();
    let jaw = asset
        .character()
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("FACIAL_C_Jaw"))
        .unwrap();
    let rest = asset.character().nodes[jaw].rest.rotation;
    let mut rt = Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    rt.instance_mut(0)
        .unwrap()
        .set_speech(Some(speech))
        .unwrap();
    let mut widest = 0.0f32;
    for k in 0..120 {
        rt.update(f64::from(k) * 0.05).unwrap();
        let q = rt.instance(0).unwrap().pose().locals[jaw].rotation;
        widest = widest.max(q.angle_between(rest));
    }
    // jawOpen drives FACIAL_C_Jaw.rx at 24.6° per unit: speech opens it by degrees.
    assert!(
        widest.to_degrees() > 3.0,
        "the jaw turned at most {}°",
        widest.to_degrees()
    );
}

/// The face board's rest vector: an ARKit-neutral frame poses the rest (here with an unreached
/// control, cheekRaiserL, at 0.5) exactly as setting those raw controls directly does; a rest
/// outside [0, 1] is refused with its index.
#[test]
fn the_rest_vector_is_what_neutral_arkit_poses() {
    if !present() {
        return;
    }
    let base = Asset::load(data("metahuman_dna/mien_ict_rig.dna")).unwrap();
    let n = base.space_len(ExpressionSpace::Rig).unwrap();
    let mut rest = vec![0.0f32; n];
    rest[8] = 0.5; // CTRL_expressions_cheekRaiserL: out of ARKit's reach
    rest[28] = 0.2; // CTRL_expressions_jawOpen
    let mut bad = rest.clone();
    bad[3] = 1.5;
    let e = base.with_rig_rest(&bad).unwrap_err().to_string();
    assert!(e.contains("rest vector[3]"), "{e}");
    let asset = Arc::new(base.with_rig_rest(&rest).unwrap());
    let mut rt = Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 2,
            lift: None,
        },
    )
    .unwrap();
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Arkit52, &[0.0; 52])
        .unwrap();
    rt.instance_mut(1)
        .unwrap()
        .set_controls(ExpressionSpace::Rig, &rest)
        .unwrap();
    rt.update(0.0).unwrap();
    let (a, b) = (rt.posed(0).unwrap(), rt.posed(1).unwrap());
    assert_eq!(a.positions, b.positions);
    // ARKit adds to the rest: jawOpen 0.3 over a rest of 0.2 poses raw jawOpen 0.5.
    let mut arkit = [0.0f32; 52];
    arkit[mien_core::anim::arkit::arkit_index("jawOpen").unwrap()] = 0.3;
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Arkit52, &arkit)
        .unwrap();
    let mut raw = rest.clone();
    raw[28] = 0.5;
    rt.instance_mut(1)
        .unwrap()
        .set_controls(ExpressionSpace::Rig, &raw)
        .unwrap();
    rt.update(0.1).unwrap();
    let (a, b) = (rt.posed(0).unwrap(), rt.posed(1).unwrap());
    for (p, q) in a.positions.iter().zip(&b.positions) {
        for k in 0..3 {
            assert!((p[k] - q[k]).abs() < 1e-6, "{p:?} vs {q:?}");
        }
    }
}

/// The face driver drives a DNA character as any ARKit rig: its look-at writes the ARKit eye
/// channels on the control node, ARKit reaches the board's eyeLook controls, and RigLogic turns
/// the left eye joint (`FACIAL_L_Eye.ry` = 26.3° per unit of eyeLookOutL) toward a point on the
/// character's left (+X: the DNA's `x: right` is the character's left, mien's +X).
#[test]
fn the_face_drivers_look_at_turns_the_eye_joints_through_riglogic() {
    if !present() {
        return;
    }
    use mien_core::face::FaceDef;
    use mien_runtime::{FaceDriver, FaceSources, Script};
    let asset = Arc::new(Asset::load(data("metahuman_dna/mien_ict_rig.dna")).unwrap());
    let ch = asset.character().clone();
    let eye = ch
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("FACIAL_L_Eye"))
        .unwrap();
    let (mut l, mut w) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut l, &mut w);
    let centre = w[eye].transform_point3(glam::Vec3::ZERO);
    let target = centre + glam::Vec3::new(0.6, 0.0, 1.0);
    let face = FaceDriver::new(
        &ch,
        FaceDef::for_character(&ch),
        Script::default(),
        Some(target.into()),
        0.0,
        &FaceSources::default(),
    )
    .unwrap();
    let mut rt = Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    rt.instance_mut(0).unwrap().set_face(Some(face)).unwrap();
    for k in 0..10 {
        rt.update(f64::from(k) * 0.05).unwrap();
    }
    let q = rt.instance(0).unwrap().pose().locals[eye].rotation;
    let gaze = q * glam::Vec3::Z;
    assert!(gaze.x > 0.1, "the left eye looks toward +X: gaze {gaze:?}");
}
