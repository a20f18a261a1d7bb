//! The stages a frame's passes are timed as, and how a frame's timestamps become stage times.
//!
//! Each frame (one encoder) has its own set of [`QUERIES`] timestamp queries, so frames in flight
//! never share one: pass `k` of the frame writes queries `2k` (begin) and `2k + 1` (end), and the
//! frame's [`PassTimes`] remembers which stage pass `k` was. A stage recorded in several passes
//! of one frame (two lift passes, say) gets the sum of its passes.

/// The stages timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The blend: the morph pass, or a linear head's forward pass.
    Morph = 0,
    /// Skinning (and the tangent pass, which runs with it).
    Skin = 1,
    /// The lift (and clear) dispatches.
    Lift = 2,
    /// Hair strands turned into gaussians (`hair.wgsl`).
    Hair = 3,
}

/// Timestamp queries per frame: two per pass, so a frame times at most `QUERIES / 2` passes (a
/// later pass runs untimed and the frame's times say so: [`StageTimes::untimed_passes`]).
pub const QUERIES: u32 = 64;

/// GPU milliseconds per stage of one frame (0 for a stage that did not run).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Morph (or GNM forward) passes, ms.
    pub morph_ms: f64,
    /// Skin passes, ms.
    pub skin_ms: f64,
    /// Lift passes, ms.
    pub lift_ms: f64,
    /// Hair passes, ms.
    pub hair_ms: f64,
    /// Passes of the frame timed (counted in the sums above).
    pub timed_passes: u32,
    /// Passes of the frame past the [`QUERIES`] budget, or whose queries were unavailable: not
    /// counted in the sums above.
    pub untimed_passes: u32,
}

/// The passes one frame recorded with timestamps, in order (pass `k` wrote queries `2k`, `2k+1`).
#[derive(Clone, Debug, Default)]
pub struct PassTimes {
    stages: Vec<Stage>,
    /// Passes recorded past the budget.
    over: u32,
}

impl PassTimes {
    /// Start a pass of `stage`: the query index of its begin timestamp (its end is the next one),
    /// or `None` when the frame's queries are used up (the pass runs untimed).
    pub fn begin(&mut self, stage: Stage) -> Option<u32> {
        let k = self.stages.len() as u32;
        if 2 * k + 2 > QUERIES {
            self.over += 1;
            return None;
        }
        self.stages.push(stage);
        Some(2 * k)
    }

    /// Queries written so far (two per timed pass).
    pub fn queries(&self) -> u32 {
        2 * self.stages.len() as u32
    }

    /// Whether no pass was timed.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// Forget every pass (the encoder is reused for a new frame).
    pub fn clear(&mut self) {
        self.stages.clear();
        self.over = 0;
    }

    /// The frame's stage times from its queries' ticks (`ticks[q]`, `None`: unavailable) and the
    /// tick length in ns. A pass whose end precedes its begin counts 0.
    pub fn times(&self, ticks: &[Option<u64>], period_ns: f32) -> StageTimes {
        let mut t = StageTimes {
            untimed_passes: self.over,
            ..Default::default()
        };
        for (k, stage) in self.stages.iter().enumerate() {
            let (b, e) = (
                ticks.get(2 * k).copied().flatten(),
                ticks.get(2 * k + 1).copied().flatten(),
            );
            let Some((b, e)) = b.zip(e) else {
                t.untimed_passes += 1;
                continue;
            };
            let ms = e.saturating_sub(b) as f64 * f64::from(period_ns) * 1e-6;
            t.timed_passes += 1;
            match stage {
                Stage::Morph => t.morph_ms += ms,
                Stage::Skin => t.skin_ms += ms,
                Stage::Lift => t.lift_ms += ms,
                Stage::Hair => t.hair_ms += ms,
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_of_one_stage_add_up_and_overflow_is_counted() {
        let mut p = PassTimes::default();
        assert_eq!(p.begin(Stage::Morph), Some(0));
        assert_eq!(p.begin(Stage::Lift), Some(2));
        assert_eq!(p.begin(Stage::Lift), Some(4));
        // ticks of 1 ns: morph 10 ticks, lift 5 + 7 ticks, the last pass's end unavailable.
        let ticks = [Some(0), Some(10), Some(20), Some(25), Some(30), Some(37)];
        let t = p.times(&ticks, 1e6);
        assert_eq!((t.morph_ms, t.lift_ms, t.untimed_passes), (10.0, 12.0, 0));
        assert_eq!(t.timed_passes, 3);
        let t = p.times(&ticks[..5], 1e6);
        assert_eq!((t.lift_ms, t.untimed_passes), (5.0, 1));
        for _ in 3..QUERIES / 2 {
            assert!(p.begin(Stage::Hair).is_some());
        }
        assert_eq!(p.begin(Stage::Hair), None);
        assert_eq!(p.queries(), QUERIES);
        assert_eq!(p.times(&[], 1.0).untimed_passes, QUERIES / 2 + 1);
    }
}
