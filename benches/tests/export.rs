//! The NPY writer round-trips, and the exported arrays are what the peers need: `expected` equals
//! the CPU backend's output, and an independent f64 recomputation from the exported inputs agrees
//! within `tolerance_m`.

use std::path::Path;

use glam::Mat4;
use mien_benches::export::{EXPORT_BATCH, export};
use mien_benches::npy::{self, Dtype};
use mien_benches::workloads::{self, Frames, GnmInput, Kind, Model, MorphShape, RING, Workload};
use mien_core::gnm::{GnmBackend, GnmPack};
use mien_core::rig::RigBackend;
use mien_cpu::{CpuEncoder, CpuGnmBackend, CpuRigBackend};
use serde_json::Value;

fn read(dir: &Path, m: &Value, name: &str) -> (Vec<usize>, Vec<f32>) {
    let a = &m["arrays"][name];
    let p = npy::parse(&std::fs::read(dir.join(a["file"].as_str().unwrap())).unwrap()).unwrap();
    let shape: Vec<usize> = a["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(p.shape, shape, "{name}");
    let vals = match p.descr.as_str() {
        "<f4" => p
            .data
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "<f2" => p
            .data
            .chunks(2)
            .map(|c| half::f16::from_le_bytes(c.try_into().unwrap()).to_f32())
            .collect(),
        "<i4" => p
            .data
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f32)
            .collect(),
        d => panic!("{d}"),
    };
    (shape, vals)
}

#[test]
fn npy_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    for (dtype, shape, data) in [
        (
            Dtype::F32,
            vec![2, 3],
            npy::f32_bytes(&[1.0, -2.5, 3.0, 0.0, f32::MIN_POSITIVE, 7.0]),
        ),
        (Dtype::I32, vec![4], npy::i32_bytes(&[1, -1, i32::MAX, 0])),
        (Dtype::F16, vec![1, 1, 2], vec![0x00, 0x3c, 0x00, 0xc0]),
    ] {
        let path = dir.path().join("a.npy");
        npy::write(&path, dtype, &shape, &data).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes[10 + header_len - 1], b'\n');
        let p = npy::parse(&bytes).unwrap();
        assert_eq!(
            (p.descr.as_str(), p.shape, p.data),
            (dtype.descr(), shape, data)
        );
    }
    // A 1-D shape is written `(n,)`, as Python's repr of a 1-tuple.
    assert!(String::from_utf8_lossy(&npy::header(Dtype::F32, &[5])).contains("'shape': (5,)"));
    assert!(npy::write(&dir.path().join("b.npy"), Dtype::F32, &[3], &[0; 8]).is_err());
}

#[test]
fn morph_export_equals_the_cpu_backend() {
    let shape = MorphShape {
        vertices: 500,
        targets: 40,
        coverage: (0.02, 0.06),
        active: (16, 32),
    };
    let mut w = workloads::synthetic_morph(3, shape, "S");
    // Identity palette: the CPU backend's output is then the morph stage bit for bit.
    let Frames::Rig(f) = &mut w.frames else {
        panic!()
    };
    f.iter_mut().for_each(|c| c.palette = vec![Mat4::IDENTITY]);
    // One weight over the clamp: exported weights are after the rules.
    f[0].weights[0] = 3.0;
    let dir = tempfile::tempdir().unwrap();
    let m = export(&w, dir.path()).unwrap();
    let d = dir.path().join("S");
    assert_eq!(
        (
            m["kind"].as_str(),
            m["targets"].as_u64(),
            m["batch"].as_u64()
        ),
        (Some("morph"), Some(40), Some(16))
    );
    let (_, base) = read(&d, &m, "base");
    let (_, deltas) = read(&d, &m, "deltas");
    let (_, weights) = read(&d, &m, "weights");
    let (_, expected) = read(&d, &m, "expected");
    assert_eq!(weights[0], 2.0);
    let Model::Rig(rig) = &w.model else { panic!() };
    let Frames::Rig(f) = &w.frames else { panic!() };
    let mut cpu = CpuRigBackend::new();
    let hs = cpu.upload_batch(rig, EXPORT_BATCH as u32).unwrap();
    for (c, h) in hs.iter().enumerate() {
        cpu.set_controls(*h, &f[w.ring_index(c as u32, 0)]).unwrap();
    }
    cpu.encode(&mut CpuEncoder::default()).unwrap();
    let tol = m["tolerance_m"].as_f64().unwrap();
    assert!(tol > 0.0 && tol < 1e-6, "{tol}");
    let (v, t) = (500, 40);
    for (c, h) in hs.iter().enumerate() {
        let got = cpu.read_vertices(*h).unwrap().positions;
        for vi in 0..v {
            assert_eq!(got[vi], expected[(c * v + vi) * 3..][..3], "c {c} v {vi}");
            for k in 0..3 {
                let mut p = f64::from(base[vi * 3 + k]);
                for ti in 0..t {
                    p += f64::from(weights[c * t + ti]) * f64::from(deltas[(ti * v + vi) * 3 + k]);
                }
                let e = f64::from(expected[(c * v + vi) * 3 + k]);
                assert!((p - e).abs() <= tol, "c {c} v {vi}: {p} vs {e}");
            }
        }
    }
}

