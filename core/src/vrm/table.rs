//! The name tables of VRM: 0.x preset names → 1.0 preset names, and the ARKit-52 → VRM
//! expression table a stream's channels take when the avatar has no target of their own name.

use crate::anim::canon::TableRoute;

/// VRM 0.x `presetName` → VRM 1.0 preset (the 1.0 spec's "Changed from" notes: `joy` → `happy`,
/// `sorrow` → `sad`, `fun` → `relaxed`; the vowels and blinks renamed; `unknown` is a custom
/// expression named by the group's `name`).
pub const V0_PRESETS: &[(&str, &str)] = &[
    ("neutral", "neutral"),
    ("a", "aa"),
    ("i", "ih"),
    ("u", "ou"),
    ("e", "ee"),
    ("o", "oh"),
    ("blink", "blink"),
    ("blink_l", "blinkLeft"),
    ("blink_r", "blinkRight"),
    ("joy", "happy"),
    ("angry", "angry"),
    ("sorrow", "sad"),
    ("fun", "relaxed"),
    ("surprised", "surprised"),
    ("lookup", "lookUp"),
    ("lookdown", "lookDown"),
    ("lookleft", "lookLeft"),
    ("lookright", "lookRight"),
];

/// The VRM 1.0 preset names.
pub const V1_PRESETS: &[&str] = &[
    "happy",
    "angry",
    "sad",
    "relaxed",
    "surprised",
    "aa",
    "ih",
    "ou",
    "ee",
    "oh",
    "blink",
    "blinkLeft",
    "blinkRight",
    "lookUp",
    "lookDown",
    "lookLeft",
    "lookRight",
    "neutral",
];

/// The 1.0 preset of a 0.x `presetName` (case-insensitive).
pub fn v1_preset_of_v0(preset: &str) -> Option<&'static str> {
    V0_PRESETS
        .iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(preset))
        .map(|(_, b)| *b)
}

/// ARKit-52 channel → VRM expression and gain, mien's own starting point for driving a VRM from a
/// face tracker (a channel with a morph target or expression of its own name drives that instead;
/// [`crate::anim::canon::Binding::with_table`]):
///
/// | VRM expression | ARKit channels (gain) |
/// |---|---|
/// | blinkLeft / blinkRight | eyeBlinkLeft / eyeBlinkRight (1) |
/// | blink, only when the avatar has neither blinkLeft nor blinkRight | eyeBlinkLeft, eyeBlinkRight (½ each: the mean of the two eyes) |
/// | aa | jawOpen (1) |
/// | ih | mouthStretchLeft, mouthStretchRight (½ each) |
/// | ou | mouthPucker (1) |
/// | ee | mouthSmileLeft, mouthSmileRight (¼ each) |
/// | oh | mouthFunnel (1) |
/// | happy | mouthSmileLeft, mouthSmileRight (½ each) |
/// | sad | mouthFrownLeft, mouthFrownRight (½ each) |
/// | angry | browDownLeft, browDownRight (½ each) |
/// | surprised | eyeWideLeft, eyeWideRight (½ each) |
/// | lookUp / lookDown | eyeLookUp*, eyeLookDown* (½ each eye) |
/// | lookLeft (the character's) | eyeLookOutLeft, eyeLookInRight (½ each) |
/// | lookRight | eyeLookInLeft, eyeLookOutRight (½ each) |
///
/// The combined `blink` is a VRM 1.0 preset of its own ("blink: close both eyelids",
/// VRMC_vrm-1.0 `expressions.md`); a tracker's two eyes reach it as their mean, so one eye closed
/// half-closes both and both closed close both. An avatar with the sided presets never gets this
/// route (no double blink through `blink` *and* `blinkLeft`). Every other ARKit channel drives
/// nothing on a VRM without targets of its name, and the report says so.
pub const ARKIT_TO_VRM: &[TableRoute] = &[
    TableRoute::new("eyeBlinkLeft", "blinkLeft", 1.0),
    TableRoute::new("eyeBlinkRight", "blinkRight", 1.0),
    TableRoute::new("eyeBlinkLeft", "blink", 0.5).unless(&["blinkLeft", "blinkRight"]),
    TableRoute::new("eyeBlinkRight", "blink", 0.5).unless(&["blinkLeft", "blinkRight"]),
    TableRoute::new("jawOpen", "aa", 1.0),
    TableRoute::new("mouthStretchLeft", "ih", 0.5),
    TableRoute::new("mouthStretchRight", "ih", 0.5),
    TableRoute::new("mouthPucker", "ou", 1.0),
    TableRoute::new("mouthSmileLeft", "ee", 0.25),
    TableRoute::new("mouthSmileRight", "ee", 0.25),
    TableRoute::new("mouthFunnel", "oh", 1.0),
    TableRoute::new("mouthSmileLeft", "happy", 0.5),
    TableRoute::new("mouthSmileRight", "happy", 0.5),
    TableRoute::new("mouthFrownLeft", "sad", 0.5),
    TableRoute::new("mouthFrownRight", "sad", 0.5),
    TableRoute::new("browDownLeft", "angry", 0.5),
    TableRoute::new("browDownRight", "angry", 0.5),
    TableRoute::new("eyeWideLeft", "surprised", 0.5),
    TableRoute::new("eyeWideRight", "surprised", 0.5),
    TableRoute::new("eyeLookUpLeft", "lookUp", 0.5),
    TableRoute::new("eyeLookUpRight", "lookUp", 0.5),
    TableRoute::new("eyeLookDownLeft", "lookDown", 0.5),
    TableRoute::new("eyeLookDownRight", "lookDown", 0.5),
    TableRoute::new("eyeLookOutLeft", "lookLeft", 0.5),
    TableRoute::new("eyeLookInRight", "lookLeft", 0.5),
    TableRoute::new("eyeLookInLeft", "lookRight", 0.5),
    TableRoute::new("eyeLookOutRight", "lookRight", 0.5),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::arkit::ARKIT_52;

    #[test]
    fn the_tables_name_real_channels_and_presets() {
        for e in ARKIT_TO_VRM {
            assert!(ARKIT_52.contains(&e.arkit), "{}", e.arkit);
            assert!(V1_PRESETS.contains(&e.target), "{}", e.target);
            assert!(e.unless.iter().all(|u| V1_PRESETS.contains(u)));
            assert!(e.gain > 0.0 && e.gain <= 1.0);
        }
        for (_, b) in V0_PRESETS {
            assert!(V1_PRESETS.contains(b), "{b}");
        }
        assert_eq!(v1_preset_of_v0("Joy"), Some("happy"));
        assert_eq!(v1_preset_of_v0("unknown"), None);
    }
}
