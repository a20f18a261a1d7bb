//! The typed scenario model: what a checked `mien-scenario` file says (built by
//! [`super::parse`] from the raw serde layer). Names and files are still unresolved here;
//! [`super::check`] binds them to the character.

use mien_core::face::{AvatarState, Signal};

/// Frames one `step` may advance (seed 003: 1 to 100 000).
pub const MAX_STEP_FRAMES: u32 = 100_000;
/// Largest look-at coordinate, metres (keeps every point finite in f32).
pub const MAX_COORD_M: f64 = 1.0e6;
/// Largest override magnitude: the rig's morph weight limit (±2), so nothing is clamped.
pub const MAX_OVERRIDE: f64 = 2.0;
/// Capture cell side range, pixels (as `mien animate --cell`).
pub const CELL_RANGE: (u32, u32) = (16, 4096);
/// Capture cell side when a capture gives none, pixels.
pub const DEFAULT_CELL: u32 = 320;
/// A golden's per-pixel tolerance when it gives none: the largest difference of any 8-bit channel
/// of any pixel from the golden image. The CPU rasteriser is deterministic on one platform; 2
/// levels absorb a libm whose `exp` rounds differently elsewhere.
pub const DEFAULT_GOLDEN_TOLERANCE: u8 = 2;
/// The environment variable that makes `golden` steps rewrite their images instead of comparing.
pub const UPDATE_GOLDENS_ENV: &str = "MIEN_UPDATE_GOLDENS";
/// The folder, next to the scenario, that holds its goldens (`goldens/<name>.png`).
pub const GOLDENS_DIR: &str = "goldens";

/// A checked scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// `None` for the built-in head, else the character file as written (relative to the
    /// scenario's folder).
    pub character: Option<String>,
    /// A face definition file as written, if any.
    pub face: Option<String>,
    /// What the body step runs (foot placement, spring bones); a character file's own settings
    /// when not given.
    pub body: BodySettings,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// Largest walking speed, m/s.
pub const MAX_SPEED: f64 = 100.0;
/// Largest wind component, m/s².
pub const MAX_WIND: f64 = 1000.0;

/// A scenario's `body` block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BodySettings {
    /// `auto` (by humanoid role), `off`, or a `mien-foot-ik` file as written.
    pub foot_ik: Option<String>,
    /// `auto` (the character's own spring bones when it has any), `on` (required), `off`.
    pub springs: Option<String>,
}

/// One step.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Walk at `speed` m/s along the character's forward: the character file's locomotion blends
    /// idle and walk by it; without locomotion the placement moves while the drive plays.
    Walk {
        /// m/s, 0 to [`MAX_SPEED`].
        speed: f64,
    },
    /// Place the character in the world (a teleport when far): position, metres, and a turn about
    /// +Y, degrees. Foot smoothing restarts; spring bones reset when the root jumps farther than
    /// their teleport distance (3 m).
    Transform {
        /// World position, metres.
        position: [f64; 3],
        /// Turn about +Y, degrees (−360 to 360).
        yaw_deg: f64,
    },
    /// The ground foot placement stands on from now on (the short form of
    /// [`mien_core::anim::ground::Ground::parse`]).
    Ground(mien_core::anim::ground::Ground),
    /// Wind on the spring bones from now on, m/s² (world space).
    Wind([f64; 3]),
    /// Advance `frames` frames of `dt` seconds.
    Advance {
        /// 1–100 000.
        frames: u32,
        /// Seconds, in (0, 1].
        dt: f64,
    },
    /// Change what drives the character.
    Animate(Source),
    /// Face actions, applied in this order.
    Face(Vec<FaceAction>),
    /// Speech starting now.
    Say {
        /// Where its timings come from.
        speech: Speech,
        /// Held intervals or envelopes.
        envelope: bool,
    },
    /// An avatar-state signal.
    State(Signal),
    /// Record the state hash under a name.
    Hash(String),
    /// Check the current frame.
    Assert(Assertion),
    /// Render the current frame to `<name>.png`.
    Capture {
        /// File stem.
        name: String,
        /// Cell side, pixels.
        cell: u32,
    },
    /// Render the current frame like a capture and compare it with `goldens/<name>.png`.
    Golden {
        /// File stem.
        name: String,
        /// Cell side, pixels.
        cell: u32,
        /// Largest allowed difference of any 8-bit channel of any pixel.
        tolerance: u8,
    },
}

