//! Visemes onto a character: viseme → {morph target: weight} maps (a face definition file, or the
//! built-in defaults for Oculus-style `viseme_*` rigs and ARKit-only rigs), bound to a character's
//! target names.
//!
//! Source: seed 003 "Face" (`FaceDef::visemes` maps names to {morph target: weight};
//! `check_targets` names every target no mesh has). The ARKit combinations are mien's own, tuned by
//! eye on the built-in head and facecap; they are a starting point, not a phonetic claim.

use std::collections::BTreeMap;

use super::viseme::{VISEME_COUNT, VISEME_NAMES, Viseme};
use crate::anim::canon::Binding;
use crate::error::{Error, Result};

/// Where a map came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum VisemeMapKind {
    /// `viseme_sil`, `viseme_PP`, … targets (Oculus / Meta, Ready Player Me, VRoid exports).
    Oculus,
    /// ARKit-52 targets only: each viseme a combination ([`VisemeMap::arkit`]).
    Arkit,
    /// VRoid Studio's vowel shapes `Fcl_MTH_A/I/U/E/O` (+ `Fcl_MTH_Close`): each viseme a vowel
    /// combination ([`VisemeMap::vroid`]).
    Vroid,
    /// A VRM avatar's mouth expressions `aa ih ou ee oh` (its expression control node): each
    /// viseme a vowel combination ([`VisemeMap::vrm`]).
    Vrm,
    /// A face definition file.
    File,
}

/// Viseme → morph targets and weights.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VisemeMap {
    /// Where it came from.
    pub kind: VisemeMapKind,
    /// For each viseme in [`super::VISEMES`] order, the targets it drives and their weights.
    pub shapes: Vec<Vec<(String, f32)>>,
}

/// The ARKit combination of each viseme (jaw opening, lip closure, rounding, spreading, tongue):
///
/// | viseme | ARKit targets |
/// |---|---|
/// | sil | (rest) |
/// | PP | mouthClose .5, mouthPressLeft/Right .4, mouthRollLower .3, mouthRollUpper .2, jawOpen .05 |
/// | FF | mouthRollLower .6, mouthUpperUpLeft/Right .25, jawOpen .1 |
/// | TH | jawOpen .15, tongueOut .45, mouthStretchLeft/Right .1 |
/// | DD | jawOpen .2, mouthStretchLeft/Right .2 |
/// | kk | jawOpen .25, mouthStretchLeft/Right .2 |
/// | CH | jawOpen .15, mouthFunnel .5, mouthPucker .3 |
/// | SS | jawOpen .1, mouthStretchLeft/Right .35, mouthSmileLeft/Right .2 |
/// | nn | jawOpen .15, mouthStretchLeft/Right .15 |
/// | RR | jawOpen .15, mouthFunnel .3, mouthPucker .3 |
/// | aa | jawOpen .6, mouthLowerDownLeft/Right .3 |
/// | E | jawOpen .3, mouthStretchLeft/Right .3, mouthSmileLeft/Right .2 |
/// | ih | jawOpen .2, mouthStretchLeft/Right .25, mouthSmileLeft/Right .3 |
/// | oh | jawOpen .4, mouthFunnel .5, mouthPucker .2 |
/// | ou | jawOpen .15, mouthPucker .8, mouthFunnel .3 |
const ARKIT_VISEMES: [&[(&str, f32)]; VISEME_COUNT] = [
    &[],
    &[
        ("mouthClose", 0.5),
        ("mouthPressLeft", 0.4),
        ("mouthPressRight", 0.4),
        ("mouthRollLower", 0.3),
        ("mouthRollUpper", 0.2),
        ("jawOpen", 0.05),
    ],
    &[
        ("mouthRollLower", 0.6),
        ("mouthUpperUpLeft", 0.25),
        ("mouthUpperUpRight", 0.25),
        ("jawOpen", 0.1),
    ],
    &[
        ("jawOpen", 0.15),
        ("tongueOut", 0.45),
        ("mouthStretchLeft", 0.1),
        ("mouthStretchRight", 0.1),
    ],
    &[
        ("jawOpen", 0.2),
        ("mouthStretchLeft", 0.2),
        ("mouthStretchRight", 0.2),
    ],
    &[
        ("jawOpen", 0.25),
        ("mouthStretchLeft", 0.2),
        ("mouthStretchRight", 0.2),
    ],
    &[
        ("jawOpen", 0.15),
        ("mouthFunnel", 0.5),
        ("mouthPucker", 0.3),
    ],
    &[
        ("jawOpen", 0.1),
        ("mouthStretchLeft", 0.35),
        ("mouthStretchRight", 0.35),
        ("mouthSmileLeft", 0.2),
        ("mouthSmileRight", 0.2),
    ],
    &[
        ("jawOpen", 0.15),
        ("mouthStretchLeft", 0.15),
        ("mouthStretchRight", 0.15),
    ],
    &[
        ("jawOpen", 0.15),
        ("mouthFunnel", 0.3),
        ("mouthPucker", 0.3),
    ],
    &[
        ("jawOpen", 0.6),
        ("mouthLowerDownLeft", 0.3),
        ("mouthLowerDownRight", 0.3),
    ],
    &[
        ("jawOpen", 0.3),
        ("mouthStretchLeft", 0.3),
        ("mouthStretchRight", 0.3),
        ("mouthSmileLeft", 0.2),
        ("mouthSmileRight", 0.2),
    ],
    &[
        ("jawOpen", 0.2),
        ("mouthStretchLeft", 0.25),
        ("mouthStretchRight", 0.25),
        ("mouthSmileLeft", 0.3),
        ("mouthSmileRight", 0.3),
    ],
    &[("jawOpen", 0.4), ("mouthFunnel", 0.5), ("mouthPucker", 0.2)],
    &[
        ("jawOpen", 0.15),
        ("mouthPucker", 0.8),
        ("mouthFunnel", 0.3),
    ],
];

