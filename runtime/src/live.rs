//! Live Link Face over UDP into a runtime: a non-blocking socket, the packets decoded
//! ([`mien_core::io::livelink_udp`]), filtered by subject, ordered by a jitter buffer, and the
//! frame due now handed to an instance ([`crate::InstanceMut::set_live_frame`]).
//!
//! Nothing a sender does is fatal: malformed, other-subject, duplicate, late and overflowing
//! packets are counted in [`LiveStats`]. A receiver can keep every packet it accepted, in frame
//! order, as a take ([`LiveReceiver::take_csv`]: a Live Link CSV mien reads back).
//!
//! ```no_run
//! # fn main() -> mien_runtime::Result<()> {
//! use std::sync::Arc;
//! use mien_runtime::live::{LiveOptions, LiveReceiver};
//! use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};
//!
//! let asset = Arc::new(Asset::load("avatar.vrm")?);
//! let mut rt = Runtime::new(asset, &Device::Cpu, &RuntimeOptions::default())?;
//! let mut rx = LiveReceiver::bind(&LiveOptions::default())?; // UDP port 11111
//! loop {
//!     rx.poll()?;
//!     if let Some(frame) = rx.next_frame() {
//!         let mut inst = rt.instance_mut(0)?;
//!         inst.set_live_frame(frame.packet.blendshapes(), frame.packet.angles())?;
//!     }
//!     rt.update(rx.now())?;
//!     # break;
//! }
//! # Ok(())
//! # }
//! ```

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Instant;

pub use mien_core::io::livelink_udp::{
    Admission, DEFAULT_PORT, JitterBuffer, LiveStats, MAX_PACKET_BYTES, Packet, PacketError,
    decode, encode, read_recording, to_livelink_csv,
};

use crate::error::{Error, Result};
use mien_core::anim::arkit::ARKIT_COUNT;
use mien_core::anim::{Drive, WeightStream};

/// How a [`LiveReceiver`] listens.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveOptions {
    /// Address to bind (default `0.0.0.0`, every interface).
    pub bind: IpAddr,
    /// UDP port (default 11111, the app's).
    pub port: u16,
    /// Only packets of this subject name are played (`None`: any).
    pub subject: Option<String>,
    /// Playout delay of the jitter buffer, seconds ≥ 0 (default 0.05: three frames at 60 fps).
    pub delay_s: f64,
    /// Packets the buffer holds at most (default 256).
    pub capacity: usize,
    /// Keep every accepted packet for [`LiveReceiver::take_csv`] (default off).
    pub record: bool,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: DEFAULT_PORT,
            subject: None,
            delay_s: 0.05,
            capacity: 256,
            record: false,
        }
    }
}

/// The frame a receiver hands over.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveFrame {
    /// The packet.
    pub packet: Packet,
    /// When its datagram arrived, seconds on the receiver's clock ([`LiveReceiver::now`]).
    pub arrival: f64,
    /// When it fell due (its frame time on the receiver's clock plus the delay), seconds.
    pub due: f64,
}

/// The accepted packets of a session on one monotonic time line: within an epoch of the jitter
/// buffer, each packet at its frame time on the receiver's clock (so out-of-order arrivals take
/// their place); a new epoch (the sender's clock jumped) starts one frame after everything
/// recorded before it, so the take never goes back in time.
#[derive(Debug, Default)]
struct Take {
    frames: Vec<(f64, Packet)>,
    epoch: u32,
    /// Added to this epoch's times.
    shift: f64,
    /// The latest time recorded in earlier epochs.
    before: f64,
}

impl Take {
    fn add(&mut self, epoch: u32, time: f64, p: Packet) {
        if epoch != self.epoch || self.frames.is_empty() {
            let last = self.frames.last().map_or(f64::NEG_INFINITY, |(t, _)| *t);
            self.before = last;
            self.epoch = epoch;
            let step = 1.0 / p.time.fps().max(1.0);
            self.shift = if time <= last {
                last + step - time
            } else {
                0.0
            };
        }
        let t = time + self.shift;
        // Within an epoch times are the frame times on one clock: sort them in; never before the
        // earlier epochs.
        let from = self.frames.partition_point(|(x, _)| *x <= self.before);
        let at = from + self.frames[from..].partition_point(|(x, _)| *x < t);
        self.frames.insert(at, (t, p));
    }
}

