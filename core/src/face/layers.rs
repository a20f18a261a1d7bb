//! Animation-channel layers: an ordered list of add / override layers folded onto a base frame,
//! then clamped per channel.
//!
//! Source: seed 004 "animation-channel composition" (an ordered fold of layers, each `add` or
//! `override` with a weight, clamped per channel; `add` generalises the summed macro / micro / nano
//! gaze offsets, `override` serves values that cannot be summed, such as a blink closing a lid that a
//! gaze layer also moves). mien folds onto an explicit base frame (the weights of a stream or clip)
//! instead of an empty one, and makes the clamp a per-channel rule instead of a fixed `[0, 1]`.
//!
//! # Representation
//!
//! A channel space has a fixed count `C` (52 for ARKit, 387 for GNM). A [`Frame`] is dense: `C`
//! values and `C` "present" flags; a channel whose flag is off is not carried by the frame and a
//! layer leaves it untouched. Dense storage makes [`Frame::set`] O(1) and lets a per-frame producer
//! (blink, gaze) rewrite its layer in place, so after setup nothing allocates: [`composite`] and
//! every setter of [`Frame`] and [`Layer`] write into storage that already exists. At the channel
//! counts mien uses a dense pass over `C` per layer costs less than keeping sparse lists sorted.
//!
//! # Finiteness
//!
//! Every value stored in a frame is finite with a magnitude of at most [`MAX_CHANNEL_MAGNITUDE`],
//! every weight is finite in `[0, 1]`, and [`composite`] checks its base the same way. An add layer
//! then moves a channel by at most [`MAX_CHANNEL_MAGNITUDE`] and an override layer keeps it between
//! its old value and the layer's, so after `L` layers `|out| ≤ (L + 1) × 1e6`: no fold of any length
//! that fits in memory overflows to ±∞, and no NaN can arise. Bad values are refused with a typed
//! error where they enter, never propagated.

use crate::error::{Error, Result};

/// The largest magnitude a channel value may have in a [`Frame`] or a [`composite`] base (`1e6`):
/// far above any weight (`0..1`, ±2 for over-driven morphs) or angle in radians, and low enough
/// that a fold cannot overflow `f32`.
pub const MAX_CHANNEL_MAGNITUDE: f32 = 1.0e6;

/// The largest channel count of a frame (65 536): GNM's 387 is the widest space mien drives.
pub const MAX_CHANNELS: usize = 1 << 16;

/// How a layer combines with the value under it (seed 004 `mode: 'add' | 'override'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerMode {
    /// `out = out + weight × value`: offsets that sum (gaze micro-motion on a gaze target).
    Add,
    /// `out = out + weight × (value − out)`: moves the channel toward `value`; weight 1 replaces it
    /// exactly, weight 0 leaves it unchanged (a blink's lid closure over a gaze layer's lid).
    Override,
}

/// The channel values one layer carries over a fixed space of `C` channels: `C` values (unitless
/// weights or radians, whatever the space's channel means) and `C` present flags.
///
/// Invariant: every stored value is finite with `|v| ≤` [`MAX_CHANNEL_MAGNITUDE`]; an absent
/// channel stores `0.0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    values: Vec<f32>,
    present: Vec<bool>,
}

/// Refuse a value that could carry NaN or overflow into a fold.
fn check_value(what: &str, channel: usize, value: f32) -> Result<()> {
    if value.is_finite() && value.abs() <= MAX_CHANNEL_MAGNITUDE {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: format!("{what} channel {channel}"),
            reason: format!("value {value} is not finite or exceeds ±{MAX_CHANNEL_MAGNITUDE}"),
        })
    }
}

/// Refuse a channel count over [`MAX_CHANNELS`].
fn check_channels(what: &str, channels: usize) -> Result<()> {
    if channels > MAX_CHANNELS {
        return Err(Error::Limit {
            what: format!("{what} channels"),
            limit: MAX_CHANNELS as u64,
            found: channels as u64,
        });
    }
    Ok(())
}

impl Frame {
    /// A frame over `channels` channels that carries none of them (an identity layer's frame).
    ///
    /// # Errors
    /// [`Error::Limit`] when `channels` exceeds [`MAX_CHANNELS`].
    pub fn empty(channels: usize) -> Result<Frame> {
        check_channels("layer frame", channels)?;
        Ok(Frame {
            values: vec![0.0; channels],
            present: vec![false; channels],
        })
    }

