//! Niantic's SPZ splat format: a reader for versions 1–4 and a writer of version 3.
//!
//! **Layout** (the reference implementation `nianticlabs/spz`, `load-spz.cc`; version 4 as the
//! files carry it). Versions 1–3 are one gzip stream of a 16-byte header — magic `NGSP`
//! (`0x5053474e` little-endian), `version` u32, `numPoints` u32, `shDegree` u8, `fractionalBits`
//! u8, `flags` u8 (0x1 antialiased, 0x2 extensions follow the header), a reserved byte — then the
//! attribute arrays, each for every point in turn: positions (v1: 3 × f16; v2+: 3 × 24-bit signed
//! fixed point with `fractionalBits`), alphas (1 byte), colours (3), log-scales (3), rotations (v1–2:
//! 3 bytes `xyz`; v3+: 4 bytes "smallest three"), SH rest coefficients (`dim × 3` bytes, per
//! coefficient its `r g b`). Version 4 is not gzipped: a 32-byte header (the 16 above, then the
//! number of streams u8 in the reserved byte, the table's offset u32 and 12 reserved bytes), a
//! table of `(compressed, uncompressed)` u64 sizes per stream, and each attribute array as its own
//! zstd frame.
//!
//! **Values.** Position = fixed / 2^fractionalBits (metres, SPZ's RUB axes = glTF's: no flip);
//! opacity = alpha / 255; SH DC = (colour / 255 − 0.5) / 0.15; log σ = byte / 16 − 10; v2 rotation
//! `xyz = byte / 127.5 − 1`, `w = √(1 − |xyz|²)`; v3+ rotation: bits 30–31 index the largest
//! component (of `x y z w`), the other three in order from the high bits down, 10 bits each
//! (sign, then 9-bit magnitude × √½ / 511), the largest `√(1 − Σ)`; SH = (byte − 128) / 128.

use std::io::Read;

use crate::error::{Error, Result};
use crate::io::ply::gaussian::{SH_C0, compose_covariance, decompose_covariance};
use crate::io::ply::{SplatCloud, sh_degree_of};
use crate::sink::{SlotRange, SplatBuffers};

/// `NGSP`, little-endian.
pub const MAGIC: u32 = 0x5053_474e;
/// Most points a file may declare (10 M, the reference loader's own cap); more are refused before
/// anything is decompressed.
pub const MAX_POINTS: u32 = 10_000_000;
/// Colour scale of the DC term (`colorScale` in the reference).
pub const COLOR_SCALE: f64 = 0.15;
/// Fractional bits the writer uses (¼ mm; ±2048 m range).
pub const WRITE_FRACTIONAL_BITS: u8 = 12;

fn fmt(file: &str, field: &str, reason: impl Into<String>) -> Error {
    Error::format(file, field, reason)
}

/// SH rest coefficients per colour channel of a degree (0, 3, 8, 15).
fn sh_dim(degree: u8) -> usize {
    (usize::from(degree) + 1).pow(2) - 1
}

/// Largest SPZ file read, bytes (1 GiB).
pub const MAX_SPZ_BYTES: u64 = 1 << 30;

/// Read and parse an SPZ file ([`parse_spz`]).
///
/// # Errors
/// As [`crate::io::read::read_file_capped`] (not a regular file, over [`MAX_SPZ_BYTES`]) and
/// [`parse_spz`].
pub fn read_spz(path: &std::path::Path) -> Result<SplatCloud> {
    let bytes = crate::io::read::read_file_capped(path, MAX_SPZ_BYTES)?;
    parse_spz(&bytes, &path.display().to_string())
}

/// The version an SPZ file declares (looking inside the gzip stream for versions 1–3), `None`
/// when the bytes do not start like SPZ.
pub fn spz_version(bytes: &[u8]) -> Option<u32> {
    let mut head = [0u8; 8];
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(bytes)
            .read_exact(&mut head)
            .ok()?;
    } else {
        head.copy_from_slice(bytes.get(..8)?);
    }
    (u32::from_le_bytes(head[..4].try_into().ok()?) == MAGIC)
        .then(|| u32::from_le_bytes(head[4..].try_into().unwrap_or_default()))
}

