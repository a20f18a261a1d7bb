//! Character bundles (issue 31): a GNM head baked from ICT-FaceKit with head, eye and teeth
//! branches and decoders mien makes itself (`docs/bundles/make_test_bundle.py`: numpy + onnx),
//! checked against ONNX Runtime's own Python output; camera-aware re-decode counted over a camera
//! path; the Live Link take animating it; bad manifests refused with every problem named.
//!
//! Needs python3 with numpy, onnx and onnxruntime (installed by `.ci/run`); skipped with a notice
//! without them unless `MIEN_REQUIRE_ORT=1`, which makes that a failure.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use mien_runtime::{
    Backend, Camera, CharacterDef, Device, DeviceOptions, ExpressionSpace, Runtime, RuntimeOptions,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn require() -> bool {
    std::env::var("MIEN_REQUIRE_ORT").as_deref() == Ok("1")
}

/// The bundle's folder and the pack's control names, built once per test binary.
struct Fixture {
    dir: PathBuf,
    names: Vec<String>,
}

fn fixture() -> Option<&'static Fixture> {
    static F: OnceLock<Option<Fixture>> = OnceLock::new();
    F.get_or_init(build).as_ref()
}

fn build() -> Option<Fixture> {
    // ONNX Runtime: the variable, else the pip wheel's library (loaded once for the process, so
    // the bundle loader's `Ort::load` finds it).
    let lib = mien_runtime::decoder::library_path();
    let py = std::process::Command::new("python3")
        .args(["-c", "import numpy, onnx, onnxruntime"])
        .status()
        .is_ok_and(|s| s.success());
    match (&lib, py) {
        (Some(l), true) => {
            mien_runtime::decoder::Ort::load_from(l).unwrap();
        }
        _ if require() => panic!(
            "MIEN_REQUIRE_ORT=1 but no ONNX Runtime or python3 with numpy, onnx and onnxruntime"
        ),
        _ => {
            eprintln!("skipped: needs ONNX Runtime and python3 with numpy, onnx, onnxruntime");
            return None;
        }
    }
    let dir = std::env::temp_dir().join(format!("mien-bundle-{}", std::process::id()));
    mien_runtime::bundle::make_test_bundle(&data("ict-facekit"), &dir).unwrap();
    let names: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("names.json")).unwrap()).unwrap();
    assert!(names.iter().any(|n| n == "browInnerUp_L"), "{names:?}");
    Some(Fixture { dir, names })
}

fn golden(f: &Fixture) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(f.dir.join("golden.json")).unwrap()).unwrap()
}

fn rows(v: &serde_json::Value) -> Vec<Vec<f32>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        })
        .collect()
}

#[test]
fn the_test_decoders_match_onnx_runtime_python() {
    use mien_runtime::decoder::{DecodeInputs, Decoded, Decoder, DecoderOptions, Ort};
    let Some(f) = fixture() else { return };
    let ort = Ort::load().unwrap();
    let g = golden(f);
    let feats: Vec<f32> = rows(&g["inputs"]["features"]).concat();
    let view: Vec<[f32; 3]> = rows(&g["inputs"]["view_dir"])
        .iter()
        .map(|r| [r[0], r[1], r[2]])
        .collect();
    let controls: Vec<f32> = g["inputs"]["controls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(controls.len(), f.names.len());
    let n = view.len();
    for (file, key, tol) in [
        (
            "skin.onnx",
            "skin",
            g["tolerance_abs"].as_f64().unwrap() as f32,
        ),
        (
            "skin.fp16.onnx",
            "skin_fp16",
            g["tolerance_abs_fp16"].as_f64().unwrap() as f32,
        ),
    ] {
        let d = Decoder::load(&ort, &f.dir.join(file), &DecoderOptions::default()).unwrap();
        assert_eq!(
            d.contract().half.len(),
            if key == "skin" { 0 } else { 5 },
            "{file}"
        );
        let mut out = Decoded::default();
        d.decode(
            &DecodeInputs {
                n,
                features: Some(&feats),
                controls: Some(&controls),
                view_dir: Some(&view),
            },
            &mut out,
        )
        .unwrap();
        let want = rows(&g[key]["rgb"]);
        let want_a = rows(&g[key]["opacity"]);
        for i in 0..n {
            for k in 0..3 {
                assert!(
                    (out.rgb[i][k] - want[i][k]).abs() <= tol,
                    "{file} rgb {i} {k}: {} vs {}",
                    out.rgb[i][k],
                    want[i][k]
                );
            }
            assert!((out.opacity[i] - want_a[i][0]).abs() <= tol);
        }
    }
    // The eye decoder's geometry outputs.
    let d = Decoder::load(&ort, &f.dir.join("eyes.onnx"), &DecoderOptions::default()).unwrap();
    assert!(d.contract().geometry.offset && d.contract().geometry.rotation);
    let ef: Vec<f32> = rows(&g["eyes_inputs"]["features"]).concat();
    let mut out = Decoded::default();
    d.decode(
        &DecodeInputs {
            n,
            features: Some(&ef),
            controls: None,
            view_dir: Some(&view),
        },
        &mut out,
    )
    .unwrap();
    let want = rows(&g["eyes"]["rgb"]);
    let want_q = rows(&g["eyes"]["rotation"]);
    for i in 0..n {
        for k in 0..3 {
            assert!((out.rgb[i][k] - want[i][k]).abs() <= 1e-5);
        }
        for k in 0..4 {
            assert!((out.rotation[i][k] - want_q[i][k]).abs() <= 1e-6);
        }
    }
}

fn cpu_runtime(f: &Fixture, options: &mien_runtime::BundleOptions) -> Runtime {
    let ch = CharacterDef::load_with(f.dir.join("head.character.json"), options).unwrap();
    let asset = Arc::new(ch.asset.clone());
    Runtime::new(
        asset,
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: Some(ch.lift_options()),
        },
    )
    .unwrap()
}

