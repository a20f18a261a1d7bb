//! Live Link Face over UDP: the app's v6 datagrams, recordings of them, and the jitter buffer a
//! live receiver plays them through.
//!
//! **Packet (v6)**, all integers and floats big-endian (DATA.md `livelink-udp/`, the format
//! think-biq/LLV records):
//!
//! | bytes | field |
//! |---|---|
//! | 1 | version, 6 |
//! | 4 + n | device id: u32 length n, then n bytes of UTF-8 |
//! | 4 + m | subject name: u32 length m, then m bytes of UTF-8 |
//! | 16 | frame time: i32 frame, f32 sub-frame, i32 rate numerator, i32 rate denominator |
//! | 1 | value count, 61 |
//! | 4 × 61 | f32 values in Epic's enum order: the 52 ARKit blendshapes ([`crate::anim::arkit::ARKIT_52`] order), then head yaw / pitch / roll and each eye's yaw / pitch / roll (radians) |
//!
//! A datagram that breaks any rule ([`PacketError`]) is refused whole; it is never a panic.
//!
//! **Recording** (`.gesichter`): gzip of u8 version 6, u32 count, then `count` × (u32 length,
//! packet).
//!
//! **Jitter buffer** ([`JitterBuffer`]): packets are kept ordered by frame time; the first
//! packet ties the sender's clock to the receiver's (`offset = arrival − frame time`), and a
//! packet is played `delay` seconds after its frame time on that clock. A packet whose frame time
//! is not after the last one played is late; one whose frame time is already buffered is a
//! duplicate; both are counted and dropped, never fatal. A full buffer drops its oldest packet
//! (counted). A packet whose frame time disagrees with the receiver's clock by more than the
//! resync window (`max(1 s, 4 × delay)`) is held: when the next packet agrees with it (the sender
//! restarted, or its time of day wrapped past midnight) a new **epoch** starts — the clocks are
//! tied again at the held packet, what was buffered is dropped (counted) and playing goes on;
//! when the next packet is on the old clock, the held one was a stray and is dropped (counted).
//! One bad packet never stalls a session, nor costs it the packets around it.

use std::io::Read;
use std::path::Path;

use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::error::{Error, Result};
use crate::io::livelink_csv::LIVELINK_AUX_COLUMNS;

/// The packet version mien decodes.
pub const PACKET_VERSION: u8 = 6;
/// Values per packet: 52 blendshapes + 9 angles.
pub const PACKET_VALUES: usize = 61;
/// Longest device id or subject name accepted, bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Largest datagram accepted, bytes (a v6 packet with two names at [`MAX_NAME_BYTES`]).
pub const MAX_PACKET_BYTES: usize = 1 + 4 + MAX_NAME_BYTES + 4 + MAX_NAME_BYTES + 16 + 1 + 4 * 61;
/// Largest recording read (decompressed), bytes: 64 MiB, about 200,000 packets (an hour at
/// 60 fps).
pub const MAX_RECORDING_BYTES: u64 = 64 << 20;
/// The app's default port.
pub const DEFAULT_PORT: u16 = 11111;

/// A frame time: `(frame + sub_frame) · denominator / numerator` seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct FrameTime {
    /// Whole frames since the sender's epoch.
    pub frame: i32,
    /// Fraction of a frame in [0, 1).
    pub sub_frame: f32,
    /// Rate numerator (frames per `denominator` seconds), > 0.
    pub rate_numerator: i32,
    /// Rate denominator, > 0.
    pub rate_denominator: i32,
}

impl FrameTime {
    /// Frames per second.
    pub fn fps(&self) -> f64 {
        f64::from(self.rate_numerator) / f64::from(self.rate_denominator)
    }

    /// Seconds since the sender's epoch.
    pub fn seconds(&self) -> f64 {
        (f64::from(self.frame) + f64::from(self.sub_frame)) / self.fps()
    }
}