/// A Live Link Face UDP receiver (module doc).
#[derive(Debug)]
pub struct LiveReceiver {
    socket: UdpSocket,
    subject: Option<String>,
    buffer: JitterBuffer,
    start: Instant,
    take: Option<Take>,
    /// Blendshape values outside [0, 1] among the accepted packets (ARKit's range; the rig
    /// clamps at ±2 and counts).
    pub outside_unit: u64,
    scratch: Vec<u8>,
}

impl LiveReceiver {
    /// Bind a non-blocking UDP socket as `options` say.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a delay that is not a finite number ≥ 0 or a capacity of 0;
    /// [`Error::Invalid`] when the socket cannot be bound (a port in use), naming the address.
    pub fn bind(options: &LiveOptions) -> Result<Self> {
        if !(options.delay_s.is_finite() && options.delay_s >= 0.0) {
            return Err(Error::invalid(
                "live delay",
                format!("{} is not a number of seconds ≥ 0", options.delay_s),
            ));
        }
        if options.capacity == 0 {
            return Err(Error::invalid(
                "live buffer capacity",
                "0; it must hold at least one packet",
            ));
        }
        let addr = SocketAddr::new(options.bind, options.port);
        let socket = UdpSocket::bind(addr)
            .map_err(|e| Error::invalid(format!("UDP {addr}"), format!("cannot listen: {e}")))?;
        socket.set_nonblocking(true).map_err(|e| {
            Error::invalid(
                format!("UDP {addr}"),
                format!("cannot set non-blocking: {e}"),
            )
        })?;
        Ok(LiveReceiver {
            socket,
            subject: options.subject.clone(),
            buffer: JitterBuffer::new(options.delay_s, options.capacity),
            start: Instant::now(),
            take: options.record.then(Take::default),
            outside_unit: 0,
            scratch: vec![0; MAX_PACKET_BYTES + 1],
        })
    }

    /// The bound address (port 0 in [`LiveOptions`] picks a free one).
    ///
    /// # Errors
    /// When the OS cannot say.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.socket
            .local_addr()
            .map_err(|e| Error::invalid("UDP socket", e.to_string()))
    }

    /// Seconds since the receiver was bound (its clock).
    pub fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Read every datagram waiting on the socket, decode and buffer it. Returns how many were
    /// read. A datagram over [`MAX_PACKET_BYTES`] is counted as oversized (never truncated into
    /// a packet).
    ///
    /// # Errors
    /// A socket error other than "would block" (the socket is gone).
    pub fn poll(&mut self) -> Result<usize> {
        let mut n = 0;
        loop {
            match self.socket.recv_from(&mut self.scratch) {
                Ok((len, _)) => {
                    n += 1;
                    let arrival = self.now();
                    self.offer(len, arrival);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A previous send to a closed port (Windows reports it on the next receive).
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
                Err(e) => return Err(Error::invalid("UDP receive", e.to_string())),
            }
        }
    }

    fn offer(&mut self, len: usize, arrival: f64) {
        let stats = &mut self.buffer.stats;
        stats.received += 1;
        let packet = if len > MAX_PACKET_BYTES {
            Err(PacketError::Oversized {
                len,
                end: MAX_PACKET_BYTES,
            })
        } else {
            decode(&self.scratch[..len])
        };
        let p = match packet {
            Ok(p) => p,
            Err(e) => {
                *stats.malformed.entry(e.kind().to_string()).or_default() += 1;
                return;
            }
        };
        if self.subject.as_ref().is_some_and(|s| *s != p.subject) {
            stats.other_subject += 1;
            return;
        }
        let outside = p
            .blendshapes()
            .iter()
            .filter(|v| !(0.0..=1.0).contains(*v))
            .count() as u64;
        let keep = self.take.is_some().then(|| p.clone());
        let admitted = self.buffer.push(p, arrival);
        let confirmed = self.buffer.take_confirmed();
        if admitted == Admission::Accepted {
            self.outside_unit += outside;
            if let Some(take) = &mut self.take {
                // A resync buffered the held packet first.
                for q in confirmed.into_iter().chain(keep) {
                    let time = self.buffer.receiver_time(&q).unwrap_or(arrival);
                    take.add(self.buffer.epoch(), time, q);
                }
            }
        }
    }

    /// Offer a datagram as if it had arrived now (a test harness or an in-process source).
    pub fn offer_datagram(&mut self, datagram: &[u8]) {
        let arrival = self.now();
        self.offer_datagram_at(datagram, arrival);
    }

    /// Offer a datagram as if it had arrived at `arrival` seconds on the receiver's clock (a
    /// simulated clock: replaying a recording faster than real time, a deterministic test).
    pub fn offer_datagram_at(&mut self, datagram: &[u8], arrival: f64) {
        let len = datagram.len().min(self.scratch.len());
        self.scratch[..len].copy_from_slice(&datagram[..len]);
        self.offer(datagram.len(), arrival);
    }

    /// The frame due now, if any ([`JitterBuffer::pop`]).
    pub fn next_frame(&mut self) -> Option<LiveFrame> {
        let now = self.now();
        self.next_frame_at(now)
    }

    /// The frame due at `now` seconds on the receiver's clock (a simulated clock, with
    /// [`LiveReceiver::offer_datagram_at`]).
    pub fn next_frame_at(&mut self, now: f64) -> Option<LiveFrame> {
        self.buffer
            .pop(now)
            .map(|(packet, arrival, due)| LiveFrame {
                packet,
                arrival,
                due,
            })
    }

    /// When the next buffered packet falls due, seconds on the receiver's clock.
    pub fn next_due(&self) -> Option<f64> {
        self.buffer.next_due()
    }

    /// The counts so far.
    pub fn stats(&self) -> &LiveStats {
        &self.buffer.stats
    }

    /// Packets waiting in the buffer.
    pub fn waiting(&self) -> usize {
        self.buffer.len()
    }

    /// The take so far as Live Link CSV text (`None` unless recording).
    pub fn take_csv(&self) -> Option<String> {
        self.take.as_ref().map(|t| to_livelink_csv(&t.frames))
    }

    /// Packets in the take so far.
    pub fn take_len(&self) -> usize {
        self.take.as_ref().map_or(0, |t| t.frames.len())
    }
}

