//! The harness every backend runs the workloads through: a [`Bench`] builds a [`Case`] (upload,
//! sink, lifts — all outside the timed region) for one workload × batch × lift, then [`measure`]
//! times frames. A frame is: set every instance's controls (its ring entry), encode the rig pass
//! and the lifts, submit, and **wait for completion** — all inside the timed region. Nothing is
//! allocated by the harness per frame (a GPU backend's own encoder/fence creation is part of what
//! is measured).
//!
//! The copy baseline is measured the same way in the same run: one copy of `N` bytes per
//! submission, waited for; `N` = half the frame's bytes that must move (so the copy moves as many
//! bytes as the frame must), at least 64 KiB, at most the device's buffer limit or 1 GiB.
//! **Convention:** a copy of N bytes moves 2N (N read + N written), and the workloads' bytes count
//! reads + writes likewise, so GB/s are comparable.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::workloads::Workload;

/// Per-stage GPU milliseconds of one frame, from timestamp queries (`None`: the stage did not
/// run). For a linear head `morph` is its forward pass (neutral + basis · coefficients, eyes, seam).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StageMs {
    /// The morph (CSR blend) pass, or a linear head's forward pass.
    pub morph: Option<f64>,
    /// The skin pass.
    pub skin: Option<f64>,
    /// The lift pass.
    pub lift: Option<f64>,
}

/// Which lift a row runs after posing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LiftMode {
    /// Pose only.
    Off,
    /// The debug lift: one isotropic splat per posed vertex.
    Debug,
    /// The surface lift: gaussians bound to triangles ([`crate::workloads::SURFACE_TARGET`] per
    /// character, posed in their triangles' frames).
    Surface,
}

impl LiftMode {
    /// `off`, `debug` or `surface`.
    pub fn name(self) -> &'static str {
        match self {
            LiftMode::Off => "off",
            LiftMode::Debug => "debug",
            LiftMode::Surface => "surface",
        }
    }
}

/// Why a case was not built.
#[derive(Debug)]
pub enum CaseError {
    /// The combination is not supported (yet): reported as `n/a` with the reason.
    NotApplicable(String),
    /// A real failure.
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for CaseError {
    fn from(e: anyhow::Error) -> Self {
        CaseError::Failed(e)
    }
}

impl From<mien_core::Error> for CaseError {
    /// A GPU backend's refusal for want of device capacity (over a limit, out of memory) is
    /// `n/a` — the same as a CPU row that would not fit host memory —; anything else failed.
    fn from(e: mien_core::Error) -> Self {
        if over_device_capacity(&e) {
            CaseError::NotApplicable(e.to_string())
        } else {
            CaseError::Failed(e.into())
        }
    }
}

/// `e` is a GPU backend's over-limit or out-of-memory error.
fn over_device_capacity(e: &mien_core::Error) -> bool {
    let mien_core::Error::Backend { source, .. } = e else {
        return false;
    };
    #[cfg(feature = "wgpu")]
    if matches!(
        source.downcast_ref::<mien_wgpu::Error>(),
        Some(mien_wgpu::Error::OverLimits { .. } | mien_wgpu::Error::OutOfMemory { .. })
    ) {
        return true;
    }
    #[cfg(feature = "vulkan")]
    if matches!(
        source.downcast_ref::<mien_vulkan::Error>(),
        Some(mien_vulkan::Error::OverLimits { .. } | mien_vulkan::Error::OutOfMemory { .. })
    ) {
        return true;
    }
    let _ = source;
    false
}

/// One workload × batch × lift, set up on one backend.
pub trait Case {
    /// One timed frame (`frame` selects each instance's ring entry): set controls, encode, submit,
    /// wait.
    ///
    /// # Errors
    /// Backend failures.
    fn frame(&mut self, frame: u64) -> anyhow::Result<()>;

    /// Run one more frame with the device's timestamp queries resolved and read back (not timed).
    ///
    /// # Errors
    /// Backend failures; `Ok(None)` when the device has no timestamps.
    fn gpu_times(&mut self, frame: u64) -> anyhow::Result<Option<StageMs>>;

    /// One frame of a stream with frames in flight: set controls, encode, submit — no wait (a
    /// GPU device waits only for the frame `mien_gpu::FRAMES_IN_FLIGHT` back). The CPU backend
    /// has nothing in flight: the same as [`Case::frame`].
    ///
    /// # Errors
    /// Backend failures.
    fn submit(&mut self, frame: u64) -> anyhow::Result<()> {
        self.frame(frame)
    }