/// One decoded packet.
#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// The sending device's id.
    pub device_id: String,
    /// The subject name (the app's "Subject Name" setting).
    pub subject: String,
    /// When it was captured.
    pub time: FrameTime,
    /// The 61 values: `[..52]` ARKit weights, `[52..]` angles in radians
    /// ([`LIVELINK_AUX_COLUMNS`] order).
    pub values: [f32; PACKET_VALUES],
}

impl Packet {
    /// The 52 ARKit blendshape weights, canonical order.
    pub fn blendshapes(&self) -> &[f32] {
        &self.values[..ARKIT_COUNT]
    }

    /// The 9 head and eye angles, radians ([`LIVELINK_AUX_COLUMNS`] order).
    pub fn angles(&self) -> &[f32] {
        &self.values[ARKIT_COUNT..]
    }
}

/// Why a datagram was refused.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error, serde::Serialize)]
pub enum PacketError {
    /// Fewer bytes than the field at `offset` needs.
    #[error("truncated: {len} bytes, field `{field}` at byte {offset} needs more")]
    Truncated {
        /// Datagram length.
        len: usize,
        /// The field.
        field: &'static str,
        /// Its byte offset.
        offset: usize,
    },
    /// Bytes left after the last value.
    #[error("oversized: {len} bytes, the packet ends at byte {end}")]
    Oversized {
        /// Datagram length.
        len: usize,
        /// Where the packet ended.
        end: usize,
    },
    /// Not version 6.
    #[error("version {0}, mien reads version 6")]
    Version(u8),
    /// A name longer than [`MAX_NAME_BYTES`] or not UTF-8.
    #[error("field `{field}`: {reason}")]
    Name {
        /// `device id` or `subject name`.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A rate that is not positive.
    #[error("frame rate {0}/{1} is not positive")]
    Rate(i32, i32),
    /// A sub-frame outside [0, 1) or not finite.
    #[error("sub-frame {0} is not in [0, 1)")]
    SubFrame(String),
    /// A value count other than 61.
    #[error("{0} values, a v6 packet has 61")]
    Count(u8),
    /// A non-finite value.
    #[error("value {index} (`{name}`) is not finite")]
    NonFinite {
        /// Its index.
        index: usize,
        /// Its name.
        name: &'static str,
    },
}

impl PacketError {
    /// A short key per kind, for counts in reports (`truncated`, `oversized`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            PacketError::Truncated { .. } => "truncated",
            PacketError::Oversized { .. } => "oversized",
            PacketError::Version(_) => "version",
            PacketError::Name { .. } => "name",
            PacketError::Rate(..) => "rate",
            PacketError::SubFrame(_) => "sub_frame",
            PacketError::Count(_) => "count",
            PacketError::NonFinite { .. } => "non_finite",
        }
    }
}

