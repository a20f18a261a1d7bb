//! The name canonicaliser: real-world channel and morph-target spellings → the ARKit-52 space
//! ([`ARKIT_52`]), and the binding of a stream's channels to a character's morph targets by name.
//!
//! A name is reduced to a [`NameKey`] (namespace stripped, lowercase, separators dropped, side
//! markers unified) and looked up in a table built from [`ARKIT_52`] with the same reduction, so
//! every spelling below reaches `eyeBlinkLeft`:
//!
//! | spelling | where it comes from |
//! |---|---|
//! | `eyeBlinkLeft` | Apple ARKit, MediaPipe, Audio2Face |
//! | `EyeBlinkLeft` | Live Link Face CSV (PascalCase) |
//! | `eyeBlink_L`, `EyeBlink_L`, `eyeBlinkL`, `eyeBlink.L` | facecap / ICT-FaceKit, Blender, hand-made rigs |
//! | `blendShape1.eyeBlink_L`, `BS_node.eyeBlinkLeft` | glTF / FBX channel paths (`node.target`) |
//! | `head:BS:eyeBlinkLeft`, `|root|head|eyeBlink_L` | Maya namespaces and DAG paths |
//! | `eyeBlink_L.001` | Blender's suffix for a duplicated shape key |
//!
//! Side channels that ARKit keeps whole but rigs split (`browInnerUp_L`) are recognised as
//! [`Canon::Half`] through the explicit [`SPLIT_CHANNELS`] table; known non-ARKit channels
//! (MediaPipe's `_neutral`, head and eye angles) are [`Canon::Ignored`] with a reason, so a binding
//! reports them instead of dropping them silently. Source: DESIGN.md "Expression spaces"; the
//! normalise-then-look-up design follows seed 003 "Retargeting" (`RetargetDef::auto`: case,
//! separators, namespace prefixes, side markers).

mod binding;
mod bound;
mod report;
pub mod vroid;

pub use binding::{Binding, Route, TableRoute};
pub use bound::BoundStream;
pub use report::{
    Ambiguity, BindingReport, BindingSide, FanUse, IgnoredChannel, MatchedPair, NamedIndex,
    RouteRule, Shadowed, UnmatchedChannel,
};

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::anim::arkit::{ARKIT_52, arkit_index};

/// A side of the face (the character's own left and right, as ARKit names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Side {
    /// The character's left.
    Left,
    /// The character's right.
    Right,
}

/// How a side was marked in a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SideMark {
    /// No side marker.
    None,
    /// An unmistakable marker: a trailing `Left`/`Right` word, or an `L`/`R`/`Left`/`Right` token
    /// set off by a separator (`_L`, `.L`, `-R`, `L_` at the front).
    Explicit(Side),
    /// A bare trailing `l`/`r` glued to the name (`eyeBlinkL`): a side marker or the last letter of
    /// the word (`mouthFunnel`, `mouthPucker`); the lookup tries the whole word first.
    Trailing(Side),
}

/// A name reduced for comparison: `base` is the stem after the last namespace separator, lowercased,
/// with separators and the side marker removed (for [`SideMark::Trailing`] the letter is removed
/// from `base` too).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NameKey {
    /// Lowercase alphanumeric stem, e.g. `eyeblink`.
    pub base: String,
    /// The side marker found, if any.
    pub side: SideMark,
}

/// What a name means in the ARKit-52 space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Canon {
    /// An ARKit-52 channel: the index into [`ARKIT_52`].
    Arkit(usize),
    /// One side of an ARKit channel that ARKit keeps whole and some rigs split
    /// (`browInnerUp_L`): the whole channel's index into [`ARKIT_52`] and the side. Only channels
    /// listed in [`SPLIT_CHANNELS`].
    Half {
        /// Index into [`ARKIT_52`] of the whole channel.
        arkit: usize,
        /// Which half.
        side: Side,
    },
    /// A known channel that is not an ARKit blendshape, ignored on purpose (see
    /// [`IGNORED_CHANNELS`]).
    Ignored {
        /// Why it is ignored.
        reason: &'static str,
    },
}