/// Read an SPZ file (any version 1–4) into a [`SplatCloud`] (SH rest coefficients are counted,
/// not kept, as for `.ply`).
///
/// # Errors
/// [`Error::Format`] naming the file and field for a wrong magic, an unknown version, more than
/// [`MAX_POINTS`] points, an SH degree over 3, extensions (flag 0x2: not read), a damaged or short
/// stream, or a decoded value that is not finite.
pub fn parse_spz(bytes: &[u8], file: &str) -> Result<SplatCloud> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        // v1–3: gzip of header + arrays. Read the header first to bound the rest.
        let mut gz = flate2::read::GzDecoder::new(bytes);
        let mut head = [0u8; 16];
        gz.read_exact(&mut head)
            .map_err(|e| fmt(file, "gzip stream", format!("no 16-byte SPZ header: {e}")))?;
        let h = Header::parse(&head, file)?;
        if h.version > 3 {
            return Err(fmt(
                file,
                "header.version",
                format!("{} inside gzip: version 4 files are not gzipped", h.version),
            ));
        }
        let sizes = h.stream_sizes();
        let total: u64 = sizes.iter().sum();
        let mut data = Vec::new();
        gz.take(total + 1)
            .read_to_end(&mut data)
            .map_err(|e| fmt(file, "gzip stream", e.to_string()))?;
        if data.len() as u64 != total {
            return Err(fmt(
                file,
                "data",
                format!(
                    "{} bytes after the header where {} points need {total}",
                    data.len(),
                    h.points
                ),
            ));
        }
        let mut streams = Vec::with_capacity(sizes.len());
        let mut at = 0usize;
        for s in sizes {
            streams.push(&data[at..at + s as usize]);
            at += s as usize;
        }
        return decode(&h, &streams, file);
    }
    if bytes.len() < 32 {
        return Err(fmt(
            file,
            "header",
            "neither gzip (SPZ 1–3) nor a 32-byte SPZ 4 header",
        ));
    }
    let h = Header::parse(&bytes[..16], file)?;
    if h.version != 4 {
        return Err(fmt(
            file,
            "header.version",
            format!(
                "{} without gzip: only version 4 files are stored raw",
                h.version
            ),
        ));
    }
    let streams_n = usize::from(bytes[15]);
    let toc = u32::from_le_bytes(bytes[16..20].try_into().unwrap_or_default()) as usize;
    let sizes = h.stream_sizes();
    if streams_n != sizes.len() {
        return Err(fmt(
            file,
            "header.streams",
            format!(
                "{streams_n} streams where SH degree {} needs {}",
                h.sh_degree,
                sizes.len()
            ),
        ));
    }
    let table_end = toc
        .checked_add(16 * streams_n)
        .filter(|&e| toc >= 32 && e <= bytes.len())
        .ok_or_else(|| {
            fmt(
                file,
                "header.toc",
                format!("table at {toc} lies outside the file"),
            )
        })?;
    let mut at = table_end;
    let mut data = Vec::with_capacity(streams_n);
    for (k, want) in sizes.iter().enumerate() {
        let e = &bytes[toc + 16 * k..toc + 16 * k + 16];
        let comp = u64::from_le_bytes(e[..8].try_into().unwrap_or_default());
        let raw = u64::from_le_bytes(e[8..].try_into().unwrap_or_default());
        let field = format!("toc[{k}] ({})", STREAM_NAMES[k.min(5)]);
        if raw != *want {
            return Err(fmt(
                file,
                &field,
                format!("{raw} bytes where {} points need {want}", h.points),
            ));
        }
        let end = (at as u64)
            .checked_add(comp)
            .filter(|&e| e <= bytes.len() as u64)
            .ok_or_else(|| {
                fmt(
                    file,
                    &field,
                    format!("{comp} compressed bytes run past the file"),
                )
            })? as usize;
        let mut dec = ruzstd::streaming_decoder::StreamingDecoder::new(&bytes[at..end])
            .map_err(|e| fmt(file, &field, format!("zstd: {e}")))?;
        let mut out = Vec::with_capacity(raw as usize);
        (&mut dec)
            .take(raw + 1)
            .read_to_end(&mut out)
            .map_err(|e| fmt(file, &field, format!("zstd: {e}")))?;
        if out.len() as u64 != raw {
            return Err(fmt(
                file,
                &field,
                format!("decompressed to {} bytes, {raw} declared", out.len()),
            ));
        }
        data.push(out);
        at = end;
    }
    let refs: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    decode(&h, &refs, file)
}