/// VRoid Studio's mouth shapes for each viseme (the vowels A I U E O, and Close), mien's own
/// starting point like [`ARKIT_VISEMES`]:
///
/// | viseme | VRoid targets |
/// |---|---|
/// | sil | (rest) |
/// | PP | Fcl_MTH_Close 1 |
/// | FF | Fcl_MTH_I .4, Fcl_MTH_U .2 |
/// | TH | Fcl_MTH_E .4, Fcl_MTH_A .1 |
/// | DD | Fcl_MTH_E .3, Fcl_MTH_A .2 |
/// | kk | Fcl_MTH_A .3, Fcl_MTH_E .2 |
/// | CH | Fcl_MTH_U .5, Fcl_MTH_I .3 |
/// | SS | Fcl_MTH_I .6 |
/// | nn | Fcl_MTH_A .2, Fcl_MTH_E .2 |
/// | RR | Fcl_MTH_O .3, Fcl_MTH_U .3 |
/// | aa | Fcl_MTH_A 1 |
/// | E | Fcl_MTH_E 1 |
/// | ih | Fcl_MTH_I 1 |
/// | oh | Fcl_MTH_O 1 |
/// | ou | Fcl_MTH_U 1 |
const VROID_VISEMES: [&[(&str, f32)]; VISEME_COUNT] = [
    &[],
    &[("Fcl_MTH_Close", 1.0)],
    &[("Fcl_MTH_I", 0.4), ("Fcl_MTH_U", 0.2)],
    &[("Fcl_MTH_E", 0.4), ("Fcl_MTH_A", 0.1)],
    &[("Fcl_MTH_E", 0.3), ("Fcl_MTH_A", 0.2)],
    &[("Fcl_MTH_A", 0.3), ("Fcl_MTH_E", 0.2)],
    &[("Fcl_MTH_U", 0.5), ("Fcl_MTH_I", 0.3)],
    &[("Fcl_MTH_I", 0.6)],
    &[("Fcl_MTH_A", 0.2), ("Fcl_MTH_E", 0.2)],
    &[("Fcl_MTH_O", 0.3), ("Fcl_MTH_U", 0.3)],
    &[("Fcl_MTH_A", 1.0)],
    &[("Fcl_MTH_E", 1.0)],
    &[("Fcl_MTH_I", 1.0)],
    &[("Fcl_MTH_O", 1.0)],
    &[("Fcl_MTH_U", 1.0)],
];

/// A VRM avatar's mouth expressions for each viseme (VRMC_vrm-1.0 lip-sync presets `aa ih ou ee
/// oh`), mien's own starting point like [`VROID_VISEMES`]. VRM has no closed-lip expression, so PP
/// presses the lips with a slight `ou`:
///
/// | viseme | VRM expressions |
/// |---|---|
/// | sil | (rest) |
/// | PP | ou .2 |
/// | FF | ih .4, ou .2 |
/// | TH | ee .4, aa .1 |
/// | DD | ee .3, aa .2 |
/// | kk | aa .3, ee .2 |
/// | CH | ou .5, ih .3 |
/// | SS | ih .6 |
/// | nn | aa .2, ee .2 |
/// | RR | oh .3, ou .3 |
/// | aa | aa 1 |
/// | E | ee 1 |
/// | ih | ih 1 |
/// | oh | oh 1 |
/// | ou | ou 1 |
const VRM_VISEMES: [&[(&str, f32)]; VISEME_COUNT] = [
    &[],
    &[("ou", 0.2)],
    &[("ih", 0.4), ("ou", 0.2)],
    &[("ee", 0.4), ("aa", 0.1)],
    &[("ee", 0.3), ("aa", 0.2)],
    &[("aa", 0.3), ("ee", 0.2)],
    &[("ou", 0.5), ("ih", 0.3)],
    &[("ih", 0.6)],
    &[("aa", 0.2), ("ee", 0.2)],
    &[("oh", 0.3), ("ou", 0.3)],
    &[("aa", 1.0)],
    &[("ee", 1.0)],
    &[("ih", 1.0)],
    &[("oh", 1.0)],
    &[("ou", 1.0)],
];

