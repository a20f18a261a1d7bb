//! Minimum hold: a timeline of viseme segments rewritten so that every kept shape is held at least
//! the hold time, by lengthening a short shape into a neighbour that can spare the time, else
//! merging it with a neighbour — never by stretching shapes over each other (which two fast
//! alternating shapes turn into a steady blend).
//!
//! Source and rationale: chattering — shapes under about 100 ms — reads as noise on a face, and
//! lip-sync tools hold each mouth shape a minimum time instead. Rhubarb Lip Sync
//! (`rhubarb/src/animation/timingOptimization.cpp`) does both halves of this rule: shapes under
//! its `minShapeDuration` (7 cs) are reduced to one representative shape — the one with the
//! longest total duration among them — and mouth segments under `minSegmentDuration` (8 cs) are
//! lengthened into the neighbouring time (at most 6 cs). mien makes the hold a parameter and the
//! order exact. A minimum hold of `h` seconds lets the shown shape change at most `1 / h` times a
//! second: 8 at 0.125 s, an animator's 24 fps "on threes".
//!
//! # The rule ([`apply_min_hold`])
//!
//! The segments `(viseme, start, end)` (sorted by start) become a timeline of **pieces**: each
//! segment cut at the next segment's start (an overlap is cut off), and each gap between two
//! segments a *rest* piece. Lengths are compared in whole nanoseconds (so `0.06` and
//! `0.12 − 0.06` are equal), and a piece is **short** when it is more than 1 ns under `h`.
//!
//! 1. A short gap is filled by the shape before it (the mouth keeps it through the pause).
//! 2. Adjacent pieces of one shape join (also after every later step).
//! 3. While a short shape remains (gaps are never short after step 1), take the shortest (ties:
//!    the earliest) and let `d = h − len`:
//!    1. if the **next** piece — shape or gap — is still at least `h` long after giving `d`, the
//!       boundary moves `d` later (the short shape holds longer, the next one starts later);
//!    2. else if the **previous** piece can give `d`, the boundary moves `d` earlier;
//!    3. else it **merges** with its shorter neighbour (ties: the previous one) into one piece
//!       covering both, showing the shape of the longer of the two (ties: the earlier one); a gap
//!       never wins, so a shape is never turned into rest (it takes the whole pause instead);
//!    4. else (it is the only piece) it ends at `start + h`.
//! 4. The pieces that are not rest are the result.
//!
//! Every piece — each kept shape and each pause between them — is then at least `h` long, with no
//! exception at the utterance's ends (a short first or last shape borrows from or merges with its
//! one neighbour; a lone shape is lengthened past the last segment's end, step 3.4, as the
//! earlier rule did), so what is shown changes at most `1 / h` times a second. The result starts
//! at the first segment's start and ends at the last segment's end (or later by step 3.4); a
//! shape is only ever dropped by merging into a neighbouring shape. Two shapes alternating every
//! 60 ms with `h = 0.125` become runs of three (aa PP aa → aa 180 ms, then PP aa PP → PP 180 ms,
//! …): each shape still shows, changing 1 / 0.18 ≈ 5.6 times a second. Each step of 3 either lengthens a
//! short shape to `h` (3.1, 3.2, 3.4) or removes a piece (3.3), so the rule ends after at most
//! twice as many steps as segments, `O(n log n)` in all.

use std::collections::BTreeSet;

use super::viseme::Viseme;

/// Under this many seconds short of the hold, a piece counts as held: 1 ns (float noise).
pub const HOLD_TOLERANCE_S: f64 = 1e-9;

/// Index of no piece.
const NONE: usize = usize::MAX;

/// One piece of the timeline: a shape (`None`: a gap, rest) over `[start, end)` seconds.
#[derive(Clone, Copy, Debug)]
struct Piece {
    shape: Option<Viseme>,
    start: f64,
    end: f64,
    prev: usize,
    next: usize,
    /// False once merged into a neighbour.
    alive: bool,
}

/// A length in whole nanoseconds, for comparisons free of float noise (lengths are at most 24 h,
/// 8.64e13 ns).
fn ns(len: f64) -> u64 {
    (len.max(0.0) * 1e9).round() as u64
}

/// The timeline as a doubly linked list with the short pieces ordered by `(length ns, index)`.
struct Timeline {
    p: Vec<Piece>,
    short: BTreeSet<(u64, usize)>,
    hold: f64,
}

impl Timeline {
    /// Append a piece after the last one.
    fn push(&mut self, shape: Option<Viseme>, start: f64, end: f64) {
        let at = self.p.len();
        let prev = at.checked_sub(1).unwrap_or(NONE);
        if prev != NONE {
            self.p[prev].next = at;
        }
        self.p.push(Piece {
            shape,
            start,
            end,
            prev,
            next: NONE,
            alive: true,
        });
    }

    fn len(&self, i: usize) -> f64 {
        self.p[i].end - self.p[i].start
    }

    fn is_short(&self, i: usize) -> bool {
        self.len(i) < self.hold - HOLD_TOLERANCE_S
    }

    /// Take `i` out of the short set (before its length changes).
    fn forget(&mut self, i: usize) {
        self.short.remove(&(ns(self.len(i)), i));
    }