/// The attribute streams' names, in file order.
const STREAM_NAMES: [&str; 6] = ["positions", "alphas", "colors", "scales", "rotations", "sh"];

struct Header {
    version: u32,
    points: u32,
    sh_degree: u8,
    fractional_bits: u8,
}

impl Header {
    fn parse(h: &[u8], file: &str) -> Result<Self> {
        let u = |k: usize| u32::from_le_bytes(h[k..k + 4].try_into().unwrap_or_default());
        if u(0) != MAGIC {
            return Err(fmt(
                file,
                "header.magic",
                format!("{:#010x}, not NGSP", u(0)),
            ));
        }
        let version = u(4);
        if !(1..=4).contains(&version) {
            return Err(fmt(
                file,
                "header.version",
                format!("{version}: versions 1 to 4 are read"),
            ));
        }
        let points = u(8);
        if points > MAX_POINTS {
            return Err(fmt(
                file,
                "header.numPoints",
                format!("{points}: at most {MAX_POINTS}"),
            ));
        }
        let sh_degree = h[12];
        if sh_degree > 3 {
            return Err(fmt(
                file,
                "header.shDegree",
                format!("{sh_degree}: SH degrees 0 to 3 are read"),
            ));
        }
        let fractional_bits = h[13];
        if fractional_bits > 23 {
            return Err(fmt(
                file,
                "header.fractionalBits",
                format!("{fractional_bits}: at most 23"),
            ));
        }
        if h[14] & 0x2 != 0 {
            return Err(fmt(
                file,
                "header.flags",
                "0x2: the file carries extensions, which mien does not read",
            ));
        }
        Ok(Header {
            version,
            points,
            sh_degree,
            fractional_bits,
        })
    }

    /// Bytes of each stream, in file order (the SH stream only for degree > 0).
    fn stream_sizes(&self) -> Vec<u64> {
        let n = u64::from(self.points);
        let mut s = vec![
            n * if self.version == 1 { 6 } else { 9 },
            n,
            3 * n,
            3 * n,
            n * if self.version >= 3 { 4 } else { 3 },
        ];
        if self.sh_degree > 0 {
            s.push(n * 3 * sh_dim(self.sh_degree) as u64);
        }
        s
    }
}

/// A v3+ "smallest three" rotation → `(x, y, z, w)`.
pub fn unpack_smallest_three(word: u32) -> [f64; 4] {
    let largest = (word >> 30) as usize;
    let mut q = [0.0f64; 4];
    let mut c = word;
    let mut sum = 0.0;
    for i in (0..4).rev() {
        if i == largest {
            continue;
        }
        let mag = f64::from(c & 511) * std::f64::consts::FRAC_1_SQRT_2 / 511.0;
        q[i] = if (c >> 9) & 1 == 1 { -mag } else { mag };
        sum += q[i] * q[i];
        c >>= 10;
    }
    q[largest] = (1.0 - sum).max(0.0).sqrt();
    q
}

/// `(x, y, z, w)` → the v3 word (the largest component made positive by negating the whole).
pub fn pack_smallest_three(q: [f64; 4]) -> u32 {
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    let q = if n > 0.0 && n.is_finite() {
        q.map(|x| x / n)
    } else {
        [0.0, 0.0, 0.0, 1.0]
    };
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    let negate = q[largest] < 0.0;
    let mut word = largest as u32;
    for (i, &x) in q.iter().enumerate() {
        if i == largest {
            continue;
        }
        let neg = u32::from((x < 0.0) != negate);
        let mag = (511.0 * (x.abs() / std::f64::consts::FRAC_1_SQRT_2) + 0.5).min(511.0) as u32;
        word = (word << 10) | (neg << 9) | mag;
    }
    word
}