fn front_camera(dz: f64) -> Camera {
    Camera::look_at([0.0, 0.0, 0.6 + dz], [0.0, 0.0, 0.0], 0.6).unwrap()
}

#[test]
fn the_bundle_loads_with_its_branches_and_reports_memory_per_branch() {
    let Some(f) = fixture() else { return };
    let ch = CharacterDef::load(f.dir.join("head.character.json")).unwrap();
    let b = ch.bundle.as_ref().unwrap();
    let names: Vec<&str> = b.branches.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["head", "eyes", "teeth"]);
    assert_eq!(b.branches[0].vertices, [0, 9409]);
    assert_eq!(
        b.branches[0].triangles.len(),
        2 * 9230,
        "ICT's face quads, fanned"
    );
    assert!(
        !b.branches[0].decoders[0].fp16,
        "the CPU provider runs the fp32 model by default"
    );
    assert!(b.view_dependent());
    let yes16 = mien_runtime::BundleOptions {
        prefer_fp16: Some(true),
        ..Default::default()
    };
    let ch16 = CharacterDef::load_with(f.dir.join("head.character.json"), &yes16).unwrap();
    assert!(ch16.bundle.as_ref().unwrap().branches[0].decoders[0].fp16);
    let mut rt = cpu_runtime(f, &Default::default());
    let lift = rt.lift().unwrap();
    let ranges: Vec<_> = lift.branches.iter().map(|(_, r)| *r).collect();
    assert_eq!(ranges[0].offset, 0);
    assert_eq!(ranges[1].offset, ranges[0].count);
    assert_eq!(ranges[2].offset, ranges[1].offset + ranges[1].count);
    assert_eq!(ranges[2].offset + ranges[2].count, lift.slots);
    assert!(ranges.iter().all(|r| r.count > 1000), "{ranges:?}");
    let m = rt.bundle_memory().unwrap();
    assert!(!m.on_gpu);
    assert_eq!(m.slots, u64::from(lift.slots));
    for (bm, (br, r)) in m.branches.iter().zip(b.branches.iter().zip(&ranges)) {
        let g = u64::from(r.count);
        assert_eq!(bm.slots, g);
        assert_eq!(
            bm.bytes,
            52 * g + 48 * g + 12 * br.triangles.len() as u64,
            "{}",
            bm.name
        );
    }
    // Resident bytes: every file the bundle holds, as the file system sizes them.
    let want: u64 = [
        "ict.aosrig",
        "head.obj",
        "eyes.obj",
        "teeth.obj",
        "skin.onnx",
        "eyes.onnx",
        "skin_features.npy",
        "eye_features.npy",
    ]
    .iter()
    .map(|f2| std::fs::metadata(f.dir.join(f2)).unwrap().len())
    .sum();
    assert_eq!(m.resident_bytes, want);
    // Teeth keep their flat colour (no decoder).
    rt.set_camera(front_camera(0.0)).unwrap();
    rt.update(0.0).unwrap();
    let s = rt.splats(0).unwrap();
    let teeth = s.color[ranges[2].offset as usize].to_le_bytes();
    assert_eq!(teeth, [237, 230, 209, 255]);
}