/// The name of value `i` in a packet (`EyeBlinkLeft` … `RightEyeRoll`).
pub fn value_name(i: usize) -> &'static str {
    if i < ARKIT_COUNT {
        ARKIT_52[i]
    } else {
        LIVELINK_AUX_COLUMNS
            .get(i - ARKIT_COUNT)
            .copied()
            .unwrap_or("?")
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(
        &mut self,
        n: usize,
        field: &'static str,
    ) -> std::result::Result<&'a [u8], PacketError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(PacketError::Truncated {
                len: self.b.len(),
                field,
                offset: self.at,
            })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self, field: &'static str) -> std::result::Result<u32, PacketError> {
        Ok(u32::from_be_bytes(
            self.take(4, field)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn i32(&mut self, field: &'static str) -> std::result::Result<i32, PacketError> {
        Ok(i32::from_be_bytes(
            self.take(4, field)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn f32(&mut self, field: &'static str) -> std::result::Result<f32, PacketError> {
        Ok(f32::from_be_bytes(
            self.take(4, field)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn name(&mut self, field: &'static str) -> std::result::Result<String, PacketError> {
        let n = self.u32(field)? as usize;
        if n > MAX_NAME_BYTES {
            return Err(PacketError::Name {
                field,
                reason: format!("{n} bytes, at most {MAX_NAME_BYTES}"),
            });
        }
        let raw = self.take(n, field)?;
        String::from_utf8(raw.to_vec()).map_err(|_| PacketError::Name {
            field,
            reason: "not UTF-8".into(),
        })
    }
}

/// Decode one datagram.
///
/// # Errors
/// A [`PacketError`] for the first rule it breaks (module doc): truncated, oversized, another
/// version, a bad name, a non-positive rate, a sub-frame outside [0, 1), a count other than 61,
/// a non-finite value.
pub fn decode(datagram: &[u8]) -> std::result::Result<Packet, PacketError> {
    let mut c = Cursor { b: datagram, at: 0 };
    let version = c.take(1, "version")?[0];
    if version != PACKET_VERSION {
        return Err(PacketError::Version(version));
    }
    let device_id = c.name("device id")?;
    let subject = c.name("subject name")?;
    let frame = c.i32("frame")?;
    let sub_frame = c.f32("sub-frame")?;
    let rate_numerator = c.i32("rate numerator")?;
    let rate_denominator = c.i32("rate denominator")?;
    if rate_numerator <= 0 || rate_denominator <= 0 {
        return Err(PacketError::Rate(rate_numerator, rate_denominator));
    }
    if !(0.0..1.0).contains(&sub_frame) {
        return Err(PacketError::SubFrame(sub_frame.to_string()));
    }
    let count = c.take(1, "value count")?[0];
    if usize::from(count) != PACKET_VALUES {
        return Err(PacketError::Count(count));
    }
    let mut values = [0.0f32; PACKET_VALUES];
    for (i, v) in values.iter_mut().enumerate() {
        *v = c.f32("values")?;
        if !v.is_finite() {
            return Err(PacketError::NonFinite {
                index: i,
                name: value_name(i),
            });
        }
    }
    if c.at != datagram.len() {
        return Err(PacketError::Oversized {
            len: datagram.len(),
            end: c.at,
        });
    }
    Ok(Packet {
        device_id,
        subject,
        time: FrameTime {
            frame,
            sub_frame,
            rate_numerator,
            rate_denominator,
        },
        values,
    })
}

/// Encode a packet as the app sends it (names longer than [`MAX_NAME_BYTES`] are the caller's
/// problem: [`decode`] refuses them).
pub fn encode(p: &Packet) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + p.device_id.len() + p.subject.len() + 4 * PACKET_VALUES);
    b.push(PACKET_VERSION);
    for s in [&p.device_id, &p.subject] {
        b.extend_from_slice(&(s.len() as u32).to_be_bytes());
        b.extend_from_slice(s.as_bytes());
    }
    b.extend_from_slice(&p.time.frame.to_be_bytes());
    b.extend_from_slice(&p.time.sub_frame.to_be_bytes());
    b.extend_from_slice(&p.time.rate_numerator.to_be_bytes());
    b.extend_from_slice(&p.time.rate_denominator.to_be_bytes());
    b.push(PACKET_VALUES as u8);
    for v in p.values {
        b.extend_from_slice(&v.to_be_bytes());
    }
    b
}

/// Read a `.gesichter` recording: the packets' raw datagrams, in file order (decode each with
/// [`decode`]; a recording may hold malformed packets on purpose).
///
/// # Errors
/// [`Error::Io`] / [`Error::Limit`] reading the file (at most [`MAX_RECORDING_BYTES`] once
/// decompressed); [`Error::Format`] naming the file and the byte offset for a gzip error, another
/// version, a count that the data does not hold, or a length over [`MAX_PACKET_BYTES`].
pub fn read_recording(path: &Path) -> Result<Vec<Vec<u8>>> {
    let raw = crate::io::read::read_file_capped(path, MAX_RECORDING_BYTES)?;
    recording_from_bytes(&raw, &path.display().to_string())
}

/// [`read_recording`] from memory; `label` names the source in messages.
///
/// # Errors
/// As [`read_recording`].
pub fn recording_from_bytes(gz: &[u8], label: &str) -> Result<Vec<Vec<u8>>> {
    let mut data = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .take(MAX_RECORDING_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| Error::format(label, "gzip", e.to_string()))?;
    if data.len() as u64 > MAX_RECORDING_BYTES {
        return Err(Error::Limit {
            what: format!("{label}: decompressed recording"),
            limit: MAX_RECORDING_BYTES,
            found: data.len() as u64,
        });
    }
    if data.len() < 5 {
        return Err(Error::format(
            label,
            "header",
            format!("{} bytes, the header has 5", data.len()),
        ));
    }
    if data[0] != PACKET_VERSION {
        return Err(Error::format(
            label,
            "header.version",
            format!("version {}, mien reads 6", data[0]),
        ));
    }
    let count = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    let mut at = 5;
    let mut out = Vec::with_capacity(count.min(data.len() / 4));
    for i in 0..count {
        let Some(len) = data.get(at..at + 4) else {
            return Err(Error::format_at(
                label,
                "packets",
                i,
                format!("the header says {count} packets; the data ends at byte {at}"),
            ));
        };
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if len > MAX_PACKET_BYTES {
            return Err(Error::format_at(
                label,
                "packets",
                i,
                format!("length {len} at byte {at} is over {MAX_PACKET_BYTES}"),
            ));
        }
        let Some(p) = data.get(at + 4..at + 4 + len) else {
            return Err(Error::format_at(
                label,
                "packets",
                i,
                format!(
                    "length {len} at byte {at} runs past the end ({} bytes)",
                    data.len()
                ),
            ));
        };
        out.push(p.to_vec());
        at += 4 + len;
    }
    if at != data.len() {
        return Err(Error::format(
            label,
            "packets",
            format!(
                "{} bytes after the {count} packets the header announces",
                data.len() - at
            ),
        ));
    }
    Ok(out)
}

/// Gzip `datagrams` as a `.gesichter` recording (what [`read_recording`] reads).
pub fn recording_bytes(datagrams: &[Vec<u8>]) -> Vec<u8> {
    use std::io::Write as _;
    let mut raw = vec![PACKET_VERSION];
    raw.extend_from_slice(&(datagrams.len() as u32).to_be_bytes());
    for d in datagrams {
        raw.extend_from_slice(&(d.len() as u32).to_be_bytes());
        raw.extend_from_slice(d);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = gz.write_all(&raw);
    gz.finish().unwrap_or_default()
}

/// What a jitter buffer did with one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Admission {
    /// Buffered.
    Accepted,
    /// Its frame time is already buffered.
    Duplicate,
    /// Its frame time is not after the last packet played.
    Late,
    /// Its frame time disagrees with the receiver's clock by more than the resync window: held
    /// until the next packet says whether the sender's clock jumped (then both are buffered in a
    /// new epoch) or it was a stray (then it is dropped and counted).
    Held,
}

/// Counts of a live session.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveStats {
    /// Datagrams received.
    pub received: u64,
    /// Datagrams refused, by [`PacketError::kind`].
    pub malformed: std::collections::BTreeMap<String, u64>,
    /// Packets of another subject (the subject filter).
    pub other_subject: u64,
    /// Packets whose frame time was already buffered.
    pub duplicate: u64,
    /// Packets that arrived after a later one was played.
    pub late: u64,
    /// Packets dropped because the buffer was full.
    pub overflow: u64,
    /// Packets buffered.
    pub accepted: u64,
    /// Packets played (handed to the character).
    pub played: u64,
    /// Packets accepted but passed over because a later one was due at the same frame.
    pub skipped: u64,
    /// Times the sender's clock jumped and the buffer tied the clocks again (a new epoch).
    pub resyncs: u64,
    /// Buffered packets dropped at a resync.
    pub resync_dropped: u64,
    /// Packets that disagreed with the receiver's clock and were not confirmed by the next one
    /// (strays), dropped.
    pub stray: u64,
}

/// A jitter buffer ordered by frame time (module doc).
#[derive(Clone, Debug)]
pub struct JitterBuffer {
    delay: f64,
    capacity: usize,
    offset: Option<f64>,
    queue: std::collections::VecDeque<(Packet, f64)>,
    last_played: Option<f64>,
    epoch: u32,
    /// A packet that disagreed with the clock, with its arrival, awaiting confirmation.
    held: Option<(Packet, f64)>,
    /// The held packet a resync confirmed and buffered (for a caller that records takes).
    confirmed: Option<Packet>,
    /// The counts so far.
    pub stats: LiveStats,
}

/// The smallest resync window, seconds (module doc).
pub const RESYNC_S: f64 = 1.0;

impl JitterBuffer {
    /// A buffer playing packets `delay` seconds (≥ 0) after their frame time, holding at most
    /// `capacity` (≥ 1) packets.
    pub fn new(delay: f64, capacity: usize) -> Self {
        JitterBuffer {
            delay: if delay.is_finite() {
                delay.max(0.0)
            } else {
                0.0
            },
            capacity: capacity.max(1),
            offset: None,
            queue: std::collections::VecDeque::new(),
            last_played: None,
            epoch: 0,
            held: None,
            confirmed: None,
            stats: LiveStats::default(),
        }
    }

    /// Offer `p`, received at `arrival` seconds on the receiver's clock.
    pub fn push(&mut self, p: Packet, arrival: f64) -> Admission {
        let t = p.time.seconds();
        let window = self.resync_window();
        if let Some(o) = self.offset
            && (t + o - arrival).abs() > window
        {
            // Off the clock: a jump of the sender's clock if the packet held before agrees with
            // this one, else hold this one and wait for the next.
            match self.held.take() {
                Some((h, ha)) if ((t - h.time.seconds()) - (arrival - ha)).abs() <= window => {
                    self.stats.resyncs += 1;
                    self.stats.resync_dropped += self.queue.len() as u64;
                    self.queue.clear();
                    self.offset = None;
                    self.last_played = None;
                    self.epoch += 1;
                    self.confirmed = Some(h.clone());
                    self.insert(h, ha);
                }
                stale => {
                    if stale.is_some() {
                        self.stats.stray += 1;
                    }
                    self.held = Some((p, arrival));
                    return Admission::Held;
                }
            }
        } else if self.held.take().is_some() {
            // The held packet was a stray: this one is on the clock.
            self.stats.stray += 1;
        }
        self.insert(p, arrival)
    }

    fn insert(&mut self, p: Packet, arrival: f64) -> Admission {
        let t = p.time.seconds();
        if self.last_played.is_some_and(|l| t <= l) {
            self.stats.late += 1;
            return Admission::Late;
        }
        let pos = self.queue.partition_point(|(q, _)| q.time.seconds() < t);
        if self
            .queue
            .get(pos)
            .is_some_and(|(q, _)| q.time.seconds() == t)
        {
            self.stats.duplicate += 1;
            return Admission::Duplicate;
        }
        self.offset.get_or_insert(arrival - t);
        self.queue.insert(pos, (p, arrival));
        self.stats.accepted += 1;
        if self.queue.len() > self.capacity {
            self.queue.pop_front();
            self.stats.overflow += 1;
        }
        Admission::Accepted
    }

    /// The held packet the last resync confirmed and buffered, once (a caller recording a take
    /// adds it before the packet that confirmed it).
    pub fn take_confirmed(&mut self) -> Option<Packet> {
        self.confirmed.take()
    }

    /// The resync window, seconds: `max(RESYNC_S, 4 × delay)`.
    pub fn resync_window(&self) -> f64 {
        RESYNC_S.max(4.0 * self.delay)
    }

    /// The current epoch (0, then one more at each resync).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// `p`'s frame time on the receiver's clock (its due time minus the delay), seconds (`None`
    /// before the first packet).
    pub fn receiver_time(&self, p: &Packet) -> Option<f64> {
        self.offset.map(|o| p.time.seconds() + o)
    }

    /// When `p` is due on the receiver's clock, seconds (`None` before the first packet).
    pub fn due(&self, p: &Packet) -> Option<f64> {
        self.offset.map(|o| p.time.seconds() + o + self.delay)
    }

    /// The latest packet due at `now` with its arrival and due times, seconds on the receiver's
    /// clock (earlier due ones are passed over and counted as skipped), or `None` when none is
    /// due yet.
    pub fn pop(&mut self, now: f64) -> Option<(Packet, f64, f64)> {
        let o = self.offset?;
        let mut out = None;
        while let Some((front, _)) = self.queue.front() {
            let due = front.time.seconds() + o + self.delay;
            if due > now {
                break;
            }
            if out.is_some() {
                self.stats.skipped += 1;
            }
            out = self.queue.pop_front().map(|(p, a)| (p, a, due));
        }
        if let Some((p, _, _)) = &out {
            self.last_played = Some(p.time.seconds());
            self.stats.played += 1;
        }
        out
    }

    /// When the next packet falls due, seconds on the receiver's clock (`None` when empty).
    pub fn next_due(&self) -> Option<f64> {
        let o = self.offset?;
        self.queue
            .front()
            .map(|(p, _)| p.time.seconds() + o + self.delay)
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether none is waiting.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// The Live Link CSV text of a take: `(time, packet)` pairs in time order, `time` in seconds (a
/// receiver's clock; a recording's frame times; times closer than two thousandths of a frame are
/// nudged apart). The header is
/// `Timecode,BlendShapeCount,EyeBlinkLeft,…,RightEyeRoll`; each row's timecode is
/// `HH:MM:SS:FF.fff` at the first packet's rate, starting at the first packet's time of day (at
/// midnight when the take would cross it), so timecodes never go back — what
/// [`crate::io::livelink_csv::read_livelink_csv`] reads back.
pub fn to_livelink_csv(take: &[(f64, Packet)]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("Timecode,BlendShapeCount");
    for i in 0..PACKET_VALUES {
        let n = value_name(i);
        let mut c = n.chars();
        let pascal: String = c
            .next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default();
        s.push(',');
        s.push_str(&pascal);
    }
    s.push('\n');
    let (Some((t0, first)), Some((t1, _))) = (take.first(), take.last()) else {
        return s;
    };
    let fps = first.time.fps().round().clamp(1.0, 1000.0);
    let day = 86_400.0;
    let mut start = first.time.seconds().rem_euclid(day);
    if !start.is_finite() || start + (t1 - t0) >= day {
        start = 0.0;
    }
    // Timecodes keep a thousandth of a frame: times closer than two thousandths are nudged apart
    // so the rows still strictly increase.
    let min_step = 2.0 / (fps * 1000.0);
    let mut prev = f64::NEG_INFINITY;
    for (t, p) in take {
        let rel = if t - t0 < prev + min_step {
            prev + min_step
        } else {
            t - t0
        };
        prev = rel;
        let at = (start + rel).clamp(0.0, day - 1e-6);
        let frames = at * fps;
        let whole = frames.floor();
        let secs = (whole / fps).floor();
        let ff = whole - secs * fps;
        let sub = ((frames - whole) * 1000.0).floor().clamp(0.0, 999.0);
        let secs = secs as u64;
        let _ = write!(
            s,
            "{:02}:{:02}:{:02}:{:02}.{:03},{PACKET_VALUES}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60,
            ff as u64,
            sub as u64
        );
        for v in p.values {
            let _ = write!(s, ",{v}");
        }
        s.push('\n');
    }
    s
}
