//! VRoid Studio's face shapes (`Fcl_*`) as far as they express ARKit-52: the table a weight stream
//! takes on a character whose targets are VRoid's ([`crate::anim::drive::StreamDrive`], through
//! [`super::Binding::with_table`]).
//!
//! VRoid Studio names its face blendshapes `Fcl_<part>_<shape>`: `ALL` (whole face: Neutral,
//! Angry, Fun, Joy, Sorrow, Surprised), `BRW` (brows: Angry, Fun, Joy, Sorrow, Surprised), `EYE`
//! (Natural, Angry, Close, Close_L/R, Fun, Joy, Joy_L/R, Sorrow, Surprised, Spread, Iris_Hide,
//! Highlight_Hide), `MTH` (Close, Up, Down, Angry, Small, Large, Neutral, Fun, Joy, Sorrow,
//! Surprised, SkinFung(_L/_R), and the vowels A, I, U, E, O) and `HA` (teeth). Three are the same
//! channel as an ARKit name and are [`super::ALIASES`] (`Fcl_EYE_Close_L/R`, `Fcl_MTH_Close`:
//! they bind by name); the rest are emotions and vowels, which this table reaches from the nearest
//! ARKit channels.
//!
//! | ARKit channel (gain) | VRoid shape (first present wins) |
//! |---|---|
//! | eyeBlinkLeft, eyeBlinkRight (1) | `Fcl_EYE_Close_L`, `Fcl_EYE_Close_R` (aliases, by name) |
//! | eyeBlinkLeft, eyeBlinkRight (½ each) | `Fcl_EYE_Close`, when neither sided shape exists |
//! | eyeSquintLeft, eyeSquintRight (1) | `Fcl_EYE_Joy_L`, `Fcl_EYE_Joy_R`; else `Fcl_EYE_Joy` (½ each) |
//! | eyeWideLeft, eyeWideRight (½ each) | `Fcl_EYE_Spread`; else `Fcl_EYE_Surprised` |
//! | browDownLeft, browDownRight (½ each) | `Fcl_BRW_Angry` |
//! | browInnerUp (1) | `Fcl_BRW_Sorrow` |
//! | browOuterUpLeft, browOuterUpRight (½ each) | `Fcl_BRW_Surprised` |
//! | jawOpen (1) | `Fcl_MTH_A` (the open vowel) |
//! | mouthClose (1) | `Fcl_MTH_Close` (alias, by name) |
//! | mouthSmileLeft, mouthSmileRight (½ each) | `Fcl_MTH_Joy`; else `Fcl_ALL_Joy` |
//! | mouthFrownLeft, mouthFrownRight (½ each) | `Fcl_MTH_Sorrow`; else `Fcl_ALL_Sorrow` |
//! | mouthStretchLeft, mouthStretchRight (½ each) | `Fcl_MTH_I` |
//! | mouthPucker (1) | `Fcl_MTH_U` |
//! | mouthFunnel (1) | `Fcl_MTH_O` |
//!
//! A pair's halves at ½ each drive the one shape with the mean of the two sides (one side alone
//! half-moves it). The mouth rows follow mien's ARKit → VRM table
//! ([`crate::vrm::table::ARKIT_TO_VRM`]: jawOpen → aa, stretch → ih, pucker → ou, funnel → oh,
//! smile → happy, frown → sad, browDown → angry, eyeWide → surprised), on VRoid's own shapes
//! (a VRoid VRM binds its `aa`/`happy`/… expressions to exactly these `Fcl_MTH_A`/`Fcl_MTH_Joy`/…).
//!
//! **Unbound** (31 of 52; the binding report lists each with its nearest target names): the gaze
//! (`eyeLook{Up,Down,In,Out}{Left,Right}`, 8: VRoid's eyes turn by bone, it has no look shapes),
//! `jawForward`, `jawLeft`, `jawRight`, `mouthLeft`, `mouthRight`, `mouthDimpleLeft/Right`,
//! `mouthPressLeft/Right`, `mouthRollLower/Upper`, `mouthShrugLower/Upper`,
//! `mouthUpperUpLeft/Right`, `mouthLowerDownLeft/Right` (`Fcl_MTH_Up`/`_Down` are sided nowhere
//! and their shapes differ between VRoid versions), `cheekPuff`, `cheekSquintLeft/Right`,
//! `noseSneerLeft/Right`, `tongueOut`.
//!
//! The vowels keep their viseme role: speech reaches `Fcl_MTH_A/I/U/E/O` through
//! [`crate::speech::VisemeMap::vroid`], which this table does not touch.

use super::binding::TableRoute;

