//! mien's bound-capture file: a captured splat cloud bound to a character's mesh
//! ([`crate::lift::bind`]), stored as a binary 3DGS `.ply` that every viewer still opens as the
//! capture (the standard INRIA properties hold the rest pose in world) with the embedding beside
//! it in `mien_*` properties, and a header naming the character and its topology.
//!
//! ```text
//! ply
//! format binary_little_endian 1.0
//! comment mien bound splats 1
//! comment mien character <label>
//! comment mien topology <V> <T> <fingerprint, 16 hex digits>
//! comment mien joint anchors <P>                                        (only when some are)
//! element vertex <N>
//! property float x, y, z, f_dc_0..2, opacity, scale_0..2, rot_0..3     (world, INRIA layout)
//! property uint mien_triangle
//! property float mien_bary_1, mien_bary_2, mien_offset, mien_rot_0..3, mien_scale_0..2
//! end_header
//! ```
//!
//! The fingerprint (FNV-1a 64 over the vertex count and every triangle's indices) is a change
//! detector, not a cryptographic hash: a character with other topology is refused at load.
//!
//! `joint anchors P` says the embedding also uses the rig's `P` joint anchor triangles
//! ([`crate::rig::anchor`]: triangle `T + p` for palette entry `p`), where gaussians far from the
//! surface were left rigid to a joint; the topology line is the character's own, without them.

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::io::ply::SplatCloud;
use crate::io::ply::gaussian::{SH_C0, decompose_covariance, opacity_to_logit};
use crate::lift::{BoundGaussian, BoundLift};

/// Bytes per record: 14 INRIA floats, the triangle, 10 embedding floats.
const RECORD_BYTES: usize = 25 * 4;

/// The embedding's float properties after `mien_triangle`, in record order.
const EMBEDDING: [&str; 10] = [
    "mien_bary_1",
    "mien_bary_2",
    "mien_offset",
    "mien_rot_0",
    "mien_rot_1",
    "mien_rot_2",
    "mien_rot_3",
    "mien_scale_0",
    "mien_scale_1",
    "mien_scale_2",
];

/// Largest bound-capture file read, bytes (2 GiB).
pub const MAX_BOUND_BYTES: u64 = 1 << 31;

