//! Hair grooms (issue 27 item 2): the TressFX reader on Sintel's two real grooms and on damaged
//! files, arc-length resampling to guides, and grown grooms — roots on the scalp on a Fibonacci
//! lattice outside the face, strands outside the skull, children that follow their guides — with
//! the limits refused with their numbers.

use std::path::{Path, PathBuf};

use glam::DVec3;
use mien_core::hair::groom::{GroomDef, MAX_GUIDES, MAX_RENDERED_STRANDS, MAX_SEGMENTS};
use mien_core::hair::tfx::{TFX_HEADER_BYTES, parse_tfx, read_tfx};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn polyline_length(p: &[[f32; 3]]) -> f64 {
    p.windows(2)
        .map(|w| DVec3::from(w[1].map(f64::from)).distance(DVec3::from(w[0].map(f64::from))))
        .sum()
}

#[test]
fn sintels_grooms_read_with_their_roots_pinned() {
    for (file, strands, points) in [
        ("hair/sintel_hair_rust_vulkan_tressfx.tfx", 228, 32),
        ("hair/sintel_hair_frostbitten_16points.tfx", 11_400, 16),
    ] {
        let t = read_tfx(&data(file)).unwrap();
        assert_eq!(
            (t.strands, t.points_per_strand),
            (strands, points),
            "{file}"
        );
        assert_eq!(t.version, 4.0);
        // w = 0 on every root and nowhere else.
        for (i, pinned) in t.pinned.iter().enumerate() {
            assert_eq!(*pinned, i % points == 0, "{file}: point {i}");
        }
        for s in 0..strands {
            assert!(polyline_length(t.strand(s)) > 0.0);
        }
    }
}

fn header(version: f32, strands: u32, points: u32, offset: u32) -> Vec<u8> {
    let mut b = vec![0u8; TFX_HEADER_BYTES];
    b[0..4].copy_from_slice(&version.to_le_bytes());
    b[4..8].copy_from_slice(&strands.to_le_bytes());
    b[8..12].copy_from_slice(&points.to_le_bytes());
    b[12..16].copy_from_slice(&offset.to_le_bytes());
    b
}

#[test]
fn damaged_tfx_files_are_refused_naming_the_field() {
    let real = std::fs::read(data("hair/sintel_hair_rust_vulkan_tressfx.tfx")).unwrap();
    let e = |b: &[u8]| parse_tfx(b, "t.tfx").unwrap_err().to_string();
    assert!(
        e(&real[..100]).contains("shorter than the 160-byte"),
        "{}",
        e(&real[..100])
    );
    let cut = &real[..real.len() - 10];
    assert!(e(cut).contains("offsetVertexPosition"), "{}", e(cut));
    assert!(e(&header(3.0, 1, 2, 160)).contains("version"));
    assert!(e(&header(4.0, 0, 2, 160)).contains("0 strands"));
    assert!(e(&header(4.0, 1, 1, 160)).contains("at least 2"));
    // Past the limits: refused with the numbers before anything is read or allocated.
    let big = e(&header(4.0, 70_000, 16, 160));
    assert!(big.contains("70000") && big.contains("65536"), "{big}");
    let long = e(&header(4.0, 10, 100, 160));
    assert!(long.contains("100") && long.contains("64"), "{long}");
    // A NaN coordinate is named by strand and point.
    let mut nan = real.clone();
    let at = TFX_HEADER_BYTES + (3 * 32 + 5) * 16 + 4;
    nan[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(e(&nan).contains("strands[3].points[5]"), "{}", e(&nan));
    // A strand whose points coincide.
    let mut flat = header(4.0, 1, 2, 160);
    flat.extend_from_slice(&[0u8; 32]);
    assert!(e(&flat).contains("zero length"));
}

/// Arc-length position of `q` on the polyline `p`: projected onto its nearest segment.
fn arc_at(p: &[DVec3], q: DVec3) -> (f64, f64) {
    let (mut best, mut acc) = ((f64::INFINITY, 0.0), 0.0);
    for w in p.windows(2) {
        let d = w[1] - w[0];
        let t = ((q - w[0]).dot(d) / d.length_squared().max(1e-30)).clamp(0.0, 1.0);
        let dist = q.distance(w[0] + d * t);
        if dist < best.0 {
            best = (dist, acc + d.length() * t);
        }
        acc += d.length();
    }
    best
}

/// Resampled to 12 segments, every guide keeps its ends, and its k-th point lies on the original
/// strand at k/12 of its arc length (found independently, by projecting onto the strand).
#[test]
fn tfx_strands_resample_to_equal_arcs() {
    let t = read_tfx(&data("hair/sintel_hair_rust_vulkan_tressfx.tfx")).unwrap();
    let r = t.resampled(12).unwrap();
    assert_eq!(r.len(), 228 * 13);
    for s in 0..228 {
        let (orig, new) = (t.strand(s), &r[s * 13..(s + 1) * 13]);
        assert_eq!(new[0], orig[0]);
        assert_eq!(new[12], orig[31]);
        let pts: Vec<DVec3> = orig.iter().map(|p| DVec3::from(p.map(f64::from))).collect();
        let total = polyline_length(orig);
        for (k, q) in new.iter().enumerate() {
            let (dist, arc) = arc_at(&pts, DVec3::from(q.map(f64::from)));
            assert!(
                dist < 1e-5 * total,
                "strand {s} point {k} off the strand by {dist}"
            );
            let want = total * k as f64 / 12.0;
            assert!(
                (arc - want).abs() < 1e-4 * total,
                "strand {s} point {k}: arc {arc} vs {want}"
            );
        }
    }
    assert!(t.resampled(0).is_err());
}

fn def() -> GroomDef {
    GroomDef::from_json(
        r#"{
          "format": "mien-groom", "version": 1, "head_bone": "Head",
          "scalp": { "center": [0, 0.07, -0.005], "radii": [0.078, 0.1, 0.098] },
          "guides": 320, "children_per_guide": 35, "segments": 12,
          "length": 0.2, "thickness": [0.0008, 0.0002],
          "colour": { "root": [0.05, 0.025, 0.012], "tip": [0.12, 0.07, 0.035] },
          "seed": 7
        }"#,
        "g.json",
    )
    .unwrap()
}