    /// Put `i` in the short set if it is a short shape (after its length changed). Gaps are never
    /// queued: they are rest, held by nothing.
    fn remember(&mut self, i: usize) {
        if self.p[i].shape.is_some() && self.is_short(i) {
            self.short.insert((ns(self.len(i)), i));
        }
    }

    /// Remove `j`, giving its span to its neighbour `i` (adjacent), which takes `shape`.
    fn absorb(&mut self, i: usize, j: usize, shape: Option<Viseme>) {
        self.forget(i);
        self.forget(j);
        let (a, b) = if self.p[i].start <= self.p[j].start {
            (i, j)
        } else {
            (j, i)
        };
        let (start, end) = (self.p[a].start, self.p[b].end);
        let (before, after) = (self.p[a].prev, self.p[b].next);
        self.p[i].start = start;
        self.p[i].end = end;
        self.p[i].shape = shape;
        self.p[i].prev = before;
        self.p[i].next = after;
        if before != NONE {
            self.p[before].next = i;
        }
        if after != NONE {
            self.p[after].prev = i;
        }
        self.p[j].alive = false;
        self.join(i);
    }

    /// Join `i` with its neighbours of the same shape; queue the result if short.
    fn join(&mut self, i: usize) {
        let shape = self.p[i].shape;
        let prev = self.p[i].prev;
        if prev != NONE && self.p[prev].shape == shape {
            return self.absorb(prev, i, shape);
        }
        let next = self.p[i].next;
        if next != NONE && self.p[next].shape == shape {
            return self.absorb(i, next, shape);
        }
        self.remember(i);
    }

    /// Step 3 on the short piece `i`.
    fn fix(&mut self, i: usize) {
        let d = self.hold - self.len(i);
        // A neighbour (shape or gap) can give `d` if it keeps the hold itself.
        let can_give =
            |t: &Timeline, k: usize| k != NONE && t.len(k) - d >= t.hold - HOLD_TOLERANCE_S;
        let (prev, next) = (self.p[i].prev, self.p[i].next);
        if can_give(self, next) {
            self.forget(next);
            self.p[i].end += d;
            self.p[next].start = self.p[i].end;
            self.remember(next);
        } else if can_give(self, prev) {
            self.forget(prev);
            self.p[i].start -= d;
            self.p[prev].end = self.p[i].start;
            self.remember(prev);
        } else if prev != NONE || next != NONE {
            let q = match (prev, next) {
                (NONE, n) => n,
                (p, NONE) => p,
                (p, n) if ns(self.len(n)) < ns(self.len(p)) => n,
                (p, _) => p,
            };
            let (li, lq) = (ns(self.len(i)), ns(self.len(q)));
            let q_wins = self.p[q].shape.is_some() && (lq > li || (lq == li && q == prev));
            let shape = if q_wins {
                self.p[q].shape
            } else {
                self.p[i].shape
            };
            self.absorb(i, q, shape);
        } else {
            self.p[i].end = self.p[i].start + self.hold;
        }
    }
}

/// The minimum-hold rule of this module's documentation on `(viseme, start, end)` segments,
/// seconds, sorted by start with `end ≥ start` (as [`super::EnvelopeTrack::from_visemes`]
/// checks). `hold` is seconds; at or below [`HOLD_TOLERANCE_S`] (or not finite) the segments are
/// returned unchanged.
///
/// Returns the kept segments, sorted, not overlapping, each at least `hold` long (within
/// [`HOLD_TOLERANCE_S`]); adjacent ones of one viseme joined.
pub fn apply_min_hold(segments: &[(Viseme, f64, f64)], hold: f64) -> Vec<(Viseme, f64, f64)> {
    if !(hold.is_finite() && hold > HOLD_TOLERANCE_S) || segments.is_empty() {
        return segments.to_vec();
    }
    let mut t = Timeline {
        p: Vec::with_capacity(2 * segments.len()),
        short: BTreeSet::new(),
        hold,
    };
    // The pieces, each segment cut at the next start, gaps as rest; step 1 fills short gaps and
    // step 2 joins a segment to the piece before it when it shows the same viseme.
    for (k, &(v, s, e)) in segments.iter().enumerate() {
        let end = segments.get(k + 1).map_or(e, |n| e.min(n.1)).max(s);
        if let Some(last) = t.p.last_mut()
            && s > last.end
            && s - last.end < hold - HOLD_TOLERANCE_S
        {
            last.end = s;
        }
        if let Some(last) = t.p.last_mut()
            && s <= last.end
            && last.shape == Some(v)
        {
            last.end = last.end.max(end);
            continue;
        }
        if let Some(last) = t.p.last()
            && s > last.end
        {
            let start = last.end;
            t.push(None, start, s);
        }
        t.push(Some(v), s, end);
    }
    for i in 0..t.p.len() {
        t.remember(i);
    }
    // Step 3: the shortest first.
    while let Some((_, i)) = t.short.pop_first() {
        t.fix(i);
    }
    // Step 4: walk the list from its head.
    let mut out = Vec::new();
    let mut k = (0..t.p.len()).find(|&k| t.p[k].alive && t.p[k].prev == NONE);
    while let Some(c) = k {
        if let Some(v) = t.p[c].shape {
            out.push((v, t.p[c].start, t.p[c].end));
        }
        k = (t.p[c].next != NONE).then_some(t.p[c].next);
    }
    out
}