/// VRM's five mouth expressions, by [`viseme_key`].
const VRM_VOWELS: [&str; 5] = ["aa", "ih", "ou", "ee", "oh"];

/// VRoid's five vowel shapes, by [`viseme_key`].
const VROID_VOWELS: [&str; 5] = ["fclmtha", "fclmthi", "fclmthu", "fclmthe", "fclmtho"];

/// `name` reduced for viseme matching: the part after the last `.`, `:` or `|`, lowercase,
/// without `_`, `-` and spaces (`Armature|viseme_PP` → `visemepp`).
fn viseme_key(name: &str) -> String {
    let last = name.rsplit(['.', ':', '|']).next().unwrap_or(name);
    last.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The keys ([`viseme_key`]) a `viseme_*` target name of a map may take on a character, in order
/// of preference: its own, then the spelling of the Oculus set that Ready Player Me, TalkingHead
/// and VRoid exports use for the vowels — `viseme_I` for `ih`, `viseme_O` for `oh`, `viseme_U` for
/// `ou` (`viseme_E` is `E` in both spellings).
///
/// | viseme | Oculus (Meta Lipsync) | Ready Player Me / TalkingHead |
/// |---|---|---|
/// | ih | `viseme_ih` | `viseme_I` |
/// | oh | `viseme_oh` | `viseme_O` |
/// | ou | `viseme_ou` | `viseme_U` |
fn viseme_keys(name: &str) -> Vec<String> {
    let key = viseme_key(name);
    let alias = match key.as_str() {
        "visemeih" => Some("visemei"),
        "visemeoh" => Some("visemeo"),
        "visemeou" => Some("visemeu"),
        _ => None,
    };
    std::iter::once(key.clone())
        .chain(alias.map(str::to_owned))
        .collect()
}

pub use crate::anim::canon::{NEAREST_LISTED, nearest_names as nearest_targets};

impl VisemeMap {
    /// `viseme_<name>` at weight 1 for each viseme (`viseme_sil` for rest).
    pub fn oculus() -> Self {
        VisemeMap {
            kind: VisemeMapKind::Oculus,
            shapes: VISEME_NAMES
                .iter()
                .map(|n| vec![(format!("viseme_{n}"), 1.0)])
                .collect(),
        }
    }

    /// The documented VRoid vowel combinations (see the table on this module's constant).
    pub fn vroid() -> Self {
        VisemeMap {
            kind: VisemeMapKind::Vroid,
            shapes: VROID_VISEMES
                .iter()
                .map(|s| s.iter().map(|(n, w)| ((*n).to_owned(), *w)).collect())
                .collect(),
        }
    }

    /// The documented VRM mouth-expression combinations (see the table on this module's
    /// constant).
    pub fn vrm() -> Self {
        VisemeMap {
            kind: VisemeMapKind::Vrm,
            shapes: VRM_VISEMES
                .iter()
                .map(|s| s.iter().map(|(n, w)| ((*n).to_owned(), *w)).collect())
                .collect(),
        }
    }

    /// The documented ARKit combinations (see the table on this module's constant).
    pub fn arkit() -> Self {
        VisemeMap {
            kind: VisemeMapKind::Arkit,
            shapes: ARKIT_VISEMES
                .iter()
                .map(|s| s.iter().map(|(n, w)| ((*n).to_owned(), *w)).collect())
                .collect(),
        }
    }

    /// The built-in map for a character with these target names: Oculus when it has at least 10 of
    /// the 15 `viseme_*` targets (case and separators ignored, either vowel spelling), else VRoid
    /// when it has at least 4 of the 5 `Fcl_MTH_*` vowels, else VRM when it has at least 4 of the
    /// mouth expressions `aa ih ou ee oh` (a VRM's control node), else ARKit when at least 10 of the
    /// ARKit mouth/jaw targets the combinations use bind by name.
    ///
    /// # Errors
    /// [`Error::Invalid`] when neither applies (pass a face definition file).
    pub fn for_character<T: AsRef<str>>(targets: &[T]) -> Result<Self> {
        let keys: Vec<String> = targets.iter().map(|t| viseme_key(t.as_ref())).collect();
        let oculus = VISEME_NAMES
            .iter()
            .filter(|n| {
                viseme_keys(&format!("viseme_{n}"))
                    .iter()
                    .any(|k| keys.contains(k))
            })
            .count();
        if oculus >= 10 {
            return Ok(Self::oculus());
        }
        if VROID_VOWELS
            .iter()
            .filter(|v| keys.iter().any(|k| k == *v))
            .count()
            >= 4
        {
            return Ok(Self::vroid());
        }
        if VRM_VOWELS
            .iter()
            .filter(|v| keys.iter().any(|k| k == *v))
            .count()
            >= 4
        {
            return Ok(Self::vrm());
        }
        let arkit = Self::arkit();
        let names = arkit.target_names();
        let b = Binding::new(&names, targets);
        let bound = b
            .routes()
            .iter()
            .map(|r| r.channel)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        if bound >= 10 {
            return Ok(arkit);
        }
        Err(Error::Invalid {
            what: "visemes".into(),
            reason: format!(
                "the character has {oculus} of the 15 viseme_* targets and {bound} of the {} ARKit mouth targets the built-in visemes use; give a face definition with a viseme map (`mien animate --face FILE`; in the library `FaceDef::from_json` and the speech options' viseme map)",
                names.len()
            ),
        })
    }

    /// The viseme map of a face definition file ([`crate::face::FaceDef::from_json`]); a file
    /// without a `visemes` section maps every viseme to rest.
    ///
    /// # Errors
    /// [`Error::Format`] naming `file` and the JSON pointer.
    pub fn from_json(text: &str, file: &str) -> Result<Self> {
        let def = crate::face::FaceDef::from_json(text, file)?;
        Ok(def.visemes.unwrap_or(VisemeMap {
            kind: VisemeMapKind::File,
            shapes: vec![Vec::new(); VISEME_COUNT],
        }))
    }

    /// Every distinct target name the map uses, sorted.
    pub fn target_names(&self) -> Vec<String> {
        let mut n: Vec<String> = self
            .shapes
            .iter()
            .flatten()
            .map(|(t, _)| t.clone())
            .collect();
        n.sort();
        n.dedup();
        n
    }
}

/// A target a viseme wants that the character lacks.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MissingTarget {
    /// The viseme.
    pub viseme: &'static str,
    /// The target name the map asks for.
    pub target: String,
    /// The character's target names nearest to it (up to [`NEAREST_LISTED`]), so a user sees
    /// why it did not bind.
    pub nearest: Vec<String>,
}