#[test]
fn a_grown_groom_covers_the_scalp_outside_the_face_and_stays_out_of_the_skull() {
    let d = def();
    let g = d.build().unwrap();
    let r = &g.report;
    assert_eq!((r.requested_guides, r.built_guides), (320, 320), "{r:?}");
    assert_eq!(r.rendered_strands, 320 * 35);
    assert_eq!(g.guide_count(), 320);
    assert_eq!(g.child_count(), 11_200);
    let c = DVec3::from(d.scalp.center);
    let radii = DVec3::from(d.scalp.radii);
    let norm = |p: [f32; 3]| ((DVec3::from(p.map(f64::from)) - c) / radii).length();
    let s1 = g.segments + 1;
    let mut roots = Vec::new();
    for k in 0..320 {
        let strand = &g.guides[k * s1..(k + 1) * s1];
        let root = DVec3::from(strand[0].map(f64::from));
        // On the ellipsoid, above the cap's edge, outside the 60° face cone.
        assert!((norm(strand[0]) - 1.0).abs() < 1e-6, "root {k}");
        let u = (root - c) / radii;
        assert!(u.y >= d.scalp.cap_min - 1e-6);
        assert!(u.normalize().angle_between(DVec3::Z).to_degrees() > 60.0 - 1e-6);
        // Every grown point outside the skull.
        for p in &strand[1..] {
            assert!(norm(*p) >= 1.0, "guide {k} enters the scalp");
        }
        roots.push(root);
    }
    // An even lattice: no two roots closer than half the mean nearest-neighbour distance.
    let min = (0..roots.len())
        .flat_map(|i| (0..i).map(move |j| (i, j)))
        .map(|(i, j)| roots[i].distance(roots[j]))
        .fold(f64::INFINITY, f64::min);
    let mean_nearest = {
        let mut nearest = 0.0;
        for i in 0..roots.len() {
            nearest += (0..roots.len())
                .filter(|&j| j != i)
                .map(|j| roots[i].distance(roots[j]))
                .fold(f64::INFINITY, f64::min);
        }
        nearest / roots.len() as f64
    };
    assert!(
        min > 0.5 * mean_nearest,
        "closest roots {min} m, mean nearest neighbour {mean_nearest} m"
    );
    // Deterministic; another seed grows another groom.
    assert_eq!(d.build().unwrap(), g);
    let mut other = d.clone();
    other.seed = 8;
    assert_ne!(other.build().unwrap().guides, g.guides);
}