#[test]
fn a_view_dependent_decoder_needs_a_camera_and_re_decodes_only_when_it_moves() {
    let Some(f) = fixture() else { return };
    let mut rt = cpu_runtime(f, &Default::default());
    assert!(rt.needs_camera());
    let e = rt.update(0.0).unwrap_err().to_string();
    assert!(
        e.contains("view-dependent") && e.contains("set_camera"),
        "{e}"
    );
    // Two view-dependent branches (head, eyes): each decode event is two decoder runs.
    let decodes = |rt: &Runtime| rt.appearance_stats().unwrap().decodes;
    let r = 0.6;
    let path: [(Camera, bool); 9] = [
        (front_camera(0.0), true),     // the first frame decodes
        (front_camera(0.0), false),    // still
        (front_camera(0.001), false),  // 1 mm
        (front_camera(0.0015), false), // 1.5 mm from the last decode
        (front_camera(0.0025), true),  // 2.5 mm
        (
            Camera {
                fov_y: 0.6 + 0.002 / r,
                ..front_camera(0.0025)
            },
            false,
        ), // a zoom sweeping 1 mm
        (
            Camera {
                fov_y: 0.6 + 0.01 / r,
                ..front_camera(0.0025)
            },
            true,
        ), // 5 mm
        (
            Camera::look_at([0.0, 0.0, r + 0.0025], [0.0, 0.004, 0.0], 0.6 + 0.01 / r).unwrap(),
            true,
        ), // a turn sweeping 4 mm
        (
            Camera::look_at([0.0, 0.0, r + 0.0025], [0.0, 0.004, 0.0], 0.6 + 0.01 / r).unwrap(),
            false,
        ),
    ];
    let mut want = 0;
    for (k, (c, decode)) in path.iter().enumerate() {
        rt.set_camera(*c).unwrap();
        rt.update(0.1 * k as f64).unwrap();
        if *decode {
            want += 2;
        }
        assert_eq!(decodes(&rt), want, "step {k}");
    }
    // The controls changing re-decodes the branch that takes them (the head), not the eyes.
    let mut v = vec![0.0f32; rt.asset().space_len(ExpressionSpace::Gnm).unwrap()];
    v[0] = 0.5;
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm, &v)
        .unwrap();
    rt.update(2.0).unwrap();
    assert_eq!(decodes(&rt), want + 1);
    rt.update(2.1).unwrap();
    assert_eq!(decodes(&rt), want + 1, "the same controls again");
}

