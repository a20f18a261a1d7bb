//! Bone names → humanoid roles: the automatic map of [`super::RetargetDef::auto`].
//!
//! A role is a VRM 1.0 humanoid bone name (`hips`, `leftUpperArm`, `rightIndexProximal`, …;
//! VRMC_vrm-1.0 `humanoid.md`), the one vocabulary both VRM versions and VRM Animation use. A
//! skeleton's roles come from its VRM / VRMA humanoid map when the file has one, else from its
//! node names ([`role_of`]):
//!
//! 1. a namespace prefix (`mixamorig:`, `mixamorig1:`, any `xxx:`) and the rig prefixes `Bip01_`,
//!    `Bip01 `, `Bip001 `, `CC_Base_`, `J_Bip_`, `DEF-`, `ORG-` are stripped, then an exporter's
//!    `_Armature` / `_armature` suffix;
//! 2. a side marker is taken off: `.L` `.R` `_L` `_R` `_l` `_r` `-L` `-R` ` L` ` R` at the end,
//!    `.l` `.r` inside (Blender's `upper_arm.l_Armature` after the suffix), `L_` `R_` `l_` `r_`
//!    `L ` `R ` at the start, and `Left` / `Right` (any case) at the start or end (`C_` at the start
//!    marks the centre);
//! 3. what remains is lower-cased with separators (`_ - . space`) removed and looked up in one
//!    synonym table: pelvis = hips, upleg / thigh / upperleg = upper leg, leg / calf / shin /
//!    lowerleg = lower leg, arm / upperarm = upper arm, forearm / lowerarm = lower arm,
//!    clavicle / collar = shoulder, toebase / toe = toes, abdomen / spine / spine0 = spine,
//!    spine1 / torso / chest = chest, spine2 / upperchest = upper chest, palm / wrist = hand;
//!    fingers as `thumb1..3` / `index1..3` (Mixamo's `HandThumb1`; `4` is an end bone and stays
//!    unmapped) or `thumbproximal` / `indexintermediate` / `littledistal`, `pinky` = little.
//!
//! Mixamo's and Unreal's thumbs have three bones from the hand as VRM 1.0's do (metacarpal,
//! proximal, distal); a `thumb.proximal / intermediate / distal` triple (VRM 0.x, Blender) is read
//! the same way, proximal = metacarpal.

/// The VRM 1.0 humanoid bones ([`role_of`]'s vocabulary), parents before children.
pub const ROLES: &[&str] = &[
    "hips",
    "spine",
    "chest",
    "upperChest",
    "neck",
    "head",
    "leftEye",
    "rightEye",
    "jaw",
    "leftUpperLeg",
    "leftLowerLeg",
    "leftFoot",
    "leftToes",
    "rightUpperLeg",
    "rightLowerLeg",
    "rightFoot",
    "rightToes",
    "leftShoulder",
    "leftUpperArm",
    "leftLowerArm",
    "leftHand",
    "rightShoulder",
    "rightUpperArm",
    "rightLowerArm",
    "rightHand",
    "leftThumbMetacarpal",
    "leftThumbProximal",
    "leftThumbDistal",
    "leftIndexProximal",
    "leftIndexIntermediate",
    "leftIndexDistal",
    "leftMiddleProximal",
    "leftMiddleIntermediate",
    "leftMiddleDistal",
    "leftRingProximal",
    "leftRingIntermediate",
    "leftRingDistal",
    "leftLittleProximal",
    "leftLittleIntermediate",
    "leftLittleDistal",
    "rightThumbMetacarpal",
    "rightThumbProximal",
    "rightThumbDistal",
    "rightIndexProximal",
    "rightIndexIntermediate",
    "rightIndexDistal",
    "rightMiddleProximal",
    "rightMiddleIntermediate",
    "rightMiddleDistal",
    "rightRingProximal",
    "rightRingIntermediate",
    "rightRingDistal",
    "rightLittleProximal",
    "rightLittleIntermediate",
    "rightLittleDistal",
];

/// The canonical role of a VRM humanoid bone name as a file spells it: VRM 0.x's thumb
/// (`leftThumbProximal`, `…Intermediate`, `…Distal`) becomes 1.0's (`…Metacarpal`, `…Proximal`,
/// `…Distal`) when `v0` is true; other names are returned when they are roles, `None` otherwise.
pub fn canonical_vrm(bone: &str, v0: bool) -> Option<&'static str> {
    let renamed = if v0 {
        match bone {
            "leftThumbProximal" => "leftThumbMetacarpal",
            "leftThumbIntermediate" => "leftThumbProximal",
            "rightThumbProximal" => "rightThumbMetacarpal",
            "rightThumbIntermediate" => "rightThumbProximal",
            other => other,
        }
    } else {
        bone
    };
    ROLES.iter().copied().find(|r| *r == renamed)
}

