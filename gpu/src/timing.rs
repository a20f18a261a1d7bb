//! The stages a frame's passes are timed as.

/// The stages timed: each pass writes a begin and an end timestamp into its stage's two queries.
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

/// Timestamp queries per frame: two per stage.
pub const QUERIES: u32 = 8;

/// GPU milliseconds per stage of one frame (0 for a stage that did not run).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Morph (or GNM forward) pass, ms.
    pub morph_ms: f64,
    /// Skin pass, ms.
    pub skin_ms: f64,
    /// Lift pass, ms.
    pub lift_ms: f64,
    /// Hair pass, ms.
    pub hair_ms: f64,
}

impl StageTimes {
    /// Per-stage milliseconds from `(begin, end)` tick pairs (`None`: unavailable, counts 0; an end
    /// before its begin counts 0) and the tick length in ns.
    pub fn from_ticks(ticks: &[Option<(u64, u64)>], period_ns: f32) -> Self {
        let ms = |i: usize| {
            ticks.get(i).copied().flatten().map_or(0.0, |(b, e)| {
                e.saturating_sub(b) as f64 * f64::from(period_ns) * 1e-6
            })
        };
        StageTimes {
            morph_ms: ms(0),
            skin_ms: ms(1),
            lift_ms: ms(2),
            hair_ms: ms(3),
        }
    }
}
