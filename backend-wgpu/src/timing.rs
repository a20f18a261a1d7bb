//! Per-stage GPU time from timestamp queries: the morph, skin and lift passes each write a begin and
//! an end timestamp; the frame resolves them and the host reads them after the submission.

/// The stages timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The morph CSR blend pass.
    Morph = 0,
    /// The skinning pass.
    Skin = 1,
    /// The lift (and clear) pass.
    Lift = 2,
}

/// GPU milliseconds per stage for one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Morph pass, ms.
    pub morph_ms: f64,
    /// Skin pass, ms.
    pub skin_ms: f64,
    /// Lift pass, ms.
    pub lift_ms: f64,
}

const QUERIES: u32 = 6;

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
        let ms = |i: usize| {
            t.get(2 * i + 1).zip(t.get(2 * i)).map_or(0.0, |(e, b)| {
                e.saturating_sub(*b) as f64 * f64::from(period_ns) * 1e-6
            })
        };
        StageTimes {
            morph_ms: ms(0),
            skin_ms: ms(1),
            lift_ms: ms(2),
        }
    }
}