/// The fan rules, in one table: ARKit channels that ARKit keeps whole but rigs and other streams
/// split into a left and a right half (`<name>_L` / `<name>_R`, any spelling the canonicaliser
/// accepts).
///
/// - **Fan-out** (stream has the whole channel, the character only the halves): the whole channel
///   drives each half with gain 1 (`browInnerUp = 0.6` → `browInnerUp_L = browInnerUp_R = 0.6`).
/// - **Fan-in** (stream has the halves, the character one whole target): the target gets the
///   **mean** of the halves present (`0.5·L + 0.5·R`; one half alone drives it with gain 1).
///
/// Seen in real data: facecap keeps both whole, ICT-FaceKit splits both (DATA.md). Any other
/// `<arkit>_L` spelling of a non-sided ARKit channel is not recognised and is reported unmatched.
pub const SPLIT_CHANNELS: [&str; 2] = ["browInnerUp", "cheekPuff"];

/// Gain of each fan-out route (whole → each half). See [`SPLIT_CHANNELS`].
pub const FAN_OUT_GAIN: f32 = 1.0;

/// Known non-ARKit channels, ignored on purpose and reported as such: (name, reason). Matched by
/// [`NameKey`], so `_neutral`, `neutral` and `Neutral` are all the MediaPipe channel.
pub const IGNORED_CHANNELS: [(&str, &str); 10] = [
    (
        "_neutral",
        "MediaPipe's neutral score (the face at rest), not an ARKit blendshape",
    ),
    ("HeadYaw", "a head angle in radians, not a blendshape"),
    ("HeadPitch", "a head angle in radians, not a blendshape"),
    ("HeadRoll", "a head angle in radians, not a blendshape"),
    ("LeftEyeYaw", "an eye angle in radians, not a blendshape"),
    ("LeftEyePitch", "an eye angle in radians, not a blendshape"),
    ("LeftEyeRoll", "an eye angle in radians, not a blendshape"),
    ("RightEyeYaw", "an eye angle in radians, not a blendshape"),
    ("RightEyePitch", "an eye angle in radians, not a blendshape"),
    ("RightEyeRoll", "an eye angle in radians, not a blendshape"),
];

/// Other conventions' names for ARKit-52 channels, where their meaning is the same channel:
/// `(spelling, ARKit name)`. Matched by [`NameKey`] like the ARKit names (case and separators
/// ignored). Names the reduction already maps need no entry (SRanipal's `Jaw_Open`,
/// `Mouth_Smile_Left`; Unified Expressions' `EyeWideLeft`, `MouthPressLeft`); split halves reach
/// [`SPLIT_CHANNELS`] the same way (`Cheek_Puff_Left`, `CheekPuffLeft`, `BrowInnerUpLeft`).
///
/// | convention | spelling | ARKit |
/// |---|---|---|
/// | VRoid Studio | `Fcl_EYE_Close_L`, `Fcl_EYE_Close_R` | `eyeBlinkLeft`, `eyeBlinkRight` |
/// | VRoid Studio | `Fcl_MTH_Close` | `mouthClose` |
/// | Unified Expressions (VRCFaceTracking) | `EyeClosedLeft`, `EyeClosedRight` | `eyeBlinkLeft`, `eyeBlinkRight` |
/// | Unified Expressions | `MouthClosed` | `mouthClose` |
/// | Unified Expressions | `MouthCornerPullLeft`, `…Right` | `mouthSmileLeft`, `…Right` |
/// | SRanipal (HTC) | `Eye_Left_Blink`, `Eye_Right_Blink` | `eyeBlinkLeft`, `eyeBlinkRight` |
/// | SRanipal | `Eye_Left_Wide`, `Eye_Right_Wide` | `eyeWideLeft`, `eyeWideRight` |
/// | SRanipal | `Eye_Left_Squeeze`, `Eye_Right_Squeeze` | `eyeSquintLeft`, `eyeSquintRight` |
/// | SRanipal | `Eye_Left_Up`, `Eye_Right_Up` | `eyeLookUpLeft`, `eyeLookUpRight` |
/// | SRanipal | `Eye_Left_Down`, `Eye_Right_Down` | `eyeLookDownLeft`, `eyeLookDownRight` |
/// | SRanipal | `Mouth_Sad_Left`, `Mouth_Sad_Right` | `mouthFrownLeft`, `mouthFrownRight` |
/// | SRanipal | `Mouth_Pout` | `mouthPucker` |
/// | SRanipal | `Tongue_LongStep1` | `tongueOut` |
///
/// An alias is a second spelling, never a rival: when a character (or a stream) carries both the
/// ARKit spelling and an alias of one channel (`eyeBlinkLeft` *and* `Fcl_EYE_Close_L`, common in
/// VRoid exports converted for ARKit trackers), the ARKit spelling binds and the alias is
/// reported as shadowed ([`Shadowed`]); an alias binds only where no ARKit spelling of its channel
/// exists ([`Spelling`], [`canonicalize_spelling`]).
///
/// VRoid's vowels (`Fcl_MTH_A/I/U/E/O`) are visemes, not ARKit channels: speech reaches them
/// through [`crate::speech::VisemeMap::vroid`]. VRoid's emotion and vowel shapes are not aliases
/// (none of them *is* an ARKit channel); a stream reaches them through the documented table
/// [`vroid::VROID_FCL`] instead, for the ARKit channels no target takes by name. SRanipal's
/// sideways gaze (whose side convention differs between exporters) has no entry: it stays
/// unbound and is reported with its nearest names.
pub const ALIASES: [(&str, &str); 22] = [
    ("Fcl_EYE_Close_L", "eyeBlinkLeft"),
    ("Fcl_EYE_Close_R", "eyeBlinkRight"),
    ("Fcl_MTH_Close", "mouthClose"),
    ("EyeClosedLeft", "eyeBlinkLeft"),
    ("EyeClosedRight", "eyeBlinkRight"),
    ("MouthClosed", "mouthClose"),
    ("MouthCornerPullLeft", "mouthSmileLeft"),
    ("MouthCornerPullRight", "mouthSmileRight"),
    ("Eye_Left_Blink", "eyeBlinkLeft"),
    ("Eye_Right_Blink", "eyeBlinkRight"),
    ("Eye_Left_Wide", "eyeWideLeft"),
    ("Eye_Right_Wide", "eyeWideRight"),
    ("Eye_Left_Squeeze", "eyeSquintLeft"),
    ("Eye_Right_Squeeze", "eyeSquintRight"),
    ("Eye_Left_Up", "eyeLookUpLeft"),
    ("Eye_Right_Up", "eyeLookUpRight"),
    ("Eye_Left_Down", "eyeLookDownLeft"),
    ("Eye_Right_Down", "eyeLookDownRight"),
    ("Mouth_Sad_Left", "mouthFrownLeft"),
    ("Mouth_Sad_Right", "mouthFrownRight"),
    ("Mouth_Pout", "mouthPucker"),
    ("Tongue_LongStep1", "tongueOut"),
];