/// Which side a name marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The character's left.
    Left,
    /// The character's right.
    Right,
}

/// Strip prefixes and the side marker (module doc steps 1–2): `(side, rest)`.
pub fn split_side(name: &str) -> (Option<Side>, String) {
    let mut s = name.trim();
    // A namespace (`mixamorig:Hips`, `mixamorig1:Hips`, `Armature:Hips`).
    if let Some(i) = s.rfind(':') {
        s = &s[i + 1..];
    }
    for p in [
        "Bip01_", "Bip01 ", "Bip001_", "Bip001 ", "CC_Base_", "J_Bip_", "DEF-", "ORG-",
    ] {
        if s.len() > p.len() && s[..p.len()].eq_ignore_ascii_case(p) {
            s = &s[p.len()..];
            break;
        }
    }
    for suffix in ["_Armature", "_armature"] {
        if let Some(r) = s.strip_suffix(suffix) {
            s = r;
        }
    }
    let side_of = |c: char| match c {
        'L' | 'l' => Some(Side::Left),
        'R' | 'r' => Some(Side::Right),
        _ => None,
    };
    let b = s.as_bytes();
    let n = b.len();
    // `X.L`, `X_L`, `X-L`, `X L` at the end.
    if n >= 3
        && matches!(b[n - 2], b'.' | b'_' | b'-' | b' ')
        && let Some(side) = side_of(b[n - 1] as char)
    {
        return (Some(side), s[..n - 2].to_string());
    }
    // `L_X`, `R X`, `l_X` at the start (VRoid's `J_Bip_L_UpperArm` after the prefix); `C_X` is
    // the centre (VRoid's `J_Bip_C_Hips`).
    if n >= 3 && matches!(b[1], b'_' | b' ' | b'.' | b'-') {
        if let Some(side) = side_of(b[0] as char) {
            return (Some(side), s[2..].to_string());
        }
        if b[0] == b'C' {
            return (None, s[2..].to_string());
        }
    }
    // `.l.` / `.r.` inside (`Finger.001.l`, `thumb.1.l` after a suffix was cut).
    for (m, side) in [
        (".l.", Side::Left),
        (".L.", Side::Left),
        (".r.", Side::Right),
        (".R.", Side::Right),
    ] {
        if let Some(i) = s.find(m) {
            return (Some(side), format!("{}.{}", &s[..i], &s[i + m.len()..]));
        }
    }
    let lower = s.to_ascii_lowercase();
    for (word, side) in [("left", Side::Left), ("right", Side::Right)] {
        if lower.starts_with(word) && lower.len() > word.len() {
            return (Some(side), s[word.len()..].to_string());
        }
        if lower.ends_with(word) && lower.len() > word.len() {
            return (Some(side), s[..s.len() - word.len()].to_string());
        }
    }
    (None, s.to_string())
}

/// The name's core, lower-cased without separators (module doc step 3's key).
fn key(core: &str) -> String {
    core.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The role a bone name stands for (module doc), `None` when the name is not a humanoid bone
/// mien recognises (twist bones, end bones, props).
pub fn role_of(name: &str) -> Option<&'static str> {
    let (side, core) = split_side(name);
    let k = key(&core);
    let center = match k.as_str() {
        "hips" | "hip" | "pelvis" => Some("hips"),
        "spine" | "spine0" | "spine00" | "abdomen" | "waist" | "spine01" if side.is_none() => {
            Some("spine")
        }
        "spine1" | "chest" | "torso" | "spine02" | "spine001" => Some("chest"),
        "spine2" | "upperchest" | "spine03" | "spine002" => Some("upperChest"),
        "neck" | "neck1" | "neck01" => Some("neck"),
        "head" => Some("head"),
        "jaw" => Some("jaw"),
        _ => None,
    };
    if side.is_none() {
        return center;
    }
    let side = side?;
    let part: &str = match k.as_str() {
        "eye" => "Eye",
        "upleg" | "thigh" | "upperleg" | "hipjoint" => "UpperLeg",
        "leg" | "calf" | "shin" | "lowerleg" | "knee" => "LowerLeg",
        "foot" | "ankle" => "Foot",
        "toebase" | "toe" | "toes" | "ball" => "Toes",
        "shoulder" | "clavicle" | "collar" | "collarbone" => "Shoulder",
        "arm" | "upperarm" => "UpperArm",
        "forearm" | "lowerarm" | "elbow" => "LowerArm",
        "hand" | "palm" | "wrist" => "Hand",
        other => return finger(side, other),
    };
    full(side, part)
}

