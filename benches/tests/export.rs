//! The NPY writer round-trips, and the exported arrays are what the peers need: `expected` equals
//! the CPU backend's output, and an independent f64 recomputation from the exported inputs agrees
//! within `tolerance_m`.

use std::path::Path;

use glam::Mat4;
use mien_benches::export::{EXPORT_BATCH, LIFT_EXPORT_BATCH, export, export_lift};
use mien_benches::npy::{self, Dtype};
use mien_benches::workloads::{self, Frames, GnmInput, Kind, Model, MorphShape, RING, Workload};
use mien_core::gnm::{GnmBackend, GnmPack};
use mien_core::lift::Lift;
use mien_core::rig::RigBackend;
use mien_core::sink::SplatSink;
use mien_cpu::{CpuBoundLift, CpuEncoder, CpuGnmBackend, CpuRigBackend, CpuSplatSink};
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

/// W1's surface lift: the manifest and shapes the peers read; `expected_centers`/`expected_cov`
/// equal the CPU backend's bound lift on the same posed vertices bit for bit; a float64 pose from
/// the exported arrays alone lies within each gaussian's exported bound, and those bounds are
/// small next to what they bound.
#[test]
fn lift_export_equals_the_cpu_backend() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    let mut w = workloads::load_w1(&data).unwrap();
    // Identity palette: the CPU backend's posed vertices are then the morph stage, which the
    // export poses (the surface lift is built on it too).
    let Frames::Rig(f) = &mut w.frames else {
        panic!()
    };
    f.iter_mut()
        .for_each(|c| c.palette.iter_mut().for_each(|m| *m = Mat4::IDENTITY));
    let dir = tempfile::tempdir().unwrap();
    let m = export_lift(&w, dir.path()).unwrap();
    let d = dir.path().join("W1-surface");
    let parsed: Value =
        serde_json::from_slice(&std::fs::read(d.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(parsed, m);
    let setup = w.surface().unwrap();
    let Model::Rig(rig) = &w.model else { panic!() };
    let (b, v, t) = (
        LIFT_EXPORT_BATCH,
        rig.vertex_count(),
        rig.weight_count as usize,
    );
    let (g, nt) = (setup.gaussians.len(), setup.triangles.len());
    assert_eq!(
        (
            m["workload"].as_str(),
            m["kind"].as_str(),
            m["vertices"].as_u64(),
            m["targets"].as_u64(),
            m["gaussians"].as_u64(),
            m["triangles"].as_u64(),
            m["batch"].as_u64()
        ),
        (
            Some("W1-surface"),
            Some("lift"),
            Some(v as u64),
            Some(52),
            Some(g as u64),
            Some(nt as u64),
            Some(b as u64)
        )
    );
    assert!((95_000..=105_000).contains(&g), "{g} gaussians");
    let arrays = [
        ("base", vec![v, 3]),
        ("deltas", vec![t, v, 3]),
        ("weights", vec![b, t]),
        ("triangles", vec![nt, 3]),
        ("triangle", vec![g]),
        ("bary", vec![g, 2]),
        ("offset", vec![g]),
        ("local_cov", vec![g, 6]),
        ("expected_centers", vec![b, g, 3]),
        ("expected_cov", vec![b, g, 6]),
        ("bound_centers", vec![b, g]),
        ("bound_cov", vec![b, g]),
    ];
    assert_eq!(m["arrays"].as_object().unwrap().len(), arrays.len());
    let mut a = std::collections::HashMap::new();
    for (name, shape) in arrays {
        let (got, vals) = read(&d, &m, name);
        assert_eq!(got, shape, "{name}");
        a.insert(name, vals);
    }
    // The CPU backend's bound lift on the same controls.
    let Frames::Rig(f) = &w.frames else { panic!() };
    let mut cpu = CpuRigBackend::new();
    let hs = cpu.upload_batch(rig, b as u32).unwrap();
    for (c, h) in hs.iter().enumerate() {
        cpu.set_controls(*h, &f[w.ring_index(c as u32, 0)]).unwrap();
    }
    let mut enc = CpuEncoder::default();
    cpu.encode(&mut enc).unwrap();
    let mut sink = CpuSplatSink::new((b * g) as u32);
    let mut ranges = Vec::new();
    for h in &hs {
        let r = sink.allocate(g as u32).unwrap();
        let mut lift = CpuBoundLift::new(Some(*h), v as u32, setup.clone(), &sink, r).unwrap();
        lift.encode(&mut enc, &cpu, &mut sink).unwrap();
        ranges.push(r);
    }
    let buf = sink.buffers();
    for (c, r) in ranges.iter().enumerate() {
        for gi in 0..g {
            let s = r.offset as usize + gi;
            let cov = [
                buf.cov_a[s][0],
                buf.cov_a[s][1],
                buf.cov_a[s][2],
                buf.cov_a[s][3],
                buf.cov_b[s][0],
                buf.cov_b[s][1],
            ];
            assert_eq!(
                buf.center[s][..3],
                a["expected_centers"][(c * g + gi) * 3..][..3]
            );
            assert_eq!(cov[..], a["expected_cov"][(c * g + gi) * 6..][..6]);
        }
    }
    // Float64 from the exported arrays alone.
    let tol = (
        m["tolerance_m"].as_f64().unwrap(),
        m["tolerance_cov"].as_f64().unwrap(),
    );
    let (mut worst, mut rel) = ((0.0f64, 0.0f64), Vec::with_capacity(b * g));
    for c in 0..b {
        let pos: Vec<[f64; 3]> = (0..v)
            .map(|vi| {
                [0, 1, 2].map(|k| {
                    let mut p = f64::from(a["base"][vi * 3 + k]);
                    for ti in 0..t {
                        p += f64::from(a["weights"][c * t + ti])
                            * f64::from(a["deltas"][(ti * v + vi) * 3 + k]);
                    }
                    p
                })
            })
            .collect();
        for gi in 0..g {
            let tri = a["triangle"][gi] as usize;
            let p = [0, 1, 2].map(|j| pos[a["triangles"][tri * 3 + j] as usize]);
            let (mu, cov) = pose64(
                p,
                [a["bary"][gi * 2], a["bary"][gi * 2 + 1], a["offset"][gi]],
                &a["local_cov"][gi * 6..][..6],
            );
            let (bc, bs) = (
                f64::from(a["bound_centers"][c * g + gi]),
                f64::from(a["bound_cov"][c * g + gi]),
            );
            assert!(bc <= tol.0 && bs <= tol.1);
            for k in 0..3 {
                let e = f64::from(a["expected_centers"][(c * g + gi) * 3 + k]);
                assert!(
                    (mu[k] - e).abs() <= bc,
                    "c {c} g {gi}: μ{k} {} vs {e} (bound {bc})",
                    mu[k]
                );
                worst.0 = worst.0.max((mu[k] - e).abs() / bc);
            }
            let mut big = 0.0f64;
            for k in 0..6 {
                let e = f64::from(a["expected_cov"][(c * g + gi) * 6 + k]);
                assert!(
                    (cov[k] - e).abs() <= bs,
                    "c {c} g {gi}: Σ{k} {} vs {e} (bound {bs})",
                    cov[k]
                );
                worst.1 = worst.1.max((cov[k] - e).abs() / bs);
                big = big.max(e.abs());
            }
            rel.push(bs / big);
        }
    }
    // The bounds are not vacuous: the recomputation uses a real part of them, and the typical
    // gaussian's covariance bound is a small fraction of its covariance.
    rel.sort_by(f64::total_cmp);
    let median = rel[rel.len() / 2];
    eprintln!("worst |Δ|/bound (centres, covariances) {worst:?}; median bound_cov/|Σ| {median:e}");
    assert!(worst.0 > 0.01 && worst.1 > 1e-4, "{worst:?}");
    assert!(median < 5e-3, "median bound_cov / |Σ| = {median}");
}

/// One bound gaussian posed in float64 on triangle `p`: `ext` = (β1, β2, d), `s` the packed local
/// covariance; returns the centre and the packed covariance (`mien_core::lift::bound`'s formulas).
fn pose64(p: [[f64; 3]; 3], ext: [f32; 3], s: &[f32]) -> ([f64; 3], [f64; 6]) {
    let sub = |a: [f64; 3], b: [f64; 3]| [0, 1, 2].map(|i| a[i] - b[i]);
    let len = |a: [f64; 3]| (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let (e1, e2) = (sub(p[1], p[0]), sub(p[2], p[0]));
    let k = ((len(e1) + len(sub(p[2], p[1])) + len(e2)) / 3.0).max(1e-6);
    let c = cross(e1, e2);
    let n = c.map(|x| x / len(c));
    let dot = e1[0] * n[0] + e1[1] * n[1] + e1[2] * n[2];
    let t = [0, 1, 2].map(|i| e1[i] - dot * n[i]);
    let t = t.map(|x| x / len(t));
    let b = cross(n, t);
    let [b1, b2, d] = ext.map(f64::from);
    let mu =
        [0, 1, 2].map(|i| (1.0 - b1 - b2) * p[0][i] + b1 * p[1][i] + b2 * p[2][i] + d * k * n[i]);
    let s = s.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
    let sm = [[s[0], s[1], s[2]], [s[1], s[3], s[4]], [s[2], s[4], s[5]]];
    let r = |i: usize| [t[i], b[i], n[i]];
    let cov = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)].map(|(i, j)| {
        let (ri, rj) = (r(i), r(j));
        let mut acc = 0.0;
        for x in 0..3 {
            for y in 0..3 {
                acc += ri[x] * sm[x][y] * rj[y];
            }
        }
        k * k * acc
    });
    (mu, cov)
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