fn is_separator(c: char) -> bool {
    !c.is_alphanumeric()
}

fn side_token(token: &str) -> Option<Side> {
    match token.to_ascii_lowercase().as_str() {
        "l" | "left" => Some(Side::Left),
        "r" | "right" => Some(Side::Right),
        _ => None,
    }
}

/// Reduce `name` to its [`NameKey`].
///
/// 1. Namespace: split on `.`, `:` and `|` and keep the last non-empty segment, after dropping a
///    trailing all-digit segment (Blender's duplicate suffix `eyeBlink_L.001`); when that segment is
///    only a side (`eyeBlink.L`), it becomes the side and the segment before it the stem.
/// 2. Split the stem into tokens on any non-alphanumeric character; a first or last token that is
///    `L`/`R`/`Left`/`Right` (any case, with at least one other token) is the side.
/// 3. Join the tokens lowercased; without a side yet, a trailing `left`/`right` word is the side
///    ([`SideMark::Explicit`]) and a trailing bare `l`/`r` is [`SideMark::Trailing`].
pub fn name_key(name: &str) -> NameKey {
    let segments: Vec<&str> = name
        .split(['.', ':', '|'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut side = SideMark::None;
    let mut segments: &[&str] = &segments;
    if let [rest @ .., last] = segments
        && !rest.is_empty()
        && last.bytes().all(|b| b.is_ascii_digit())
    {
        segments = rest;
    }
    let mut stem = segments.last().copied().unwrap_or("");
    if let [.., before, last] = segments
        && let Some(s) = side_token(last)
    {
        side = SideMark::Explicit(s);
        stem = before;
    }
    let mut tokens: Vec<&str> = stem.split(is_separator).filter(|t| !t.is_empty()).collect();
    if side == SideMark::None && tokens.len() >= 2 {
        if let Some(s) = tokens.last().and_then(|t| side_token(t)) {
            side = SideMark::Explicit(s);
            tokens.pop();
        } else if let Some(s) = side_token(tokens[0]) {
            side = SideMark::Explicit(s);
            tokens.remove(0);
        }
    }
    let mut base: String = tokens
        .concat()
        .chars()
        .flat_map(char::to_lowercase)
        .collect();
    if side == SideMark::None {
        for (word, s) in [("left", Side::Left), ("right", Side::Right)] {
            if base.len() > word.len() && base.ends_with(word) {
                base.truncate(base.len() - word.len());
                side = SideMark::Explicit(s);
                break;
            }
        }
    }
    if side == SideMark::None && base.len() > 1 {
        let s = match base.as_bytes()[base.len() - 1] {
            b'l' => Some(Side::Left),
            b'r' => Some(Side::Right),
            _ => None,
        };
        if let Some(s) = s {
            base.pop();
            side = SideMark::Trailing(s);
        }
    }
    NameKey { base, side }
}

/// Whether a name reached its channel through the ARKit spelling (any reduction of it: case,
/// separators, side markers, namespaces) or through an entry of [`ALIASES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spelling {
    /// A spelling of the ARKit name itself (or of an [`IGNORED_CHANNELS`] name).
    Canonical,
    /// An [`ALIASES`] entry: used only where no canonical spelling of the channel is present.
    Alias,
}

/// Table key: stem + resolved side.
type Key = (String, Option<Side>);

/// The lookup table built from [`ARKIT_52`], [`IGNORED_CHANNELS`] and [`ALIASES`]: a canonical
/// spelling's trailing letter is part of its word (`mouthFunnel`), only `Left`/`Right` are sides.
fn table() -> &'static HashMap<Key, (Canon, Spelling)> {
    static TABLE: OnceLock<HashMap<Key, (Canon, Spelling)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let canonical_key = |name: &str| -> Key {
            let k = name_key(name);
            match k.side {
                SideMark::None => (k.base, None),
                SideMark::Explicit(s) => (k.base, Some(s)),
                SideMark::Trailing(s) => {
                    let mut base = k.base;
                    base.push(if s == Side::Left { 'l' } else { 'r' });
                    (base, None)
                }
            }
        };
        let mut t = HashMap::new();
        for (i, name) in ARKIT_52.iter().enumerate() {
            t.insert(canonical_key(name), (Canon::Arkit(i), Spelling::Canonical));
        }
        for (name, reason) in IGNORED_CHANNELS {
            t.insert(
                canonical_key(name),
                (Canon::Ignored { reason }, Spelling::Canonical),
            );
        }
        for (alias, arkit) in ALIASES.iter() {
            let i = arkit_index(arkit).expect("an alias names an ARKit-52 channel");
            t.insert(canonical_key(alias), (Canon::Arkit(i), Spelling::Alias));
        }
        t
    })
}