    /// Wait for every frame submitted.
    ///
    /// # Errors
    /// Backend failures.
    fn finish(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// The host's mean time per frame since the last call — begin the encoder, set every
    /// character's controls, pack and write the per-frame arrays, record the passes, submit — and
    /// start over; `None` for a backend with no device (the CPU: all of its frame is host).
    fn host_time(&mut self) -> Option<HostTime> {
        None
    }
}

/// The host's mean time per frame in its two parts.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostTime {
    /// The encoder begun (`GpuDevice::begin`: finished submissions retired, a command buffer
    /// taken and begun).
    pub begin: Duration,
    /// Every character's controls through the rules, staged and packed (`set_controls_batch` /
    /// `set_head_ext_batch`).
    pub set: Duration,
    /// The per-frame writes and the passes recorded (`encode`, the lifts' `record_batch`).
    pub encode: Duration,
    /// The submission (`GpuDevice::submit`, without a wait).
    pub submit: Duration,
}

/// A measured copy.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CopyResult {
    /// Bytes copied per copy (N; the copy moves 2N).
    pub bytes: u64,
    /// Copies timed.
    pub copies: u32,
    /// Mean microseconds per copy, submission and wait included.
    pub us_per_copy: f64,
    /// 2N ÷ time, GB/s (10⁹ bytes).
    pub gb_per_s: f64,
}

/// A backend the harness can run.
pub trait Bench {
    /// `cpu`, `wgpu` or `vulkan`.
    fn name(&self) -> &'static str;

    /// The device in words (adapter name, driver, backend; CPU model for the CPU).
    fn device(&self) -> String;

    /// Set up `workload` for `batch` characters, with or without the lift (upload with
    /// `upload_batch` / `upload_gnm_batch`, a sink slot range and a lift per instance).
    ///
    /// # Errors
    /// [`CaseError::NotApplicable`] for what the backend cannot do (a refused lift of a later
    /// instance of a batch), else the failure.
    fn case(
        &self,
        workload: &Arc<Workload>,
        batch: u32,
        lift: LiftMode,
    ) -> Result<Box<dyn Case>, CaseError>;

    /// Largest copy this backend measures, bytes.
    fn copy_limit(&self) -> u64;

    /// Time `copies` copies of `bytes` bytes (each submitted and waited for).
    ///
    /// # Errors
    /// Backend failures (out of memory).
    fn copy(&self, bytes: u64, copies: u32) -> anyhow::Result<CopyResult>;
}

/// How long the untimed frames run at least ([`measure`]): a GPU that idled (while the CPU rows
/// ran) comes back at a low clock and takes tens of milliseconds of work to climb — on the H200,
/// W4's forward pass measured 0.26 ms of GPU time right after the CPU rows and 0.05 ms warm.
pub const WARMUP_MIN: Duration = Duration::from_millis(200);

/// Wall time per frame over `frames` frames timed one by one, after untimed ones: at least
/// `warmup`, and more until [`WARMUP_MIN`] has passed (at most 10,000, so a frame of under 20 µs
/// cannot stretch it).
#[derive(Clone, Copy, Debug)]
pub struct FrameTimes {
    /// The median frame: what the table reports — the peers report their median run too, and a
    /// shared machine's stray stalls move the mean far more than the median.
    pub median: Duration,
    /// The mean frame.
    pub mean: Duration,
}

/// Time `frames` frames one by one after the untimed ones ([`FrameTimes`]).
///
/// # Errors
/// The first frame that fails.
pub fn measure(case: &mut dyn Case, warmup: u32, frames: u32) -> anyhow::Result<FrameTimes> {
    let begin = Instant::now();
    let mut k = 0u32;
    while k < warmup || (begin.elapsed() < WARMUP_MIN && k < 10_000) {
        case.frame(u64::from(k))?;
        k += 1;
    }
    let warmup = k;
    let mut times = Vec::with_capacity(frames.max(1) as usize);
    for k in 0..frames.max(1) {
        let t0 = Instant::now();
        case.frame(u64::from(warmup + k))?;
        times.push(t0.elapsed());
    }
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    times.sort_unstable();
    let n = times.len();
    let median = if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    };
    Ok(FrameTimes { median, mean })
}

/// Mean time per frame of a stream of `frames` frames in flight ([`Case::submit`], one wait at the
/// end), after `warmup` untimed ones: the throughput a stream gets, max(host, GPU) per frame
/// rather than their sum ([`measure`] times the latency, submit → ready, one frame at a time).
///
/// # Errors
/// The first frame that fails.
pub fn measure_in_flight(
    case: &mut dyn Case,
    first: u64,
    warmup: u32,
    frames: u32,
) -> anyhow::Result<Duration> {
    for k in 0..u64::from(warmup) {
        case.submit(first + k)?;
    }
    case.finish()?;
    let _ = case.host_time();
    let first = first + u64::from(warmup);
    let start = Instant::now();
    for k in 0..u64::from(frames) {
        case.submit(first + k)?;
    }
    case.finish()?;
    Ok(start.elapsed() / frames.max(1))
}

