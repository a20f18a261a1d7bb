//! Bad PLY files: each is refused with a typed error naming what is wrong; none panics.

mod support;

use mien_core::Error;
use mien_core::io::ply::{parse_splat_ply, read_splat_ply};
use proptest::prelude::*;

const PROPS: [&str; 17] = [
    "x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1",
    "scale_2", "rot_0", "rot_1", "rot_2", "rot_3",
];

/// A hand-built file: `format` line, `n` declared vertices, the given property names (all float)
/// and `rows` of 17 floats.
fn file(format: &str, n: u64, props: &[&str], rows: &[[f32; 17]]) -> Vec<u8> {
    let mut h = format!("ply\nformat {format}\nelement vertex {n}\n");
    for p in props {
        h += &format!("property float {p}\n");
    }
    h += "end_header\n";
    let mut out = h.into_bytes();
    for r in rows {
        for v in r.iter().take(props.len()) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// A valid row: centre (1,2,3), grey, opacity logit 0, scales ln 1e-3, identity rotation.
fn row() -> [f32; 17] {
    let s = 1e-3f32.ln();
    [
        1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, s, s, s, 1.0, 0.0, 0.0, 0.0,
    ]
}

fn format_err(bytes: &[u8]) -> (String, Option<usize>, String) {
    match parse_splat_ply(bytes, "test.ply") {
        Err(Error::Format {
            file,
            field,
            index,
            reason,
        }) => {
            assert_eq!(file, "test.ply");
            (field, index, reason)
        }
        other => panic!("expected a format error, got {other:?}"),
    }
}

#[test]
fn a_valid_minimal_file_reads() {
    let cloud = parse_splat_ply(
        &file("binary_little_endian 1.0", 2, &PROPS, &[row(), row()]),
        "ok.ply",
    )
    .unwrap();
    assert_eq!(cloud.len(), 2);
    assert_eq!(cloud.center[1], [1.0, 2.0, 3.0]);
    assert_eq!(cloud.rgba[0], [0.5, 0.5, 0.5, 0.5]);
    let c = cloud.covariance[0];
    assert!((c[0][0] - 1e-6).abs() < 1e-12 && c[0][1] == 0.0 && (c[2][2] - 1e-6).abs() < 1e-12);
    assert_eq!(cloud.properties.len(), 17);
    assert_eq!(cloud.properties[9].name, "opacity");
    assert_eq!(cloud.properties[9].offset, 36);
}

#[test]
fn truncated_data() {
    let mut b = file("binary_little_endian 1.0", 2, &PROPS, &[row(), row()]);
    b.truncate(b.len() - 10);
    let (field, _, reason) = format_err(&b);
    assert_eq!(field, "element vertex");
    assert!(reason.contains("2 vertices × 68 bytes"), "{reason}");
}

#[test]
fn truncated_header() {
    let b = file("binary_little_endian 1.0", 1, &PROPS, &[row()]);
    let cut = b.windows(10).position(|w| w == b"end_header").unwrap();
    let (field, _, reason) = format_err(&b[..cut + 5]);
    assert_eq!(field, "header");
    assert!(reason.contains("end_header"), "{reason}");
    assert!(parse_splat_ply(b"", "test.ply").is_err());
}

#[test]
fn ascii_and_big_endian_are_refused() {
    for fmt in ["ascii 1.0", "binary_big_endian 1.0"] {
        let (field, index, reason) = format_err(&file(fmt, 1, &PROPS, &[row()]));
        assert_eq!((field.as_str(), index), ("header line", Some(2)));
        assert!(
            reason.contains(fmt.split(' ').next().unwrap())
                && reason.contains("binary_little_endian"),
            "{reason}"
        );
    }
    let (_, _, reason) = format_err(&file("binary_little_endian 2.0", 1, &PROPS, &[row()]));
    assert!(reason.contains("2.0"), "{reason}");
}

#[test]
fn missing_property_is_named() {
    for missing in ["opacity", "rot_3", "f_dc_1", "x"] {
        let props: Vec<&str> = PROPS.iter().copied().filter(|p| *p != missing).collect();
        let (field, _, reason) = format_err(&file("binary_little_endian 1.0", 1, &props, &[row()]));
        assert_eq!(field, format!("property {missing}"));
        assert!(reason.contains("missing"), "{reason}");
    }
}

#[test]
fn count_larger_than_the_file() {
    // 10¹⁵ vertices would be 68 PB: refused from the file length, nothing allocated.
    let (field, _, reason) = format_err(&file(
        "binary_little_endian 1.0",
        1_000_000_000_000_000,
        &PROPS,
        &[row()],
    ));
    assert_eq!(field, "element vertex");
    assert!(reason.contains("only 68 bytes"), "{reason}");
    let (field, _, _) = format_err(&file(
        "binary_little_endian 1.0",
        u64::MAX,
        &PROPS,
        &[row()],
    ));
    assert_eq!(field, "element vertex");
}

#[test]
fn bad_values_name_property_and_index() {
    let mut r = row();
    r[1] = f32::NAN;
    let (field, index, _) = format_err(&file("binary_little_endian 1.0", 2, &PROPS, &[row(), r]));
    assert_eq!((field.as_str(), index), ("property y", Some(1)));
    let mut r = row();
    r[13] = 0.0;
    let (field, index, reason) = format_err(&file("binary_little_endian 1.0", 1, &PROPS, &[r]));
    assert_eq!((field.as_str(), index), ("property rot_0..rot_3", Some(0)));
    assert!(reason.contains("zero-length"));
    let mut r = row();
    r[10] = 80.0;
    let (field, index, _) = format_err(&file("binary_little_endian 1.0", 1, &PROPS, &[r]));
    assert_eq!(
        (field.as_str(), index),
        ("property scale_0..scale_2", Some(0))
    );
}

#[test]
fn malformed_headers() {
    assert_eq!(
        format_err(b"plx\nformat binary_little_endian 1.0\nend_header\n").0,
        "magic"
    );
    let (field, index, reason) = format_err(
        b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float16 x\nend_header\n",
    );
    assert_eq!((field.as_str(), index), ("header line", Some(4)));
    assert!(reason.contains("float16"));
    assert_eq!(
        format_err(b"ply\nformat binary_little_endian 1.0\nelement face 0\nend_header\n").0,
        "element vertex"
    );
    let (_, index, reason) = format_err(b"ply\nelement vertex 1\nend_header\n");
    assert_eq!(index, Some(2));
    assert!(reason.contains("format"));
    let dup = b"ply\nformat binary_little_endian 1.0\nelement vertex 0\nproperty float x\nproperty float x\nend_header\n";
    assert!(format_err(dup).2.contains("duplicate"));
    let list = b"ply\nformat binary_little_endian 1.0\nelement vertex 0\nproperty list uchar int x\nend_header\n";
    assert_eq!(format_err(list).0, "property x");
}

#[test]
fn other_elements_and_types_are_handled() {
    // A scalar element before `vertex` is skipped; double/uchar properties are converted; CRLF
    // header lines and comments are accepted; an element after `vertex` is not read (its one
    // face, a list of 3 indices, is there).
    let mut h = String::from(
        "ply\r\nformat binary_little_endian 1.0\r\ncomment made by hand\r\nelement meta 1\r\nproperty uint id\r\n",
    );
    h += "element vertex 1\r\nproperty double x\r\nproperty float y\r\nproperty float z\r\nproperty uchar junk\r\n";
    for p in &PROPS[6..] {
        h += &format!("property float {p}\r\n");
    }
    h += "element face 1\r\nproperty list uchar int vertex_indices\r\nend_header\r\n";
    let mut b = h.into_bytes();
    b.extend_from_slice(&7u32.to_le_bytes());
    b.extend_from_slice(&0.25f64.to_le_bytes());
    b.extend_from_slice(&2f32.to_le_bytes());
    b.extend_from_slice(&3f32.to_le_bytes());
    b.push(9);
    for v in &row()[6..] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.push(3);
    for k in 0u32..3 {
        b.extend_from_slice(&k.to_le_bytes());
    }
    let cloud = parse_splat_ply(&b, "mixed.ply").unwrap();
    assert_eq!(cloud.center, vec![[0.25, 2.0, 3.0]]);
    assert_eq!(cloud.properties[3].name, "junk");
}

/// Elements after `vertex` are not read but must fit in the bytes left: each record takes at least
/// its scalars and one count per list property (an empty list).
#[test]
fn elements_after_the_vertices_must_fit_the_file() {
    let with_tail = |tail_header: &str, tail: &[u8]| {
        let mut b = file("binary_little_endian 1.0", 1, &PROPS, &[row()]);
        let end = b.windows(11).position(|w| w == b"end_header\n").unwrap();
        b.splice(end..end, tail_header.bytes());
        b.extend_from_slice(tail);
        b
    };
    // The reviewer's file: four billion faces declared, no bytes for them.
    let b = with_tail(
        "element face 4294967295\nproperty list uchar int vertex_indices\n",
        &[],
    );
    let (field, index, reason) = format_err(&b);
    assert_eq!((field.as_str(), index), ("element face", None));
    assert_eq!(
        reason,
        "declares 4294967295 records of at least 1 byte each (lists counted empty), but only 0 \
         bytes follow the data before it: the file is truncated or its header is wrong"
    );
    // Two empty faces fit in two bytes; a third does not.
    let faces = "element face 2\nproperty list uchar int vertex_indices\n";
    assert_eq!(
        parse_splat_ply(&with_tail(faces, &[0, 0]), "t.ply")
            .unwrap()
            .len(),
        1
    );
    let (field, _, reason) = format_err(&with_tail(faces, &[0]));
    assert_eq!(field, "element face");
    assert!(reason.contains("only 1 bytes follow"), "{reason}");
    // Scalar elements count their stride; a second trailing element counts after the first.
    let two = "element a 2\nproperty ushort v\nelement b 1\nproperty int w\n";
    assert_eq!(
        parse_splat_ply(&with_tail(two, &[0; 8]), "t.ply")
            .unwrap()
            .len(),
        1
    );
    let (field, _, reason) = format_err(&with_tail(two, &[0; 7]));
    assert_eq!(field, "element b");
    assert!(
        reason.contains("at least 4 bytes each, but only 3 bytes"),
        "{reason}"
    );
    // A list with an unknown count type is a header error.
    let (field, index, _) = format_err(&with_tail(
        "element face 1\nproperty list uchar8 int vertex_indices\n",
        &[0],
    ));
    assert_eq!((field.as_str(), index), ("header line", Some(22)));
}

#[test]
fn missing_file_is_an_io_error() {
    let err = read_splat_ply(std::path::Path::new("/nonexistent/mien/x.ply")).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

proptest! {
    #![proptest_config(support::proptest_config(3000))]

    /// Mutating or truncating a valid file never panics (an error or a cloud comes back).
    #[test]
    fn fuzzed_files_never_panic(cut in 0usize..400, flips in prop::collection::vec((0usize..400, any::<u8>()), 0..6)) {
        let mut b = file("binary_little_endian 1.0", 3, &PROPS, &[row(), row(), row()]);
        for (at, v) in flips {
            let n = b.len();
            b[at % n] = v;
        }
        b.truncate(cut.min(b.len()));
        let _ = parse_splat_ply(&b, "fuzz.ply");
    }

    /// Random bytes after a plausible start never panic.
    #[test]
    fn random_bytes_never_panic(tail in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut b = b"ply\nformat binary_little_endian 1.0\n".to_vec();
        b.extend(tail);
        let _ = parse_splat_ply(&b, "fuzz.ply");
    }
}

/// An `f_rest` count no SH degree gives (10) is refused naming the count and the valid ones;
/// the valid counts 0, 9, 24, 45 read and report their degree; out-of-order names are refused.
#[test]
fn an_f_rest_count_of_no_sh_degree_is_refused_and_valid_ones_give_their_degree() {
    let with_rest = |k: usize, names: &dyn Fn(usize) -> String| {
        let mut props: Vec<String> = PROPS[..9].iter().map(|s| s.to_string()).collect();
        props.extend((0..k).map(names));
        props.extend(PROPS[9..].iter().map(|s| s.to_string()));
        let mut h = "ply\nformat binary_little_endian 1.0\nelement vertex 1\n".to_string();
        for p in &props {
            h += &format!("property float {p}\n");
        }
        h += "end_header\n";
        let mut out = h.into_bytes();
        let r = row();
        let vals: Vec<f32> = r[..9]
            .iter()
            .copied()
            .chain(std::iter::repeat_n(0.0, k))
            .chain(r[9..].iter().copied())
            .collect();
        for v in vals {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    };
    let plain = |k: usize| format!("f_rest_{k}");
    let (field, _, reason) = format_err(&with_rest(10, &plain));
    assert_eq!(field, "element vertex: f_rest_*");
    assert!(
        reason.contains("10 f_rest properties") && reason.contains("0, 9, 24 or 45"),
        "{reason}"
    );
    for (k, degree) in [(0, 0), (9, 1), (24, 2), (45, 3)] {
        let c = parse_splat_ply(&with_rest(k, &plain), "ok.ply").unwrap();
        assert_eq!((c.sh_rest, c.sh_degree()), (k, degree));
    }
    let swapped = |k: usize| format!("f_rest_{}", [1, 0, 2, 3, 4, 5, 6, 7, 8][k]);
    let (field, _, reason) = format_err(&with_rest(9, &swapped));
    assert_eq!(field, "element vertex: f_rest_0");
    assert!(reason.contains("`f_rest_1`"), "{reason}");
}