fn lookup(base: &str, side: Option<Side>) -> Option<(Canon, Spelling)> {
    let t = table();
    if let Some(c) = t.get(&(base.to_owned(), side)) {
        return Some(*c);
    }
    let side = side?;
    match t.get(&(base.to_owned(), None)) {
        Some((Canon::Arkit(i), spelling)) if SPLIT_CHANNELS.contains(&ARKIT_52[*i]) => {
            Some((Canon::Half { arkit: *i, side }, *spelling))
        }
        _ => None,
    }
}

/// What `name` means in the ARKit-52 space, or `None` for a name the canonicaliser does not know
/// (not ARKit, not a split half, not a known ignored channel).
///
/// For a bare trailing `l`/`r` ([`SideMark::Trailing`]) the whole word is tried first
/// (`mouthFunnel`), then the letter as a side (`eyeBlinkL`).
pub fn canonicalize(name: &str) -> Option<Canon> {
    canonicalize_spelling(name).map(|(c, _)| c)
}

/// [`canonicalize`], and whether `name` is a spelling of the ARKit name or an [`ALIASES`] entry
/// (`"eyeBlink_L"` → `(Arkit(eyeBlinkLeft), Canonical)`, `"Fcl_EYE_Close_L"` →
/// `(Arkit(eyeBlinkLeft), Alias)`).
pub fn canonicalize_spelling(name: &str) -> Option<(Canon, Spelling)> {
    let k = name_key(name);
    match k.side {
        SideMark::None => lookup(&k.base, None),
        SideMark::Explicit(s) => lookup(&k.base, Some(s)),
        SideMark::Trailing(s) => {
            let mut whole = k.base.clone();
            whole.push(if s == Side::Left { 'l' } else { 'r' });
            lookup(&whole, None).or_else(|| lookup(&k.base, Some(s)))
        }
    }
}

