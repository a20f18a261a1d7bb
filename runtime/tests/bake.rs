//! A baked take plays back as mien posed it: the baked GLB, loaded as a character and playing its
//! new clip, poses every vertex at every key time as the runtime that baked it did (Face Cap
//! driven by the Live Link take: morph weights and the head motion's joints; CesiumMan walking:
//! 57 joint channels); the bytes are the same on a second bake; the source's meshes are untouched.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_runtime::bake::{BakeOptions, bake};
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};

mod glb;
use glb::{join_glb, split_glb};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn runtime(asset: &Arc<Asset>) -> Runtime {
    let o = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    Runtime::new(Arc::clone(asset), &Device::Cpu, &o).unwrap()
}

/// Bake `asset` (loaded from `file`) as `setup` drives it, `frames` keys at 30 fps; reload the bake
/// and compare the posed vertices at every key; return the baked bytes.
fn round_trip(file: &Path, frames: u32, setup: &dyn Fn(&mut Runtime)) -> Vec<u8> {
    let asset = Arc::new(Asset::load(file).unwrap());
    let source = std::fs::read(file).unwrap();
    let opts = BakeOptions {
        fps: 30.0,
        start_s: 0.0,
        frames,
        name: "mien take".into(),
        take: serde_json::json!({"kind": "test", "name": "test"}),
        tolerance: None,
    };
    let mut rt = runtime(&asset);
    setup(&mut rt);
    let (bytes, rep) = bake(&mut rt, &source, &opts).unwrap();
    assert_eq!(rep.keys, frames);
    let again = {
        let mut rt = runtime(&asset);
        setup(&mut rt);
        bake(&mut rt, &source, &opts).unwrap().0
    };
    assert!(bytes == again, "a second bake gave other bytes");

    let dir = std::env::temp_dir().join(format!("mien-bake-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!(
        "{}.glb",
        file.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::write(&out, &bytes).unwrap();
    let baked = Arc::new(Asset::load(&out).unwrap());
    std::fs::remove_file(&out).ok();
    // The meshes are the source's: same vertices, triangles and targets.
    assert_eq!(baked.vertex_count(), asset.vertex_count());
    assert_eq!(baked.triangles(), asset.triangles());
    let mut want = runtime(&asset);
    setup(&mut want);
    let mut got = runtime(&baked);
    got.instance_mut(0).unwrap().play_clip("mien take").unwrap();
    let (mut worst, mut moved) = (0.0f32, 0.0f32);
    let mut first: Option<Vec<[f32; 3]>> = None;
    for f in 0..frames {
        let t = f64::from(f) / 30.0;
        want.update(t).unwrap();
        got.update(t).unwrap();
        let (a, b) = (want.posed(0).unwrap(), got.posed(0).unwrap());
        let big = a
            .positions
            .iter()
            .flatten()
            .fold(1.0f32, |m, x| m.max(x.abs()));
        for (p, q) in a.positions.iter().zip(&b.positions) {
            for k in 0..3 {
                let d = (p[k] - q[k]).abs() / big;
                worst = worst.max(d);
            }
        }
        let f0 = first.get_or_insert_with(|| a.positions.clone());
        for (p, q) in a.positions.iter().zip(f0.iter()) {
            for k in 0..3 {
                moved = moved.max((p[k] - q[k]).abs() / big);
            }
        }
    }
    assert!(
        worst <= 1e-5,
        "baked pose differs by {worst:e} of the extent"
    );
    // The comparison can fail: the take moves the character far more than that.
    assert!(moved > 1e-3, "the take barely moves: {moved:e}");
    bytes
}

#[test]
fn facecap_with_the_live_link_take_plays_back_from_its_bake() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let bytes = round_trip(&data("facecap/facecap.glb"), 40, &|rt: &mut Runtime| {
        rt.instance_mut(0)
            .unwrap()
            .play_livelink_csv(&take)
            .unwrap();
    });
    let source = std::fs::read(data("facecap/facecap.glb")).unwrap();
    assert!(bytes.len() > source.len());
}

#[test]
fn cesium_man_walking_plays_back_from_its_bake() {
    round_trip(
        &data("khronos/CesiumMan/CesiumMan_chromedays.glb"),
        61,
        &|rt: &mut Runtime| {
            rt.instance_mut(0).unwrap().play_clip("0").unwrap();
        },
    );
}

/// `verify` passes an untouched bake and refuses, naming what changed: one vertex of a facial
/// part moved (a script edits one float of the Ready Player Me head's POSITION), a target renamed,
/// the record edited (the key rate), one key of the take changed, the record removed.
#[test]
fn verify_refuses_an_edited_bake_naming_what_changed() {
    use mien_runtime::bake::verify;
    let file = data("avatars/rpm_male.glb");
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut rt = runtime(&asset);
    rt.instance_mut(0)
        .unwrap()
        .play_livelink_csv(&take)
        .unwrap();
    let opts = BakeOptions {
        fps: 30.0,
        start_s: 0.0,
        frames: 10,
        name: "mien take".into(),
        take: serde_json::json!({"kind": "arkit", "name": "test"}),
        tolerance: None,
    };
    let (bytes, _) = bake(&mut rt, &std::fs::read(&file).unwrap(), &opts).unwrap();
    let ok = verify(&bytes, "baked.glb").unwrap();
    assert!(ok.parts >= 3, "{ok:?}");
    assert_eq!(ok.takes, vec!["mien take".to_string()]);

    let (json, bin) = split_glb(&bytes);
    let parts = json["animations"].as_array().unwrap().last().unwrap()["extras"]["mien"]["parts"]
        .as_array()
        .unwrap()
        .clone();
    let mesh = parts[0]["mesh"].as_u64().unwrap() as usize;
    let acc = &json["accessors"][json["meshes"][mesh]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize];
    assert_eq!(acc["componentType"], 5126, "a float POSITION to edit");
    let view = &json["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let at = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    // One vertex's x moved by 1 mm.
    let mut moved = bin.clone();
    let x = f32::from_le_bytes(moved[at..at + 4].try_into().unwrap()) + 1e-3;
    moved[at..at + 4].copy_from_slice(&x.to_le_bytes());
    let e = verify(&join_glb(&json, &moved), "moved.glb")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("vertex order or base positions") && e.contains("moved.glb"),
        "{e}"
    );

    let mut renamed = json.clone();
    let names = &mut renamed["meshes"][mesh]["extras"]["targetNames"];
    assert!(names.is_array(), "the part names its targets");
    names[0] = serde_json::json!("renamed");
    let e = verify(&join_glb(&renamed, &bin), "renamed.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("target names"), "{e}");

    let mut edited = json.clone();
    let last = edited["animations"].as_array().unwrap().len() - 1;
    edited["animations"][last]["extras"]["mien"]["fps"] = serde_json::json!(60.0);
    let e = verify(&join_glb(&edited, &bin), "edited.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("altered"), "{e}");

    // One key of the take changed.
    let anim = json["animations"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let ch = anim["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"]["path"] == "weights")
        .unwrap();
    let sampler = &anim["samplers"][ch["sampler"].as_u64().unwrap() as usize];
    let out_acc = &json["accessors"][sampler["output"].as_u64().unwrap() as usize];
    let view = &json["bufferViews"][out_acc["bufferView"].as_u64().unwrap() as usize];
    let at = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let mut keyed = bin.clone();
    let v = f32::from_le_bytes(keyed[at..at + 4].try_into().unwrap()) + 0.25;
    keyed[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let e = verify(&join_glb(&json, &keyed), "keyed.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("keys were changed"), "{e}");

    let mut removed = json.clone();
    removed["animations"][last]["extras"] = serde_json::json!({});
    let e = verify(&join_glb(&removed, &bin), "removed.glb")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no mien bake record"), "{e}");
}

/// The take's ARKit-52 curves (Face Cap driven by the Live Link take at 30 fps) written as a Live
/// Link Face CSV and as Audio2Face JSON read back by mien's own readers to the same values, bit
/// for bit: every weight, every head and eye angle, every frame time.
#[test]
fn arkit_curves_round_trip_through_mien_readers() {
    use mien_core::anim::arkit::ARKIT_52;
    use mien_core::anim::canon::canonical_name;
    let file = data("facecap/facecap.glb");
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let mut rt = runtime(&asset);
    rt.instance_mut(0)
        .unwrap()
        .play_livelink_csv(&take)
        .unwrap();
    let s = mien_runtime::curves::sample_arkit(&mut rt, 30.0, 0.5, 45).unwrap();
    assert!(s.missing.is_empty(), "{:?}", s.missing);
    let c = &s.curves;
    assert!(
        c.weights.iter().any(|w| w.iter().any(|&x| x > 0.1)),
        "the take moves the face"
    );
    assert!(
        c.angles.iter().any(|a| a[4] != 0.0),
        "the take turns the eyes"
    );

    let csv = mien_core::io::curves::livelink_csv(c).unwrap();
    let back = mien_core::io::livelink_csv::read_livelink_csv_from_str(&csv, "curves.csv").unwrap();
    let json = mien_core::io::curves::audio2face_json(c).unwrap();
    let a2f = mien_core::io::audio2face::read_audio2face_str(&json, "curves.json")
        .unwrap()
        .stream;
    for stream in [&back, &a2f] {
        assert_eq!(stream.times.len(), 45);
        let cols: Vec<usize> = ARKIT_52
            .iter()
            .map(|n| {
                stream
                    .channels
                    .iter()
                    .position(|c| canonical_name(c) == Some(*n))
                    .unwrap_or_else(|| panic!("{} lacks {n}", stream.source))
            })
            .collect();
        let nc = stream.channels.len();
        for (f, w) in c.weights.iter().enumerate() {
            assert!(
                (stream.times[f] - f as f64 / 30.0).abs() < 1e-9,
                "{}",
                stream.times[f]
            );
            for (i, &col) in cols.iter().enumerate() {
                assert_eq!(
                    stream.values[f * nc + col].to_bits(),
                    w[i].to_bits(),
                    "{} frame {f} {}",
                    stream.source,
                    ARKIT_52[i]
                );
            }
        }
    }
    let na = back.aux_channels.len();
    assert_eq!(na, 9);
    for (f, a) in c.angles.iter().enumerate() {
        assert_eq!(&back.aux_values[f * na..f * na + 9], &a[..]);
    }
    // A rate the Live Link reader cannot infer is refused.
    let mut odd = c.clone();
    odd.fps = 29.0;
    assert!(mien_core::io::curves::livelink_csv(&odd).is_err());
}

/// Key reduction within a stated bound: Face Cap's Live Link bake reduced at 0.01 (weights) and
/// 0.5° (rotations) writes fewer keys (360 → 182: the weights track keeps a key wherever any of
/// its 52 targets would stray), and played back at every sampled frame each weight is
/// within 0.01 and each rotation within 0.5° of the full bake's.
#[test]
fn reduced_keys_stay_within_the_tolerance() {
    use mien_runtime::bake::Tolerance;
    let file = data("facecap/facecap.glb");
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let asset = Arc::new(Asset::load(&file).unwrap());
    let source = std::fs::read(&file).unwrap();
    let tol = Tolerance {
        value: 0.01,
        angle_rad: 0.5f32.to_radians(),
    };
    let bake_with = |tolerance: Option<Tolerance>| {
        let mut rt = runtime(&asset);
        rt.instance_mut(0)
            .unwrap()
            .play_livelink_csv(&take)
            .unwrap();
        let opts = BakeOptions {
            fps: 30.0,
            start_s: 0.0,
            frames: 120,
            name: "mien take".into(),
            take: serde_json::json!({"kind": "arkit", "name": "test"}),
            tolerance,
        };
        bake(&mut rt, &source, &opts).unwrap()
    };
    let (full, rf) = bake_with(None);
    let (small, rs) = bake_with(Some(tol));
    eprintln!("keys written: {} → {}", rf.keys_written, rs.keys_written);
    assert!(
        rs.keys_written * 4 < rf.keys_written * 3,
        "{rs:?} vs {rf:?}"
    );
    let load = |bytes: &[u8], name: &str| {
        let dir = std::env::temp_dir().join(format!("mien-bake-reduce-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let a = Arc::new(Asset::load(&p).unwrap());
        std::fs::remove_file(&p).ok();
        let mut rt = runtime(&a);
        rt.instance_mut(0).unwrap().play_clip("mien take").unwrap();
        rt
    };
    let (mut a, mut b) = (load(&full, "full.glb"), load(&small, "small.glb"));
    let (mut dw, mut dq) = (0.0f32, 0.0f32);
    for f in 0..120 {
        let t = f64::from(f) / 30.0;
        a.update(t).unwrap();
        b.update(t).unwrap();
        let (pa, pb) = (
            a.instance(0).unwrap().pose().clone(),
            b.instance(0).unwrap().pose().clone(),
        );
        for (wa, wb) in pa.weights.iter().zip(&pb.weights) {
            for (x, y) in wa.iter().zip(wb) {
                dw = dw.max((x - y).abs());
            }
        }
        for (la, lb) in pa.locals.iter().zip(&pb.locals) {
            dq = dq.max(la.rotation.angle_between(lb.rotation));
        }
    }
    eprintln!(
        "largest differences: weight {dw}, rotation {} deg",
        dq.to_degrees()
    );
    assert!(dw <= 0.01 + 1e-6, "weight {dw}");
    assert!(dq <= 0.5f32.to_radians() + 1e-4, "rotation {dq} rad");
}

/// A linear head baked (issue 18, deliverable 4): the ICT-FaceKit pack driven by the Live Link
/// take is exported as a morph-target glTF (basis as targets, eyes as joints) with the take keyed
/// on it; loaded back as an ordinary glTF character and playing that clip, every vertex at every
/// key is where the pack's own runtime put it (within 1e-5 of the extent), and the bake verifies.
#[test]
fn the_ict_linear_head_bakes_to_a_gltf_that_plays_as_the_pack() {
    use mien_core::gnm::bake::{BakeOptions as PackOptions, bake_obj_folder};
    let dir = std::env::temp_dir().join(format!("mien-bake-ict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pack_path = dir.join("ict.aosrig");
    bake_obj_folder(
        &data("ict-facekit"),
        &PackOptions::default(),
        &mut |_, _, _| {},
    )
    .unwrap()
    .write(&pack_path)
    .unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let head = Arc::new(Asset::load(&pack_path).unwrap());
    let setup = |rt: &mut Runtime| {
        rt.instance_mut(0)
            .unwrap()
            .play_livelink_csv(&take)
            .unwrap();
    };
    let mut rt = runtime(&head);
    setup(&mut rt);
    let frames = 30;
    let opts = BakeOptions {
        fps: 30.0,
        start_s: 0.0,
        frames,
        name: "mien take".into(),
        take: serde_json::json!({"kind": "arkit", "name": "test"}),
        tolerance: None,
    };
    let (bytes, rep) = bake(&mut rt, &[], &opts).unwrap();
    assert_eq!(rep.weight_channels, 1);
    assert!(rep.transform_channels >= 2, "{rep:?}");
    mien_runtime::bake::verify(&bytes, "ict-take.glb").unwrap();
    let out = dir.join("ict-take.glb");
    std::fs::write(&out, &bytes).unwrap();
    let baked = Arc::new(Asset::load(&out).unwrap());
    std::fs::remove_dir_all(&dir).ok();
    let mut want = runtime(&head);
    setup(&mut want);
    let mut got = runtime(&baked);
    got.instance_mut(0).unwrap().play_clip("mien take").unwrap();
    // The baked character posed with every weight the clip gives (an engine applies no active-
    // target limit; mien's runtime keeps 32 per mesh, the pack none).
    let rig = baked.rig().unwrap().clone();
    let mut worst = 0.0f32;
    for f in 0..frames {
        let t = f64::from(f) / 30.0;
        want.update(t).unwrap();
        got.update(t).unwrap();
        let a = want.posed(0).unwrap();
        let inst = got.instance(0).unwrap();
        let mut c = mien_core::rig::RigControls::default();
        rig.controls_from_pose(inst.pose(), inst.world(), &mut c);
        let mut np = Vec::new();
        mien_core::rig::RigData::normal_palette(&c.palette, &mut np);
        let b: Vec<[f32; 3]> = (0..rig.vertex_count())
            .map(|v| rig.pose_vertex(v, &c.weights, &c.palette, &np).0)
            .collect();
        assert_eq!(a.positions.len(), b.len());
        let big = a
            .positions
            .iter()
            .flatten()
            .fold(1e-6f32, |m, x| m.max(x.abs()));
        for (p, q) in a.positions.iter().zip(&b) {
            for k in 0..3 {
                worst = worst.max((p[k] - q[k]).abs() / big);
            }
        }
    }
    eprintln!("ICT baked glTF vs the pack runtime: {worst:e} of the extent");
    assert!(worst <= 1e-5, "{worst:e}");
}
