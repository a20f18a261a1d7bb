//! Blinking on the media clock: a seeded schedule of blink starts and a close-then-open curve.
//!
//! Source: seed 003 "Face" (blink: interval range, duration, close fraction, seed; `blink_now`;
//! enable / disable; the lids move toward closed by the blink amount), STYLE 9 (SplitMix64 for
//! blink timing). Deterministic: the same seed and the same media times give the same blinks.

/// SplitMix64 (Steele, Lea, Flood 2014): the seeded generator of blink intervals.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The blink state of one character.
#[derive(Clone, Debug, PartialEq)]
pub struct Blinker {
    rng: SplitMix64,
    duration: f64,
    close_fraction: f64,
    enabled: bool,
    /// Start of the blink in progress or the next one, media seconds.
    next: f64,
    /// Start of the blink in progress, if any.
    current: Option<f64>,
}

impl Blinker {
    /// A blinker whose first blink comes one interval (drawn from `interval`) after `t0`.
    /// `duration` > 0 s, `close_fraction` in (0, 1) (validated by [`super::FaceDef`]).
    pub fn new(
        seed: u64,
        duration: f64,
        close_fraction: f64,
        t0: f64,
        interval: (f64, f64),
    ) -> Self {
        let mut b = Blinker {
            rng: SplitMix64(seed),
            duration,
            close_fraction,
            enabled: true,
            next: t0,
            current: None,
        };
        b.next = t0 + b.draw(interval);
        b
    }

    fn draw(&mut self, (lo, hi): (f64, f64)) -> f64 {
        lo + (hi - lo) * self.rng.unit()
    }

    /// Start a blink at `t` now (a blink in progress restarts).
    pub fn blink_now(&mut self, t: f64) {
        self.current = Some(t);
    }

    /// Allow or stop automatic blinks (a blink in progress finishes).
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Whether automatic blinks are on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Media time of the next scheduled blink.
    pub fn next_blink(&self) -> f64 {
        self.next
    }

    /// Advance to media time `t` (non-decreasing) with the current interval range, and return
    /// the blink amount in [0, 1]: 0 open, 1 closed. The curve closes linearly over
    /// `close_fraction × duration`, then opens linearly over the rest; eased with smoothstep.
    /// Missed blinks (a jump forward of several intervals) are skipped, not replayed.
    pub fn update(&mut self, t: f64, interval: (f64, f64)) -> f32 {
        if self.enabled && t >= self.next {
            // Start at the scheduled time, then schedule past t (a long jump skips blinks).
            self.current = Some(self.next);
            let mut guard = 0;
            while self.next <= t && guard < 1_000_000 {
                self.next += self.draw(interval).max(self.duration);
                guard += 1;
            }
            if guard == 1_000_000 {
                self.next = t + self.draw(interval);
            }
        }
        let Some(start) = self.current else {
            return 0.0;
        };
        let tau = t - start;
        if tau < 0.0 || tau >= self.duration {
            if tau >= self.duration {
                self.current = None;
            }
            return 0.0;
        }
        let close = self.close_fraction * self.duration;
        let a = if tau < close {
            tau / close
        } else {
            1.0 - (tau - close) / (self.duration - close)
        };
        let a = a.clamp(0.0, 1.0);
        (a * a * (3.0 - 2.0 * a)) as f32
    }

    /// What the state hash covers: the generator, the schedule and the blink in progress.
    pub fn hash_into(&self, h: &mut impl std::hash::Hasher) {
        h.write_u64(self.rng.0);
        h.write_u64(self.next.to_bits());
        h.write_u64(self.current.map_or(u64::MAX, f64::to_bits));
        h.write_u8(u8::from(self.enabled));
    }
}