impl crate::InstanceMut<'_> {
    /// Drive this instance from a live ARKit-52 frame with the head and eye angles a tracker
    /// sends beside it (Live Link Face's 9 angles, radians, in
    /// [`mien_core::io::livelink_csv::LIVELINK_AUX_COLUMNS`] order): as
    /// [`crate::InstanceMut::set_controls`] in the `arkit52` space, plus head motion from the angles
    /// ([`mien_core::anim::head`]; VRM avatars: their gaze). The first call binds a one-frame
    /// stream with those channels; later calls overwrite its values. Allocation-free after the
    /// first call.
    ///
    /// # Errors
    /// Not `(52,)` and `(9,)`; a non-finite value (naming its channel); a character no ARKit
    /// channel binds to. A refused call changes nothing.
    pub fn set_live_frame(&mut self, blendshapes: &[f32], angles: &[f32]) -> Result<&mut Self> {
        use mien_core::io::livelink_csv::LIVELINK_AUX_COLUMNS;
        if blendshapes.len() != ARKIT_COUNT || angles.len() != LIVELINK_AUX_COLUMNS.len() {
            return Err(Error::invalid(
                "live frame",
                format!(
                    "{} blendshapes and {} angles; a live frame has {ARKIT_COUNT} and {}",
                    blendshapes.len(),
                    angles.len(),
                    LIVELINK_AUX_COLUMNS.len()
                ),
            ));
        }
        let bad = blendshapes
            .iter()
            .chain(angles)
            .position(|v| !v.is_finite());
        if let Some(i) = bad {
            return Err(Error::invalid(
                format!("live frame value {i}"),
                "not a finite number",
            ));
        }
        let live = self.inst.live_arkit
            && matches!(&self.inst.drive, Drive::Stream(d) if d.stream().aux_channels.len() == angles.len());
        if !live {
            let stream = WeightStream {
                source: "live ARKit-52 frame".into(),
                channels: crate::space::arkit_channels(),
                times: vec![0.0],
                values: blendshapes.to_vec(),
                aux_channels: LIVELINK_AUX_COLUMNS
                    .iter()
                    .map(|s| (*s).to_string())
                    .collect(),
                aux_values: angles.to_vec(),
                nominal_fps: None,
            };
            self.play_stream(stream)?;
            self.inst.live_arkit = true;
        } else if let Drive::Stream(d) = &mut self.inst.drive {
            d.set_frame_values(0, blendshapes)?;
            d.set_frame_aux(0, angles)?;
        }
        Ok(self)
    }
}
