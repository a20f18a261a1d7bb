//! The 3DGS PLY writer and reader: literal INRIA header, a hand-worked splat, random round trips.

mod support;

use mien_core::io::ply::{
    PlyOptions, ShBands, TransparentSlots, read_splat_ply, write_splat_ply, write_splat_ply_with,
};
use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};
use proptest::prelude::*;

const C0: f64 = 0.28209479177387814;

/// The INRIA header for `n` vertices, typed out (f_rest lines generated: 45 of them).
fn inria_header(n: usize, f_rest: bool) -> String {
    let mut h = format!("ply\nformat binary_little_endian 1.0\nelement vertex {n}\n");
    h += "property float x\nproperty float y\nproperty float z\n";
    h += "property float nx\nproperty float ny\nproperty float nz\n";
    h += "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\n";
    if f_rest {
        for k in 0..45 {
            h += &format!("property float f_rest_{k}\n");
        }
    }
    h += "property float opacity\n";
    h += "property float scale_0\nproperty float scale_1\nproperty float scale_2\n";
    h += "property float rot_0\nproperty float rot_1\nproperty float rot_2\nproperty float rot_3\n";
    h += "end_header\n";
    h
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The hand-worked splat: centre (0.1, 1.6, 0.05), covariance diag(4e-6, 1e-6, 9e-6), colour
/// (1, 0.5, 0, 0.8).
fn hand_splat() -> SplatBuffers {
    let mut b = SplatBuffers::new(2);
    b.center[1] = [0.1, 1.6, 0.05, 0.0];
    b.color[1] = pack4x8unorm([1.0, 0.5, 0.0, 0.8]);
    b.cov_a[1] = [4e-6, 0.0, 0.0, 1e-6];
    b.cov_b[1] = [0.0, 9e-6, 0.0, 0.0];
    b
}

#[test]
fn hand_worked_splat_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.ply");
    // Slot 0 is a cleared slot (opacity 0): skipped by default.
    let stats = write_splat_ply(
        &path,
        &hand_splat(),
        &[SlotRange {
            offset: 0,
            count: 2,
        }],
    )
    .unwrap();
    assert_eq!(
        (
            stats.written,
            stats.skipped_transparent,
            stats.opacity_clamped,
            stats.scale_clamped
        ),
        (1, 1, 0, 0)
    );

    let bytes = std::fs::read(&path).unwrap();
    let header = inria_header(1, true);
    assert_eq!(std::str::from_utf8(&bytes[..header.len()]).unwrap(), header);
    assert_eq!(bytes.len(), header.len() + 62 * 4);
    let v = floats(&bytes[header.len()..]);

    // Expected values worked by hand:
    //   colour bytes (255, 128, 0, 204): f_dc = (c − ½)/C0 → √π, (½/255)/C0 = √π/255, −√π;
    //   opacity 204/255 = 0.8 → logit = ln(0.8/0.2) = ln 4;
    //   eigenvalues sorted 9e-6, 4e-6, 1e-6 → scale = ln 3e-3, ln 2e-3, ln 1e-3;
    //   R = [e_z e_x e_y] → q = (½, −½, −½, −½).
    let sqrt_pi = std::f64::consts::PI.sqrt();
    let mut want: Vec<f64> = vec![0.1f32 as f64, 1.6f32 as f64, 0.05f32 as f64, 0.0, 0.0, 0.0];
    want.extend([sqrt_pi, sqrt_pi / 255.0, -sqrt_pi]);
    want.extend([0.0; 45]);
    want.push(4f64.ln());
    want.extend([3e-3f64.ln(), 2e-3f64.ln(), 1e-3f64.ln()]);
    want.extend([0.5, -0.5, -0.5, -0.5]);
    assert_eq!(v.len(), want.len());
    for (k, (&got, &w)) in v.iter().zip(&want).enumerate() {
        // 1e-6 relative covers the f32 rounding of the input covariance (4e-6 is not exact in f32).
        assert!(
            (f64::from(got) - w).abs() <= 1e-6 * w.abs().max(1.0),
            "field {k}: {got} vs {w}"
        );
    }
    // The centre is copied bit for bit.
    assert_eq!(v[..3], [0.1f32, 1.6, 0.05]);
    // C0 as used: 0.5 + C0·f_dc_0 = 1.
    assert!((0.5 + C0 * f64::from(v[6]) - 1.0).abs() < 1e-6);
}

