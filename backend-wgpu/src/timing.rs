//! Per-stage GPU time from timestamp queries. Each frame records into a slot of its own — a
//! query set of [`QUERIES`], a resolve buffer and a mappable read-back buffer — taken when mien
//! creates its encoder ([`mien_gpu::GpuDevice::begin`]) and kept by that encoder's identity
//! ([`encoder_key`]): pass `k` writes queries `2k` and `2k + 1` ([`mien_gpu::PassTimes`]), the
//! frame's end resolves them and copies them to the read-back buffer, the submission of *that*
//! encoder maps it, and [`Timestamps::completed`] turns the frames whose maps completed into stage
//! times, oldest first, without waiting. Frames in flight never share a slot, and frames recorded
//! on several threads at once each keep their own (a read-back is never mapped while a command
//! buffer that copies into it is still to be submitted). An engine's encoder (not from `begin`)
//! is not timed, as on Vulkan.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use mien_gpu::{PassTimes, QUERIES, Stage, StageTimes};

/// One frame's queries.
struct Slot {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    passes: PassTimes,
    /// 0: not mapped yet, 1: mapped, 2: the map failed.
    mapped: Arc<AtomicU8>,
}

#[derive(Default)]
struct State {
    free: Vec<Slot>,
    /// The frames being recorded, by encoder key, oldest first.
    recording: VecDeque<(u64, Slot)>,
    /// Frames ended, waiting for their encoder's submission, oldest first.
    ended: VecDeque<(u64, Slot)>,
    /// Frames submitted, their read-back mapping, oldest first.
    mapping: VecDeque<Slot>,
}

/// Frames recorded (or ended and not yet submitted) at once beyond which the oldest is taken to
/// be abandoned (its encoder dropped unsubmitted) and its slot reused.
const OPEN_FRAMES: usize = 16;

/// An encoder's identity (wgpu's encoders compare and hash by their id).
pub(crate) fn encoder_key(encoder: &wgpu::CommandEncoder) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    encoder.hash(&mut h);
    h.finish()
}

/// The timestamp slots of a device.
pub struct Timestamps {
    device: wgpu::Device,
    period_ns: f32,
    state: Mutex<State>,
}

impl std::fmt::Debug for Timestamps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timestamps")
            .field("period_ns", &self.period_ns)
            .finish()
    }
}

impl Timestamps {
    pub(crate) fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        Timestamps {
            device: device.clone(),
            period_ns: queue.get_timestamp_period(),
            state: Mutex::new(State::default()),
        }
    }

    fn slot(&self) -> Slot {
        let d = &self.device;
        let bytes = u64::from(QUERIES) * 8;
        Slot {
            set: d.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("mien stages"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolve: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("mien timestamps"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("mien timestamps read-back"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            passes: PassTimes::default(),
            mapped: Arc::new(AtomicU8::new(0)),
        }
    }

    /// A pass of `stage` in the frame of `encoder`: its query set and begin index, or `None`
    /// when the encoder is not one of mien's frames (not from `begin`) or its queries are used up
    /// (the pass runs untimed).
    pub fn begin_pass(
        &self,
        encoder: &wgpu::CommandEncoder,
        stage: Stage,
    ) -> Option<(wgpu::QuerySet, u32)> {
        let key = encoder_key(encoder);
        let mut st = self.state.lock().ok()?;
        let slot = st
            .recording
            .iter_mut()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s)?;
        let i = slot.passes.begin(stage)?;
        Some((slot.set.clone(), i))
    }

    /// A new frame's encoder `key` (from mien's `begin`) gets a slot. Beyond [`OPEN_FRAMES`] open
    /// frames the oldest is taken to be abandoned and its slot reused.
    pub(crate) fn new_frame(&self, key: u64) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        while st.recording.len() >= OPEN_FRAMES {
            if let Some((_, mut slot)) = st.recording.pop_front() {
                slot.passes.clear();
                st.free.push(slot);
            }
        }
        let slot = st.free.pop().unwrap_or_else(|| self.slot());
        st.recording.push_back((key, slot));
    }

    /// The pass descriptor's timestamp writes for a pass from [`Timestamps::begin_pass`].
    pub fn writes(set: &wgpu::QuerySet, first: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        }
    }

    /// End the frame of `encoder`: resolve its queries and copy them to its read-back buffer.
    pub fn end_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        let key = encoder_key(encoder);
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let Some(at) = st.recording.iter().position(|(k, _)| *k == key) else {
            return;
        };
        let Some((_, slot)) = st.recording.remove(at) else {
            return;
        };
        let n = slot.passes.queries();
        if n == 0 {
            st.free.push(slot);
            return;
        }
        encoder.resolve_query_set(&slot.set, 0..n, &slot.resolve, 0);
        encoder.copy_buffer_to_buffer(&slot.resolve, 0, &slot.readback, 0, u64::from(n) * 8);
        if st.ended.len() >= OPEN_FRAMES {
            // Ended and never submitted through mien: its encoder was dropped or submitted by
            // the caller; its read-back is not reused (it may still be copied into).
            st.ended.pop_front();
        }
        st.ended.push_back((key, slot));
    }

    /// Encoder `key` was submitted: map its frame's read-back buffer.
    pub(crate) fn submitted(&self, key: u64) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let Some(at) = st.ended.iter().position(|(k, _)| *k == key) else {
            return;
        };
        let Some((_, slot)) = st.ended.remove(at) else {
            return;
        };
        let flag = slot.mapped.clone();
        let n = u64::from(slot.passes.queries()) * 8;
        slot.readback
            .slice(0..n)
            .map_async(wgpu::MapMode::Read, move |r| {
                flag.store(if r.is_ok() { 1 } else { 2 }, Ordering::Release);
            });
        st.mapping.push_back(slot);
    }

    /// The stage times of the submitted frames whose read-backs are mapped, oldest first (the
    /// caller polled the device). A frame whose map failed reports every pass untimed.
    pub(crate) fn completed(&self) -> Vec<StageTimes> {
        let Ok(mut st) = self.state.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while st
            .mapping
            .front()
            .is_some_and(|s| s.mapped.load(Ordering::Acquire) != 0)
        {
            let Some(mut slot) = st.mapping.pop_front() else {
                break;
            };
            let n = slot.passes.queries() as usize;
            let ticks: Vec<Option<u64>> = if slot.mapped.load(Ordering::Acquire) == 1 {
                let t = match slot.readback.get_mapped_range(0..n as u64 * 8) {
                    Ok(view) => view
                        .chunks_exact(8)
                        .map(|c| c.try_into().ok().map(u64::from_le_bytes))
                        .collect(),
                    Err(_) => Vec::new(),
                };
                slot.readback.unmap();
                t
            } else {
                Vec::new()
            };
            out.push(slot.passes.times(&ticks, self.period_ns));
            slot.passes.clear();
            slot.mapped.store(0, Ordering::Release);
            st.free.push(slot);
        }
        out
    }
}