/// A child with all its weight on its guide is that guide exactly; any child equals an f64
/// evaluation of the documented formula.
#[test]
fn children_follow_their_guides() {
    let g = def().build().unwrap();
    let s1 = g.segments + 1;
    let mut out = vec![[0.0f32; 3]; s1];
    // Child 0 of each guide is the guide.
    for k in [0usize, 17, 319] {
        g.child_points(&g.guides, k * 35, &mut out);
        assert_eq!(&out[..], &g.guides[k * s1..(k + 1) * s1]);
    }
    for c in [1usize, 500, 11_199] {
        g.child_points(&g.guides, c, &mut out);
        let (ids, w) = (g.child_guides[c], g.child_weights[c]);
        let at = |i: u32, k: usize| DVec3::from(g.guides[i as usize * s1 + k].map(f64::from));
        for k in 0..s1 {
            let (mut b0, mut bk) = (DVec3::ZERO, DVec3::ZERO);
            for j in 0..3 {
                b0 += at(ids[j], 0) * f64::from(w[j]);
                bk += at(ids[j], k) * f64::from(w[j]);
            }
            let own = at(ids[0], k) - at(ids[0], 0);
            let t = f64::from(g.clump) * k as f64 / g.segments as f64;
            let want = bk + (own - (bk - b0)) * t;
            let got = DVec3::from(out[k].map(f64::from));
            assert!(
                got.distance(want) < 1e-5,
                "child {c} point {k}: {got} vs {want}"
            );
        }
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
}

#[test]
fn grooms_past_the_limits_are_refused_with_the_numbers() {
    let mut d = def();
    d.guides = 5_000;
    d.segments = 30;
    d.children_per_guide = 20;
    let e = d.build().unwrap_err().to_string();
    for needle in [
        format!("{MAX_GUIDES}"),
        "5000".into(),
        format!("{MAX_SEGMENTS}"),
        "30".into(),
        format!("{MAX_RENDERED_STRANDS}"),
        "100000".into(),
    ] {
        assert!(e.contains(&needle), "lacks {needle}: {e}");
    }
    let mut d = def();
    d.clump = 2.0;
    d.thickness = [0.0, 0.1];
    let e = d.build().unwrap_err().to_string();
    assert!(e.contains("/clump") && e.contains("/thickness"), "{e}");
    let e = GroomDef::from_json(
        r#"{"format":"mien-groom","version":1,"head_bone":"Head","hair":1}"#,
        "g.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("hair"), "{e}");
}

/// A segment's gaussian by hand: a 2 cm segment along +X of 1 mm thickness has σ∥ = 1 cm along
/// X and σ⊥ = 0.5 mm across; along a diagonal the covariance is the rotated diagonal one.
#[test]
fn a_segment_is_an_elongated_gaussian_along_it() {
    use mien_core::hair::segment_gaussian;
    let (c, cov) = segment_gaussian(DVec3::ZERO, DVec3::new(0.02, 0.0, 0.0), 0.001);
    assert_eq!(c, DVec3::new(0.01, 0.0, 0.0));
    let want = [1e-4, 0.0, 0.0, 2.5e-7, 0.0, 2.5e-7];
    for (g, w) in cov.iter().zip(want) {
        assert!((g - w).abs() < 1e-15, "{cov:?}");
    }
    // Diagonal in x–y: Σ = σ∥²·uuᵀ + σ⊥²·(I − uuᵀ), worked by hand.
    let (_, cov) = segment_gaussian(DVec3::ZERO, DVec3::new(0.01, 0.01, 0.0), 0.001);
    // σ∥² = |b − a|² / 4 = 2e-4 / 4; σ⊥² = (0.001 / 2)²; u = (1, 1, 0)/√2.
    let (along, pe) = (2e-4 / 4.0, 2.5e-7);
    let want = [
        (along + pe) / 2.0,
        (along - pe) / 2.0,
        0.0,
        (along + pe) / 2.0,
        0.0,
        pe,
    ];
    for (g, w) in cov.iter().zip(want) {
        assert!((g - w).abs() < 1e-15, "{cov:?} vs {want:?}");
    }
    // A zero-length segment is round.
    let (_, cov) = segment_gaussian(DVec3::ONE, DVec3::ONE, 0.002);
    assert_eq!(cov, [1e-6, 0.0, 0.0, 1e-6, 0.0, 1e-6]);
}

/// The groom's strands into a sink: C·S slots, centres on the child strands' segment midpoints,
/// the root colour at the root end and the tip colour at the tip end (by the tint), refused when
/// the slots do not fit.
#[test]
fn a_groom_becomes_splats_along_its_strands() {
    use mien_core::hair::strand_splats;
    use mien_core::sink::SplatBuffers;
    let g = def().build().unwrap();
    let n = g.child_count() * g.segments;
    let mut out = SplatBuffers::new(n as u32 + 10);
    assert_eq!(strand_splats(&g, &g.guides, &mut out, 10).unwrap(), n);
    let s1 = g.segments + 1;
    let mut pts = vec![[0.0f32; 3]; s1];
    for c in [0usize, 4321, g.child_count() - 1] {
        g.child_points(&g.guides, c, &mut pts);
        for k in 0..g.segments {
            let i = 10 + c * g.segments + k;
            for j in 0..3 {
                let mid = (pts[k][j] + pts[k + 1][j]) / 2.0;
                assert!((out.center[i][j] - mid).abs() < 1e-6);
            }
        }
    }
    let unpack = |u: u32| [(u & 255) as f32 / 255.0, ((u >> 8) & 255) as f32 / 255.0];
    let first = unpack(out.color[10]);
    let last = unpack(out.color[10 + g.segments - 1]);
    let tint = g.child_tint[0];
    assert!((first[0] - g.colour[0][0] * tint).abs() < 0.01, "{first:?}");
    assert!((last[0] - g.colour[1][0] * tint).abs() < 0.02, "{last:?}");
    let mut small = SplatBuffers::new(n as u32);
    assert!(strand_splats(&g, &g.guides, &mut small, 1).is_err());
    assert!(strand_splats(&g, &g.guides[1..], &mut small, 0).is_err());
}

fn tfx_options(segments: usize, children: usize, scale: f64) -> mien_core::hair::TfxGroomOptions {
    mien_core::hair::TfxGroomOptions {
        head_bone: "head".into(),
        segments,
        children_per_guide: children,
        scale,
        origin: [0.0, 0.0, 0.0],
        clump: 0.3,
        thickness: [0.0015, 0.0004],
        colour: mien_core::hair::HairColourDef {
            root: [0.3, 0.2, 0.1],
            tip: [0.8, 0.6, 0.3],
            variation: 0.1,
        },
        seed: 3,
    }
}

/// Sintel's strands as a groom: the 228 guides (centimetres) with children, and the full groom
/// (metres) strand for strand; the guide points are the file's, resampled and scaled.
#[test]
fn tressfx_files_become_grooms_as_guides_or_whole() {
    use mien_core::hair::Groom;
    let t = read_tfx(&data("hair/sintel_hair_rust_vulkan_tressfx.tfx")).unwrap();
    let g = Groom::from_tfx(&t, &tfx_options(24, 16, 0.01)).unwrap();
    assert_eq!(
        (g.guide_count(), g.child_count(), g.segments),
        (228, 3648, 24)
    );
    assert_eq!(g.report.rendered_strands, 3648);
    // Roots and tips are the file's (scaled), each strand's length its polyline's (resampling by
    // arc length keeps it within the chord shortening of 24 segments).
    for s in 0..228 {
        let file = t.strand(s);
        let root = g.guides[s * 25];
        let tip = g.guides[s * 25 + 24];
        for j in 0..3 {
            assert!((root[j] - file[0][j] * 0.01).abs() < 1e-6, "strand {s}");
            assert!((tip[j] - file[31][j] * 0.01).abs() < 1e-6, "strand {s}");
        }
        let want = polyline_length(file) * 0.01;
        let got = polyline_length(&g.guides[s * 25..s * 25 + 25]);
        assert!(
            got <= want * (1.0 + 1e-6) && got > want * 0.97,
            "strand {s}: {got} vs {want}"
        );
    }
    // The first child of each guide is that guide.
    for s in 0..228 {
        assert_eq!(g.child_guides[s * 16][0], s as u32);
        assert_eq!(g.child_weights[s * 16], [1.0, 0.0, 0.0]);
    }
    let full = read_tfx(&data("hair/sintel_hair_frostbitten_16points.tfx")).unwrap();
    let g = Groom::from_tfx(&full, &tfx_options(15, 1, 1.0)).unwrap();
    assert_eq!((g.guide_count(), g.child_count()), (11_400, 11_400));
    // Resampling 15 segments of 15 keeps the points themselves where the file's segments are
    // equal, and always the roots.
    for s in 0..11_400 {
        assert_eq!(g.guides[s * 16], full.strand(s)[0]);
        assert_eq!(g.child_guides[s], [s as u32; 3]);
    }
    // Past the limits: 11,400 strands as guides with children, 25 segments, 0 segments.
    let e = Groom::from_tfx(&full, &tfx_options(15, 2, 1.0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("22800 exceeds the limit of 65536")
            || e.contains("11400 exceeds the limit of 4096"),
        "{e}"
    );
    let e = Groom::from_tfx(&full, &tfx_options(15, 6, 1.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("68400 exceeds the limit of 65536"), "{e}");
    let e = Groom::from_tfx(&t, &tfx_options(25, 1, 0.01))
        .unwrap_err()
        .to_string();
    assert!(e.contains("25 exceeds the limit of 24"), "{e}");
    let e = Groom::from_tfx(&t, &tfx_options(0, 1, 0.01))
        .unwrap_err()
        .to_string();
    assert!(e.contains("segments") && e.contains("at least 1"), "{e}");
    let e = Groom::from_tfx(&t, &tfx_options(8, 1, -1.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("scale"), "{e}");
}
