//! Per-stage GPU time from timestamp queries: each pass writes its stage's ([`mien_gpu::Stage`])
//! begin and end timestamp (`vkCmdWriteTimestamp`); results are read with availability after the
//! frame's fence.

use ash::vk;

use mien_gpu::{QUERIES, Stage, StageTimes};

use crate::error::{Result, VkResultExt};

pub(crate) struct Timestamps {
    pub pool: vk::QueryPool,
    period_ns: f32,
}

impl Timestamps {
    /// # Safety
    /// `d` live.
    pub(crate) unsafe fn new(d: &ash::Device, period_ns: f32) -> Result<Self> {
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(QUERIES);
        // SAFETY: d live.
        let pool =
            unsafe { d.create_query_pool(&info, None) }.vk("vkCreateQueryPool", "timestamps")?;
        Ok(Timestamps { pool, period_ns })
    }

    /// # Safety
    /// No pending work uses the pool.
    pub(crate) unsafe fn destroy(&self, d: &ash::Device) {
        // SAFETY: caller's contract.
        unsafe { d.destroy_query_pool(self.pool, None) };
    }

    /// Reset every query (at the start of a frame).
    ///
    /// # Safety
    /// `cmd` recording, outside a render pass.
    pub(crate) unsafe fn reset(&self, d: &ash::Device, cmd: vk::CommandBuffer) {
        // SAFETY: caller's contract.
        unsafe { d.cmd_reset_query_pool(cmd, self.pool, 0, QUERIES) };
    }

    /// Reset `stage`'s two queries.
    ///
    /// # Safety
    /// `cmd` recording, outside a render pass.
    pub(crate) unsafe fn reset_stage(&self, d: &ash::Device, cmd: vk::CommandBuffer, stage: Stage) {
        // SAFETY: caller's contract.
        unsafe { d.cmd_reset_query_pool(cmd, self.pool, stage as u32 * 2, 2) };
    }

    /// Write `stage`'s begin (`end = false`) or end timestamp.
    ///
    /// # Safety
    /// `cmd` recording; the query was reset earlier in submission order.
    pub(crate) unsafe fn write(
        &self,
        d: &ash::Device,
        cmd: vk::CommandBuffer,
        stage: Stage,
        end: bool,
    ) {
        let q = stage as u32 * 2 + u32::from(end);
        // SAFETY: caller's contract.
        unsafe { d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, self.pool, q) };
    }

    /// The last frame's stage times (after its fence signalled); unavailable queries count 0.
    ///
    /// # Safety
    /// `d` live; the frame that wrote the queries completed.
    pub(crate) unsafe fn read(&self, d: &ash::Device) -> StageTimes {
        // One stage at a time: a stage this frame did not record was never reset, and a read
        // that spans it may fail as a whole on some drivers (the H200's returned nothing for a
        // frame of the hair stage alone).
        let pairs: Vec<Option<(u64, u64)>> = (0..QUERIES / 2)
            .map(|s| {
                let mut data = [[0u64; 2]; 2];
                // SAFETY: caller's contract; no WAIT flag, so unwritten queries return
                // unavailable.
                let ok = unsafe {
                    d.get_query_pool_results(
                        self.pool,
                        2 * s,
                        &mut data,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
                    )
                };
                let (b, e) = (data[0], data[1]);
                (ok.is_ok() && b[1] != 0 && e[1] != 0).then_some((b[0], e[0]))
            })
            .collect();
        StageTimes::from_ticks(&pairs, self.period_ns)
    }
}
