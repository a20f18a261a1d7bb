//! Per-stage GPU time from timestamp queries. Each frame records into a slot of its own — a
//! query set of [`QUERIES`], a resolve buffer and a mappable read-back buffer — taken at its
//! first pass: pass `k` writes queries `2k` and `2k + 1` ([`mien_gpu::PassTimes`]), the frame's
//! end resolves them and copies them to the read-back buffer, the submission maps it, and
//! [`Timestamps::completed`] turns the frames whose maps completed into stage times, oldest first,
//! without waiting. Frames in flight never share a slot.

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
    /// The frame being recorded.
    recording: Option<Slot>,
    /// Frames ended, waiting for their submission.
    ended: Vec<Slot>,
    /// Frames submitted, their read-back mapping, oldest first.
    mapping: VecDeque<Slot>,
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

    /// A pass of `stage` in the frame being recorded: its query set and begin index, or `None`
    /// when the frame's queries are used up (the pass runs untimed).
    pub fn begin_pass(&self, stage: Stage) -> Option<(wgpu::QuerySet, u32)> {
        let mut st = self.state.lock().ok()?;
        if st.recording.is_none() {
            let s = st.free.pop().unwrap_or_else(|| self.slot());
            st.recording = Some(s);
        }
        let slot = st.recording.as_mut()?;
        let i = slot.passes.begin(stage)?;
        Some((slot.set.clone(), i))
    }

    /// A new frame's encoder: a slot left by a frame that never ended (recorded without
    /// [`Timestamps::end_frame`]) is reused from its first query.
    pub(crate) fn new_frame(&self) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if let Some(mut slot) = st.recording.take() {
            slot.passes.clear();
            st.free.push(slot);
        }
    }

    /// The pass descriptor's timestamp writes for a pass from [`Timestamps::begin_pass`].
    pub fn writes(set: &wgpu::QuerySet, first: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        }
    }

    /// End the frame being recorded: resolve its queries and copy them to its read-back buffer.
    pub fn end_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let Some(slot) = st.recording.take() else {
            return;
        };
        let n = slot.passes.queries();
        if n == 0 {
            st.free.push(slot);
            return;
        }
        encoder.resolve_query_set(&slot.set, 0..n, &slot.resolve, 0);
        encoder.copy_buffer_to_buffer(&slot.resolve, 0, &slot.readback, 0, u64::from(n) * 8);
        st.ended.push(slot);
    }

    /// The frames ended were submitted: map their read-back buffers.
    pub(crate) fn submitted(&self) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let ended = std::mem::take(&mut st.ended);
        for slot in ended {
            let flag = slot.mapped.clone();
            let n = u64::from(slot.passes.queries()) * 8;
            slot.readback
                .slice(0..n)
                .map_async(wgpu::MapMode::Read, move |r| {
                    flag.store(if r.is_ok() { 1 } else { 2 }, Ordering::Release);
                });
            st.mapping.push_back(slot);
        }
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
