//! The ARKit-52 expression space: canonical names and order.
//!
//! Canonical order is Apple's `ARFaceAnchor.BlendShapeLocation` as Live Link Face and Audio2Face
//! stream it (Epic's `EARKitBlendShape` enum order): `eyeBlinkLeft` … `tongueOut`. Names are Apple's
//! camelCase spelling; other spellings reach them through [`crate::anim::canon`].

/// Number of ARKit blendshapes.
pub const ARKIT_COUNT: usize = 52;

/// The 52 ARKit blendshape names in canonical order.
pub const ARKIT_52: [&str; ARKIT_COUNT] = [
    "eyeBlinkLeft",
    "eyeLookDownLeft",
    "eyeLookInLeft",
    "eyeLookOutLeft",
    "eyeLookUpLeft",
    "eyeSquintLeft",
    "eyeWideLeft",
    "eyeBlinkRight",
    "eyeLookDownRight",
    "eyeLookInRight",
    "eyeLookOutRight",
    "eyeLookUpRight",
    "eyeSquintRight",
    "eyeWideRight",
    "jawForward",
    "jawLeft",
    "jawRight",
    "jawOpen",
    "mouthClose",
    "mouthFunnel",
    "mouthPucker",
    "mouthLeft",
    "mouthRight",
    "mouthSmileLeft",
    "mouthSmileRight",
    "mouthFrownLeft",
    "mouthFrownRight",
    "mouthDimpleLeft",
    "mouthDimpleRight",
    "mouthStretchLeft",
    "mouthStretchRight",
    "mouthRollLower",
    "mouthRollUpper",
    "mouthShrugLower",
    "mouthShrugUpper",
    "mouthPressLeft",
    "mouthPressRight",
    "mouthLowerDownLeft",
    "mouthLowerDownRight",
    "mouthUpperUpLeft",
    "mouthUpperUpRight",
    "browDownLeft",
    "browDownRight",
    "browInnerUp",
    "browOuterUpLeft",
    "browOuterUpRight",
    "cheekPuff",
    "cheekSquintLeft",
    "cheekSquintRight",
    "noseSneerLeft",
    "noseSneerRight",
    "tongueOut",
];

/// The canonical index of an exact canonical name.
pub fn arkit_index(name: &str) -> Option<usize> {
    ARKIT_52.iter().position(|&n| n == name)
}