/// What binding a map to a character found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VisemeBindingReport {
    /// The map's kind.
    pub kind: VisemeMapKind,
    /// (viseme, target) pairs the character lacks.
    pub missing: Vec<MissingTarget>,
    /// Visemes (other than `sil`) that drive nothing on this character.
    pub silent_visemes: Vec<&'static str>,
    /// Targets the speech layer owns (it drives them; a stream or clip does not).
    pub owned_targets: Vec<String>,
    /// Targets the map drives that move nothing themselves (a VRM expression without a morph
    /// bind); a viseme that drives only such targets is listed in `silent_visemes`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inert_targets: Vec<String>,
}

/// A map bound to one mesh's targets: `apply` is allocation-free.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundVisemes {
    routes: Vec<(u8, u32, f32)>,
    owned: Vec<u32>,
    report: VisemeBindingReport,
}

impl BoundVisemes {
    /// Bind `map` to `targets` by name: an exact name first, else the name canonicaliser (so
    /// `mouthSmileLeft` reaches `mouthSmile_L`; `viseme_*` names match case- and
    /// separator-insensitively). The speech layer owns every target it drives plus every target
    /// whose canonical ARKit name is a jaw, mouth or tongue channel (so a stream's mouth does not
    /// fight the speech).
    pub fn bind<T: AsRef<str>>(map: &VisemeMap, targets: &[T]) -> Self {
        let names = map.target_names();
        let exact = |n: &str| targets.iter().position(|t| t.as_ref() == n);
        let keys: Vec<String> = targets.iter().map(|t| viseme_key(t.as_ref())).collect();
        let binding = Binding::new(&names, targets);
        let mut resolve: BTreeMap<&str, Vec<(u32, f32)>> = BTreeMap::new();
        for (ci, n) in names.iter().enumerate() {
            let r: Vec<(u32, f32)> = if let Some(i) = exact(n) {
                vec![(i as u32, 1.0)]
            } else if let Some(i) = (viseme_key(n).starts_with("viseme")
                || viseme_key(n).starts_with("fclmth"))
            .then(|| {
                viseme_keys(n)
                    .iter()
                    .find_map(|a| keys.iter().position(|k| k == a))
            })
            .flatten()
            {
                vec![(i as u32, 1.0)]
            } else {
                binding
                    .routes()
                    .iter()
                    .filter(|r| r.channel == ci)
                    .map(|r| (r.target as u32, r.gain))
                    .collect()
            };
            resolve.insert(n.as_str(), r);
        }
        let mut routes = Vec::new();
        let mut missing = Vec::new();
        let mut silent = Vec::new();
        for (vi, shape) in map.shapes.iter().enumerate() {
            let mut any = false;
            for (t, w) in shape {
                let r = &resolve[t.as_str()];
                if r.is_empty() {
                    missing.push(MissingTarget {
                        viseme: VISEME_NAMES[vi],
                        target: t.clone(),
                        nearest: nearest_targets(t, targets),
                    });
                }
                for &(ti, g) in r {
                    routes.push((vi as u8, ti, w * g));
                    any = true;
                }
            }
            if !any && vi != Viseme::Sil.index() {
                silent.push(VISEME_NAMES[vi]);
            }
        }
        let mut owned: Vec<u32> = routes.iter().map(|r| r.1).collect();
        for (i, t) in targets.iter().enumerate() {
            if let Some(c) = crate::anim::canon::canonical_name(t.as_ref()) {
                if c.starts_with("jaw") || c.starts_with("mouth") || c.starts_with("tongue") {
                    owned.push(i as u32);
                }
            }
        }
        owned.sort_unstable();
        owned.dedup();
        let report = VisemeBindingReport {
            kind: map.kind,
            missing,
            silent_visemes: silent,
            owned_targets: owned
                .iter()
                .map(|&i| targets[i as usize].as_ref().to_owned())
                .collect(),
            inert_targets: Vec::new(),
        };
        BoundVisemes {
            routes,
            owned,
            report,
        }
    }

