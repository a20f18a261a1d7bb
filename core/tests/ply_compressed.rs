//! SuperSplat's compressed `.ply`: a hand-built file decodes to the values worked out by hand (also
//! with its vertex properties in another order: decoded by the header, not a fixed stride); the real
//! SuperSplat 2.7.1 file (`splats/guitar.compressed.ply`) decodes every splat inside its chunk's
//! bounds, with unit quaternions and opacities in [0, 1], and splats checked one by one against an
//! f64 decode written here from the bit layout; damaged files are refused naming the field.

use std::path::PathBuf;

use mien_core::io::ply::parse_splat_ply;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

const CHUNK_PROPS: [&str; 18] = [
    "min_x",
    "min_y",
    "min_z",
    "max_x",
    "max_y",
    "max_z",
    "min_scale_x",
    "min_scale_y",
    "min_scale_z",
    "max_scale_x",
    "max_scale_y",
    "max_scale_z",
    "min_r",
    "min_g",
    "min_b",
    "max_r",
    "max_g",
    "max_b",
];

/// A compressed file: `chunks` rows of the 18 chunk floats, then per splat its packed words in
/// the order `vertex_props` names them.
fn build(chunks: &[[f32; 18]], vertex_props: &[&str], splats: &[Vec<u32>]) -> Vec<u8> {
    let mut h = String::from("ply\nformat binary_little_endian 1.0\ncomment hand-built\n");
    h += &format!("element chunk {}\n", chunks.len());
    for p in CHUNK_PROPS {
        h += &format!("property float {p}\n");
    }
    h += &format!("element vertex {}\n", splats.len());
    for p in vertex_props {
        h += &format!("property uint {p}\n");
    }
    h += "end_header\n";
    let mut b = h.into_bytes();
    for c in chunks {
        for v in c {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    for s in splats {
        for w in s {
            b.extend_from_slice(&w.to_le_bytes());
        }
    }
    b
}

const ORDER: [&str; 4] = [
    "packed_position",
    "packed_rotation",
    "packed_scale",
    "packed_color",
];

/// One chunk: position box (0,0,0)–(2,4,8), log scales −2…0, colour 0…1 on r, 0.2…0.6 on g.
fn chunk() -> [f32; 18] {
    [
        0.0, 0.0, 0.0, 2.0, 4.0, 8.0, -2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.2, 0.0, 1.0, 0.6, 1.0,
    ]
}

/// Position x = 2047/2047, y = 0, z = 1023/2047; rotation: largest component 0 (w) and the other
/// three at 10-bit 511.5 → the identity up to quantisation (we use 512: (512/1023 − ½)·√2 ≈
/// 6.9e-4); scale all ones (log scale 0 → σ = 1); colour R = 255, G = 128, B = 0, A = 192.
fn splat() -> [u32; 4] {
    let position = (2047u32 << 21) | (1023 << 0);
    let rotation = (512u32 << 20) | (512 << 10) | 512;
    let scale = (2047u32 << 21) | (1023 << 11) | 2047;
    let color = 0xFF80_00C0u32;
    [position, rotation, scale, color]
}

#[test]
fn a_hand_built_file_decodes_to_the_hand_worked_values_in_any_property_order() {
    let s = splat();
    for order in [[0usize, 1, 2, 3], [3, 1, 0, 2]] {
        let props: Vec<&str> = order.iter().map(|&k| ORDER[k]).collect();
        let words: Vec<u32> = order.iter().map(|&k| s[k]).collect();
        let bytes = build(&[chunk()], &props, &[words]);
        let cloud = parse_splat_ply(&bytes, "hand.compressed.ply").unwrap();
        assert_eq!(cloud.len(), 1);
        let c = cloud.center[0];
        let want = [2.0, 0.0, 8.0 * 1023.0 / 2047.0];
        for k in 0..3 {
            assert!((f64::from(c[k]) - want[k]).abs() < 1e-6, "{order:?}: {c:?}");
        }
        // (512/1023 − 0.5)·√2 for x, y, z and w = √(1 − 3·that²): the rotation is within 1e-3 of
        // the identity, so Σ = R·I·Rᵀ = I exactly up to rounding (unit scales).
        let m = cloud.covariance[0];
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-5, "{order:?}: {m:?}");
            }
        }
        let rgba = cloud.rgba[0];
        let want = [1.0, 0.2 + 0.4 * 128.0 / 255.0, 0.0, 192.0 / 255.0];
        for k in 0..4 {
            assert!(
                (f64::from(rgba[k]) - want[k]).abs() < 1e-6,
                "{order:?}: {rgba:?}"
            );
        }
        assert_eq!(cloud.sh_degree(), 0);
    }
}

