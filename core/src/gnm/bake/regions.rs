//! Which head_ext region each source shape goes to, the coefficient order, and the ARKit table
//! generated from the shape names.
//!
//! **Regions** (declared in this order, each only when a shape lands in it, sized by the shapes
//! found): `left_eye`, `right_eye`, `brows`, `lower_face`, `tongue`, `pupils`, `other`. A name is
//! reduced by the expression-space canonicaliser ([`crate::anim::canon::name_key`]: namespace
//! dropped, lowercase, separators removed, side marker split off) and classified by its stem:
//!
//! | stem starts with / contains | region |
//! |---|---|
//! | contains `pupil` | `pupils` (both sides) |
//! | `tongue` | `tongue` |
//! | contains `brow` | `brows` (both sides; ARKit's `browInnerUp` has no side) |
//! | `eye` | `left_eye` / `right_eye` by side; no side → `other` |
//! | `jaw`, `mouth`, `cheek`, `nose`, `lip`, `chin`, `viseme` | `lower_face` |
//! | anything else | `other` (listed in the report) |
//!
//! Sides are the character's own (its left is +X, as ARKit names them): a trailing `Left`/`Right`
//! word or an `L`/`R`/`Left`/`Right` token set off by a separator (`_L`, `.R`, `L_`). A bare trailing
//! `l`/`r` glued to a word counts only when the name is a known ARKit spelling (`eyeBlinkL`).
//! Within a region coefficients are sorted by source name (byte order), so the order depends on
//! the names alone.
//!
//! **ARKit table.** A shape whose name is an ARKit-52 channel in any spelling the canonicaliser
//! accepts (`eyeBlink_L` → `eyeBlinkLeft`) is driven by that channel with gain 1; a half of a
//! channel ARKit keeps whole ([`crate::anim::canon::SPLIT_CHANNELS`]: ICT's `browInnerUp_L/_R`,
//! `cheekPuff_L/_R`) is driven by the whole channel with gain 1, so the channel has two terms.
//! Every other shape is unmapped and reported. `eyeLook*` shapes are ordinary coefficients driven
//! by the table (they move lids and skin; eyeball rotation is the gaze angles').

use std::collections::BTreeMap;

use crate::anim::arkit::ARKIT_52;
use crate::anim::canon::{Canon, Side, SideMark, canonicalize, name_key};
use crate::gnm::arkit::{ArkitGnmTable, ArkitGnmTerm};
use crate::gnm::layout::HeadExtLayout;

/// The regions a baker may declare, in declaration order.
pub const REGIONS: [&str; 7] = [
    "left_eye",
    "right_eye",
    "brows",
    "lower_face",
    "tongue",
    "pupils",
    "other",
];

/// Stems that go to `lower_face`.
const LOWER_FACE: [&str; 7] = ["jaw", "mouth", "cheek", "nose", "lip", "chin", "viseme"];

/// The region index (into [`REGIONS`]) of a shape name, and why it went to `other` when it did.
pub fn region_of(name: &str) -> (usize, Option<&'static str>) {
    let key = name_key(name);
    let side = match canonicalize(name) {
        Some(Canon::Arkit(i)) => {
            let n = ARKIT_52[i];
            if n.ends_with("Left") {
                Some(Side::Left)
            } else if n.ends_with("Right") {
                Some(Side::Right)
            } else {
                None
            }
        }
        Some(Canon::Half { side, .. }) => Some(side),
        _ => match key.side {
            SideMark::Explicit(s) => Some(s),
            _ => None,
        },
    };
    let base = key.base.as_str();
    let region = if base.contains("pupil") {
        "pupils"
    } else if base.starts_with("tongue") {
        "tongue"
    } else if base.contains("brow") {
        "brows"
    } else if base.starts_with("eye") {
        match side {
            Some(Side::Left) => "left_eye",
            Some(Side::Right) => "right_eye",
            None => return (6, Some("an eye shape with no side")),
        }
    } else if LOWER_FACE.iter().any(|p| base.starts_with(p)) {
        "lower_face"
    } else {
        return (6, Some("no region rule matches the name"));
    };
    (REGIONS.iter().position(|r| *r == region).unwrap_or(6), None)
}

/// What a shape name means, for finding two names of one shape: its ARKit channel, the half of a
/// split channel, or else its canonical key (case, separators, namespace and side marker
/// normalised).
fn meaning(name: &str) -> String {
    match canonicalize(name) {
        Some(Canon::Arkit(i)) => format!("ARKit {}", ARKIT_52[i]),
        Some(Canon::Half { arkit, side }) => {
            format!("the {side:?} half of ARKit {}", ARKIT_52[arkit])
        }
        _ => {
            let key = name_key(name);
            format!("the name `{}` {:?}", key.base, key.side)
        }
    }
}

/// Two names (source order) that mean the same shape (`eyeBlink_L` and `EyeBlinkLeft`, `jawOpen`
/// twice, `mouth_smile` and `MouthSmile`), with what they share; `None` when every name is
/// distinct.
pub fn same_shape(names: &[String]) -> Option<(String, String, String)> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for n in names {
        let m = meaning(n);
        if let Some(first) = seen.get(&m) {
            return Some(((*first).to_owned(), n.clone(), m));
        }
        seen.insert(m, n);
    }
    None
}