/// The copy size for a frame that must move `frame_bytes` (module docs).
pub fn copy_size(frame_bytes: u64, limit: u64) -> u64 {
    (frame_bytes / 2)
        .clamp(64 << 10, limit.clamp(64 << 10, 1 << 30))
        .next_multiple_of(256)
        .min(limit.max(256))
}

/// One row of the results table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Backend name.
    pub backend: String,
    /// Workload id.
    pub workload: String,
    /// Characters posed per frame.
    pub batch: u32,
    /// Which lift runs.
    pub lift: LiftMode,
    /// Splats each character writes (0 with the lift off).
    pub gaussians: u64,
    /// `ok`, `n/a: …` or `error: …`.
    pub status: String,
    /// Vertices per character.
    pub vertices: u32,
    /// Frames timed.
    pub frames: u32,
    /// Median wall microseconds per frame one frame at a time (set, encode, submit, wait): the
    /// latency, submit → ready ([`measure`]).
    pub us_per_frame: Option<f64>,
    /// The mean of the same frames, µs.
    pub mean_us_per_frame: Option<f64>,
    /// batch ÷ time per frame.
    pub characters_per_s: Option<f64>,
    /// Mean wall microseconds per frame of a stream with frames in flight
    /// ([`measure_in_flight`]): the throughput's inverse.
    pub in_flight_us_per_frame: Option<f64>,
    /// Frames per second in flight (10⁶ ÷ `in_flight_us_per_frame`).
    pub frames_per_s_in_flight: Option<f64>,
    /// The host's part of a frame in flight ([`Case::host_time`]), µs: the encoder begun, the
    /// controls, packing, per-frame writes, recording and the submission (the four below).
    pub host_us_per_frame: Option<f64>,
    /// Of which beginning the encoder ([`HostTime::begin`]), µs.
    pub host_begin_us: Option<f64>,
    /// Of which setting the controls ([`HostTime::set`]), µs.
    pub host_set_us: Option<f64>,
    /// Of which the per-frame writes and recording ([`HostTime::encode`]), µs.
    pub host_encode_us: Option<f64>,
    /// Of which the submission ([`HostTime::submit`]), µs. It includes waiting for the oldest
    /// frame when every frame slot is busy (the GPU behind the host), so on GPU-bound rows it is
    /// mostly that wait; the host's own work is begin + set + encode.
    pub host_submit_us: Option<f64>,
    /// Bytes that must move per character per frame (reads + writes, [`crate::bytes`]).
    pub bytes_per_character: u64,
    /// batch × bytes_per_character.
    pub bytes_per_frame: u64,
    /// bytes_per_frame ÷ time, GB/s.
    pub gb_per_s: Option<f64>,
    /// The copy baseline measured at this row's size.
    pub copy: Option<CopyResult>,
    /// gb_per_s ÷ the copy's GB/s, percent.
    pub pct_of_copy: Option<f64>,
    /// GPU stage times of one extra frame.
    pub gpu_ms: Option<StageMs>,
}

/// What to run for one row.
#[derive(Clone, Copy, Debug)]
pub struct RowPlan {
    /// Characters.
    pub batch: u32,
    /// Which lift.
    pub lift: LiftMode,
    /// Untimed frames first.
    pub warmup: u32,
    /// Timed frames.
    pub frames: u32,
}