#[test]
fn dc_only_layout_and_keep_transparent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dc.ply");
    let opts = PlyOptions {
        sh: ShBands::Dc,
        transparent: TransparentSlots::Keep,
    };
    let stats = write_splat_ply_with(
        &path,
        &hand_splat(),
        &[SlotRange {
            offset: 0,
            count: 2,
        }],
        &opts,
    )
    .unwrap();
    // The kept cleared slot: opacity 0 clamped to 1e-6, zero covariance floored on 3 axes.
    assert_eq!(
        (
            stats.written,
            stats.skipped_transparent,
            stats.opacity_clamped,
            stats.scale_clamped
        ),
        (2, 0, 1, 3)
    );
    let bytes = std::fs::read(&path).unwrap();
    let header = inria_header(2, false);
    assert_eq!(std::str::from_utf8(&bytes[..header.len()]).unwrap(), header);
    assert_eq!(bytes.len(), header.len() + 2 * 17 * 4);
    let v = floats(&bytes[header.len()..]);
    assert!(
        (f64::from(v[9]) - (1e-6f64 / (1.0 - 1e-6)).ln()).abs() < 1e-5,
        "logit of the floor: {}",
        v[9]
    );
    assert!(
        (f64::from(v[10]) - 1e-7f64.ln()).abs() < 1e-5,
        "ln of the σ floor: {}",
        v[10]
    );

    let cloud = read_splat_ply(&path).unwrap();
    assert_eq!(cloud.len(), 2);
    assert_eq!(cloud.sh_rest, 0);
    assert!(cloud.rgba[0][3] < 2e-6);
}

#[test]
fn empty_selection_writes_a_valid_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.ply");
    let stats = write_splat_ply(
        &path,
        &SplatBuffers::new(4),
        &[SlotRange {
            offset: 0,
            count: 4,
        }],
    )
    .unwrap();
    assert_eq!((stats.written, stats.skipped_transparent), (0, 4));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        inria_header(0, true).into_bytes()
    );
    assert!(read_splat_ply(&path).unwrap().is_empty());
}

