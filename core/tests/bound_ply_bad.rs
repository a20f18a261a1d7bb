//! Damaged bound captures (`mien animate --capture`'s `.ply`): a file written here by mien's own
//! writer, then cut, its header broken, a triangle index pushed out of range, a barycentric set
//! to NaN, its vertex count made hostile, or checked against another topology. Every one is a
//! typed [`Error::Format`] naming the file and the field (and the record), never a panic.

use mien_core::Error;
use mien_core::io::bound_ply::{
    BoundCapture, parse_bound_ply, topology_fingerprint, write_bound_ply,
};
use mien_core::io::ply::SplatCloud;
use mien_core::lift::{BoundGaussian, BoundLift, BoundReport};

const FILE: &str = "damaged.bound.ply";
/// Bytes per record: 14 INRIA floats, the triangle, 10 embedding floats.
const RECORD: usize = 100;

/// A unit quad's two triangles plus one joint anchor triangle, three gaussians (the last on the
/// anchor), written by mien.
fn quad() -> (Vec<u8>, Vec<[u32; 3]>) {
    let mut cloud = SplatCloud::default();
    let mut gaussians = Vec::new();
    for i in 0..3u32 {
        cloud.center.push([0.25 * (i + 1) as f32, 0.3, 0.01]);
        cloud.rgba.push([0.2, 0.4, 0.6, 0.8]);
        cloud
            .covariance
            .push([[1e-4, 0.0, 0.0], [0.0, 2e-4, 0.0], [0.0, 0.0, 1e-6]]);
        gaussians.push(BoundGaussian {
            triangle: i,
            bary: [0.25, 0.125 * i as f32],
            offset: 0.01,
            rotation: [0.0, 0.0, 0.0, 1.0],
            log_scale: [-4.6, -4.3, -6.9],
            color: mien_core::sink::pack4x8unorm([0.2, 0.4, 0.6, 0.8]),
        });
    }
    let triangles = vec![[0, 1, 2], [0, 2, 3], [4, 5, 6]];
    let lift = BoundLift {
        report: BoundReport::default(),
        gaussians,
        triangles: triangles.clone(),
    };
    let bytes = write_bound_ply(&cloud, &[0, 1, 2], &lift, "quad.glb", 4, 1).unwrap();
    (bytes, triangles)
}

/// Where the records start.
fn body_start(b: &[u8]) -> usize {
    b.windows(11).position(|w| w == b"end_header\n").unwrap() + 11
}

/// The `(field, index, reason)` of a format error for [`FILE`], or a failure naming what came.
fn format_err(r: mien_core::Result<BoundCapture>) -> (String, Option<usize>, String) {
    match r {
        Err(Error::Format {
            file,
            field,
            index,
            reason,
        }) => {
            assert_eq!(file, FILE);
            (field, index, reason)
        }
        other => panic!("expected a format error, got {other:?}"),
    }
}

#[test]
fn the_undamaged_file_reads_back_by_hand() {
    let (b, tris) = quad();
    let c = parse_bound_ply(&b, FILE).unwrap();
    assert_eq!(
        (c.vertex_count, c.triangle_count, c.anchors),
        (4, 2, 1),
        "{c:?}"
    );
    assert_eq!(c.fingerprint, topology_fingerprint(4, &tris[..2]));
    assert_eq!(c.character, "quad.glb");
    assert_eq!(c.file, FILE);
    let tri: Vec<u32> = c.lift.gaussians.iter().map(|g| g.triangle).collect();
    assert_eq!(tri, [0, 1, 2]);
    assert_eq!(c.lift.gaussians[2].bary, [0.25, 0.25]);
    // 31 header lines + the anchor line, then three records of 25 four-byte words.
    assert_eq!(b.len() - body_start(&b), 3 * RECORD);
    c.check_topology("quad.glb", 4, &tris[..2]).unwrap();
}

/// Every cut of the file — inside the header or inside a record — is refused without a panic;
/// a cut inside the records names `element vertex` and both byte counts.
#[test]
fn truncated_files_are_refused_at_every_length() {
    let (b, _) = quad();
    let start = body_start(&b);
    for len in 0..b.len() {
        let r = parse_bound_ply(&b[..len], FILE);
        assert!(r.is_err(), "{len} bytes read as a capture");
    }
    let (field, _, reason) = format_err(parse_bound_ply(&b[..b.len() - 1], FILE));
    assert_eq!(field, "element vertex");
    assert!(
        reason.contains("300 bytes") && reason.contains(&format!("{}", b.len() - 1 - start)),
        "{reason}"
    );
}

