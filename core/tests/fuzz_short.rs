//! The short fuzz pass `cargo test` runs (docs/RELIABILITY.md): every parser's seeds — the real
//! files of `../shared/data` and hand-written ones — and a fixed number of deterministic
//! mutations of them (byte flips, boundary bytes, truncation, chunk duplication and deletion,
//! splices, numbers swapped for hostile ones) through [`mien_core::fuzz::run`]. A panic fails
//! the test naming the target, the seed and the mutation, reproducible from the fixed seed.
//! The long coverage-guided runs use the same entry points (`fuzz/`, cargo-fuzz).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mien_core::fuzz::{Target, run, seeds};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const HOSTILE: [&str; 8] = [
    "-1",
    "0",
    "1e309",
    "NaN",
    "4294967296",
    "-0.0",
    "99999999999999999999",
    "1e-320",
];

/// One mutation of `seed` (with `other` to splice from).
fn mutate(seed: &[u8], other: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = seed.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let n = v.len();
        match rng.below(8) {
            0 if n > 0 => {
                let i = rng.below(n);
                v[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n);
                v[i] = [0u8, 0xFF, 0x7F, 0x80, b'"', b'\n', b'{', b'9'][rng.below(8)];
            }
            2 => v.truncate(rng.below(n + 1)),
            3 if n > 0 => {
                let a = rng.below(n);
                let len = rng.below((n - a).min(4096) + 1);
                let chunk = v[a..a + len].to_vec();
                let at = rng.below(n + 1);
                v.splice(at..at, chunk);
            }
            4 if n > 0 => {
                let a = rng.below(n);
                let len = rng.below((n - a).min(4096) + 1);
                v.drain(a..a + len);
            }
            5 if !other.is_empty() => {
                let cut = rng.below(n + 1);
                let from = rng.below(other.len());
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            6 => {
                // Swap a run of ASCII digits for a hostile number.
                let digits: Vec<usize> = (0..n).filter(|&i| v[i].is_ascii_digit()).collect();
                if !digits.is_empty() {
                    let s = digits[rng.below(digits.len())];
                    let mut e = s;
                    while e < n && (v[e].is_ascii_digit() || v[e] == b'.') {
                        e += 1;
                    }
                    let h = HOSTILE[rng.below(HOSTILE.len())].as_bytes().to_vec();
                    v.splice(s..e, h);
                }
            }
            _ => {
                let at = rng.below(n + 1);
                let len = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                v.splice(at..at, bytes);
            }
        }
    }
    v
}

/// Mutations per target, spread over its seeds; seeds over 256 KB get [`PER_BIG_SEED`] (they are
/// slow in a debug build), the rest share the remainder.
const PER_TARGET: usize = 4000;
/// Mutations of a seed over 256 KB.
const PER_BIG_SEED: usize = 200;

#[test]
fn every_parser_survives_its_seeds_and_their_mutations() {
    let mut failures = Vec::new();
    for t in Target::ALL {
        let seeds = seeds(t, &shared()).unwrap();
        assert!(!seeds.is_empty(), "{} has no seed", t.name());
        let start = Instant::now();
        let mut rng = Rng(0x5EED ^ t.name().len() as u64);
        let big = seeds.iter().filter(|(_, s)| s.len() > 256 << 10).count();
        let small = seeds.len() - big;
        let per_small = PER_TARGET.saturating_sub(PER_BIG_SEED * big) / small.max(1);
        let mut runs = 0usize;
        for (k, (name, seed)) in seeds.iter().enumerate() {
            let other = &seeds[(k + 1) % seeds.len()].1;
            let n = if seed.len() > 256 << 10 {
                PER_BIG_SEED
            } else {
                per_small
            };
            for m in 0..=n {
                let data = if m == 0 {
                    seed.clone()
                } else {
                    mutate(seed, other, &mut rng)
                };
                runs += 1;
                if catch_unwind(AssertUnwindSafe(|| run(t, &data))).is_err() {
                    failures.push(format!(
                        "{}: {name}, mutation {m} ({} bytes)",
                        t.name(),
                        data.len()
                    ));
                }
            }
        }
        eprintln!(
            "fuzz short pass: {} — {runs} inputs in {:.1} s",
            t.name(),
            start.elapsed().as_secs_f64()
        );
    }
    assert!(failures.is_empty(), "panics:\n{}", failures.join("\n"));
}