    /// A frame that carries every channel, `values` of shape `(C,)`.
    ///
    /// # Errors
    /// [`Error::Limit`] over [`MAX_CHANNELS`]; [`Error::Invalid`] naming the first channel whose
    /// value is non-finite or beyond [`MAX_CHANNEL_MAGNITUDE`].
    pub fn from_values(values: &[f32]) -> Result<Frame> {
        let mut frame = Frame::empty(values.len())?;
        frame.set_all(values)?;
        Ok(frame)
    }

    /// A frame over `channels` channels carrying the `(channel, value)` pairs; a channel named twice
    /// keeps its last value.
    ///
    /// # Errors
    /// [`Error::Limit`] over [`MAX_CHANNELS`]; every out-of-range channel and bad value, collected
    /// ([`Error::collect`]).
    pub fn from_pairs(channels: usize, pairs: &[(usize, f32)]) -> Result<Frame> {
        let mut frame = Frame::empty(channels)?;
        let problems: Vec<Error> = pairs
            .iter()
            .filter_map(|&(c, v)| frame.set(c, v).err())
            .collect();
        Error::collect(problems)?;
        Ok(frame)
    }

    /// The channel count `C`.
    pub fn channels(&self) -> usize {
        self.values.len()
    }

    /// Carry `channel` with `value`. Never allocates.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `channel ≥ C` or `value` is non-finite or beyond
    /// [`MAX_CHANNEL_MAGNITUDE`]; the frame is unchanged.
    pub fn set(&mut self, channel: usize, value: f32) -> Result<()> {
        self.check_channel(channel)?;
        check_value("layer frame", channel, value)?;
        self.values[channel] = value;
        self.present[channel] = true;
        Ok(())
    }

    /// Carry every channel, with `values` of shape `(C,)`. Never allocates.
    ///
    /// # Errors
    /// [`Error::Mismatch`] when `values.len() != C`; [`Error::Invalid`] naming the first bad value.
    /// Nothing is written unless every value is good.
    pub fn set_all(&mut self, values: &[f32]) -> Result<()> {
        if values.len() != self.channels() {
            return Err(Error::Mismatch {
                what: "layer frame values".into(),
                expected: self.channels() as u64,
                found: values.len() as u64,
            });
        }
        for (c, &v) in values.iter().enumerate() {
            check_value("layer frame", c, v)?;
        }
        self.values.copy_from_slice(values);
        self.present.fill(true);
        Ok(())
    }

    /// Stop carrying `channel` (a layer then leaves it untouched).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `channel ≥ C`.
    pub fn unset(&mut self, channel: usize) -> Result<()> {
        self.check_channel(channel)?;
        self.values[channel] = 0.0;
        self.present[channel] = false;
        Ok(())
    }

    /// Stop carrying any channel.
    pub fn clear(&mut self) {
        self.values.fill(0.0);
        self.present.fill(false);
    }

    /// The value of `channel` when the frame carries it (`None` when absent or out of range).
    pub fn get(&self, channel: usize) -> Option<f32> {
        match self.present.get(channel) {
            Some(true) => Some(self.values[channel]),
            _ => None,
        }
    }

    /// Whether the frame carries no channel at all.
    pub fn is_empty(&self) -> bool {
        !self.present.iter().any(|&p| p)
    }

    /// The values, shape `(C,)`; absent channels read `0.0`.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// The present flags, shape `(C,)`.
    pub fn present(&self) -> &[bool] {
        &self.present
    }

    fn check_channel(&self, channel: usize) -> Result<()> {
        if channel < self.channels() {
            Ok(())
        } else {
            Err(Error::Invalid {
                what: format!("layer frame channel {channel}"),
                reason: format!("out of range 0..{}", self.channels()),
            })
        }
    }
}

/// One layer of the fold: a mode, a weight in `[0, 1]` and a [`Frame`] (seed 004 `AnimationLayer`).
///
/// The fields are private so that the invariants (finite weight in `[0, 1]`, finite frame values)
/// hold by construction; [`Layer::frame_mut`] hands out the frame, whose setters keep them.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    mode: LayerMode,
    weight: f32,
    frame: Frame,
}

/// Refuse a weight outside `[0, 1]` (NaN included).
fn check_weight(weight: f32) -> Result<()> {
    if (0.0..=1.0).contains(&weight) {
        Ok(())
    } else {
        Err(Error::Invalid {
            what: "layer weight".into(),
            reason: format!("{weight} is not in [0, 1]"),
        })
    }
}