/// `left` / `right` + `part`, as one of [`ROLES`].
fn full(side: Side, part: &str) -> Option<&'static str> {
    let want = match side {
        Side::Left => format!("left{part}"),
        Side::Right => format!("right{part}"),
    };
    ROLES.iter().copied().find(|r| *r == want)
}

/// A finger key (`handthumb1`, `thumb1`, `indexproximal`, `pinky2`, `thumbintermediate`).
fn finger(side: Side, k: &str) -> Option<&'static str> {
    let k = k.strip_prefix("hand").unwrap_or(k);
    let (digit, rest) = ["thumb", "index", "middle", "ring", "little", "pinky"]
        .iter()
        .find_map(|d| k.strip_prefix(d).map(|r| (*d, r)))?;
    let digit = match digit {
        "pinky" => "Little",
        "thumb" => "Thumb",
        "index" => "Index",
        "middle" => "Middle",
        "ring" => "Ring",
        _ => "Little",
    };
    let thumb = digit == "Thumb";
    let joint = match rest {
        "1" | "01" | "proximal" => {
            if thumb {
                "Metacarpal"
            } else {
                "Proximal"
            }
        }
        "2" | "02" | "intermediate" => {
            if thumb {
                "Proximal"
            } else {
                "Intermediate"
            }
        }
        "3" | "03" | "distal" => "Distal",
        "metacarpal" if thumb => "Metacarpal",
        _ => return None,
    };
    full(side, &format!("{digit}{joint}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_s_spellings_reach_one_role() {
        for (name, role) in [
            ("mixamorig:Hips", Some("hips")),
            ("Hips", Some("hips")),
            ("pelvis_Armature", Some("hips")),
            ("Bip01_Pelvis", Some("hips")),
            ("CC_Base_Pelvis", Some("hips")),
            ("J_Bip_C_Hips", Some("hips")),
            ("J_Bip_C_Spine", Some("spine")),
            ("mixamorig:LeftUpLeg", Some("leftUpperLeg")),
            ("UpperLeg.L", Some("leftUpperLeg")),
            ("thigh.l_Armature", Some("leftUpperLeg")),
            ("upper_leg.R", Some("rightUpperLeg")),
            ("CC_Base_L_Calf", Some("leftLowerLeg")),
            ("shin.r_Armature", Some("rightLowerLeg")),
            ("LeftLeg", Some("leftLowerLeg")),
            ("LeftForeArm", Some("leftLowerArm")),
            ("lowerarm.l_Armature", Some("leftLowerArm")),
            ("LowerArm_R", Some("rightLowerArm")),
            ("RightArm", Some("rightUpperArm")),
            ("upper_arm.L", Some("leftUpperArm")),
            ("Palm.L", Some("leftHand")),
            ("Spine1", Some("chest")),
            ("Spine2", Some("upperChest")),
            ("Abdomen", Some("spine")),
            ("Torso", Some("chest")),
            ("LeftToeBase", Some("leftToes")),
            ("LeftHandThumb1", Some("leftThumbMetacarpal")),
            ("LeftHandThumb4", None),
            ("RightHandPinky2", Some("rightLittleIntermediate")),
            ("index_distal.L", Some("leftIndexDistal")),
            ("thumb.proximal.L", Some("leftThumbMetacarpal")),
            ("LeftEye", Some("leftEye")),
            ("eye.R", Some("rightEye")),
            ("HeadTop_End", None),
            ("PoleTarget.L", None),
            ("Left", None),
        ] {
            assert_eq!(role_of(name), role, "{name}");
        }
    }

    #[test]
    fn vroid_names_resolve_after_the_prefix() {
        assert_eq!(role_of("J_Bip_L_UpperArm"), Some("leftUpperArm"));
        assert_eq!(role_of("J_Bip_R_LowerLeg"), Some("rightLowerLeg"));
    }

    #[test]
    fn vrm0_thumbs_are_renamed() {
        assert_eq!(
            canonical_vrm("leftThumbProximal", true),
            Some("leftThumbMetacarpal")
        );
        assert_eq!(
            canonical_vrm("leftThumbProximal", false),
            Some("leftThumbProximal")
        );
        assert_eq!(canonical_vrm("leftThumbIntermediate", false), None);
    }
}