fn decode(h: &Header, s: &[&[u8]], file: &str) -> Result<SplatCloud> {
    let n = h.points as usize;
    let scale = 1.0 / f64::from(1u32 << h.fractional_bits);
    let mut out = SplatCloud {
        center: Vec::with_capacity(n),
        rgba: Vec::with_capacity(n),
        covariance: Vec::with_capacity(n),
        properties: Vec::new(),
        sh_rest: 3 * sh_dim(h.sh_degree),
    };
    debug_assert!(sh_degree_of(out.sh_rest).is_some());
    for i in 0..n {
        let p = if h.version == 1 {
            let b = &s[0][6 * i..6 * i + 6];
            [0, 1, 2].map(|k| half::f16::from_le_bytes([b[2 * k], b[2 * k + 1]]).to_f64())
        } else {
            let b = &s[0][9 * i..9 * i + 9];
            [0, 1, 2].map(|k| {
                let v = i32::from(b[3 * k])
                    | (i32::from(b[3 * k + 1]) << 8)
                    | (i32::from(b[3 * k + 2]) << 16);
                f64::from((v << 8) >> 8) * scale
            })
        };
        let alpha = f64::from(s[1][i]) / 255.0;
        let c = &s[2][3 * i..3 * i + 3];
        let rgb = [0, 1, 2].map(|k| 0.5 + SH_C0 * ((f64::from(c[k]) / 255.0 - 0.5) / COLOR_SCALE));
        let ls = [0, 1, 2].map(|k| f64::from(s[3][3 * i + k]) / 16.0 - 10.0);
        let q = if h.version >= 3 {
            let b = &s[4][4 * i..4 * i + 4];
            unpack_smallest_three(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        } else {
            let b = &s[4][3 * i..3 * i + 3];
            let xyz = [0, 1, 2].map(|k| f64::from(b[k]) / 127.5 - 1.0);
            let w = (1.0 - xyz.iter().map(|x| x * x).sum::<f64>())
                .max(0.0)
                .sqrt();
            [xyz[0], xyz[1], xyz[2], w]
        };
        let cov = compose_covariance(ls, [q[3], q[0], q[1], q[2]]).ok_or_else(|| {
            fmt(
                file,
                &format!("rotations[{i}]"),
                "a zero quaternion or a covariance that overflows",
            )
        })?;
        if !p.iter().all(|x| x.is_finite()) {
            return Err(fmt(file, &format!("positions[{i}]"), "not finite"));
        }
        out.center.push(p.map(|x| x as f32));
        out.rgba
            .push([rgb[0] as f32, rgb[1] as f32, rgb[2] as f32, alpha as f32]);
        out.covariance.push(cov.map(|r| r.map(|x| x as f32)));
    }
    Ok(out)
}

/// What [`encode_spz`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SpzWriteReport {
    /// Splats written.
    pub written: u64,
    /// Slots skipped because their opacity was 0 (cleared slots; SPZ's alpha byte 0 decodes to a
    /// logit of −∞ in the reference loader).
    pub transparent_skipped: u64,
    /// Log-scales outside SPZ's `[−10, 5.94]` clamped to it (σ under 45 µm or over 380 m).
    pub scales_clamped: u64,
}

