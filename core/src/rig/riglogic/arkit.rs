//! ARKit-52 onto a DNA's raw controls (the face board's expression controls), with a rest vector:
//! seed 000's `arkitToMh` + `arkitToRig` (`../shared/seeds/000_*.txt`), resolved against the
//! DNA's own control names.
//!
//! ARKit weights are deltas from neutral (0 = neutral, 1 = full expression), so each reached raw
//! control is `clamp(rest[c] + Σ weight · arkit[a], lo, hi)` and every control ARKit cannot reach
//! keeps `rest[c]` — seed 000 measured that zeroing the unreached controls leaves a face far from
//! anything the rig was made for. `apply(zeros)` is `rest` exactly (rest inside its range).
//!
//! # The table
//! Each ARKit channel lists the raw controls it drives, as candidate names tried in order; the
//! first candidate group whose controls all exist in the DNA is used:
//! 1. the MetaHuman board's names (`CTRL_expressions_eyeBlinkL`, `…mouthCornerPullL` for
//!    `mouthSmileLeft`, the four lip quadrants for `mouthFunnel`/`mouthPucker`/`mouthClose`, …),
//!    [`METAHUMAN_TABLE`];
//! 2. the ARKit name itself on the board (`CTRL_expressions_jawLeft`), then with a trailing
//!    `Left`/`Right` shortened to `L`/`R` (`eyeBlinkLeft` → `CTRL_expressions_eyeBlinkL`) — in
//!    that order, so the directions `jawLeft` and `mouthRight` are not read as sides;
//! 3. for an unsided ARKit channel, both sides of it (`browInnerUp` →
//!    `CTRL_expressions_browInnerUpL` + `…R`, `cheekPuff` → `…cheekPuffL` + `…R`).
//!
//! All weights are 1. A channel no candidate resolves is reported unmapped, never guessed.

use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::error::{Error, Result};

/// MetaHuman face-board targets per ARKit channel (board names without the `CTRL_expressions_`
/// prefix). Source: the MetaHuman board's expression-control naming; channels whose MetaHuman
/// name equals the ARKit-derived one are left to rule 2.
pub const METAHUMAN_TABLE: &[(&str, &[&str])] = &[
    ("browDownLeft", &["browDownL", "browLateralL"]),
    ("browDownRight", &["browDownR", "browLateralR"]),
    ("browInnerUp", &["browRaiseInL", "browRaiseInR"]),
    ("browOuterUpLeft", &["browRaiseOuterL"]),
    ("browOuterUpRight", &["browRaiseOuterR"]),
    ("cheekPuff", &["mouthCheekBlowL", "mouthCheekBlowR"]),
    ("cheekSquintLeft", &["eyeCheekRaiseL"]),
    ("cheekSquintRight", &["eyeCheekRaiseR"]),
    ("eyeSquintLeft", &["eyeSquintInnerL"]),
    ("eyeSquintRight", &["eyeSquintInnerR"]),
    ("eyeWideLeft", &["eyeWidenL"]),
    ("eyeWideRight", &["eyeWidenR"]),
    ("jawForward", &["jawFwd"]),
    (
        "mouthClose",
        &[
            "mouthLipsTogetherDL",
            "mouthLipsTogetherDR",
            "mouthLipsTogetherUL",
            "mouthLipsTogetherUR",
        ],
    ),
    ("mouthFrownLeft", &["mouthCornerDepressL"]),
    ("mouthFrownRight", &["mouthCornerDepressR"]),
    (
        "mouthFunnel",
        &[
            "mouthFunnelDL",
            "mouthFunnelDR",
            "mouthFunnelUL",
            "mouthFunnelUR",
        ],
    ),
    ("mouthLowerDownLeft", &["mouthLowerLipDepressL"]),
    ("mouthLowerDownRight", &["mouthLowerLipDepressR"]),
    ("mouthPressLeft", &["mouthPressDL", "mouthPressUL"]),
    ("mouthPressRight", &["mouthPressDR", "mouthPressUR"]),
    (
        "mouthPucker",
        &[
            "mouthLipsPurseDL",
            "mouthLipsPurseDR",
            "mouthLipsPurseUL",
            "mouthLipsPurseUR",
        ],
    ),
    (
        "mouthRollLower",
        &["mouthLowerLipRollInL", "mouthLowerLipRollInR"],
    ),
    (
        "mouthRollUpper",
        &["mouthUpperLipRollInL", "mouthUpperLipRollInR"],
    ),
    ("mouthSmileLeft", &["mouthCornerPullL"]),
    ("mouthSmileRight", &["mouthCornerPullR"]),
    ("mouthUpperUpLeft", &["mouthUpperLipRaiseL"]),
    ("mouthUpperUpRight", &["mouthUpperLipRaiseR"]),
    ("noseSneerLeft", &["noseWrinkleL"]),
    ("noseSneerRight", &["noseWrinkleR"]),
];

/// The raw-control name prefix of MetaHuman expression controls.
pub const BOARD_PREFIX: &str = "CTRL_expressions_";

/// One resolved term: raw control `control` += `weight` · ARKit channel `arkit`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArkitBoardTerm {
    /// ARKit-52 index.
    pub arkit: u16,
    /// Raw control index in the DNA.
    pub control: u16,
    /// Weight (1 for every built-in entry).
    pub weight: f32,
}