/// Per sampled gaussian: its features interpolated at its barycentrics, its view direction from
/// its rest centre, and the controls — run through ONNX Runtime in Python — against the colour
/// mien wrote into the splat sink.
#[test]
fn splat_colours_are_onnx_runtime_python_outputs_for_the_same_inputs() {
    let Some(f) = fixture() else { return };
    let mut rt = cpu_runtime(
        f,
        &mien_runtime::BundleOptions {
            prefer_fp16: Some(false),
            ..Default::default()
        },
    );
    let names = &f.names;
    let mut v = vec![0.0f32; names.len()];
    for (i, n) in names.iter().enumerate() {
        if n.starts_with("browInnerUp") {
            v[i] = 0.9;
        }
    }
    rt.instance_mut(0)
        .unwrap()
        .set_controls(ExpressionSpace::Gnm, &v)
        .unwrap();
    let cam = Camera::look_at([0.05, 0.02, 0.5], [0.0, 0.0, 0.0], 0.7).unwrap();
    rt.set_camera(cam).unwrap();
    rt.update(0.0).unwrap();
    let lift = rt.lift().unwrap().clone();
    let setup = lift.setup.clone().unwrap();
    let head = lift.branches[0].1;
    let rest = rt.rest_positions().to_vec();
    let tris = rt.asset().triangles().to_vec();
    let normals = mien_core::lift::color::vertex_normals(&rest, &tris);
    let splats = rt.splats(0).unwrap();
    // Every 97th head gaussian.
    let picks: Vec<usize> = (head.offset as usize..(head.offset + head.count) as usize)
        .step_by(97)
        .collect();
    let mut items = Vec::new();
    for &g in &picks {
        let rec = &setup.gaussians[g];
        let t = setup.triangles[rec.triangle() as usize];
        let c = setup.pose(g, &rest, &normals).center;
        items.push(serde_json::json!({
            "v": t, "bary": [1.0 - rec.a[1] - rec.a[2], rec.a[1], rec.a[2]],
            "centre": [c[0], c[1], c[2]],
        }));
    }
    let req = serde_json::json!({ "items": items, "eye": cam.position, "controls": v });
    std::fs::write(f.dir.join("req.json"), req.to_string()).unwrap();
    let code = r#"
import json, sys, numpy as np, onnxruntime as ort
d = sys.argv[1]; r = json.load(open(d + '/req.json'))
F = np.load(d + '/skin_features.npy').astype(np.float64)
feat = np.array([sum(b * F[v] for v, b in zip(it['v'], it['bary'])) for it in r['items']], np.float32)
c = np.array([it['centre'] for it in r['items']], np.float64) - np.array(r['eye'])
view = (c / np.linalg.norm(c, axis=1, keepdims=True)).astype(np.float32)
s = ort.InferenceSession(d + '/skin.onnx', providers=['CPUExecutionProvider'])
rgb, op = s.run(None, {'features': feat, 'controls': np.array([r['controls']], np.float32), 'view_dir': view})
json.dump({'rgb': rgb.tolist(), 'opacity': op.tolist()}, open(d + '/resp.json', 'w'))
"#;
    let st = std::process::Command::new("python3")
        .args(["-c", code])
        .arg(&f.dir)
        .status()
        .unwrap();
    assert!(st.success());
    let resp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("resp.json")).unwrap()).unwrap();
    let rgb = rows(&resp["rgb"]);
    let op = rows(&resp["opacity"]);
    let mut darkened = 0;
    for (k, &g) in picks.iter().enumerate() {
        let got = splats.color[g].to_le_bytes();
        let want = [rgb[k][0], rgb[k][1], rgb[k][2], op[k][0]]
            .map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as i32);
        for c in 0..4 {
            assert!(
                (i32::from(got[c]) - want[c]).abs() <= 1,
                "gaussian {g} channel {c}: {got:?} vs {want:?}"
            );
        }
        // The base albedo's red is at least 0.62; the wrinkle darkening takes some below it.
        if got[0] < 150 {
            darkened += 1;
        }
    }
    assert!(picks.len() > 100, "{}", picks.len());
    assert!(darkened > 0, "the raised brows darken the forehead");
}