#[test]
fn the_largest_component_goes_where_its_index_says() {
    use mien_core::io::ply::compressed::unpack_rotation;
    // Index 2 (y) largest, the others at the 10-bit midpoint 511.5 ≈ 0: (≈0, ≈0, 1, ≈0).
    for (index, slot) in [(0u32, 0usize), (1, 1), (2, 2), (3, 3)] {
        let q = unpack_rotation((index << 30) | (512 << 20) | (512 << 10) | 512);
        assert!((q[slot] - 1.0).abs() < 1e-5, "{index}: {q:?}");
        let norm: f64 = q.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-12, "{q:?}");
    }
    // A hand-worked non-trivial one: a = (1023/1023 − ½)·√2 = √2/2, b = c = (0 − ½)·√2 = −√2/2 …
    // clamped: 1 − (½ + ½ + ½) < 0, so the largest is 0 (a damaged word still gives finite values).
    let q = unpack_rotation((3 << 30) | (1023 << 20));
    assert!(q.iter().all(|x| x.is_finite()), "{q:?}");
    assert_eq!(q[3], 0.0);
}

/// The bit layout decoded here in f64 straight from the file's bytes (offsets from the header),
/// independent of the reader's code path.
fn decode_by_hand(bytes: &[u8], i: usize) -> ([f64; 3], [f64; 4]) {
    let end = bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .unwrap()
        + 11;
    let f = |at: usize| f64::from(f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()));
    let u = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let chunk = end + (i / 256) * 18 * 4;
    let vertex = end + 355 * 18 * 4 + i * 16;
    let p = u(vertex);
    let t = [
        f64::from((p >> 21) & 2047) / 2047.0,
        f64::from((p >> 11) & 1023) / 1023.0,
        f64::from(p & 2047) / 2047.0,
    ];
    let centre =
        [0, 1, 2].map(|k| f(chunk + 4 * k) + (f(chunk + 12 + 4 * k) - f(chunk + 4 * k)) * t[k]);
    let c = u(vertex + 12);
    let rgb = [24, 16, 8].map(|s| f64::from((c >> s) & 255) / 255.0);
    let col = [0, 1, 2]
        .map(|k| f(chunk + 48 + 4 * k) + (f(chunk + 60 + 4 * k) - f(chunk + 48 + 4 * k)) * rgb[k]);
    (centre, [col[0], col[1], col[2], f64::from(c & 255) / 255.0])
}

#[test]
fn the_real_supersplat_file_decodes_inside_its_chunks() {
    let path = data("splats/guitar.compressed.ply");
    let bytes = std::fs::read(&path).unwrap();
    let cloud = mien_core::io::ply::read_splat_ply(&path).unwrap();
    assert_eq!(cloud.len(), 90_854);
    assert_eq!(cloud.sh_degree(), 0);
    // Every splat: its centre is its chunk's box lerped by its own bits, so inside that box.
    for i in 0..cloud.len() {
        let (centre, rgba) = decode_by_hand(&bytes, i);
        for k in 0..3 {
            let got = f64::from(cloud.center[i][k]);
            assert!(
                (got - centre[k]).abs() <= 1e-5 * centre[k].abs().max(1.0),
                "splat {i}: {got} vs {centre:?}"
            );
        }
        for k in 0..4 {
            let got = f64::from(cloud.rgba[i][k]);
            assert!(
                (got - rgba[k]).abs() <= 1e-6,
                "splat {i} colour {k}: {got} vs {rgba:?}"
            );
        }
    }
    for (i, m) in cloud.covariance.iter().enumerate() {
        // Symmetric, positive diagonal, finite.
        assert!(m.iter().flatten().all(|x| x.is_finite()), "{i}");
        assert!((0..3).all(|k| m[k][k] > 0.0), "{i}: {m:?}");
        assert!(
            (m[0][1] - m[1][0]).abs() <= 1e-6 * m[0][0].max(m[1][1]),
            "{i}"
        );
    }
    assert!(cloud.rgba.iter().all(|c| (0.0..=1.0).contains(&c[3])));
}