/// ARKit-52 resolved against one DNA's raw controls, with its rest vector and ranges.
#[derive(Clone, Debug, PartialEq)]
pub struct ArkitBoardMap {
    /// Terms in ARKit order.
    pub terms: Vec<ArkitBoardTerm>,
    /// Rest value per raw control `(R,)`: what a neutral ARKit frame gives.
    pub rest: Vec<f32>,
    /// Range per raw control `(R,)`: reached controls are clamped into it (MetaHuman raw controls:
    /// [0, 1]).
    pub range: Vec<[f32; 2]>,
    /// Per raw control: whether some ARKit channel reaches it.
    pub reached: Vec<bool>,
    /// ARKit channels no candidate resolved, in ARKit order.
    pub unmapped: Vec<&'static str>,
}

/// What [`ArkitBoardMap`] reaches, for the report.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ArkitReach {
    /// Raw controls driven by ARKit, in control order.
    pub reached: Vec<String>,
    /// Raw controls that hold their rest value, in control order.
    pub unreached: Vec<String>,
    /// ARKit channels that drive nothing on this board.
    pub unmapped_arkit: Vec<String>,
}

fn side_short(name: &str) -> String {
    if let Some(s) = name.strip_suffix("Left") {
        format!("{s}L")
    } else if let Some(s) = name.strip_suffix("Right") {
        format!("{s}R")
    } else {
        name.to_string()
    }
}

impl ArkitBoardMap {
    /// Resolve the table against `raw_names` `(R,)` (the DNA's raw control names, in order); rest
    /// all zero, ranges [0, 1].
    pub fn new(raw_names: &[String]) -> Self {
        let find = |n: &str| {
            raw_names
                .iter()
                .position(|r| r == &format!("{BOARD_PREFIX}{n}"))
        };
        let all =
            |names: &[String]| -> Option<Vec<usize>> { names.iter().map(|n| find(n)).collect() };
        let mut terms = Vec::new();
        let mut unmapped = Vec::new();
        let mut reached = vec![false; raw_names.len()];
        for (a, &arkit) in ARKIT_52.iter().enumerate() {
            let mut candidates: Vec<Vec<String>> = Vec::new();
            if let Some((_, mh)) = METAHUMAN_TABLE.iter().find(|(k, _)| *k == arkit) {
                candidates.push(mh.iter().map(|s| s.to_string()).collect());
            }
            candidates.push(vec![arkit.to_string()]);
            let short = side_short(arkit);
            candidates.push(vec![short.clone()]);
            if short == arkit {
                candidates.push(vec![format!("{arkit}L"), format!("{arkit}R")]);
            }
            match candidates.iter().find_map(|c| all(c)) {
                Some(controls) => {
                    for c in controls {
                        reached[c] = true;
                        terms.push(ArkitBoardTerm {
                            arkit: a as u16,
                            control: c as u16,
                            weight: 1.0,
                        });
                    }
                }
                None => unmapped.push(arkit),
            }
        }
        ArkitBoardMap {
            terms,
            rest: vec![0.0; raw_names.len()],
            range: vec![[0.0, 1.0]; raw_names.len()],
            reached,
            unmapped,
        }
    }

    /// Replace the rest vector `(R,)` (the rig's neutral configuration, raw-control units).
    ///
    /// # Errors
    /// [`Error::Mismatch`] on a length other than R; [`Error::Invalid`] on a non-finite value or
    /// one outside its control's range (named by index).
    pub fn set_rest(&mut self, rest: &[f32]) -> Result<()> {
        if rest.len() != self.rest.len() {
            return Err(Error::Mismatch {
                what: "rest vector".into(),
                expected: self.rest.len() as u64,
                found: rest.len() as u64,
            });
        }
        for (i, (&v, r)) in rest.iter().zip(&self.range).enumerate() {
            if !v.is_finite() || v < r[0] || v > r[1] {
                return Err(Error::Invalid {
                    what: format!("rest vector[{i}]"),
                    reason: format!("{v} is outside its control's range [{}, {}]", r[0], r[1]),
                });
            }
        }
        self.rest.copy_from_slice(rest);
        Ok(())
    }

    /// Raw controls `out` `(R,)` for one ARKit frame `(52,)`: rest plus the ARKit terms, the
    /// reached controls clamped into their range; returns how many reached controls were clamped.
    ///
    /// # Panics
    /// When `out.len()` ≠ R (a caller bug: the map was built for this rig).
    pub fn apply(&self, arkit: &[f32; ARKIT_COUNT], out: &mut [f32]) -> u32 {
        assert_eq!(
            out.len(),
            self.rest.len(),
            "ArkitBoardMap::apply: output length"
        );
        out.copy_from_slice(&self.rest);
        for t in &self.terms {
            out[t.control as usize] += t.weight * arkit[t.arkit as usize];
        }
        let mut clamped = 0;
        for (c, o) in out.iter_mut().enumerate() {
            if self.reached[c] {
                let [lo, hi] = self.range[c];
                let v = if o.is_finite() {
                    o.clamp(lo, hi)
                } else {
                    self.rest[c]
                };
                if v != *o {
                    clamped += 1;
                }
                *o = v;
            }
        }
        clamped
    }

    /// The reach report with control names.
    pub fn reach(&self, raw_names: &[String]) -> ArkitReach {
        let pick = |want: bool| {
            raw_names
                .iter()
                .zip(&self.reached)
                .filter(|(_, r)| **r == want)
                .map(|(n, _)| n.clone())
                .collect()
        };
        ArkitReach {
            reached: pick(true),
            unreached: pick(false),
            unmapped_arkit: self.unmapped.iter().map(|s| s.to_string()).collect(),
        }
    }
}
