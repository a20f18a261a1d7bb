//! Splat sinks: where lifts write gaussians.
//!
//! Source: DESIGN.md "Splat sink" and seed 000 (`SplatSink`, `SplatSinkBuffers`): four arrays indexed
//! by absolute slot — `center: vec4<f32>` (xyz metres, w unused), `color: u32 =
//! pack4x8unorm(r,g,b,opacity)`, `cov_a: vec4<f32> = (c00,c01,c02,c11)`, `cov_b: vec4<f32> =
//! (c12,c22,0,0)` — an owner-set bounding sphere and a "changed" flag for re-sorting.

pub mod slots;

pub use slots::{SlotAllocator, SlotRange};

use crate::error::{Error, Result};

/// The splat-sink seam: slot allocation, bounds and the re-sort flag. The buffers themselves are
/// backend types (CPU vectors, wgpu or Vulkan buffers).
pub trait SplatSink {
    /// Total slots.
    fn capacity(&self) -> u32;
    /// Reserve `count` contiguous slots.
    ///
    /// # Errors
    /// Exhaustion or `count == 0` ([`crate::Error::Slots`]).
    fn allocate(&mut self, count: u32) -> Result<SlotRange>;
    /// Return a live range.
    ///
    /// # Errors
    /// Double free, overlap, a range that is not live ([`crate::Error::Slots`]).
    fn free(&mut self, range: SlotRange) -> Result<()>;
    /// Owner-supplied bounds (metres); the sink never recomputes them from its buffers.
    fn set_bounding_sphere(&mut self, center: [f32; 3], radius: f32);
    /// The last bounds set.
    fn bounding_sphere(&self) -> ([f32; 3], f32);
    /// Ask for a re-sort on the next render.
    fn mark_changed(&mut self);
    /// Whether a re-sort was asked for since the last call; clears the flag.
    fn take_changed(&mut self) -> bool;
    /// Bytes held by the four buffers.
    fn bytes(&self) -> u64;
}

/// Bytes one slot takes in the four buffers: 16 + 4 + 16 + 16.
pub const BYTES_PER_SLOT: u64 = 52;

/// The four sink arrays on the host, `(S,…)` by absolute slot. The CPU sink's storage, and what a GPU
/// sink reads back into.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SplatBuffers {
    /// Centres `(S,4)`: xyz metres, w unused (0).
    pub center: Vec<[f32; 4]>,
    /// `pack4x8unorm(r, g, b, opacity)` `(S,)`.
    pub color: Vec<u32>,
    /// Covariance `(c00, c01, c02, c11)` `(S,4)`, m².
    pub cov_a: Vec<[f32; 4]>,
    /// Covariance `(c12, c22, 0, 0)` `(S,4)`, m².
    pub cov_b: Vec<[f32; 4]>,
}