/// The canonical ARKit-52 name `name` stands for (`"blendShape1.eyeBlink_L"` → `"eyeBlinkLeft"`),
/// or `None` when it is not an ARKit-52 channel (split halves and ignored channels give `None`; see
/// [`canonicalize`] for those).
pub fn canonical_name(name: &str) -> Option<&'static str> {
    match canonicalize(name)? {
        Canon::Arkit(i) => Some(ARKIT_52[i]),
        _ => None,
    }
}

/// The index into [`ARKIT_52`] that `name` stands for, as [`canonical_name`].
pub fn canonical_index(name: &str) -> Option<usize> {
    canonical_name(name).and_then(arkit_index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_no_collisions() {
        assert_eq!(
            table().len(),
            ARKIT_52.len() + IGNORED_CHANNELS.len() + ALIASES.len()
        );
    }

    #[test]
    fn aliases_reach_their_arkit_channel() {
        for (alias, arkit) in ALIASES.iter() {
            assert_eq!(canonical_name(alias), Some(*arkit), "{alias}");
        }
        // Spellings the reduction maps without an entry.
        for (name, arkit) in [
            ("Jaw_Open", "jawOpen"),
            ("Mouth_Smile_Left", "mouthSmileLeft"),
            ("EyeWideLeft", "eyeWideLeft"),
            ("Jaw_Left", "jawLeft"),
        ] {
            assert_eq!(canonical_name(name), Some(arkit), "{name}");
        }
        assert!(matches!(
            canonicalize("Cheek_Puff_Left"),
            Some(Canon::Half {
                side: Side::Left,
                ..
            })
        ));
        assert_eq!(
            canonical_name("Fcl_MTH_A"),
            None,
            "a vowel is a viseme, not ARKit"
        );
    }

    #[test]
    fn canonical_spellings_map_to_themselves() {
        for (i, name) in ARKIT_52.iter().enumerate() {
            assert_eq!(canonicalize(name), Some(Canon::Arkit(i)), "{name}");
            assert_eq!(
                canonicalize_spelling(name),
                Some((Canon::Arkit(i), Spelling::Canonical)),
                "{name}"
            );
        }
        for (alias, _) in ALIASES.iter() {
            assert_eq!(
                canonicalize_spelling(alias).map(|(_, s)| s),
                Some(Spelling::Alias),
                "{alias}"
            );
        }
    }

    #[test]
    fn keys() {
        let k = name_key("blendShape1.eyeBlink_L");
        assert_eq!(
            k,
            NameKey {
                base: "eyeblink".into(),
                side: SideMark::Explicit(Side::Left)
            }
        );
        let k = name_key("mouthFunnel");
        assert_eq!(
            k,
            NameKey {
                base: "mouthfunne".into(),
                side: SideMark::Trailing(Side::Left)
            }
        );
        assert_eq!(name_key("").base, "");
    }
}

/// The revision of the name binding ([`ALIASES`], the canonicaliser and the binding's rules):
/// recorded with anything baked through it and compared when a bake is verified.
/// v2 (issue 25): an exact ARKit spelling wins over an alias; the VRoid `Fcl_*` table.
pub const NAMES_REVISION: &str = "mien-arkit52-names-v2";

/// Target names a report suggests for a name that did not bind.
pub const NEAREST_LISTED: usize = 3;

/// `name` reduced for suggestions: the part after the last `.`, `:` or `|`, lowercase, without
/// `_`, `-` and spaces (`Armature|viseme_PP` → `visemepp`).
fn suggestion_key(name: &str) -> String {
    let last = name.rsplit(['.', ':', '|']).next().unwrap_or(name);
    last.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance (Levenshtein 1966) of two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Up to [`NEAREST_LISTED`] of `candidates` nearest to `name` (edit distance of their keys:
/// last path segment, lowercase, separators dropped; ties in `candidates` order), so a report
/// shows a user why a name did not bind.
pub fn nearest_names<T: AsRef<str>>(name: &str, candidates: &[T]) -> Vec<String> {
    let key = suggestion_key(name);
    let mut d: Vec<(usize, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(i, t)| (edit_distance(&key, &suggestion_key(t.as_ref())), i))
        .collect();
    d.sort_unstable();
    d.into_iter()
        .take(NEAREST_LISTED)
        .map(|(_, i)| candidates[i].as_ref().to_owned())
        .collect()
}