#[test]
fn a_bad_header_names_its_line() {
    let (b, _) = quad();
    let text = |from: &str, to: &str| {
        let s = String::from_utf8_lossy(&b[..body_start(&b)]).replacen(from, to, 1);
        let mut v = s.into_bytes();
        v.extend_from_slice(&b[body_start(&b)..]);
        v
    };
    let (field, _, _) = format_err(parse_bound_ply(
        &text("binary_little_endian", "ascii"),
        FILE,
    ));
    assert_eq!(field, "header line 2");
    let (field, _, reason) = format_err(parse_bound_ply(
        &text("comment mien topology 4 2", "comment mien topology four 2"),
        FILE,
    ));
    assert_eq!(field, "header line 5");
    assert!(reason.contains("topology"), "{reason}");
    let (field, _, _) = format_err(parse_bound_ply(
        &text("property float mien_bary_2", "property double mien_bary_2"),
        FILE,
    ));
    assert_eq!(field, "header line 24");
    let (field, _, reason) = format_err(parse_bound_ply(b"ply\nend_header\n", FILE));
    assert_eq!(field, "header");
    assert!(reason.contains("not a bound capture"), "{reason}");
}

/// A vertex count whose byte size overflows a u64 (`n · 100 > 2⁶⁴`) is refused, not wrapped
/// into a small size nor a panic.
#[test]
fn a_hostile_vertex_count_is_refused() {
    let (b, _) = quad();
    let s = String::from_utf8_lossy(&b[..body_start(&b)]).replacen(
        "element vertex 3",
        "element vertex 184467440737095517",
        1,
    );
    let mut v = s.into_bytes();
    v.extend_from_slice(&b[body_start(&b)..]);
    let (field, _, reason) = format_err(parse_bound_ply(&v, FILE));
    assert_eq!(field, "element vertex");
    assert!(reason.contains("18446744073709551700 bytes"), "{reason}");
}

/// Record 1's triangle set past the 2 triangles + 1 anchor: the record and `mien_triangle` are
/// named; a triangle on the anchor (index 2) is accepted.
#[test]
fn an_out_of_range_triangle_names_the_record_and_field() {
    let (mut b, _) = quad();
    let at = body_start(&b) + RECORD + 14 * 4;
    b[at..at + 4].copy_from_slice(&3u32.to_le_bytes());
    let (field, index, reason) = format_err(parse_bound_ply(&b, FILE));
    assert_eq!((field.as_str(), index), ("vertex.mien_triangle", Some(1)));
    assert!(
        reason.contains("triangle 3") && reason.contains("2 triangles and 1 joint anchors"),
        "{reason}"
    );
    b[at..at + 4].copy_from_slice(&2u32.to_le_bytes());
    assert_eq!(
        parse_bound_ply(&b, FILE).unwrap().lift.gaussians[1].triangle,
        2
    );
}

/// NaN and infinite embedding values name the record and the property.
#[test]
fn non_finite_embedding_values_name_the_record_and_property() {
    for (word, name, v) in [
        (15, "mien_bary_1", f32::NAN),
        (16, "mien_bary_2", f32::NAN),
        (17, "mien_offset", f32::INFINITY),
        (22, "mien_scale_0", f32::NEG_INFINITY),
    ] {
        let (mut b, _) = quad();
        let at = body_start(&b) + 2 * RECORD + word * 4;
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let (field, index, reason) = format_err(parse_bound_ply(&b, FILE));
        assert_eq!(field, format!("vertex.{name}"));
        assert_eq!(index, Some(2));
        assert!(reason.contains("not finite"), "{reason}");
    }
}

/// Another character's topology (one triangle flipped, so the same counts; or another vertex
/// count) is refused naming the capture file, its topology line and both fingerprints.
#[test]
fn a_wrong_fingerprint_names_the_file_and_topology_line() {
    let (b, tris) = quad();
    let c = parse_bound_ply(&b, FILE).unwrap();
    let flipped = [[0, 2, 1], [0, 2, 3]];
    let e = c.check_topology("other.glb", 4, &flipped).unwrap_err();
    let Error::Format {
        file,
        field,
        reason,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(file, FILE);
    assert_eq!(field, "comment mien topology (header line 5)");
    let want = format!("{:016x}", topology_fingerprint(4, &tris[..2]));
    let found = format!("{:016x}", topology_fingerprint(4, &flipped));
    assert_ne!(want, found);
    assert!(
        reason.contains(&want) && reason.contains(&found) && reason.contains("other.glb"),
        "{reason}"
    );
    assert!(c.check_topology("other.glb", 5, &tris[..2]).is_err());
}