#[test]
fn damaged_compressed_files_are_refused_naming_the_field() {
    let s = splat().to_vec();
    // 257 splats need 2 chunks.
    let many = vec![s.clone(); 257];
    let e = parse_splat_ply(&build(&[chunk()], &ORDER, &many), "few.ply").unwrap_err();
    assert!(
        e.to_string().contains("element chunk") && e.to_string().contains("2 are needed"),
        "{e}"
    );
    // Truncated: the last splat's words cut.
    let mut bytes = build(&[chunk()], &ORDER, &[s.clone()]);
    bytes.truncate(bytes.len() - 3);
    let e = parse_splat_ply(&bytes, "cut.ply").unwrap_err();
    assert!(
        e.to_string().contains("element vertex") && e.to_string().contains("truncated"),
        "{e}"
    );
    // A missing packed property.
    let e = parse_splat_ply(
        &build(&[chunk()], &ORDER[..3], &[s[..3].to_vec()]),
        "three.ply",
    )
    .unwrap_err();
    assert!(e.to_string().contains("packed_color"), "{e}");
    // A bound that is not finite.
    let mut c = chunk();
    c[4] = f32::NAN;
    let e = parse_splat_ply(&build(&[c], &ORDER, &[s]), "nan.ply").unwrap_err();
    assert!(
        e.to_string().contains("max_y") && e.to_string().contains("not finite"),
        "{e}"
    );
}

/// SuperSplat compressed → mien's splat buffers → mien's INRIA `.ply` → read back: the same splats
/// (centres bit for bit, colours within the 8-bit packing, covariances within 1e-4 of their
/// largest entry, opacity-0 splats kept so splat i stays splat i): a compressed capture converts
/// to the layout every viewer opens.
#[test]
fn a_compressed_capture_converts_to_the_inria_layout() {
    use mien_core::io::ply::{PlyOptions, TransparentSlots, read_splat_ply, write_splat_ply_with};
    let cloud = read_splat_ply(&data("splats/guitar.compressed.ply")).unwrap();
    let (buffers, ranges) = cloud.to_buffers().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("guitar.ply");
    let options = PlyOptions {
        transparent: TransparentSlots::Keep,
        ..PlyOptions::default()
    };
    let stats = write_splat_ply_with(&out, &buffers, &ranges, &options).unwrap();
    assert_eq!(stats.written, cloud.len() as u64);
    let back = read_splat_ply(&out).unwrap();
    assert_eq!(back.len(), cloud.len());
    assert_eq!(back.center, cloud.center);
    for (i, (a, b)) in back.rgba.iter().zip(&cloud.rgba).enumerate() {
        for k in 0..4 {
            let want = b[k].clamp(0.0, 1.0);
            // 8-bit packing, then logit / SH-DC in f32 and back.
            assert!(
                (a[k] - want).abs() <= 0.5 / 255.0 + 2e-5,
                "splat {i} channel {k}: {a:?} vs {b:?}"
            );
        }
    }
    for (i, (a, b)) in back.covariance.iter().zip(&cloud.covariance).enumerate() {
        let scale = b.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()));
        for r in 0..3 {
            for c in 0..3 {
                assert!(
                    (a[r][c] - b[r][c]).abs() <= 1e-4 * scale + 1e-12,
                    "splat {i}: {a:?} vs {b:?}"
                );
            }
        }
    }
}
