//! Head motion from a stream: the ARKit angle channels a weight stream carries (head yaw, pitch,
//! roll; eye yaw and pitch) turn the head, neck and eye joints each frame, as parent-relative
//! overrides on top of the frame's local rotation ([`mien_core::anim::head`]).

use glam::{Mat4, Quat};
use mien_core::anim::WeightStream;
use mien_core::anim::head::{self, AngleChannels, HeadJointNames, HeadJoints};

use crate::asset::{Asset, Model};
use crate::error::{Error, Result};

/// What head motion found and turns, for a report.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct HeadMotionReport {
    /// The stream's angle channels that were found.
    pub channels: Vec<String>,
    /// The joint the head's angles turn (the head, or what carries it and the eyes), by name.
    pub head: Option<String>,
    /// The neck (half of each head angle when found with a head).
    pub neck: Option<String>,
    /// The eye joints.
    pub left_eye: Option<String>,
    /// The right eye joint.
    pub right_eye: Option<String>,
    /// Whether the angles are applied (off by [`crate::InstanceMut::set_head_motion`], or when no joint
    /// was found).
    pub applied: bool,
}

/// The head motion of an instance whose stream carries angle channels.
#[derive(Clone, Debug)]
pub(crate) struct HeadMotion {
    pub(crate) channels: AngleChannels,
    pub(crate) joints: HeadJoints,
    rest_world: Vec<Mat4>,
    parent: Vec<Option<usize>>,
    /// Joint names (the pack's, for a linear head).
    pub(crate) names: Vec<String>,
    /// The joints are a linear head pack's (else the character's nodes).
    pub(crate) on_pack: bool,
    aux: Vec<f32>,
    pub(crate) overrides: Vec<(usize, Quat)>,
    pub(crate) report: HeadMotionReport,
}

impl HeadMotion {
    /// The motion of `stream` on `asset` (`None` when the stream has no angle channel).
    pub(crate) fn new(
        asset: &Asset,
        stream: &WeightStream,
        given: &HeadJointNames,
        on: bool,
    ) -> Result<Option<Self>> {
        let channels = AngleChannels::find(&stream.aux_channels);
        if !(0..3).any(|g| channels.has(g)) {
            return Ok(None);
        }
        let (names, parent, rest_world): (Vec<Option<String>>, Vec<Option<usize>>, Vec<Mat4>) =
            match asset.model() {
                Model::Head { pack, .. } => (
                    pack.header
                        .joints
                        .iter()
                        .map(|j| Some(j.name.clone()))
                        .collect(),
                    pack.header
                        .joints
                        .iter()
                        .map(|j| usize::try_from(j.parent).ok())
                        .collect(),
                    pack.rest_world
                        .iter()
                        .map(mien_core::gnm::forward::from_row_major)
                        .collect(),
                ),
                Model::Rig(_) => {
                    let ch = asset.character();
                    let (mut l, mut w) = (Vec::new(), Vec::new());
                    ch.world_matrices(&ch.rest_pose(), &mut l, &mut w);
                    (
                        ch.nodes.iter().map(|n| n.name.clone()).collect(),
                        ch.nodes
                            .iter()
                            .map(|n| n.parent.map(|p| p.index()))
                            .collect(),
                        w,
                    )
                }
            };
        let refs: Vec<Option<&str>> = names.iter().map(Option::as_deref).collect();
        // A VRM: head and neck from the humanoid map; the eyes are lookAt's (mien_core::vrm).
        let vrm = asset.character().vrm.as_ref();
        let mut given = given.clone();
        if let Some(v) = vrm {
            let name = |bone: &str| {
                v.bone(bone)
                    .and_then(|n| names.get(n.index()).cloned().flatten())
            };
            if given.head.is_none() {
                given.head = name("head");
            }
            if given.neck.is_none() {
                given.neck = name("neck");
            }
        }
        let mut joints = HeadJoints::find(&refs, &given).map_err(|(role, n)| {
            Error::invalid(
                format!("{role} joint `{n}`"),
                format!(
                    "{} has no joint of that name; its named joints: {}",
                    asset.source(),
                    refs.iter()
                        .flatten()
                        .take(40)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        if vrm.is_some() {
            joints.left_eye = None;
            joints.right_eye = None;
        }
        let name_of = |j: Option<usize>| j.and_then(|j| names.get(j).cloned().flatten());
        let report = HeadMotionReport {
            channels: head::ANGLE_CHANNELS
                .iter()
                .flatten()
                .filter(|n| {
                    stream
                        .aux_channels
                        .iter()
                        .any(|a| a.eq_ignore_ascii_case(n))
                })
                .map(|n| (*n).to_string())
                .collect(),
            head: name_of(joints.head_carrier(&parent)),
            neck: name_of(joints.neck),
            left_eye: name_of(joints.left_eye),
            right_eye: name_of(joints.right_eye),
            applied: on && !joints.is_empty(),
        };
        Ok(Some(HeadMotion {
            channels,
            joints,
            rest_world,
            parent,
            names: names.into_iter().map(Option::unwrap_or_default).collect(),
            on_pack: matches!(asset.model(), Model::Head { .. }),
            aux: vec![0.0; stream.aux_channels.len()],
            overrides: Vec::new(),
            report,
        }))
    }

    /// This frame's overrides at media time `t` from `stream`.
    pub(crate) fn update(&mut self, stream: &WeightStream, t: f64) {
        stream.sample_aux(t, &mut self.aux);
        let angles = self.channels.read(&self.aux);
        head::overrides(
            &self.joints,
            &angles,
            &self.channels,
            &self.rest_world,
            &self.parent,
            &mut self.overrides,
        );
    }
}