/// The ARKit-52 → VRoid `Fcl_*` table of the module doc (21 channels; with the aliases, 21 of 52
/// ARKit channels reach a full VRoid face).
pub const VROID_FCL: &[TableRoute] = &[
    TableRoute::new("eyeBlinkLeft", "Fcl_EYE_Close", 0.5)
        .unless(&["Fcl_EYE_Close_L", "Fcl_EYE_Close_R"]),
    TableRoute::new("eyeBlinkRight", "Fcl_EYE_Close", 0.5)
        .unless(&["Fcl_EYE_Close_L", "Fcl_EYE_Close_R"]),
    TableRoute::new("eyeSquintLeft", "Fcl_EYE_Joy_L", 1.0),
    TableRoute::new("eyeSquintRight", "Fcl_EYE_Joy_R", 1.0),
    TableRoute::new("eyeSquintLeft", "Fcl_EYE_Joy", 0.5)
        .unless(&["Fcl_EYE_Joy_L", "Fcl_EYE_Joy_R"]),
    TableRoute::new("eyeSquintRight", "Fcl_EYE_Joy", 0.5)
        .unless(&["Fcl_EYE_Joy_L", "Fcl_EYE_Joy_R"]),
    TableRoute::new("eyeWideLeft", "Fcl_EYE_Spread", 0.5),
    TableRoute::new("eyeWideRight", "Fcl_EYE_Spread", 0.5),
    TableRoute::new("eyeWideLeft", "Fcl_EYE_Surprised", 0.5).unless(&["Fcl_EYE_Spread"]),
    TableRoute::new("eyeWideRight", "Fcl_EYE_Surprised", 0.5).unless(&["Fcl_EYE_Spread"]),
    TableRoute::new("browDownLeft", "Fcl_BRW_Angry", 0.5),
    TableRoute::new("browDownRight", "Fcl_BRW_Angry", 0.5),
    TableRoute::new("browInnerUp", "Fcl_BRW_Sorrow", 1.0),
    TableRoute::new("browOuterUpLeft", "Fcl_BRW_Surprised", 0.5),
    TableRoute::new("browOuterUpRight", "Fcl_BRW_Surprised", 0.5),
    TableRoute::new("jawOpen", "Fcl_MTH_A", 1.0),
    TableRoute::new("mouthSmileLeft", "Fcl_MTH_Joy", 0.5),
    TableRoute::new("mouthSmileRight", "Fcl_MTH_Joy", 0.5),
    TableRoute::new("mouthSmileLeft", "Fcl_ALL_Joy", 0.5).unless(&["Fcl_MTH_Joy"]),
    TableRoute::new("mouthSmileRight", "Fcl_ALL_Joy", 0.5).unless(&["Fcl_MTH_Joy"]),
    TableRoute::new("mouthFrownLeft", "Fcl_MTH_Sorrow", 0.5),
    TableRoute::new("mouthFrownRight", "Fcl_MTH_Sorrow", 0.5),
    TableRoute::new("mouthFrownLeft", "Fcl_ALL_Sorrow", 0.5).unless(&["Fcl_MTH_Sorrow"]),
    TableRoute::new("mouthFrownRight", "Fcl_ALL_Sorrow", 0.5).unless(&["Fcl_MTH_Sorrow"]),
    TableRoute::new("mouthStretchLeft", "Fcl_MTH_I", 0.5),
    TableRoute::new("mouthStretchRight", "Fcl_MTH_I", 0.5),
    TableRoute::new("mouthPucker", "Fcl_MTH_U", 1.0),
    TableRoute::new("mouthFunnel", "Fcl_MTH_O", 1.0),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::arkit::ARKIT_52;

    #[test]
    fn the_table_names_arkit_channels_and_fcl_shapes_and_its_alternatives_exclude_each_other() {
        for e in VROID_FCL {
            assert!(ARKIT_52.contains(&e.arkit), "{}", e.arkit);
            assert!(e.target.starts_with("Fcl_"), "{}", e.target);
            assert!(e.gain > 0.0 && e.gain <= 1.0);
            // An alternative never lists itself.
            assert!(!e.unless.contains(&e.target));
        }
        let mut channels: Vec<&str> = VROID_FCL.iter().map(|e| e.arkit).collect();
        channels.extend(["mouthClose"]); // an alias, by name
        channels.sort_unstable();
        channels.dedup();
        // eyeBlink L/R, eyeSquint L/R, eyeWide L/R, browDown L/R, browInnerUp, browOuterUp L/R,
        // jawOpen, mouthClose, mouthSmile L/R, mouthFrown L/R, mouthStretch L/R, mouthPucker,
        // mouthFunnel.
        assert_eq!(channels.len(), 21);
    }
}