/// The coefficient plan of a bake.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// For each coefficient (in pack order), the index of its source shape.
    pub order: Vec<usize>,
    /// The pack's layout (regions sized by the shapes found, no reduced view).
    pub layout: HeadExtLayout,
    /// Coefficient names `(E,)` (the source names, in pack order).
    pub names: Vec<String>,
    /// The ARKit-52 → coefficient table.
    pub table: ArkitGnmTable,
    /// Shapes in the `other` region, each with the reason.
    pub fallback: Vec<(String, String)>,
    /// Shapes no ARKit channel drives (in pack order).
    pub unmapped: Vec<String>,
    /// ARKit channels no shape answers (canonical order).
    pub missing: Vec<String>,
}

/// Plan the coefficients of `names` (source order). Names must be unique (the caller checks).
pub fn plan(names: &[String]) -> Plan {
    let mut keyed: Vec<(usize, &str, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (region_of(n).0, n.as_str(), i))
        .collect();
    keyed.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    let mut counts = [0usize; REGIONS.len()];
    let mut table: ArkitGnmTable = BTreeMap::new();
    let mut fallback = Vec::new();
    let mut unmapped = Vec::new();
    for &(r, name, _) in &keyed {
        let index = counts[r];
        counts[r] += 1;
        if let (_, Some(why)) = region_of(name) {
            fallback.push((name.to_owned(), why.to_owned()));
        }
        let channel = match canonicalize(name) {
            Some(Canon::Arkit(i)) => Some(ARKIT_52[i]),
            Some(Canon::Half { arkit, .. }) => Some(ARKIT_52[arkit]),
            _ => None,
        };
        match channel {
            Some(c) => table.entry(c.to_owned()).or_default().push(ArkitGnmTerm {
                region: REGIONS[r].to_owned(),
                index,
                gain: 1.0,
            }),
            None => unmapped.push(name.to_owned()),
        }
    }
    let regions = REGIONS
        .iter()
        .zip(counts)
        .filter(|(_, c)| *c > 0)
        .map(|(n, c)| ((*n).to_owned(), c))
        .collect();
    let missing = ARKIT_52
        .iter()
        .filter(|c| !table.contains_key(**c))
        .map(|c| (*c).to_owned())
        .collect();
    Plan {
        order: keyed.iter().map(|k| k.2).collect(),
        layout: HeadExtLayout {
            regions,
            reduced: None,
        },
        names: keyed.iter().map(|k| k.1.to_owned()).collect(),
        table,
        fallback,
        unmapped,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_by_name() {
        let r = |n: &str| REGIONS[region_of(n).0];
        assert_eq!(r("eyeBlink_L"), "left_eye");
        assert_eq!(r("eyeBlinkRight"), "right_eye");
        assert_eq!(r("EyeLookUp.L"), "left_eye");
        assert_eq!(r("eyeBlinkL"), "left_eye");
        assert_eq!(r("browInnerUp"), "brows");
        assert_eq!(r("browDown_R"), "brows");
        assert_eq!(r("jawLeft"), "lower_face");
        assert_eq!(r("cheekRaiser_L"), "lower_face");
        assert_eq!(r("noseSneer_R"), "lower_face");
        assert_eq!(r("tongueOut"), "tongue");
        assert_eq!(r("PupilDilate_L"), "pupils");
        assert_eq!(r("eyesClosed"), "other");
        assert_eq!(r("smirk"), "other");
    }

    #[test]
    fn plan_orders_and_maps() {
        let names: Vec<String> = [
            "mouthSmile_L",
            "browInnerUp_R",
            "eyeBlink_L",
            "browInnerUp_L",
            "cheekRaiser_L",
            "eyeBlink_R",
        ]
        .map(str::to_owned)
        .to_vec();
        let p = plan(&names);
        assert_eq!(
            p.names,
            [
                "eyeBlink_L",
                "eyeBlink_R",
                "browInnerUp_L",
                "browInnerUp_R",
                "cheekRaiser_L",
                "mouthSmile_L"
            ]
        );
        assert_eq!(p.order, [2, 5, 3, 1, 4, 0]);
        assert_eq!(
            p.layout.regions,
            [
                ("left_eye".to_owned(), 1),
                ("right_eye".into(), 1),
                ("brows".into(), 2),
                ("lower_face".into(), 2)
            ]
        );
        assert_eq!(
            p.table["browInnerUp"],
            vec![
                ArkitGnmTerm {
                    region: "brows".into(),
                    index: 0,
                    gain: 1.0
                },
                ArkitGnmTerm {
                    region: "brows".into(),
                    index: 1,
                    gain: 1.0
                }
            ]
        );
        assert_eq!(
            p.table["mouthSmileLeft"],
            vec![ArkitGnmTerm {
                region: "lower_face".into(),
                index: 1,
                gain: 1.0
            }]
        );
        assert_eq!(p.unmapped, ["cheekRaiser_L"]);
        assert_eq!(p.missing.len(), 52 - 4);
    }
}