#[test]
fn bad_buffers_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ply");
    let mut b = hand_splat();
    let err = write_splat_ply(
        &path,
        &b,
        &[SlotRange {
            offset: 1,
            count: 2,
        }],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            mien_core::Error::Slots {
                offset: 1,
                count: 2,
                capacity: 2,
                ..
            }
        ),
        "{err}"
    );
    b.center[1][2] = f32::NAN;
    let err = write_splat_ply(
        &path,
        &b,
        &[SlotRange {
            offset: 0,
            count: 2,
        }],
    )
    .unwrap_err();
    assert!(
        matches!(&err, mien_core::Error::Format { field, index: Some(1), .. } if field == "center"),
        "{err}"
    );
    b.center[1][2] = 0.0;
    b.cov_b[1][1] = f32::INFINITY;
    let err = write_splat_ply(
        &path,
        &b,
        &[SlotRange {
            offset: 0,
            count: 2,
        }],
    )
    .unwrap_err();
    assert!(
        matches!(&err, mien_core::Error::Format { field, index: Some(1), .. } if field == "covariance"),
        "{err}"
    );
    b.color.pop();
    assert!(matches!(
        write_splat_ply(&path, &b, &[]),
        Err(mien_core::Error::Mismatch { .. })
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Random splats: centre, colour bytes, unit quaternion, log σ in [ln 0.1 mm, ln 5 cm].
/// Centre, colour bytes, unit quaternion, log σ.
type RandomSplat = ([f32; 3], [u8; 4], [f64; 4], [f64; 3]);

fn splats() -> impl Strategy<Value = Vec<RandomSplat>> {
    let quat = prop::array::uniform4(-1.0f64..1.0)
        .prop_filter("non-degenerate", |q| {
            q.iter().map(|v| v * v).sum::<f64>() > 1e-3
        })
        .prop_map(|q| {
            let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            q.map(|v| v / n)
        });
    let one = (
        prop::array::uniform3(-2.0f32..2.0),
        prop::array::uniform4(0u8..=255),
        quat,
        prop::array::uniform3(-9.2f64..-3.0),
    );
    prop::collection::vec(one, 1..40)
}

fn quat_to_matrix([w, x, y, z]: [f64; 4]) -> [[f64; 3]; 3] {
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

proptest! {
    #![proptest_config(support::proptest_config(64))]

    /// Write random splats (two ranges, opacity-0 ones skipped), read back: centres bit-exact,
    /// colour bytes equal, opacity = byte/255 through the logit, covariances within 1e-5 relative.
    #[test]
    fn round_trip(s in splats(), degree3 in any::<bool>()) {
        let n = s.len();
        let mut b = SplatBuffers::new(n as u32 + 3);
        let mut cov64 = Vec::new();
        for (i, (c, rgba, q, ls)) in s.iter().enumerate() {
            let slot = i + 3;
            let r = quat_to_matrix(*q);
            let d = ls.map(|l| (2.0 * l).exp());
            let m: [[f64; 3]; 3] = std::array::from_fn(|a| std::array::from_fn(|bb| (0..3).map(|k| r[a][k] * d[k] * r[bb][k]).sum()));
            b.center[slot] = [c[0], c[1], c[2], 0.0];
            b.color[slot] = u32::from_le_bytes(*rgba);
            b.cov_a[slot] = [m[0][0] as f32, m[0][1] as f32, m[0][2] as f32, m[1][1] as f32];
            b.cov_b[slot] = [m[1][2] as f32, m[2][2] as f32, 0.0, 0.0];
            cov64.push(m);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rt.ply");
        let split = 3 + n as u32 / 2;
        let ranges = [SlotRange { offset: 0, count: split }, SlotRange { offset: split, count: n as u32 + 3 - split }];
        let opts = PlyOptions { sh: if degree3 { ShBands::Degree3 } else { ShBands::Dc }, ..PlyOptions::default() };
        let stats = write_splat_ply_with(&path, &b, &ranges, &opts).unwrap();
        let kept: Vec<usize> = (0..n).filter(|&i| s[i].1[3] != 0).collect();
        prop_assert_eq!(stats.written as usize, kept.len());
        prop_assert_eq!(stats.skipped_transparent as usize, 3 + n - kept.len());
        prop_assert_eq!(stats.opacity_clamped as usize, kept.iter().filter(|&&i| s[i].1[3] == 255).count());

        let cloud = read_splat_ply(&path).unwrap();
        prop_assert_eq!(cloud.len(), kept.len());
        prop_assert_eq!(cloud.sh_rest, if degree3 { 45 } else { 0 });
        for (j, &i) in kept.iter().enumerate() {
            let slot = i + 3;
            prop_assert_eq!(cloud.center[j].map(f32::to_bits), [0, 1, 2].map(|k| b.center[slot][k].to_bits()));
            let rgba = cloud.rgba[j];
            let bytes = pack4x8unorm(rgba).to_le_bytes();
            prop_assert_eq!(&bytes[..3], &s[i].1[..3]);
            let want_a = (f64::from(s[i].1[3]) / 255.0).min(1.0 - 1e-6);
            prop_assert!((f64::from(rgba[3]) - want_a).abs() < 1e-5, "opacity {} vs {}", rgba[3], want_a);
            let want = &cov64[i];
            let got = cloud.covariance[j];
            let err: f64 = (0..9).map(|k| (f64::from(got[k / 3][k % 3]) - want[k / 3][k % 3]).powi(2)).sum::<f64>().sqrt();
            let nrm: f64 = want.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
            prop_assert!(err <= 1e-5 * nrm, "covariance relative error {}", err / nrm);
        }
        // to_buffers gives the same slots back.
        let (bb, r) = cloud.to_buffers().unwrap();
        prop_assert_eq!(bb.len(), kept.len());
        prop_assert_eq!(r.iter().map(|r| r.count as usize).sum::<usize>(), kept.len());
    }
}