impl SplatBuffers {
    /// `capacity` slots, all cleared (opacity 0, zero covariance).
    pub fn new(capacity: u32) -> Self {
        let n = capacity as usize;
        SplatBuffers {
            center: vec![[0.0; 4]; n],
            color: vec![0; n],
            cov_a: vec![[0.0; 4]; n],
            cov_b: vec![[0.0; 4]; n],
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.center.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.center.is_empty()
    }

    /// Every slot of these buffers, `0..len`: the range to write a whole read-out with (an
    /// instance's `Runtime::splats(i)`, or all of `Runtime::splats_all()`).
    pub fn all(&self) -> SlotRange {
        SlotRange {
            offset: 0,
            count: u32::try_from(self.len()).unwrap_or(u32::MAX),
        }
    }

    /// [`SplatBuffers::check_ranges`] for a splat file: at least one range too (a file of no
    /// slot is a caller's mistake; a preview of none is a background).
    ///
    /// # Errors
    /// As [`SplatBuffers::check_ranges`]; [`Error::Slots`] for no range.
    pub fn check_file_ranges(&self, ranges: &[SlotRange]) -> Result<()> {
        self.check_ranges(ranges)?;
        if ranges.is_empty() {
            return Err(Error::Slots {
                reason: "no slot range given (write a whole read-out with `SplatBuffers::all`)",
                offset: 0,
                count: 0,
                capacity: u32::try_from(self.center.len()).unwrap_or(u32::MAX),
            });
        }
        Ok(())
    }

    /// Check that the four arrays have one length and that `ranges` select slots: every range
    /// inside the buffers, no two overlapping (a slot is written once).
    ///
    /// # Errors
    /// [`Error::Mismatch`] for unequal arrays, [`Error::Slots`] for a range past the end, or two
    /// ranges that share slots.
    pub fn check_ranges(&self, ranges: &[SlotRange]) -> Result<()> {
        let n = self.center.len();
        for (what, len) in [
            ("splat buffers: color length", self.color.len()),
            ("splat buffers: cov_a length", self.cov_a.len()),
            ("splat buffers: cov_b length", self.cov_b.len()),
        ] {
            if len != n {
                return Err(Error::Mismatch {
                    what: what.into(),
                    expected: n as u64,
                    found: len as u64,
                });
            }
        }
        let mut sorted: Vec<&SlotRange> = ranges.iter().collect();
        sorted.sort_by_key(|r| r.offset);
        if let Some(w) = sorted
            .windows(2)
            .find(|w| w[0].end() > u64::from(w[1].offset))
        {
            return Err(Error::Slots {
                reason: "two ranges share slots (each slot is written once)",
                offset: w[1].offset,
                count: w[1].count,
                capacity: u32::try_from(self.center.len()).unwrap_or(u32::MAX),
            });
        }
        if let Some(r) = ranges.iter().find(|r| r.end() > n as u64) {
            return Err(Error::Slots {
                reason: "range lies outside the splat buffers",
                offset: r.offset,
                count: r.count,
                capacity: u32::try_from(n).unwrap_or(u32::MAX),
            });
        }
        Ok(())
    }

    /// The slots of `ranges` whose opacity byte is not 0, in order, and how many were skipped:
    /// what a splat file holds (opacity-0 slots are the sink's cleared slots). Ranges are assumed
    /// checked ([`SplatBuffers::check_ranges`]).
    pub fn visible_slots(&self, ranges: &[SlotRange]) -> (Vec<usize>, u64) {
        let mut skipped = 0;
        let slots = ranges
            .iter()
            .flat_map(|r| r.offset as usize..r.end() as usize)
            .filter(|&i| {
                let keep = self.color[i] >> 24 != 0;
                skipped += u64::from(!keep);
                keep
            })
            .collect();
        (slots, skipped)
    }

    /// Slot `i`'s symmetric covariance as a row-major 3×3, m².
    pub fn covariance(&self, i: usize) -> [[f32; 3]; 3] {
        let (a, b) = (self.cov_a[i], self.cov_b[i]);
        [[a[0], a[1], a[2]], [a[1], a[3], b[0]], [a[2], b[0], b[1]]]
    }

    /// Slot `i`'s colour and opacity, each in `[0,1]`.
    pub fn rgba(&self, i: usize) -> [f32; 4] {
        unpack4x8unorm(self.color[i])
    }
}

/// WGSL `pack4x8unorm`: each component clamped to `[0,1]`, scaled by 255, rounded half up
/// (`floor(0.5 + 255·c)`), component 0 in the low byte (WGSL spec §17.9 "Data Packing").
/// NaN packs as 0.
#[inline]
pub fn pack4x8unorm(c: [f32; 4]) -> u32 {
    let mut out = 0u32;
    for (k, &x) in c.iter().enumerate() {
        let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        out |= ((0.5 + 255.0 * x).floor() as u32) << (8 * k);
    }
    out
}

/// Inverse of [`pack4x8unorm`] (byte / 255).
#[inline]
pub fn unpack4x8unorm(v: u32) -> [f32; 4] {
    [0, 1, 2, 3].map(|k| ((v >> (8 * k)) & 0xff) as f32 / 255.0)
}