#[test]
fn gnm_export_equals_the_cpu_backend() {
    let mut pack = mien_core::testing::gnm::random_gnm_pack(
        11,
        mien_core::testing::gnm::GnmShape {
            vertices: 300,
            coeffs: 21,
            regions: 3,
            joints: 2,
            seam: true,
        },
    );
    pack.header.bind_transform = Mat4::IDENTITY.to_cols_array();
    let pack = GnmPack::parse(&pack.to_bytes().unwrap(), "t").unwrap();
    let rest: Vec<Mat4> = pack
        .rest_world
        .iter()
        .map(mien_core::gnm::forward::from_row_major)
        .collect();
    let frames = (0..RING as u64)
        .map(|i| GnmInput {
            head_ext: mien_core::testing::gnm::random_head_ext(i, &pack),
            joint_world: rest.clone(),
        })
        .collect();
    let w = Workload {
        id: "G".into(),
        kind: Kind::Gnm,
        description: String::new(),
        model: Model::Gnm(pack.clone()),
        frames: Frames::Gnm(frames),
        surface: Default::default(),
    };
    let dir = tempfile::tempdir().unwrap();
    let m = export(&w, dir.path()).unwrap();
    let d = dir.path().join("G");
    assert!(m["arrays"].get("bind").is_none());
    let (_, neutral) = read(&d, &m, "neutral");
    let (bshape, basis) = read(&d, &m, "basis");
    assert_eq!(bshape, vec![900, 21]);
    let (_, scale) = read(&d, &m, "scale");
    let (_, coeffs) = read(&d, &m, "coeffs");
    let (_, expected) = read(&d, &m, "expected");
    let tol = m["tolerance_m"].as_f64().unwrap();
    let mut cpu = CpuGnmBackend::new();
    let hs = cpu.upload_gnm_batch(&pack, 16).unwrap();
    let Frames::Gnm(f) = &w.frames else { panic!() };
    for (c, h) in hs.iter().enumerate() {
        let mut he = f[w.ring_index(c as u32, 0)].head_ext.clone();
        he[21..].iter_mut().for_each(|g| *g = 0.0);
        cpu.set_head_ext(*h, &he, &rest).unwrap();
    }
    cpu.encode(&mut CpuEncoder::default()).unwrap();
    for (c, h) in hs.iter().enumerate() {
        let got = cpu.posed(*h).unwrap();
        for vi in 0..300 {
            assert_eq!(got[vi], expected[(c * 300 + vi) * 3..][..3]);
            for k in 0..3 {
                let mut p = f64::from(neutral[vi * 3 + k]);
                for e in 0..21 {
                    p += f64::from(coeffs[c * 21 + e])
                        * f64::from(scale[e])
                        * f64::from(basis[(vi * 3 + k) * 21 + e]);
                }
                let e = f64::from(expected[(c * 300 + vi) * 3 + k]);
                // Skin at rest with an identity bind is exact up to the f16 weight renormalisation.
                assert!(
                    (p - e).abs() <= tol + 4.0 * f64::from(f32::EPSILON) * p.abs(),
                    "c {c} v {vi}: {p} vs {e}"
                );
            }
        }
    }
}

#[test]
fn skin_export_equals_the_cpu_backend() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let w = workloads::load_w6(&data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = export(&w, dir.path()).unwrap();
    let d = dir.path().join("W6");
    assert_eq!(
        (m["kind"].as_str(), m["joints"].as_u64()),
        (Some("skin"), Some(19))
    );
    let (_, rest) = read(&d, &m, "rest");
    let (_, joints) = read(&d, &m, "joints");
    let (_, sw) = read(&d, &m, "weights");
    let (_, mats) = read(&d, &m, "matrices");
    let (_, expected) = read(&d, &m, "expected");
    let tol = m["tolerance_m"].as_f64().unwrap();
    let Model::Rig(rig) = &w.model else { panic!() };
    let Frames::Rig(f) = &w.frames else { panic!() };
    let mut cpu = CpuRigBackend::new();
    let hs = cpu.upload_batch(rig, 16).unwrap();
    for (c, h) in hs.iter().enumerate() {
        cpu.set_controls(*h, &f[w.ring_index(c as u32, 0)]).unwrap();
    }
    cpu.encode(&mut CpuEncoder::default()).unwrap();
    let v = 3273;
    for (c, h) in hs.iter().enumerate() {
        let got = cpu.read_vertices(*h).unwrap().positions;
        for vi in 0..v {
            assert_eq!(got[vi], expected[(c * v + vi) * 3..][..3]);
            for i in 0..3 {
                let mut p = 0.0f64;
                for k in 0..4 {
                    let j = joints[vi * 4 + k] as usize;
                    let m = &mats[(c * 19 + j) * 16..][..16];
                    let row: f64 = (0..3)
                        .map(|a| f64::from(m[i * 4 + a]) * f64::from(rest[vi * 3 + a]))
                        .sum::<f64>()
                        + f64::from(m[i * 4 + 3]);
                    p += f64::from(sw[vi * 4 + k]) * row;
                }
                let e = f64::from(expected[(c * v + vi) * 3 + i]);
                assert!((p - e).abs() <= tol, "c {c} v {vi}: {p} vs {e} (tol {tol})");
            }
        }
    }
}

#[test]
fn charts_are_drawn_as_png() {
    use mien_benches::plot::{Chart, Series, draw};
    let chart = Chart {
        name: "t".into(),
        title: "test".into(),
        x_label: "vertices".into(),
        series: vec![
            Series {
                backend: "cpu".into(),
                points: vec![(1000.0, 10.0), (4000.0, 40.0)],
            },
            Series {
                backend: "wgpu".into(),
                points: vec![(1000.0, 5.0), (4000.0, 6.0)],
            },
        ],
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.png");
    draw(&chart, &path).unwrap();
    let img = image::open(&path).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (900, 600));
    // Something other than the white background was drawn.
    assert!(img.pixels().any(|p| p.0 != [255, 255, 255]));
}