/// FNV-1a 64 over the vertex count and the triangles' indices (little-endian u32s).
pub fn topology_fingerprint(vertex_count: u32, triangles: &[[u32; 3]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u32| {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(vertex_count);
    for t in triangles {
        t.iter().for_each(|&v| eat(v));
    }
    h
}

/// A bound capture read back: the embedding and the topology it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundCapture {
    /// The embedding (gaussians with their triangles; `triangles` left empty: the character's).
    pub lift: BoundLift,
    /// The character named at bind time.
    pub character: String,
    /// Its rest vertex count.
    pub vertex_count: u32,
    /// Its triangle count.
    pub triangle_count: u32,
    /// Its [`topology_fingerprint`].
    pub fingerprint: u64,
    /// Joint anchor triangles the embedding uses after the character's own (0: none): the
    /// runtime appends the rig's anchors ([`crate::rig::RigData::with_joint_anchors`]), which must
    /// number exactly this many.
    pub anchors: u32,
    /// The file it was read from (the label given to [`parse_bound_ply`]), for messages.
    pub file: String,
}

impl BoundCapture {
    /// Check that a character of `vertex_count` vertices and these `triangles` is the one bound.
    /// `file` names the character (its source) in the message.
    ///
    /// # Errors
    /// [`Error::Format`] naming the capture's file and its `comment mien topology` line, with the
    /// counts and fingerprints (bound and found) when any differs.
    pub fn check_topology(
        &self,
        file: &str,
        vertex_count: u32,
        triangles: &[[u32; 3]],
    ) -> Result<()> {
        let fp = topology_fingerprint(vertex_count, triangles);
        if vertex_count != self.vertex_count
            || triangles.len() as u64 != u64::from(self.triangle_count)
            || fp != self.fingerprint
        {
            return Err(Error::format(
                &self.file,
                "comment mien topology (header line 5)",
                format!(
                    "bound to `{}` ({} vertices, {} triangles, topology {:016x}); the character `{file}` has {vertex_count} vertices, {} triangles, topology {fp:016x}",
                    self.character,
                    self.vertex_count,
                    self.triangle_count,
                    self.fingerprint,
                    triangles.len()
                ),
            ));
        }
        Ok(())
    }
}

/// Encode a bound capture: `cloud` (the capture, for the world properties; the gaussians of
/// `lift` in order, so dropped far gaussians must be removed from it first — pass the `kept`
/// indices), the embedding, and the character's label and topology: `vertex_count` its own
/// vertices, and the last `anchors` of `lift.triangles` the rig's joint anchors (0 when none).
///
/// # Errors
/// [`Error::Mismatch`] when `kept` and the lift's gaussians differ in number; [`Error::Invalid`]
/// for more anchors than triangles, a kept index outside the cloud or a covariance that cannot be
/// decomposed.
pub fn write_bound_ply(
    cloud: &SplatCloud,
    kept: &[usize],
    lift: &BoundLift,
    character: &str,
    vertex_count: u32,
    anchors: u32,
) -> Result<Vec<u8>> {
    if kept.len() != lift.gaussians.len() {
        return Err(Error::Mismatch {
            what: "bound capture: kept gaussians".into(),
            expected: lift.gaussians.len() as u64,
            found: kept.len() as u64,
        });
    }
    let Some(own) = lift.triangles.len().checked_sub(anchors as usize) else {
        return Err(Error::Invalid {
            what: "bound capture: joint anchors".into(),
            reason: format!("{anchors} anchors but {} triangles", lift.triangles.len()),
        });
    };
    let own = &lift.triangles[..own];
    let mut h = String::new();
    let _ = writeln!(
        h,
        "ply\nformat binary_little_endian 1.0\ncomment mien bound splats 1"
    );
    let label: String = character.chars().filter(|c| !c.is_control()).collect();
    let _ = writeln!(h, "comment mien character {label}");
    let _ = writeln!(
        h,
        "comment mien topology {vertex_count} {} {:016x}",
        own.len(),
        topology_fingerprint(vertex_count, own)
    );
    if anchors > 0 {
        let _ = writeln!(h, "comment mien joint anchors {anchors}");
    }
    let _ = writeln!(h, "element vertex {}", kept.len());
    for p in [
        "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
        "rot_0", "rot_1", "rot_2", "rot_3",
    ] {
        let _ = writeln!(h, "property float {p}");
    }
    let _ = writeln!(h, "property uint mien_triangle");
    for p in EMBEDDING {
        let _ = writeln!(h, "property float {p}");
    }
    h.push_str("end_header\n");
    let mut out = h.into_bytes();
    out.reserve(kept.len() * RECORD_BYTES);
    let mut f = |v: f32| out.extend_from_slice(&v.to_le_bytes());
    for (&i, g) in kept.iter().zip(&lift.gaussians) {
        let bad = |r: &str| Error::Invalid {
            what: format!("bound capture gaussian {i}"),
            reason: r.into(),
        };
        let c = cloud
            .center
            .get(i)
            .ok_or_else(|| bad("index outside the capture"))?;
        let rgba = cloud.rgba[i];
        let sr = decompose_covariance(cloud.covariance[i].map(|r| r.map(f64::from)))
            .ok_or_else(|| bad("covariance cannot be decomposed"))?;
        for &x in c {
            f(x);
        }
        for &x in &rgba[..3] {
            f(((f64::from(x) - 0.5) / SH_C0) as f32);
        }
        f(opacity_to_logit(f64::from(rgba[3])).0 as f32);
        for x in sr.log_scale {
            f(x as f32);
        }
        for x in sr.rotation {
            f(x as f32);
        }
        out_word(&mut f, g.triangle);
        for x in [g.bary[0], g.bary[1], g.offset]
            .into_iter()
            .chain(g.rotation)
            .chain(g.log_scale)
        {
            f(x);
        }
    }
    Ok(out)
}

/// Push a u32 through the float pusher (its bits).
fn out_word(f: &mut impl FnMut(f32), w: u32) {
    f(f32::from_bits(w));
}

/// Parse a bound capture written by [`write_bound_ply`].
///
/// # Errors
/// [`Error::Format`] naming the file and the header line or record that is not exactly mien's
/// layout (another property list, a missing topology line), a record count the bytes do not hold
/// (`element vertex`), a record's `mien_triangle` past the topology's triangles and anchors, or a
/// non-finite embedding value (field `vertex.mien_bary_1`, …, index the record). Never panics:
/// fuzzed as target `bound_ply` (`mien_core::fuzz`, feature `fuzz`).
pub fn parse_bound_ply(bytes: &[u8], file: &str) -> Result<BoundCapture> {
    let end = bytes
        .windows(11)
        .take(1 << 20)
        .position(|w| w == b"end_header\n")
        .ok_or_else(|| {
            Error::format(
                file,
                "header",
                "not a bound capture (no .ply header): bind a capture to its character with `mien bind` first",
            )
        })?;
    let head = std::str::from_utf8(&bytes[..end])
        .map_err(|_| Error::format(file, "header", "not UTF-8"))?;
    let lines: Vec<&str> = head.lines().collect();
    let expect = |k: usize, want: &str| -> Result<()> {
        if lines.get(k).map(|l| l.trim()) == Some(want) {
            Ok(())
        } else {
            Err(Error::format(
                file,
                format!("header line {}", k + 1),
                format!(
                    "`{}` where `{want}` was expected",
                    lines.get(k).unwrap_or(&"")
                ),
            ))
        }
    };
    if lines.get(2).map(|l| l.trim()) != Some("comment mien bound splats 1") {
        return Err(Error::format(
            file,
            "header",
            "not a bound capture (no `comment mien bound splats 1` line): bind a capture to its character with `mien bind` first",
        ));
    }
    expect(0, "ply")?;
    expect(1, "format binary_little_endian 1.0")?;
    let character = lines
        .get(3)
        .and_then(|l| l.strip_prefix("comment mien character "))
        .ok_or_else(|| Error::format(file, "header line 4", "no `comment mien character` line"))?
        .to_string();
    let topo: Vec<&str> = lines
        .get(4)
        .and_then(|l| l.strip_prefix("comment mien topology "))
        .ok_or_else(|| Error::format(file, "header line 5", "no `comment mien topology` line"))?
        .split_whitespace()
        .collect();
    let bad_topo = || {
        Error::format(
            file,
            "header line 5",
            "topology is `<vertices> <triangles> <16 hex digits>`",
        )
    };
    let [v, t, fp] = topo[..] else {
        return Err(bad_topo());
    };
    let vertex_count: u32 = v.parse().map_err(|_| bad_topo())?;
    let triangle_count: u32 = t.parse().map_err(|_| bad_topo())?;
    let fingerprint = u64::from_str_radix(fp, 16).map_err(|_| bad_topo())?;
    // The optional joint-anchor line shifts the rest of the header by one.
    let (anchors, o) = match lines
        .get(5)
        .and_then(|l| l.strip_prefix("comment mien joint anchors "))
    {
        Some(a) => {
            let a: u32 = a.trim().parse().ok().filter(|&a| a > 0).ok_or_else(|| {
                Error::format(
                    file,
                    "header line 6",
                    "joint anchors is `<count>`, a positive integer",
                )
            })?;
            (a, 1)
        }
        None => (0, 0),
    };
    let n: usize = lines
        .get(5 + o)
        .and_then(|l| l.strip_prefix("element vertex "))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| {
            Error::format(
                file,
                format!("header line {}", 6 + o),
                "no `element vertex <count>` line",
            )
        })?;
    let names = [
        "x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity", "scale_0", "scale_1", "scale_2",
        "rot_0", "rot_1", "rot_2", "rot_3",
    ];
    for (k, p) in names.iter().enumerate() {
        expect(6 + o + k, &format!("property float {p}"))?;
    }
    expect(20 + o, "property uint mien_triangle")?;
    for (k, p) in EMBEDDING.iter().enumerate() {
        expect(21 + o + k, &format!("property float {p}"))?;
    }
    if lines.len() != 31 + o {
        return Err(Error::format(
            file,
            "header",
            format!("{} lines where mien's layout has {}", lines.len(), 31 + o),
        ));
    }
    if n == 0 {
        return Err(Error::format(file, "element vertex", "holds no gaussians"));
    }
    let body = &bytes[end + 11..];
    // u128: a hostile count times the record size must not overflow.
    let need = n as u128 * RECORD_BYTES as u128;
    if body.len() as u128 != need {
        return Err(Error::format(
            file,
            "element vertex",
            format!(
                "{n} records need {need} bytes after the header; the file has {}",
                body.len()
            ),
        ));
    }
    let mut gaussians = Vec::with_capacity(n);
    for (i, r) in body.chunks_exact(RECORD_BYTES).enumerate() {
        let w = |k: usize| u32::from_le_bytes([r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]]);
        let fl = |k: usize| f32::from_bits(w(k));
        let dc = [fl(3), fl(4), fl(5)].map(|d| (0.5 + SH_C0 * f64::from(d)) as f32);
        let alpha = crate::io::ply::gaussian::logit_to_opacity(f64::from(fl(6))) as f32;
        let g = BoundGaussian {
            triangle: w(14),
            bary: [fl(15), fl(16)],
            offset: fl(17),
            rotation: [fl(18), fl(19), fl(20), fl(21)],
            log_scale: [fl(22), fl(23), fl(24)],
            color: crate::sink::pack4x8unorm([dc[0], dc[1], dc[2], alpha]),
        };
        let limit = u64::from(triangle_count) + u64::from(anchors);
        if u64::from(g.triangle) >= limit {
            return Err(Error::format_at(
                file,
                "vertex.mien_triangle",
                i,
                format!(
                    "triangle {} past the topology's {triangle_count} triangles and {anchors} joint anchors",
                    g.triangle
                ),
            ));
        }
        if let Some(k) = (15..25).find(|&k| !fl(k).is_finite()) {
            return Err(Error::format_at(
                file,
                format!("vertex.{}", EMBEDDING[k - 15]),
                i,
                format!("{} is not finite", fl(k)),
            ));
        }
        gaussians.push(g);
    }
    Ok(BoundCapture {
        lift: BoundLift {
            report: crate::lift::BoundReport {
                lift: "bound".into(),
                gaussians: n as u64,
                triangles: u64::from(triangle_count),
                ..Default::default()
            },
            gaussians,
            triangles: Vec::new(),
        },
        character,
        vertex_count,
        triangle_count,
        fingerprint,
        anchors,
        file: file.to_string(),
    })
}