#[test]
fn the_live_link_take_animates_the_bundle() {
    let Some(f) = fixture() else { return };
    let mut rt = cpu_runtime(f, &Default::default());
    rt.set_camera(front_camera(0.0)).unwrap();
    rt.instance_mut(0)
        .unwrap()
        .play_livelink_csv(data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"))
        .unwrap();
    let head = rt.lift().unwrap().branches[0].1;
    let mut first = None;
    let mut changed = 0;
    for k in 0..24 {
        rt.update(0.5 + k as f64 / 30.0).unwrap();
        let s = rt.splats(0).unwrap();
        let cols: Vec<u32> =
            s.color[head.offset as usize..(head.offset + head.count) as usize].to_vec();
        assert!(s.center.iter().all(|c| c.iter().all(|x| x.is_finite())));
        match &first {
            None => first = Some((cols, s.center[head.offset as usize])),
            Some((c0, p0)) => {
                if *c0 != cols || *p0 != s.center[head.offset as usize] {
                    changed += 1;
                }
            }
        }
    }
    let st = rt.appearance_stats().unwrap();
    // The eyes decode once (the camera stands still); the head whenever its controls change.
    assert!(st.decodes >= 10, "{st:?}");
    assert!(changed > 10, "{changed}");
}

#[test]
fn bad_manifests_are_refused_with_every_problem_named() {
    let Some(f) = fixture() else { return };
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("head.character.json")).unwrap())
            .unwrap();
    m["rig"]["vertex_count"] = 1234.into();
    m["rig"]["control_names"][2] = "notAControl".into();
    m["expression_space"]["dim"] = 12.into();
    m["expression_space"]["segments"] = serde_json::json!([
        {"name": "a", "start": 0, "count": 8}, {"name": "b", "start": 4, "count": 4}
    ]);
    m["expression_space"]["arkit_map"] = serde_json::json!([1, 2, 3]);
    m["branches"][1]["decoders"] = serde_json::json!(["glint"]);
    m["branches"][2]["vertices"] = serde_json::json!([17039, 17040]);
    m["branches"][0]["lift"] = serde_json::json!({"kind": "voxel"});
    m["decoders"]["skin"]["fp16"] = serde_json::Value::Null;
    m["decoders"]["skin"]["file"] = data("onnx/ort_upsample.onnx").display().to_string().into();
    m["decoders"]["eyes"]["features"] = "skin_features.npy".into();
    let bad = f.dir.join("bad.character.json");
    std::fs::write(&bad, m.to_string()).unwrap();
    let e = CharacterDef::load(&bad).unwrap_err().to_string();
    for want in [
        "/rig/vertex_count: 1234 but the rig outputs 26719 vertices",
        "/rig/control_names/2: `notAControl`",
        "/expression_space/dim: 12 but the rig's gnm vector has",
        "/expression_space/segments/1: `b` overlaps segment 0 (`a`)",
        "/expression_space/arkit_map: 3 entries",
        "/branches/1/decoders/0: `glint` is not a decoder of this file",
        "/branches/2/mesh:",
        "/branches/0/lift/kind: `voxel` is not texel or surface",
        "/decoders/skin/file:",
        "does not fit the decoder contract",
        "no output `rgb`",
        "/decoders/eyes/features:",
    ] {
        assert!(e.contains(want), "missing {want:?} in:\n{e}");
    }
    // An fp16 sibling that is another network, and a `file` that is not a model beside a good
    // sibling: both named, whichever runs.
    let mut m3: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("head.character.json")).unwrap())
            .unwrap();
    m3["decoders"]["skin"]["fp16"] = "eyes.onnx".into();
    m3["decoders"]["eyes"]["fp16"] = "eyes.onnx".into();
    m3["decoders"]["eyes"]["file"] = "head.obj".into();
    std::fs::write(&bad, m3.to_string()).unwrap();
    let opts = mien_runtime::BundleOptions {
        prefer_fp16: Some(true),
        ..Default::default()
    };
    let e = CharacterDef::load_with(&bad, &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "/decoders/skin/fp16: `eyes.onnx` takes or gives other tensors than `skin.onnx`"
        ),
        "{e}"
    );
    assert!(
        e.contains("/decoders/eyes/file:") && e.contains("head.obj"),
        "{e}"
    );
    assert!(!e.contains("no branch runs it"), "{e}");
    // A flat colour a decoder would always overwrite.
    let mut m4: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("head.character.json")).unwrap())
            .unwrap();
    m4["branches"][0]["color"] = serde_json::json!([0.5, 0.5, 0.5]);
    std::fs::write(&bad, m4.to_string()).unwrap();
    let e = CharacterDef::load(&bad).unwrap_err().to_string();
    assert!(
        e.contains("/branches/0/color: given, but `skin` writes the branch's colour"),
        "{e}"
    );
    // The schema (docs/schemas/character.schema.json) takes the generated manifest and refuses
    // an unknown lift.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schemas/character.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("head.character.json")).unwrap())
            .unwrap();
    assert!(
        v.is_valid(&good),
        "{:?}",
        v.iter_errors(&good)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    assert!(!v.is_valid(&m));
    // A GNM bundle declaring arkit52 is refused: ARKit weights are not head_ext coefficients.
    let mut m2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("head.character.json")).unwrap())
            .unwrap();
    m2["expression_space"] = serde_json::json!({"kind": "arkit52", "dim": 52});
    std::fs::write(&bad, m2.to_string()).unwrap();
    let e = CharacterDef::load(&bad).unwrap_err().to_string();
    assert!(e.contains("arkit52 on a gnm rig"), "{e}");
}

