//! Real-input GNM conformance: the ICT-FaceKit head (MIT, © 2020 USC ICT) baked from its OBJ
//! folder, posed by frames of a real Live Link Face recording (JMTechArt, MIT) mapped through the
//! pack's generated ARKit table — the same path `mien animate` takes — for a backend to be compared
//! with the reference by [`super::gnm::check_pack`].

use std::path::Path;

use mien_core::anim::{Drive, StreamDrive};
use mien_core::gnm::GnmPack;
use mien_core::gnm::bake::{BakeOptions, bake_obj_folder};
use mien_core::gnm::controls::{GnmDriver, control_character};
use mien_core::gnm::forward::joint_world;
use mien_core::io::livelink_csv::read_livelink_csv;

use super::gnm::GnmFrameInput;

/// The ICT-FaceKit pack baked from `data/ict-facekit` with the default options.
///
/// # Errors
/// The baker's error as text (a missing data folder names it).
pub fn ict_pack(data: &Path) -> Result<GnmPack, String> {
    let dir = data.join("ict-facekit");
    bake_obj_folder(&dir, &BakeOptions::default(), &mut |_, _, _| {})
        .map(|b| b.pack)
        .map_err(|e| format!("baking {}: {e}", dir.display()))
}

/// `count` frames of `data/livelinkface/MySlate_3_Jason_Millers_iPhone.csv`, `step` seconds apart
/// from `start`, mapped onto `pack` through its ARKit table (head_ext `(E+4,)`, rest joints).
///
/// # Errors
/// An unreadable recording, a pack without a table, as text.
pub fn livelink_frames(
    pack: &GnmPack,
    data: &Path,
    start: f64,
    step: f64,
    count: usize,
) -> Result<Vec<GnmFrameInput>, String> {
    let csv = data.join("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let stream = read_livelink_csv(&csv).map_err(|e| e.to_string())?;
    let ch = control_character("ict.aosrig").map_err(|e| e.to_string())?;
    let mut drive = Drive::Stream(StreamDrive::new(stream, &ch).map_err(|e| e.to_string())?);
    let mut driver = GnmDriver::new(pack, None, None, "ict.aosrig").map_err(|e| e.to_string())?;
    let (mut joints, mut skipped) = (Vec::new(), Vec::new());
    joint_world(pack, &[], &mut joints, &mut skipped);
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    Ok((0..count)
        .map(|i| {
            drive.pose_at(&ch, &rest, start + step * i as f64, &mut pose);
            GnmFrameInput {
                head_ext: driver.head_ext(&pose).to_vec(),
                joint_world: joints.clone(),
            }
        })
        .collect())
}