    /// Mark the targets with `inert(index)` true as moving nothing (a VRM expression without a
    /// morph bind): they are listed in the report's `inert_targets`, and every viseme (other than
    /// `sil`) whose routes all reach inert targets joins `silent_visemes`.
    pub fn mark_inert<T: AsRef<str>>(&mut self, targets: &[T], inert: impl Fn(usize) -> bool) {
        let mut names: Vec<String> = Vec::new();
        for &(_, t, _) in &self.routes {
            let t = t as usize;
            if inert(t) {
                let n = targets[t].as_ref().to_owned();
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        for (vi, name) in VISEME_NAMES.iter().enumerate() {
            if vi == Viseme::Sil.index() || self.report.silent_visemes.contains(name) {
                continue;
            }
            let mut r = self
                .routes
                .iter()
                .filter(|x| usize::from(x.0) == vi)
                .peekable();
            if r.peek().is_some() && r.all(|x| inert(x.1 as usize)) {
                self.report.silent_visemes.push(name);
            }
        }

        self.report.inert_targets = names;
    }

    /// Like [`BoundVisemes::bind`] but refusing any missing target (for face definition files).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming every (viseme, target) the character lacks.
    pub fn bind_strict<T: AsRef<str>>(map: &VisemeMap, targets: &[T], file: &str) -> Result<Self> {
        let b = Self::bind(map, targets);
        if b.report.missing.is_empty() {
            return Ok(b);
        }
        let list: Vec<String> = b
            .report
            .missing
            .iter()
            .map(|m| format!("{} → {}", m.viseme, m.target))
            .collect();
        Err(Error::Invalid {
            what: format!("{file}: face definition"),
            reason: format!(
                "the character lacks {} target(s): {}",
                list.len(),
                list.join(", ")
            ),
        })
    }

    /// What binding found.
    pub fn report(&self) -> &VisemeBindingReport {
        &self.report
    }

    /// Write the speech into `weights` `(T,)`: every owned target is set to `Σ viseme weight × map
    /// weight` (0 when no viseme drives it); other targets keep their values. Allocation-free.
    ///
    /// # Panics
    /// When `weights` is shorter than the targets bound.
    pub fn apply(&self, visemes: &[f32; VISEME_COUNT], weights: &mut [f32]) {
        for &t in &self.owned {
            weights[t as usize] = 0.0;
        }
        for &(v, t, w) in &self.routes {
            weights[t as usize] += visemes[v as usize] * w;
        }
    }
}