/// The decoded records reach the GPU lift (a host → device copy of each decode): wgpu and Vulkan
/// write what the CPU writes.
#[test]
fn gpu_backends_write_the_decoded_appearance_the_cpu_writes() {
    let Some(f) = fixture() else { return };
    let required = std::env::var("MIEN_REQUIRE_GPU").as_deref() == Ok("1");
    let ch = CharacterDef::load(f.dir.join("head.character.json")).unwrap();
    let asset = Arc::new(ch.asset.clone());
    let opts = RuntimeOptions {
        instances: 2,
        lift: Some(ch.lift_options()),
    };
    let frames = |device: &Device| {
        let mut rt = Runtime::new(Arc::clone(&asset), device, &opts).unwrap();
        rt.set_camera(front_camera(0.0)).unwrap();
        rt.instance_mut(1)
            .unwrap()
            .play_livelink_csv(data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv"))
            .unwrap();
        let mut out = Vec::new();
        for (k, dz) in [0.0, 0.01, 0.01].iter().enumerate() {
            rt.set_camera(front_camera(*dz)).unwrap();
            rt.update(1.0 + k as f64 / 30.0).unwrap();
            out.push((rt.splats(0).unwrap(), rt.splats(1).unwrap()));
        }
        (out, rt.bundle_memory().unwrap())
    };
    let (cpu, _) = frames(&Device::Cpu);
    for b in [Backend::Wgpu, Backend::Vulkan] {
        let d = match Device::open_with(
            b,
            &DeviceOptions {
                allow_software: true,
                vulkan_validation: required,
            },
        ) {
            Ok((d, _)) => d,
            Err(e) if required => panic!("MIEN_REQUIRE_GPU=1 but {}: {}", b.name(), e.chain_text()),
            Err(e) => {
                eprintln!(
                    "notice: no {} device ({}); skipped",
                    b.name(),
                    e.chain_text()
                );
                continue;
            }
        };
        let (gpu, mem) = frames(&d);
        assert!(mem.on_gpu);
        for (k, ((c0, c1), (g0, g1))) in cpu.iter().zip(&gpu).enumerate() {
            for (c, g) in [(c0, g0), (c1, g1)] {
                let bad = c
                    .color
                    .iter()
                    .zip(&g.color)
                    .filter(|(a, b)| {
                        a.to_le_bytes()
                            .iter()
                            .zip(b.to_le_bytes())
                            .any(|(x, y)| x.abs_diff(y) > 1)
                    })
                    .count();
                assert_eq!(bad, 0, "{} frame {k}: colours differ", b.name());
                let worst = c
                    .center
                    .iter()
                    .zip(&g.center)
                    .map(|(a, b)| (0..3).map(|i| (a[i] - b[i]).abs()).fold(0f32, f32::max))
                    .fold(0f32, f32::max);
                assert!(
                    worst < 1e-4,
                    "{} frame {k}: centres differ by {worst} m",
                    b.name()
                );
            }
        }
    }
}

fn write_manifest(f: &Fixture, name: &str, m: &serde_json::Value) -> PathBuf {
    let p = f.dir.join(name);
    std::fs::write(&p, m.to_string()).unwrap();
    p
}

fn posed0(asset: &Arc<mien_runtime::Asset>, setup: impl Fn(&mut Runtime)) -> Vec<[f32; 3]> {
    let mut rt = Runtime::new(
        Arc::clone(asset),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    setup(&mut rt);
    rt.update(0.0).unwrap();
    rt.posed(0).unwrap().positions
}

#[test]
fn pose_anchors_are_off_by_default_and_move_the_whole_head_when_on() {
    let Some(f) = fixture() else { return };
    let c = f.names.len();
    let mut away = vec![0.0f32; c];
    away[0] = 1.0;
    let anchors = serde_json::json!({
        "format": "mien-pose-anchors",
        "poses": [vec![0.0f32; c], away],
        "anchors": [
            [1.0, 0.0, 0.0, 0.01, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
        ]
    });
    std::fs::write(f.dir.join("anchors.json"), anchors.to_string()).unwrap();
    let m = serde_json::json!({
        "format": "mien-character", "version": 1,
        "rig": {"backend": "gnm", "pack": "ict.aosrig"},
        "pose_anchors": {"file": "anchors.json"}
    });
    let p = write_manifest(f, "anchors.character.json", &m);
    let off = CharacterDef::load(&p).unwrap();
    assert!(off.asset.pose_anchors().is_none(), "off unless asked");
    let on = CharacterDef::load_with(
        &p,
        &mien_runtime::BundleOptions {
            pose_anchors: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(on.asset.pose_anchors().is_some());
    let (a_off, a_on) = (Arc::new(off.asset), Arc::new(on.asset));
    let rest_off = posed0(&a_off, |_| {});
    let rest_on = posed0(&a_on, |_| {});
    // At the rest pose the rest anchor dominates (weights 10⁶ : 1): the head moves 1 cm along x.
    for (a, b) in rest_off.iter().zip(&rest_on) {
        assert!(
            (b[0] - a[0] - 0.01).abs() < 1e-5
                && (b[1] - a[1]).abs() < 1e-5
                && (b[2] - a[2]).abs() < 1e-5
        );
    }
    // At the other trained pose, its identity anchor.
    let set = |rt: &mut Runtime| {
        rt.instance_mut(0)
            .unwrap()
            .set_controls(ExpressionSpace::Gnm, &away)
            .unwrap();
    };
    let (p_off, p_on) = (posed0(&a_off, set), posed0(&a_on, set));
    let worst = p_off
        .iter()
        .zip(&p_on)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0f32, f32::max))
        .fold(0f32, f32::max);
    assert!(worst < 1e-5, "{worst}");
    // A bad anchor file is named.
    let bad = serde_json::json!({"format": "mien-pose-anchors", "poses": [vec![0.0f32; c]],
        "anchors": [[2.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]]});
    std::fs::write(f.dir.join("anchors_bad.json"), bad.to_string()).unwrap();
    let mut m2 = m.clone();
    m2["pose_anchors"]["file"] = "anchors_bad.json".into();
    let e = CharacterDef::load(write_manifest(f, "anchors_bad.character.json", &m2))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/pose_anchors/file:") && e.contains("anchors/0 is not a rigid transform"),
        "{e}"
    );
    let far = serde_json::json!({"format": "mien-pose-anchors", "poses": [vec![0.0f32; c]],
        "anchors": [[1.0, 0.0, 0.0, 1e9, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]]});
    std::fs::write(f.dir.join("anchors_bad.json"), far.to_string()).unwrap();
    let e = CharacterDef::load(write_manifest(f, "anchors_bad.character.json", &m2))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("anchors/0 moves the head") && e.contains("±10 m"),
        "{e}"
    );
}

#[test]
fn an_arkit_map_drives_the_gnm_head_slot_it_names() {
    let Some(f) = fixture() else { return };
    let slot = f
        .names
        .iter()
        .position(|n| n == "jawOpen")
        .expect("ICT has jawOpen");
    let jaw = mien_core::anim::arkit::ARKIT_52
        .iter()
        .position(|n| *n == "jawOpen")
        .unwrap();
    let mut map = vec![-1i64; 52];
    map[jaw] = slot as i64;
    let m = serde_json::json!({
        "format": "mien-character", "version": 1,
        "rig": {"backend": "gnm", "pack": "ict.aosrig"},
        "expression_space": {"kind": "gnm", "dim": f.names.len(), "arkit_map": map}
    });
    let ch = CharacterDef::load(write_manifest(f, "map.character.json", &m)).unwrap();
    let a = Arc::new(ch.asset);
    let by_map = posed0(&a, |rt| {
        let mut w = [0.0f32; 52];
        w[jaw] = 0.7;
        rt.instance_mut(0)
            .unwrap()
            .set_controls(ExpressionSpace::Arkit52, &w)
            .unwrap();
    });
    let direct = posed0(&a, |rt| {
        let mut v = vec![0.0f32; f.names.len()];
        v[slot] = 0.7;
        rt.instance_mut(0)
            .unwrap()
            .set_controls(ExpressionSpace::Gnm, &v)
            .unwrap();
    });
    let rest = posed0(&a, |_| {});
    let worst = by_map
        .iter()
        .zip(&direct)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0f32, f32::max))
        .fold(0f32, f32::max);
    assert!(worst < 1e-6, "{worst}");
    let moved = by_map
        .iter()
        .zip(&rest)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0f32, f32::max))
        .fold(0f32, f32::max);
    assert!(moved > 1e-3, "the jaw opens ({moved} m)");
}