impl Layer {
    /// A layer of `mode` with `weight` over `frame`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `weight` is NaN or outside `[0, 1]`.
    pub fn new(mode: LayerMode, weight: f32, frame: Frame) -> Result<Layer> {
        check_weight(weight)?;
        Ok(Layer {
            mode,
            weight,
            frame,
        })
    }

    /// The mode.
    pub fn mode(&self) -> LayerMode {
        self.mode
    }

    /// The weight, in `[0, 1]`.
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// The frame.
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// The frame, to rewrite in place each animation frame (never allocates).
    pub fn frame_mut(&mut self) -> &mut Frame {
        &mut self.frame
    }

    /// Change the mode.
    pub fn set_mode(&mut self, mode: LayerMode) {
        self.mode = mode;
    }

    /// Change the weight (a layer fading in or out).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `weight` is NaN or outside `[0, 1]`; the layer is unchanged.
    pub fn set_weight(&mut self, weight: f32) -> Result<()> {
        check_weight(weight)?;
        self.weight = weight;
        Ok(())
    }
}

/// The bound applied to one channel after the fold.
///
/// Default: [`ClampRule::Unit`], the seed's `[0, 1]` for blendshape weights. Angle channels (gaze
/// in radians) take [`ClampRule::Range`] with the eye's limits, or [`ClampRule::None`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClampRule {
    /// No bound.
    None,
    /// `[0, 1]`.
    #[default]
    Unit,
    /// `[lo, hi]`, both finite with `lo ≤ hi` (checked by [`ClampRules`]).
    Range(f32, f32),
}

impl ClampRule {
    /// `value` bounded by the rule. Never panics, even on a range [`ClampRules`] did not check.
    pub fn apply(self, value: f32) -> f32 {
        match self {
            ClampRule::None => value,
            ClampRule::Unit => value.clamp(0.0, 1.0),
            // Not `f32::clamp`: no panic even on a range that skipped `ClampRules`' check.
            ClampRule::Range(lo, hi) => value.max(lo).min(hi),
        }
    }
}

/// One checked [`ClampRule`] per channel, shape `(C,)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClampRules {
    rules: Vec<ClampRule>,
}

/// Refuse a range with a non-finite end or `lo > hi`.
fn check_rule(channel: usize, rule: ClampRule) -> Result<()> {
    if let ClampRule::Range(lo, hi) = rule
        && !(lo.is_finite() && hi.is_finite() && lo <= hi)
    {
        return Err(Error::Invalid {
            what: format!("clamp rule of channel {channel}"),
            reason: format!("range [{lo}, {hi}] needs finite ends with lo <= hi"),
        });
    }
    Ok(())
}

impl ClampRules {
    /// The rules as given, one per channel.
    ///
    /// # Errors
    /// [`Error::Limit`] over [`MAX_CHANNELS`]; every bad range (a non-finite end, `lo > hi`) naming
    /// its channel, collected ([`Error::collect`]).
    pub fn new(rules: Vec<ClampRule>) -> Result<ClampRules> {
        check_channels("clamp rules", rules.len())?;
        let problems: Vec<Error> = rules
            .iter()
            .enumerate()
            .filter_map(|(c, &r)| check_rule(c, r).err())
            .collect();
        Error::collect(problems)?;
        Ok(ClampRules { rules })
    }

    /// The same `rule` on all `channels`.
    ///
    /// # Errors
    /// As [`ClampRules::new`].
    pub fn uniform(rule: ClampRule, channels: usize) -> Result<ClampRules> {
        check_channels("clamp rules", channels)?;
        ClampRules::new(vec![rule; channels])
    }

    /// The default: [`ClampRule::Unit`] on all `channels` (blendshape weights, seed 004).
    ///
    /// # Errors
    /// [`Error::Limit`] over [`MAX_CHANNELS`].
    pub fn unit(channels: usize) -> Result<ClampRules> {
        ClampRules::uniform(ClampRule::Unit, channels)
    }

    /// Replace the rule of `channel`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `channel ≥ C` or the range is bad; the rules are unchanged.
    pub fn set(&mut self, channel: usize, rule: ClampRule) -> Result<()> {
        let len = self.rules.len();
        let Some(slot) = self.rules.get_mut(channel) else {
            return Err(Error::Invalid {
                what: format!("clamp rule of channel {channel}"),
                reason: format!("out of range 0..{len}"),
            });
        };
        check_rule(channel, rule)?;
        *slot = rule;
        Ok(())
    }

    /// The channel count `C`.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no channels.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, shape `(C,)`.
    pub fn rules(&self) -> &[ClampRule] {
        &self.rules
    }
}