/// [`encode_spz`], then the bytes written to `path` atomically
/// ([`crate::io::atomic::write_atomic_bytes`]: the target keeps its old content, or stays absent,
/// on any error). The same shape as [`crate::io::ply::write_splat_ply`].
///
/// # Errors
/// As [`encode_spz`]; [`Error::Io`] naming `path` when writing fails.
pub fn write_spz(
    path: &std::path::Path,
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<SpzWriteReport> {
    let (bytes, report) = encode_spz(buffers, ranges)?;
    crate::io::atomic::write_atomic_bytes(path, &bytes)?;
    Ok(report)
}

/// Encode the slots `ranges` of `buffers` as an SPZ version 3 file (gzip, SH degree 0, 12
/// fractional bits, smallest-three rotations): the layout every SPZ reader of the last two years
/// reads (Spark, the reference loader).
///
/// Each covariance is decomposed as for `.ply` ([`decompose_covariance`]); colours are encoded as
/// the DC term `(rgb − 0.5) / C0`; slots of opacity 0 are skipped and counted; log-scales beyond
/// the byte's range are clamped and counted.
///
/// # Errors
/// [`Error::Invalid`] naming the slot for a non-finite centre or covariance, or a centre beyond
/// ±2048 m (the 24-bit fixed-point range); [`Error::Slots`] for a range outside the buffers.
///
/// ```
/// use mien_core::io::spz::{parse_spz, encode_spz};
/// use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};
/// let mut b = SplatBuffers::new(1);
/// b.center[0] = [0.25, 1.5, -0.5, 0.0];
/// b.cov_a[0] = [1e-4, 0.0, 0.0, 1e-4]; // σ = 1 cm, round
/// b.cov_b[0] = [0.0, 1e-4, 0.0, 0.0];
/// b.color[0] = pack4x8unorm([0.8, 0.4, 0.2, 1.0]);
/// let (bytes, report) = encode_spz(&b, &[SlotRange { offset: 0, count: 1 }])?;
/// assert_eq!(report.written, 1);
/// let back = parse_spz(&bytes, "one.spz")?;
/// assert!((back.center[0][1] - 1.5).abs() < 1.0 / 4096.0);
/// # Ok::<(), mien_core::Error>(())
/// ```
pub fn encode_spz(
    buffers: &SplatBuffers,
    ranges: &[SlotRange],
) -> Result<(Vec<u8>, SpzWriteReport)> {
    buffers.check_file_ranges(ranges)?;
    let mut rep = SpzWriteReport::default();
    let (slots, skipped) = buffers.visible_slots(ranges);
    rep.transparent_skipped = skipped;
    let n = slots.len();
    if n as u64 > u64::from(MAX_POINTS) {
        return Err(Error::Limit {
            what: "SPZ points".into(),
            limit: u64::from(MAX_POINTS),
            found: n as u64,
        });
    }
    let (mut pos, mut alpha, mut col, mut scl, mut rot) = (
        Vec::with_capacity(9 * n),
        Vec::with_capacity(n),
        Vec::with_capacity(3 * n),
        Vec::with_capacity(3 * n),
        Vec::with_capacity(4 * n),
    );
    let fixed = f64::from(1u32 << WRITE_FRACTIONAL_BITS);
    let limit = f64::from(1i32 << 23) - 1.0;
    for &i in &slots {
        let bad = |reason: &str| Error::Invalid {
            what: format!("SPZ slot {i}"),
            reason: reason.into(),
        };
        for &x in &buffers.center[i][..3] {
            let v = (f64::from(x) * fixed).round();
            if !v.is_finite() || v.abs() > limit {
                return Err(bad("centre not finite or beyond ±2048 m"));
            }
            let v = v as i32;
            pos.extend_from_slice(&[v as u8, (v >> 8) as u8, (v >> 16) as u8]);
        }
        let cov = buffers.covariance(i).map(|r| r.map(f64::from));
        let sr = decompose_covariance(cov).ok_or_else(|| bad("covariance not finite"))?;
        for &l in &sr.log_scale {
            let b = (l + 10.0) * 16.0;
            if !(0.0..=255.0).contains(&b) {
                rep.scales_clamped += 1;
            }
            scl.push(b.round().clamp(0.0, 255.0) as u8);
        }
        let [w, x, y, z] = sr.rotation;
        rot.extend_from_slice(&pack_smallest_three([x, y, z, w]).to_le_bytes());
        let rgba = buffers.rgba(i);
        alpha.push((f64::from(rgba[3]) * 255.0).round().clamp(1.0, 255.0) as u8);
        for &ch in &rgba[..3] {
            let dc = (f64::from(ch) - 0.5) / SH_C0;
            col.push((dc * COLOR_SCALE * 255.0 + 127.5).round().clamp(0.0, 255.0) as u8);
        }
    }
    let mut raw = Vec::with_capacity(16 + 20 * n);
    raw.extend_from_slice(&MAGIC.to_le_bytes());
    raw.extend_from_slice(&3u32.to_le_bytes());
    raw.extend_from_slice(&(n as u32).to_le_bytes());
    raw.extend_from_slice(&[0, WRITE_FRACTIONAL_BITS, 0, 0]);
    for s in [&pos, &alpha, &col, &scl, &rot] {
        raw.extend_from_slice(s);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &raw).map_err(|e| Error::Invalid {
        what: "SPZ gzip".into(),
        reason: e.to_string(),
    })?;
    let bytes = gz.finish().map_err(|e| Error::Invalid {
        what: "SPZ gzip".into(),
        reason: e.to_string(),
    })?;
    rep.written = n as u64;
    Ok((bytes, rep))
}