#[test]
fn arkit_to_rig_sets_an_orl_rigs_rest_and_ranges() {
    let dna = data("metahuman_dna/mien_ict_rig.dna");
    let dir = std::env::temp_dir().join(format!("mien-bundle-orl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let raw = mien_runtime::Asset::load(&dna)
        .unwrap()
        .character()
        .rig_logic
        .as_ref()
        .unwrap()
        .raw_names
        .len();
    let mut rest = vec![0.0f32; raw];
    rest[3] = 0.25;
    let m = serde_json::json!({
        "format": "mien-character", "version": 1,
        "rig": {"backend": "orl", "dna": dna.display().to_string()},
        "arkit_to_rig": {"rest": rest, "range": vec![[0.0f32, 0.8]; raw]}
    });
    let p = dir.join("orl.character.json");
    std::fs::write(&p, m.to_string()).unwrap();
    let ch = CharacterDef::load(&p).unwrap();
    let rl = ch.asset.character().rig_logic.as_ref().unwrap();
    assert_eq!(rl.arkit.rest, rest);
    assert!(rl.arkit.range.iter().all(|r| *r == [0.0, 0.8]));
    assert_eq!(ch.bundle.as_ref().unwrap().backend, "orl");
    let mut bad = m.clone();
    bad["arkit_to_rig"]["rest"] = serde_json::json!([0.1, 0.2]);
    bad["rig"]["dna"] = "missing.dna".into();
    std::fs::write(&p, bad.to_string()).unwrap();
    let e = CharacterDef::load(&p).unwrap_err().to_string();
    assert!(e.contains("/rig:") && e.contains("missing.dna"), "{e}");
    let mut bad = m.clone();
    bad["arkit_to_rig"]["rest"] = serde_json::json!([0.1, 0.2]);
    std::fs::write(&p, bad.to_string()).unwrap();
    let e = CharacterDef::load(&p).unwrap_err().to_string();
    assert!(e.contains("/arkit_to_rig:") && e.contains("rest"), "{e}");
}

#[test]
fn a_decoder_that_throws_gaussians_off_the_surface_is_refused_naming_the_frame() {
    let Some(f) = fixture() else { return };
    // The eye decoder's contract, with every offset 1000 triangle sizes along the normal.
    let code = r#"
import sys, numpy as np, onnx
from onnx import helper, TensorProto as T, numpy_helper as nh
f32 = T.FLOAT
i = [nh.from_array(np.array([0], np.int64), 's0'), nh.from_array(np.array([3], np.int64), 's3'),
     nh.from_array(np.array([4], np.int64), 's4'), nh.from_array(np.array([1], np.int64), 'ax'),
     nh.from_array(np.array([0.0], np.float32), 'z'), nh.from_array(np.array([[0.0, 0.0, 1000.0]], np.float32), 'far')]
n = [helper.make_node('Slice', ['features', 's0', 's3', 'ax'], ['rgb']),
     helper.make_node('Slice', ['features', 's3', 's4', 'ax'], ['opacity']),
     helper.make_node('Mul', ['opacity', 'z'], ['z1']), helper.make_node('Add', ['z1', 'far'], ['offset'])]
t = lambda name, w: helper.make_tensor_value_info(name, f32, ['N', w])
g = helper.make_graph(n, 'far', [t('features', 4), t('view_dir', 3)], [t('rgb', 3), t('opacity', 1), t('offset', 3)], i)
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); m.ir_version = 8
onnx.save(m, sys.argv[1])
"#;
    let st = std::process::Command::new("python3")
        .args(["-c", code])
        .arg(f.dir.join("far.onnx"))
        .status()
        .unwrap();
    assert!(st.success());
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.dir.join("head.character.json")).unwrap())
            .unwrap();
    m["decoders"]["eyes"]["file"] = "far.onnx".into();
    let p = write_manifest(f, "far.character.json", &m);
    let ch = CharacterDef::load(&p).unwrap();
    let opts = RuntimeOptions {
        instances: 1,
        lift: Some(ch.lift_options()),
    };
    let mut rt = Runtime::new(Arc::new(ch.asset.clone()), &Device::Cpu, &opts).unwrap();
    rt.set_camera(front_camera(0.0)).unwrap();
    let e = rt.update(0.25).unwrap_err().to_string();
    assert!(
        e.contains("branch `eyes` output `offset` row 0")
            && e.contains("beyond ±100")
            && e.contains("frame 0, media time 0.25"),
        "{e}"
    );
}