/// Fold `layers`, in order, onto `base` and clamp each channel: `out` of shape `(C,)`.
///
/// Per layer and per channel the layer carries: [`LayerMode::Add`] sets `out += w·v`;
/// [`LayerMode::Override`] sets `out += w·(v − out)`, except that weight exactly 1 assigns `v` (so
/// weight 1 replaces bit-exactly; weight 0 is exact by the formula). Channels a layer does not
/// carry are untouched. After the last layer each channel is bounded by its [`ClampRule`] (clamping
/// is applied once, to the result, not between layers). Never allocates on success. Source: seed
/// 004 `compositeAnimationFrames`.
///
/// # Errors
/// [`Error::Mismatch`] when `base`, `out`, `clamp` or a layer's frame has a channel count other
/// than `clamp.len()`; [`Error::Invalid`] naming the first base channel that is non-finite or beyond
/// [`MAX_CHANNEL_MAGNITUDE`]. `out` is not written on error.
pub fn composite(
    base: &[f32],
    layers: &[Layer],
    clamp: &ClampRules,
    out: &mut [f32],
) -> Result<()> {
    check_shapes(base, layers, clamp)?;
    if out.len() != clamp.len() {
        return Err(mismatch(
            "composite: output channels",
            clamp.len(),
            out.len(),
        ));
    }
    out.copy_from_slice(base);
    fold(out, layers, clamp);
    Ok(())
}

/// [`composite`] with `frame` as both base and output, shape `(C,)`.
///
/// # Errors
/// As [`composite`]; `frame` is not written on error.
pub fn composite_in_place(frame: &mut [f32], layers: &[Layer], clamp: &ClampRules) -> Result<()> {
    check_shapes(frame, layers, clamp)?;
    fold(frame, layers, clamp);
    Ok(())
}

fn mismatch(what: &str, expected: usize, found: usize) -> Error {
    Error::Mismatch {
        what: what.into(),
        expected: expected as u64,
        found: found as u64,
    }
}

/// Channel counts agree and the base is finite and bounded.
fn check_shapes(base: &[f32], layers: &[Layer], clamp: &ClampRules) -> Result<()> {
    let c = clamp.len();
    if base.len() != c {
        return Err(mismatch("composite: base channels", c, base.len()));
    }
    for (i, layer) in layers.iter().enumerate() {
        if layer.frame.channels() != c {
            return Err(Error::Mismatch {
                what: format!("composite: layer {i} channels"),
                expected: c as u64,
                found: layer.frame.channels() as u64,
            });
        }
    }
    for (ch, &v) in base.iter().enumerate() {
        check_value("composite base", ch, v)?;
    }
    Ok(())
}

impl Frame {
    /// Write channel `c` (carried from now on) where the caller's invariants already hold the
    /// value finite and bounded (the face controller's own weights); a bad channel or value is
    /// ignored, never stored.
    pub(crate) fn put(&mut self, c: usize, v: f32) {
        if c < self.values.len() && v.is_finite() && v.abs() <= MAX_CHANNEL_MAGNITUDE {
            self.values[c] = v;
            self.present[c] = true;
        }
    }
}

impl Layer {
    /// Set the weight, bounded to `[0, 1]` (NaN → 0): for per-frame producers whose weights are
    /// in range by construction (expression fades, the blink amount).
    pub(crate) fn put_weight(&mut self, w: f32) {
        self.weight = if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) };
    }
}

/// The fold proper, on checked shapes (the face controller builds its layers with the shapes of
/// each mesh, so it folds without [`composite`]'s base checks).
pub(crate) fn fold(out: &mut [f32], layers: &[Layer], clamp: &ClampRules) {
    for layer in layers {
        let w = layer.weight;
        if w == 0.0 {
            // The identity, exactly (the formula would turn a -0 channel into +0).
            continue;
        }
        let carried = layer.frame.values.iter().zip(&layer.frame.present);
        match layer.mode {
            LayerMode::Add => {
                for (o, (&v, &p)) in out.iter_mut().zip(carried) {
                    if p {
                        *o += w * v;
                    }
                }
            }
            LayerMode::Override => {
                for (o, (&v, &p)) in out.iter_mut().zip(carried) {
                    if p {
                        *o = if w == 1.0 { v } else { *o + w * (v - *o) };
                    }
                }
            }
        }
    }
    for (o, rule) in out.iter_mut().zip(&clamp.rules) {
        *o = rule.apply(*o);
    }
}