/// Build, time and describe one row (failures become the row's status, never a panic). Copies
/// are measured once per size and kept in `copies`.
pub fn run_row(
    bench: &dyn Bench,
    workload: &Arc<Workload>,
    plan: RowPlan,
    copies: &mut Vec<(String, CopyResult)>,
) -> Row {
    let per_char = workload.bytes(plan.lift).total();
    let gaussians = u64::from(workload.slots(plan.lift));
    let mut row = Row {
        backend: bench.name().into(),
        workload: workload.id.clone(),
        batch: plan.batch,
        lift: plan.lift,
        gaussians,
        status: "ok".into(),
        vertices: workload.vertices(),
        frames: plan.frames,
        us_per_frame: None,
        mean_us_per_frame: None,
        characters_per_s: None,
        in_flight_us_per_frame: None,
        frames_per_s_in_flight: None,
        host_us_per_frame: None,
        host_begin_us: None,
        host_set_us: None,
        host_encode_us: None,
        host_submit_us: None,
        bytes_per_character: per_char,
        bytes_per_frame: per_char * u64::from(plan.batch),
        gb_per_s: None,
        copy: None,
        pct_of_copy: None,
        gpu_ms: None,
    };
    if bench.name().starts_with("cpu") {
        // The CPU backend holds every character's posed vertices (and sink slots) in host memory:
        // refuse a row that cannot fit before allocating it (an allocation that fails aborts).
        let need = cpu_host_bytes(workload.vertices(), gaussians, plan);
        if let Some(avail) = host_available_bytes().filter(|a| need > *a) {
            row.status = format!(
                "n/a: needs about {:.1} GiB of host memory, {:.1} GiB available",
                need as f64 / f64::from(1u32 << 30),
                avail as f64 / f64::from(1u32 << 30)
            );
            return row;
        }
    }
    let mut case = match bench.case(workload, plan.batch, plan.lift) {
        Ok(c) => c,
        Err(CaseError::NotApplicable(why)) => {
            row.status = format!("n/a: {why}");
            return row;
        }
        Err(CaseError::Failed(e)) => {
            row.status = format!("error: {}", message(&e));
            return row;
        }
    };
    let (t, mean) = match measure(case.as_mut(), plan.warmup, plan.frames) {
        Ok(t) => (t.median.as_secs_f64(), t.mean.as_secs_f64()),
        Err(e) => {
            row.status = format!("error: {}", message(&e));
            return row;
        }
    };
    let next = u64::from(plan.warmup + plan.frames) + 10_000;
    let warm_in_flight = plan.warmup.min(8);
    match measure_in_flight(case.as_mut(), next, warm_in_flight, plan.frames) {
        Ok(f) => {
            let f = f.as_secs_f64();
            row.in_flight_us_per_frame = Some(f * 1e6);
            row.frames_per_s_in_flight = Some(1.0 / f);
            if let Some(h) = case.host_time() {
                let us = |d: Duration| d.as_secs_f64() * 1e6;
                row.host_us_per_frame = Some(us(h.begin + h.set + h.encode + h.submit));
                row.host_begin_us = Some(us(h.begin));
                row.host_set_us = Some(us(h.set));
                row.host_encode_us = Some(us(h.encode));
                row.host_submit_us = Some(us(h.submit));
            }
        }
        Err(e) => {
            row.status = format!("error: frames in flight: {}", message(&e));
            return row;
        }
    }
    row.gpu_ms = case
        .gpu_times(next + u64::from(plan.warmup + plan.frames))
        .ok()
        .flatten();
    drop(case);
    row.us_per_frame = Some(t * 1e6);
    row.mean_us_per_frame = Some(mean * 1e6);
    row.characters_per_s = Some(f64::from(plan.batch) / t);
    let gbs = row.bytes_per_frame as f64 / t / 1e9;
    row.gb_per_s = Some(gbs);
    let size = copy_size(row.bytes_per_frame, bench.copy_limit());
    let key = format!("{}:{size}", bench.name());
    let copy = match copies.iter().find(|(k, _)| *k == key) {
        Some((_, c)) => Some(*c),
        None => match bench.copy(size, plan.frames.clamp(5, 100)) {
            Ok(c) => {
                copies.push((key, c));
                Some(c)
            }
            Err(e) => {
                row.status = format!("ok (copy baseline failed: {})", message(&e));
                None
            }
        },
    };
    row.copy = copy;
    row.pct_of_copy = copy.map(|c| 100.0 * gbs / c.gb_per_s);
    row
}

/// Host bytes a CPU row holds per frame, at least: per character and vertex the posed position and
/// normal (24 bytes), twice for the backend's scratch, and per splat it writes the sink slot (52
/// bytes).
pub fn cpu_host_bytes(vertices: u32, gaussians: u64, plan: RowPlan) -> u64 {
    u64::from(plan.batch) * (u64::from(vertices) * 48 + gaussians * 52)
}

/// `MemAvailable` from `/proc/meminfo` (Linux), bytes; `None` elsewhere or when unreadable.
pub fn host_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `e` and its causes joined by `: `, leaving out a cause whose text the message already holds
/// (a backend error that displays its source would otherwise be printed twice).
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn a_cause_already_in_the_message_is_printed_once() {
        let inner = anyhow::anyhow!("the device allows 2147483647 bytes");
        let outer =
            inner.context("a sink of 9 slots needs 144 bytes: the device allows 2147483647 bytes");
        assert_eq!(
            message(&outer),
            "a sink of 9 slots needs 144 bytes: the device allows 2147483647 bytes"
        );
        let chained = anyhow::anyhow!("disk full").context("writing bench.json");
        assert_eq!(message(&chained), "writing bench.json: disk full");
    }
}
