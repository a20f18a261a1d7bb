//! Per-stage GPU time from timestamp queries: each pass writes its stage's begin and end timestamps
//! ([`mien_gpu::Stage`]); the frame resolves them and the host reads them after the submission.

use mien_gpu::{QUERIES, Stage, StageTimes};

/// A query set of two timestamps per stage and the buffers to read it back.
pub struct Timestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    period_ns: f32,
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
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("mien stages"),
            ty: wgpu::QueryType::Timestamp,
            count: QUERIES,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("mien timestamps"),
            size: u64::from(QUERIES) * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Timestamps {
            set,
            resolve,
            period_ns: queue.get_timestamp_period(),
        }
    }

    /// The pass descriptor's timestamp writes for `stage`.
    pub fn writes(&self, stage: Stage) -> wgpu::ComputePassTimestampWrites<'_> {
        let i = stage as u32 * 2;
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(i),
            end_of_pass_write_index: Some(i + 1),
        }
    }

    /// Record the resolve of every timestamp at the end of a frame.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.set, 0..QUERIES, &self.resolve, 0);
    }

    /// The resolved buffer (`(6,)` u64 ticks) and the tick length in ns.
    pub fn resolved(&self) -> (&wgpu::Buffer, f32) {
        (&self.resolve, self.period_ns)
    }

    /// Convert resolved ticks to per-stage milliseconds (a stage whose end precedes its begin, as
    /// when it did not run, counts 0).
    pub fn decode(bytes: &[u8], period_ns: f32) -> StageTimes {
        let t: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let pairs: Vec<Option<(u64, u64)>> = (0..QUERIES as usize / 2)
            .map(|i| t.get(2 * i).copied().zip(t.get(2 * i + 1).copied()))
            .collect();
        StageTimes::from_ticks(&pairs, period_ns)
    }
}
