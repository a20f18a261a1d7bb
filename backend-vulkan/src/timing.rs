//! Per-stage GPU time from timestamp queries. Every frame (mien's encoder) takes a query pool of
//! its own from a free list: its passes write a begin and an end timestamp each
//! (`vkCmdWriteTimestamp`, [`mien_gpu::PassTimes`]); when the frame's fence has signalled the
//! results are read with availability and the pool goes back to the list. Frames in flight never
//! share a pool, so none overwrites another's times.

use std::collections::VecDeque;
use std::sync::Mutex;

use ash::vk;

use mien_gpu::{PassTimes, QUERIES, StageTimes};

use crate::error::{Result, VkResultExt};

/// Completed frames' times kept for [`Timestamps::take`] at most (older ones are dropped).
const KEEP: usize = 256;

pub(crate) struct Timestamps {
    period_ns: f32,
    /// Pools not in use by an encoder or a submission.
    free: Mutex<Vec<vk::QueryPool>>,
    /// Every pool made (destroyed with the context).
    all: Mutex<Vec<vk::QueryPool>>,
    /// Completed frames' times, oldest first.
    done: Mutex<VecDeque<StageTimes>>,
}

/// One frame's queries: its pool and the passes recorded into it.
pub(crate) struct FrameQueries {
    pub pool: vk::QueryPool,
    pub passes: PassTimes,
    /// The frame ended ([`mien_gpu::GpuDevice::end_frame`]): its times are reported.
    pub frame: bool,
}

impl Timestamps {
    pub(crate) fn new(period_ns: f32) -> Self {
        Timestamps {
            period_ns,
            free: Mutex::new(Vec::new()),
            all: Mutex::new(Vec::new()),
            done: Mutex::new(VecDeque::new()),
        }
    }

    /// A pool for a new frame, reset into `cmd` (recording, outside a render pass).
    ///
    /// # Safety
    /// `d` live; `cmd` recording on `d`.
    pub(crate) unsafe fn take_pool(
        &self,
        d: &ash::Device,
        cmd: vk::CommandBuffer,
    ) -> Result<FrameQueries> {
        let reused = self.free.lock().ok().and_then(|mut f| f.pop());
        let pool = match reused {
            Some(p) => p,
            None => {
                let info = vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(QUERIES);
                // SAFETY: d live.
                let p = unsafe { d.create_query_pool(&info, None) }
                    .vk("vkCreateQueryPool", "timestamps")?;
                if let Ok(mut a) = self.all.lock() {
                    a.push(p);
                }
                p
            }
        };
        // SAFETY: caller's contract; the pool is no submission's (free or new).
        unsafe { d.cmd_reset_query_pool(cmd, pool, 0, QUERIES) };
        Ok(FrameQueries {
            pool,
            passes: PassTimes::default(),
            frame: false,
        })
    }

    /// Give back a pool no pending work uses.
    pub(crate) fn give_back(&self, pool: vk::QueryPool) {
        if let Ok(mut f) = self.free.lock() {
            f.push(pool);
        }
    }

    /// Read a completed frame's queries (its fence signalled), keep its times when it ended a
    /// frame, and give its pool back.
    ///
    /// # Safety
    /// `d` live; the submission that wrote `q` completed.
    pub(crate) unsafe fn retire(&self, d: &ash::Device, q: FrameQueries) {
        if q.frame && !q.passes.is_empty() {
            let n = q.passes.queries() as usize;
            let mut data = vec![[0u64; 2]; n];
            // SAFETY: caller's contract; every query 0..n was written by the completed frame.
            let ok = unsafe {
                d.get_query_pool_results(
                    q.pool,
                    0,
                    &mut data,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
                )
            };
            let ticks: Vec<Option<u64>> = data
                .iter()
                .map(|[t, avail]| (ok.is_ok() && *avail != 0).then_some(*t))
                .collect();
            let times = q.passes.times(&ticks, self.period_ns);
            if let Ok(mut done) = self.done.lock() {
                if done.len() == KEEP {
                    done.pop_front();
                }
                done.push_back(times);
            }
        }
        self.give_back(q.pool);
    }

    /// Completed frames' times since the last call, oldest first.
    pub(crate) fn take(&self) -> Vec<StageTimes> {
        self.done
            .lock()
            .map(|mut d| d.drain(..).collect())
            .unwrap_or_default()
    }

    /// # Safety
    /// No pending work uses any pool.
    pub(crate) unsafe fn destroy(&self, d: &ash::Device) {
        if let Ok(a) = self.all.lock() {
            for p in a.iter() {
                // SAFETY: caller's contract.
                unsafe { d.destroy_query_pool(*p, None) };
            }
        }
    }
}