impl Step {
    /// The step's key in the file (`step`, `animate`, …).
    pub fn key(&self) -> &'static str {
        match self {
            Step::Advance { .. } => "step",
            Step::Walk { .. } => "walk",
            Step::Transform { .. } => "transform",
            Step::Ground(_) => "ground",
            Step::Wind(_) => "wind",
            Step::Animate(_) => "animate",
            Step::Face(_) => "face",
            Step::Say { .. } => "say",
            Step::State(_) => "state",
            Step::Hash(_) => "hash",
            Step::Assert(_) => "assert",
            Step::Capture { .. } => "capture",
            Step::Golden { .. } => "golden",
        }
    }
}

/// What an `animate` step plays.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// One of the character's clips, by name (or a decimal index when no clip has that name).
    Clip(String),
    /// One of the character's clips by index.
    ClipIndex(u64),
    /// A Live Link Face CSV stream, path as written.
    Stream(String),
    /// The rest pose.
    Rest,
}

/// One face action.
#[derive(Clone, Debug, PartialEq)]
pub enum FaceAction {
    /// Fade an expression toward a weight in [0, 1].
    Expression(String, f32),
    /// Blink now.
    Blink,
    /// Automatic blinking on or off.
    BlinkEnabled(bool),
    /// Look at a world point (metres), or release the gaze.
    LookAt(Option<[f32; 3]>),
    /// Force a morph target to a value, or release it.
    Override(String, Option<f32>),
}

/// Where a `say` step's timings come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Speech {
    /// A speech timing file, path as written.
    File(String),
    /// `(label, start, end)`, seconds from the utterance's start.
    Phonemes(Vec<(String, f64, f64)>),
}

/// A bound on a measured value; at least one side is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lower bound (inclusive).
    pub min: Option<f64>,
    /// Upper bound (inclusive).
    pub max: Option<f64>,
}

impl Range {
    /// Whether `x` lies within the bounds (a NaN never does).
    pub fn contains(&self, x: f64) -> bool {
        !x.is_nan() && self.min.is_none_or(|m| x >= m) && self.max.is_none_or(|m| x <= m)
    }
}

/// What a bone assertion measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoneMeasure {
    /// World position, metres.
    Position,
    /// The direction the node's rest forward (+Z of the character at rest) points now (unit).
    Forward,
}

/// One assertion.
#[derive(Clone, Debug, PartialEq)]
pub enum Assertion {
    /// A morph target's weight on the current frame.
    Morph {
        /// Target name (exact, else through the name canonicaliser).
        target: String,
        /// The mesh node to read it on; default the first drawn mesh node that has it.
        node: Option<String>,
        /// Bounds.
        range: Range,
    },
    /// A node's world position or forward direction.
    Bone {
        /// Node name.
        node: String,
        /// 0, 1, 2 for x, y, z.
        axis: usize,
        /// Position or forward.
        of: BoneMeasure,
        /// Bounds.
        range: Range,
    },
    /// A node's world height (y), metres, placement included (a shorthand of `bone` with axis y).
    BoneY {
        /// Node name.
        node: String,
        /// Bounds.
        range: Range,
    },
    /// How far a planted foot slid from its plant point, metres: the largest horizontal (x, z)
    /// distance of its ankle from where its stance began, over the frames since the last `foot_slide` assertion on
    /// that foot (or the start). Fails when the foot was never planted in that window.
    FootSlide {
        /// The leg's ankle node name.
        foot: String,
        /// Largest allowed distance, metres.
        max: f64,
    },
    /// The world position of a spring chain's tip (its last joint's tail), metres.
    ChainTip {
        /// The spring's name.
        spring: String,
        /// 0, 1, 2 for x, y, z.
        axis: usize,
        /// Bounds.
        range: Range,
    },
    /// The cloth's largest edge stretch on the frame, `|e|/L − 1` (the character file's cloth).
    ClothMaxStretch {
        /// Largest allowed (≥ 0).
        max: f64,
    },
    /// The mean of the hair guides' tips in world space, metres (the character file's hair).
    HairTip {
        /// 0, 1, 2 for x, y, z.
        axis: usize,
        /// Bounds.
        range: Range,
    },
    /// The media time, seconds.
    Time(Range),
    /// The avatar state.
    State(AvatarState),
    /// A hash recorded earlier in the run.
    Hash {
        /// The `hash` step's name.
        name: String,
        /// Expected value.
        equals: u64,
    },
}

impl Assertion {
    /// Its range, for the kinds that have one.
    pub fn range(&self) -> Option<Range> {
        match self {
            Assertion::Morph { range, .. }
            | Assertion::Bone { range, .. }
            | Assertion::BoneY { range, .. }
            | Assertion::ChainTip { range, .. }
            | Assertion::HairTip { range, .. } => Some(*range),
            Assertion::Time(r) => Some(*r),
            _ => None,
        }
    }
}
