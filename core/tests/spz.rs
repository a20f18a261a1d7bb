//! SPZ: the real v4 file decoded against an independent decode of its bytes written here; the
//! smallest-three rotation worked by hand and packed / unpacked for every quaternion family; mien's
//! own v3 files read back equal within the format's quantisation; damaged files refused.

mod support;

use std::io::Read;

use mien_core::io::spz::{encode_spz, pack_smallest_three, parse_spz, unpack_smallest_three};
use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};
use proptest::prelude::*;

fn biker() -> Vec<u8> {
    std::fs::read(support::data_dir().join("splats/biker.spz")).unwrap()
}

#[test]
fn smallest_three_worked_by_hand() {
    // Largest w (index 3); x = 0.5 → mag round(511·0.5/√½) = 361, y = −0.25 → 181 with the sign
    // bit, z = 0 → 0. Word: 3 <<30 | (x field) << 20 | (y field) << 10 | z field.
    let w = (3u32 << 30) | (361 << 20) | ((512 | 181) << 10);
    let q = [0.5f64, -0.25, 0.0, (1.0f64 - 0.25 - 0.0625).sqrt()];
    assert_eq!(pack_smallest_three(q), w);
    let u = unpack_smallest_three(w);
    assert!((u[0] - 361.0 * std::f64::consts::FRAC_1_SQRT_2 / 511.0).abs() < 1e-12);
    assert!((u[1] + 181.0 * std::f64::consts::FRAC_1_SQRT_2 / 511.0).abs() < 1e-12);
    assert_eq!(u[2], 0.0);
    assert!((u.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12);
}

proptest! {
    #![proptest_config(support::proptest_config(512))]

    /// Packing then unpacking gives the same rotation (q or −q) within the 9-bit step.
    #[test]
    fn smallest_three_round_trips(q in prop::array::uniform4(-1.0f64..1.0)) {
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        prop_assume!(n > 0.1);
        let q = q.map(|x| x / n);
        let u = unpack_smallest_three(pack_smallest_three(q));
        let dot: f64 = q.iter().zip(&u).map(|(a, b)| a * b).sum();
        // |q·u| = cos(θ/2): a 9-bit step of √½/511 per component keeps θ under 0.01 rad.
        prop_assert!(dot.abs() > (0.005f64).cos(), "{q:?} → {u:?}");
    }
}

/// The real v4 file: every point decoded here from the bytes — header, table, zstd frames
/// (ruzstd again, the one pure-Rust decoder), the formulas of the format — and compared.
#[test]
fn biker_v4_matches_an_independent_decode() {
    let bytes = biker();
    let cloud = parse_spz(&bytes, "biker.spz").unwrap();
    let n = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    assert_eq!(n, 152_746);
    assert_eq!(cloud.len(), n);
    assert_eq!(cloud.sh_degree(), 0);
    let frac = bytes[13];
    assert_eq!(frac, 12);
    let mut streams = Vec::new();
    let mut at = 32 + 16 * 5;
    for k in 0..5 {
        let e = &bytes[32 + 16 * k..48 + 16 * k];
        let c = u64::from_le_bytes(e[..8].try_into().unwrap()) as usize;
        let mut out = Vec::new();
        ruzstd::streaming_decoder::StreamingDecoder::new(&bytes[at..at + c])
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        streams.push(out);
        at += c;
    }
    assert_eq!(at, bytes.len(), "the frames fill the file");
    for i in (0..n).step_by(97) {
        let p: Vec<f64> = (0..3)
            .map(|k| {
                let b = &streams[0][9 * i + 3 * k..9 * i + 3 * k + 3];
                let mut v = i64::from(b[0]) | i64::from(b[1]) << 8 | i64::from(b[2]) << 16;
                if v >= 1 << 23 {
                    v -= 1 << 24;
                }
                v as f64 / 4096.0
            })
            .collect();
        for k in 0..3 {
            assert!(
                (f64::from(cloud.center[i][k]) - p[k]).abs() < 1e-6,
                "point {i}"
            );
        }
        assert!((f64::from(cloud.rgba[i][3]) - f64::from(streams[1][i]) / 255.0).abs() < 1e-6);
        for k in 0..3 {
            let dc = (f64::from(streams[2][3 * i + k]) / 255.0 - 0.5) / 0.15;
            let rgb = 0.5 + 0.282_094_791_773_878_14 * dc;
            assert!(
                (f64::from(cloud.rgba[i][k]) - rgb).abs() < 1e-5,
                "point {i} colour"
            );
        }
        // The covariance's trace is Σ exp(2·(byte/16 − 10)) whatever the rotation.
        let tr: f64 = (0..3)
            .map(|k| (2.0 * (f64::from(streams[3][3 * i + k]) / 16.0 - 10.0)).exp())
            .sum();
        let c = &cloud.covariance[i];
        let got = f64::from(c[0][0]) + f64::from(c[1][1]) + f64::from(c[2][2]);
        assert!(
            (got - tr).abs() <= 1e-5 * tr,
            "point {i}: trace {got} vs {tr}"
        );
    }
    // The scene is a biker a few metres across: centres within ±50 m, opacities in [0, 1].
    assert!(cloud.center.iter().flatten().all(|x| x.abs() < 50.0));
}

fn sample_buffers() -> SplatBuffers {
    let mut b = SplatBuffers::new(4);
    let covs = [
        ([1e-4, 0.0, 0.0, 4e-4], [0.0, 9e-4, 0.0, 0.0]),
        ([2e-4, 5e-5, 0.0, 1e-4], [1e-5, 3e-4, 0.0, 0.0]),
        ([1e-6, 0.0, 0.0, 1e-6], [0.0, 1e-8, 0.0, 0.0]),
        ([0.0; 4], [0.0; 4]),
    ];
    for (i, (a, c)) in covs.iter().enumerate() {
        b.center[i] = [0.1 * i as f32, -0.25, 1.5, 0.0];
        b.cov_a[i] = *a;
        b.cov_b[i] = *c;
        b.color[i] = pack4x8unorm([0.2, 0.6, 0.9, if i == 3 { 0.0 } else { 0.8 }]);
    }
    b
}

#[test]
fn mien_v3_files_read_back_within_the_format_steps() {
    let b = sample_buffers();
    let (bytes, rep) = encode_spz(
        &b,
        &[SlotRange {
            offset: 0,
            count: 4,
        }],
    )
    .unwrap();
    assert_eq!(rep.written, 3);
    assert_eq!(
        rep.transparent_skipped, 1,
        "the cleared slot is not written"
    );
    // Version 3 under gzip: the header inside.
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut raw)
        .unwrap();
    assert_eq!(&raw[..8], &[0x4e, 0x47, 0x53, 0x50, 3, 0, 0, 0]);
    let c = parse_spz(&bytes, "mine.spz").unwrap();
    assert_eq!(c.len(), 3);
    for i in 0..3 {
        for k in 0..3 {
            // ¼ mm fixed point.
            assert!((c.center[i][k] - b.center[i][k]).abs() <= 0.5 / 4096.0 + 1e-7);
        }
        let want = b.rgba(i);
        for k in 0..4 {
            // One colour byte of the DC term is 1/(255·0.15)·C0 ≈ 0.0074 in display units.
            assert!(
                (c.rgba[i][k] - want[k]).abs() < 0.008,
                "{i}: {:?} vs {want:?}",
                c.rgba[i]
            );
        }
        let w = b.covariance(i);
        // log σ in 1/16 steps: σ² within exp(±1/16) ≈ ±6.5 %, entries relative to the largest.
        let big = w.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()));
        for r in 0..3 {
            for col in 0..3 {
                assert!(
                    (c.covariance[i][r][col] - w[r][col]).abs() <= 0.08 * big,
                    "{i}: {:?} vs {w:?}",
                    c.covariance[i]
                );
            }
        }
    }
}

#[test]
fn damaged_files_are_refused_naming_the_field() {
    let bytes = biker();
    for (what, mut b, field) in [
        ("magic", bytes.clone(), "header.magic"),
        ("version", bytes.clone(), "header.version"),
        ("points", bytes.clone(), "toc[0]"),
        ("truncated", bytes[..bytes.len() - 1000].to_vec(), "toc[4]"),
        ("short", bytes[..20].to_vec(), "header"),
    ] {
        match what {
            "magic" => b[0] = b'X',
            "version" => b[4] = 9,
            "points" => b[8] ^= 1,
            _ => {}
        }
        let e = parse_spz(&b, "x.spz").unwrap_err().to_string();
        assert!(e.contains(field), "{what}: {e}");
    }
    // Absurd counts are refused before anything is decompressed.
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = parse_spz(&b, "x.spz").unwrap_err().to_string();
    assert!(e.contains("numPoints"), "{e}");
    // A centre beyond the 24-bit range is refused by the writer.
    let mut s = sample_buffers();
    s.center[0][0] = 5000.0;
    let e = encode_spz(
        &s,
        &[SlotRange {
            offset: 0,
            count: 1,
        }],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("slot 0"), "{e}");
}
