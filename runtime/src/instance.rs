//! One character of a [`crate::Runtime`] and the drivers attached to it. Each frame an instance's
//! pose is built in a fixed order on the media clock:
//!
//! 1. the drive — the rest pose, the character's own clips, or a bound ARKit-52 weight stream;
//!    a stream's head and eye angles turn the head, neck and eye joints
//!    ([`mien_core::anim::head`]: parent-relative overrides on top of the frame's local rotation);
//! 2. speech, which owns the mouth targets it binds;
//! 3. the face driver (state script, expressions, blink, look-at) over the node world matrices of
//!    the pose so far; world matrices are then recomputed (the eyes may have turned).
//!
//! A linear head's pose is then mapped to head_ext through the pack's ARKit table.

use std::collections::BTreeMap;
use std::path::Path;

use glam::{Mat4, Quat};
use mien_core::anim::head::HeadJointNames;
use mien_core::anim::{Drive, StreamDrive, WeightStream};
use mien_core::gnm::controls::GnmDriver;
use mien_core::io::livelink_csv::read_livelink_csv;
use mien_core::rig::{Character, ClipId, Pose};

use crate::asset::{Asset, Model};
use crate::error::{Context as _, Error, Result};
use crate::face::FaceDriver;
use crate::head_motion::HeadMotion;
pub use crate::head_motion::HeadMotionReport;
use crate::space::ExpressionSpace;
use crate::speech::Speech;

/// What the per-frame rules changed on one instance, summed over the frames so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceTotals {
    /// Morph weights clamped to ±2 ([`mien_core::rig::ControlStats::clamped`]).
    pub clamped: u64,
    /// Non-finite morph weights zeroed.
    pub non_finite: u64,
    /// `(mesh instance, target)` pairs the active limit (32 per mesh) dropped, counted per frame.
    pub dropped: u64,
    /// `(mesh instance, target)` → `(first frame, frames)` of every target the active limit
    /// dropped.
    pub dropped_targets: BTreeMap<(u32, u32), (u64, u64)>,
    /// The most non-zero morph weights one mesh had in one frame, before the limit.
    pub peak_nonzero: u32,
    /// Linear heads: coefficients the ARKit map's clamp changed.
    pub head_clamped: u64,
    /// VRM avatars: expression inputs outside [0, 1] clamped ([`mien_core::vrm`] step 2).
    pub expression_clamped: u64,
    /// DNA characters: raw controls ARKit reached clamped into [0, 1]
    /// ([`mien_core::rig::riglogic::ArkitBoardMap::apply`]).
    pub rig_clamped: u64,
}

/// A DNA character's RigLogic state in one instance.
#[derive(Clone, Debug)]
pub(crate) struct RigLogicRun {
    pub(crate) state: mien_core::rig::riglogic::RigLogicInstance,
    raw: Vec<f32>,
    /// Raw controls set in the `rig` space, if any.
    pub(crate) direct: Option<Vec<f32>>,
}

/// One character's drivers and its pose of the current frame.
pub struct Instance {
    pub(crate) drive: Drive,
    pub(crate) speech: Option<Speech>,
    pub(crate) face: Option<FaceDriver>,
    /// Linear heads: ARKit-52 → head_ext through the pack's table (`None` when the pack has no
    /// table; then nothing may drive it and it poses at rest).
    pub(crate) head: Option<GnmDriver>,
    pub(crate) motion: Option<HeadMotion>,
    /// Caller overrides by name (seed 000 `setJointOverrides`) and, for a rig, resolved to nodes.
    overrides: Vec<(String, Quat)>,
    resolved: Vec<(usize, Quat)>,
    /// Linear heads: the body's joint world matrices `(J,)` (seed 000 `setJointWorlds`).
    pub(crate) joint_worlds: Option<Vec<Mat4>>,
    /// Linear heads: head_ext `(E+4,)` set directly in the `gnm` / `gnm68` space.
    pub(crate) direct_head_ext: Option<Vec<f32>>,
    /// The drive is the live ARKit-52 frame [`InstanceMut::set_controls`] writes.
    pub(crate) live_arkit: bool,
    /// The drive's time: media time minus this offset, seconds.
    drive_offset: f64,
    /// The drive loops over its span.
    drive_loop: bool,
    /// Linear heads: this frame's overrides by pack joint name (head motion, then the caller's).
    pub(crate) named: Vec<(String, Quat)>,
    /// Linear heads: the runtime's joint worlds for this instance are the pack's rest.
    pub(crate) joints_at_rest: bool,
    head_names: HeadJointNames,
    head_motion_on: bool,
    pub(crate) pose: Pose,
    /// VRM avatars: the expression and lookAt step.
    pub(crate) vrm: Option<crate::vrm::VrmState>,
    /// DNA characters: RigLogic's per-instance state.
    pub(crate) rig_logic: Option<RigLogicRun>,
    locals: Vec<Mat4>,
    pub(crate) world: Vec<Mat4>,
    pub(crate) totals: InstanceTotals,
    /// Foot placement and spring bones ([`crate::body`]).
    pub(crate) body: crate::body::Body,
    /// Cloth and hair ([`crate::dynamics`]).
    pub(crate) dynamics: crate::dynamics::DynState,
}

impl Instance {
    pub(crate) fn new(asset: &Asset) -> Result<Self> {
        let head = match asset.model() {
            Model::Head { pack, targets, .. } if pack.header.arkit.is_some() => Some(
                GnmDriver::new(pack, None, None, asset.source())?.with_targets(targets.clone()),
            ),
            _ => None,
        };
        Ok(Instance {
            drive: Drive::Rest,
            speech: None,
            face: None,
            head,
            motion: None,
            overrides: Vec::new(),
            resolved: Vec::new(),
            joint_worlds: None,
            direct_head_ext: None,
            live_arkit: false,
            drive_offset: 0.0,
            drive_loop: false,
            named: Vec::new(),
            joints_at_rest: true,
            head_names: HeadJointNames::default(),
            head_motion_on: true,
            pose: asset.character().rest_pose(),
            vrm: crate::vrm::VrmState::new(asset.character()),
            rig_logic: asset.character().rig_logic.as_ref().map(|r| RigLogicRun {
                state: r.instance(),
                raw: Vec::new(),
                direct: None,
            }),
            locals: Vec::new(),
            world: Vec::new(),
            totals: InstanceTotals::default(),
            body: crate::body::Body::for_character(asset.character()),
            dynamics: crate::dynamics::DynState::new(asset.dynamics())?,
        })
    }

    /// Build this frame's pose and world matrices at media time `t` (steps 1–3 of the module doc).
    pub(crate) fn evaluate(&mut self, ch: &Character, rest: &Pose, t: f64) -> Result<()> {
        let td = self.drive_time(ch, t);
        self.drive.pose_at(ch, rest, td, &mut self.pose);
        // Locomotion's clips right after the drive (seed 003's order); the rest of the body
        // after the face.
        let body = self.body.active();
        if body {
            self.body.locomote(ch, &mut self.pose, t);
        }
        if let (Some(v), Some(d)) = (&ch.vrm, self.vrm.as_ref().and_then(|s| s.direct.as_ref()))
            && let Some(w) = self.pose.weights.get_mut(v.control_node.index())
            && w.len() == d.len()
        {
            w.copy_from_slice(d);
        }
        self.named.clear();
        if let (Drive::Stream(s), Some(m)) = (&self.drive, &mut self.motion)
            && m.report.applied
        {
            m.update(s.stream(), td);
            if m.on_pack {
                // A linear head: the pack's joints take the overrides.
                self.named
                    .extend(m.overrides.iter().map(|(j, q)| (m.names[*j].clone(), *q)));
            } else {
                for (j, q) in &m.overrides {
                    if let Some(l) = self.pose.locals.get_mut(*j) {
                        l.rotation = (l.rotation * *q).normalize();
                    }
                }
            }
        }
        // The caller's overrides, on top of the drive and head motion.
        for (j, q) in &self.resolved {
            if let Some(l) = self.pose.locals.get_mut(*j) {
                l.rotation = (l.rotation * *q).normalize();
            }
        }
        // A linear head's (by pack joint name), composed with head motion's on the same joint.
        for (name, q) in &self.overrides {
            match self.named.iter_mut().find(|(n, _)| n == name) {
                Some((_, r)) => *r = (*r * *q).normalize(),
                None => self.named.push((name.clone(), *q)),
            }
        }
        if let Some(s) = &mut self.speech {
            s.apply(t, &mut self.pose);
        }
        ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
        if let Some(f) = &mut self.face {
            f.update(ch, t, &self.world, &mut self.pose)?;
            ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
        }
        if let (Some(r), Some(run)) = (&ch.rig_logic, &mut self.rig_logic) {
            let st = r.evaluate(
                &mut run.state,
                &mut self.pose,
                run.direct.as_deref(),
                &mut run.raw,
            );
            self.totals.rig_clamped += u64::from(st.clamped);
            ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
        }
        if let (Some(v), Some(state)) = (&ch.vrm, &mut self.vrm) {
            let mut gaze = state.gaze.or_else(|| {
                let p = self.face.as_ref()?.look_target()?;
                state.gaze_toward(v, &self.world, p)
            });
            // The stream's eye angles, through the channels head motion found when the drive
            // was set (it exists exactly when the stream has angle channels).
            if gaze.is_none()
                && let (Drive::Stream(s), Some(m)) = (&self.drive, &self.motion)
            {
                let stream = s.stream();
                let aux = state.aux(stream.aux_channels.len());
                stream.sample_aux(td, aux);
                gaze = crate::vrm::VrmState::stream_gaze(&m.channels, aux);
            }
            state.apply(v, &mut self.pose, gaze);
            self.totals.expression_clamped += u64::from(state.last.clamped);
            ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
        }
        // The body: foot placement, then spring bones (seed 003's order), before the palette.
        if body {
            self.body.place(ch, &mut self.pose)?;
            ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
        }
        Ok(())
    }

    /// A DNA character's raw controls `(R,)` of the last frame (empty for other characters).
    pub fn raw_controls(&self) -> &[f32] {
        self.rig_logic.as_ref().map_or(&[], |r| r.raw.as_slice())
    }

    /// Where the character stands (its placement, moved by locomotion), character → world.
    pub fn placement(&self) -> glam::DMat4 {
        self.body.placement
    }

    /// What the cloth and hair simulations did last frame (stretch, contacts, steps, a cut).
    pub fn dynamics_report(&self) -> &crate::dynamics::DynamicsReport {
        &self.dynamics.report
    }

    /// The cloth's vertices `(Vc,3)` of the last frame, character space, metres (the cloth's
    /// lift poses its gaussians on them; [`crate::Runtime::posed`] keeps the skinned places).
    /// Empty without cloth; before the first frame, the cloth at rest on the skin.
    pub fn cloth_vertices(&self) -> &[[f32; 3]] {
        &self.dynamics.cloth_out.0
    }

    /// The hair guides' points `(G·(S+1),3)` of the last frame, character space, metres: guide
    /// `g`'s `S+1` points from index `g·(S+1)`, root first (`S` is the groom's `segments`,
    /// `asset.dynamics().hair`). Empty without hair; before the first frame, the groom at rest.
    pub fn hair_guides(&self) -> &[[f32; 3]] {
        &self.dynamics.hair_out
    }

    /// What the body step (foot placement, spring bones) did on the last frame.
    pub fn body_report(&self) -> &crate::body::BodyReport {
        &self.body.last
    }

    /// The instance's state hash (FNV-1a 64): every node's local transform and morph weights of
    /// the last frame (the face included), the placement, and the spring bones' tails. Equal
    /// inputs give equal hashes on one machine (seed 003).
    pub fn state_hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for l in &self.pose.locals {
            for v in l
                .translation
                .to_array()
                .iter()
                .chain(&l.rotation.to_array())
                .chain(&l.scale.to_array())
            {
                eat(&v.to_bits().to_le_bytes());
            }
        }
        for w in self.pose.weights.iter().flatten() {
            eat(&w.to_bits().to_le_bytes());
        }
        self.dynamics.hash_into(&mut eat);
        self.body.hash_into(h)
    }

    /// The drive's own time at media time `t`, seconds: `t − offset`, wrapped into the drive's span
    /// when it loops ([`InstanceMut::set_drive_timing`]).
    pub fn drive_time(&self, ch: &Character, t: f64) -> f64 {
        let td = t - self.drive_offset;
        if !self.drive_loop {
            return td;
        }
        let (a, b) = self.drive.span(ch);
        let len = b - a;
        if len > 0.0 && td.is_finite() {
            a + (td - a).rem_euclid(len)
        } else {
            td
        }
    }

    /// Set the pose to `pose` (the rest pose before the first frame) and its world matrices.
    pub(crate) fn set_pose(&mut self, ch: &Character, pose: &Pose) {
        self.pose.clone_from(pose);
        ch.world_matrices(&self.pose, &mut self.locals, &mut self.world);
    }

    /// The drive.
    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    /// The speech, if attached.
    pub fn speech(&self) -> Option<&Speech> {
        self.speech.as_ref()
    }

    /// The face driver, if attached.
    pub fn face(&self) -> Option<&FaceDriver> {
        self.face.as_ref()
    }

    /// The current frame's pose (node locals and morph weights).
    pub fn pose(&self) -> &Pose {
        &self.pose
    }

    /// The current frame's node world matrices `(N,)`, metres.
    pub fn world(&self) -> &[Mat4] {
        &self.world
    }

    /// What the rules changed so far.
    pub fn totals(&self) -> &InstanceTotals {
        &self.totals
    }

    /// VRM avatars: the last frame's clamp count and blink / lookAt / mouth override factors
    /// ([`mien_core::vrm::Vrm::evaluate`]); `None` for other characters.
    pub fn vrm_counts(&self) -> Option<mien_core::vrm::ApplyCounts> {
        self.vrm.as_ref().map(|v| v.last)
    }

    /// What head motion found (`None` when the drive is not a stream with angle channels).
    pub fn head_motion(&self) -> Option<&HeadMotionReport> {
        self.motion.as_ref().map(|m| &m.report)
    }

    /// A linear head's ARKit → head_ext driver (its resolved map, dropped terms and clamp);
    /// `None` for a rig or a pack without a table.
    pub fn head_driver(&self) -> Option<&GnmDriver> {
        self.head.as_ref()
    }
}

/// Whether `asset` can be driven (anything but a linear head whose pack has no ARKit table).
///
/// # Errors
/// The pack's refusal, naming the file.
pub fn check_drivable(asset: &Asset) -> Result<()> {
    if let Model::Head { pack, .. } = asset.model()
        && pack.header.arkit.is_none()
    {
        GnmDriver::new(pack, None, None, asset.source())?;
    }
    Ok(())
}

/// Foot placement for [`InstanceMut::set_foot_placement`].
#[derive(Clone, Debug, Default, PartialEq)]
pub enum FootPlacement {
    /// None (the default).
    #[default]
    Off,
    /// Legs and hips found by humanoid role, every setting at its default
    /// ([`mien_core::anim::foot::FootIkDef::humanoid`]).
    Humanoid,
    /// A `mien-foot-ik` definition.
    Def(mien_core::anim::foot::FootIkDef),
}

/// An instance with its character, to attach drivers ([`crate::Runtime::instance_mut`]).
pub struct InstanceMut<'a> {
    pub(crate) asset: &'a Asset,
    pub(crate) inst: &'a mut Instance,
}

impl InstanceMut<'_> {
    /// A driver bound to another character (of another shape) is refused.
    fn same_character(&self, what: &str, shape: &[usize]) -> Result<()> {
        if shape == crate::asset::shape(self.asset.character()).as_slice() {
            Ok(())
        } else {
            Err(Error::invalid(
                what,
                format!(
                    "it was built for another character than {} (node and morph-target counts differ); build it with this runtime's `asset().character()`",
                    self.asset.source()
                ),
            ))
        }
    }

    /// A linear head without an ARKit table cannot be driven.
    fn drivable(&mut self) -> Result<()> {
        if let (Model::Head { pack, targets, .. }, None) = (self.asset.model(), &self.inst.head) {
            self.inst.head = Some(
                GnmDriver::new(pack, None, None, self.asset.source())?
                    .with_targets(targets.clone()),
            );
        }
        Ok(())
    }

    /// Set the drive (rest, clips or a bound stream) built by the caller.
    ///
    /// # Errors
    /// A linear head whose pack has no ARKit table (nothing can drive it).
    pub fn set_drive(&mut self, drive: Drive) -> Result<&mut Self> {
        if !matches!(drive, Drive::Rest) {
            self.drivable()?;
        }
        self.inst.drive = drive;
        self.inst.live_arkit = false;
        self.inst.direct_head_ext = None;
        self.inst.body.restart();
        self.rebuild_motion()?;
        Ok(self)
    }

    /// When the drive (stream or clips) plays on the media clock: its time 0 at media time
    /// `offset_s` seconds (negative starts it part-way in), and whether it loops over its span
    /// (`[0, end]`) instead of holding its last frame. Speech and the face driver keep the media
    /// clock. Default: offset 0, no loop.
    ///
    /// # Errors
    /// A non-finite offset (the timing is unchanged).
    pub fn set_drive_timing(&mut self, offset_s: f64, looping: bool) -> Result<&mut Self> {
        if !offset_s.is_finite() {
            return Err(Error::invalid(
                "drive offset",
                format!("{offset_s} is not a finite number of seconds"),
            ));
        }
        self.inst.drive_offset = offset_s;
        self.inst.drive_loop = looping;
        Ok(self)
    }

    /// Set this instance's controls directly, in `space` (a live source: a socket, an ML model,
    /// your own animation), for every following update until another drive is set:
    ///
    /// - [`ExpressionSpace::Arkit52`] `(52,)` weights in canonical order: they become a one-frame
    ///   stream bound by name (unmatched channels reported as for any stream), replacing the
    ///   drive; speech, the face driver and joint overrides still layer on top.
    /// - [`ExpressionSpace::Vrm`] `(X,)` (VRM avatars): the expression inputs, replacing what the
    ///   drive writes to them every following frame (speech, the face driver and lookAt still
    ///   layer on top; a later stream's ARKit → VRM routes are overwritten);
    /// - [`ExpressionSpace::Rig`] `(R,)` (DNA characters): the raw controls, replacing ARKit's
    ///   mapping onto the face board every following frame (what drivers write to the control
    ///   node's raw-control targets still adds);
    /// - [`ExpressionSpace::Gnm`] `(E+4,)` / [`ExpressionSpace::Gnm68`] `(R+4,)` (linear heads):
    ///   the head_ext posed as given (the reduced view expanded per region), instead of the ARKit
    ///   map's.
    ///
    /// # Errors
    /// A space this character does not take, naming the spaces it does; another length; a
    /// non-finite value (naming its index). A refused call changes nothing.
    pub fn set_controls(&mut self, space: ExpressionSpace, values: &[f32]) -> Result<&mut Self> {
        let n = self.asset.space_len(space)?;
        if values.len() != n {
            return Err(Error::invalid(
                format!("{}: {} vector", self.asset.source(), space.article_name()),
                format!("{} values; the space has {n}", values.len()),
            ));
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                format!("{} value {i}", space.name()),
                format!("{} is not finite", values[i]),
            ));
        }
        match space {
            ExpressionSpace::Arkit52 => {
                if !self.inst.live_arkit {
                    let stream = WeightStream {
                        source: "live ARKit-52 frame".into(),
                        channels: crate::space::arkit_channels(),
                        times: vec![0.0],
                        values: values.to_vec(),
                        aux_channels: Vec::new(),
                        aux_values: Vec::new(),
                        nominal_fps: None,
                    };
                    self.play_stream(stream)?;
                    self.inst.live_arkit = true;
                } else if let Drive::Stream(d) = &mut self.inst.drive {
                    d.set_frame_values(0, values)?;
                }
            }
            ExpressionSpace::Vrm => {
                if let Some(v) = self.inst.vrm.as_mut() {
                    v.direct = Some(values.to_vec());
                }
            }
            ExpressionSpace::Rig => {
                if let Some(r) = self.inst.rig_logic.as_mut() {
                    r.direct = Some(values.to_vec());
                }
            }
            ExpressionSpace::Gnm => self.inst.direct_head_ext = Some(values.to_vec()),
            ExpressionSpace::Gnm68 => {
                let Model::Head { pack, .. } = self.asset.model() else {
                    unreachable!("space_len refused a rig")
                };
                let full = pack.header.head_ext.expand(values)?;
                self.inst.direct_head_ext = Some(full);
            }
        }
        Ok(self)
    }

    /// Play an ARKit-52 weight stream: its channels bound to every mesh's morph targets by name
    /// (the canonicaliser of `mien_core::anim::canon`; unmatched channels are listed in
    /// [`StreamDrive::reports`]).
    ///
    /// # Errors
    /// A stream that binds to nothing (`cannot map the stream onto the character`); an undrivable
    /// linear head.
    pub fn play_stream(&mut self, stream: WeightStream) -> Result<&mut Self> {
        let d = StreamDrive::new(stream, self.asset.character())
            .context("cannot map the stream onto the character")?;
        self.set_drive(Drive::Stream(d))
    }

    /// Name the head, neck and eye joints head motion turns instead of finding them by standard
    /// name ([`mien_core::anim::head::HeadJoints::find`]); applies to the current stream and later ones.
    ///
    /// # Errors
    /// A name the character (or pack) has no joint of, listing its named joints.
    pub fn set_head_joints(&mut self, names: HeadJointNames) -> Result<&mut Self> {
        self.inst.head_names = names;
        self.rebuild_motion()?;
        Ok(self)
    }

    /// Per-joint rotation overrides by name (seed 000 `setJointOverrides`): each a unit quaternion
    /// applied parent-relative on top of the joint's local rotation of the frame (after the drive
    /// and head motion), carried down the chain by the world matrices; rebuilt every frame, so
    /// overrides never accumulate. Replaces the previous list; an empty list removes them. A
    /// linear head takes them on its pack's joints.
    ///
    /// Returns the names the character (or pack) has no joint of: they are skipped (a body rig's
    /// joints the head lacks), and listed here rather than silently.
    ///
    /// # Errors
    /// A rotation that is not a finite quaternion of length 1 ± 1e-3 (naming its index).
    pub fn set_joint_overrides(&mut self, overrides: &[(String, Quat)]) -> Result<Vec<String>> {
        for (i, (name, q)) in overrides.iter().enumerate() {
            if !(q.is_finite() && (q.length() - 1.0).abs() <= 1e-3) {
                return Err(Error::invalid(
                    format!("joint override {i} (`{name}`)"),
                    format!("{q:?} is not a unit quaternion"),
                ));
            }
        }
        let (names, on_pack): (Vec<Option<String>>, bool) = match self.asset.model() {
            Model::Head { pack, .. } => (
                pack.header
                    .joints
                    .iter()
                    .map(|j| Some(j.name.clone()))
                    .collect(),
                true,
            ),
            Model::Rig(_) => (
                self.asset
                    .character()
                    .nodes
                    .iter()
                    .map(|n| n.name.clone())
                    .collect(),
                false,
            ),
        };
        let mut unknown = Vec::new();
        let mut resolved = Vec::new();
        let mut kept = Vec::new();
        for (name, q) in overrides {
            match names
                .iter()
                .position(|n| n.as_deref() == Some(name.as_str()))
            {
                Some(j) => {
                    resolved.push((j, q.normalize()));
                    kept.push((name.clone(), q.normalize()));
                }
                None => unknown.push(name.clone()),
            }
        }
        self.inst.overrides = if on_pack { kept } else { Vec::new() };
        self.inst.resolved = if on_pack { Vec::new() } else { resolved };
        Ok(unknown)
    }

    /// Linear heads: the body's joint world matrices `(J,)` in the pack's joint order, metres (seed
    /// 000 `setJointWorlds`: the body solves the neck and head; the pack skins to them). `None`
    /// returns to the pack's rest, on which head motion and joint overrides build; given worlds
    /// are used as they are.
    ///
    /// # Errors
    /// A rig (it has no pack joints); a count other than J; a non-finite matrix (naming its index).
    pub fn set_joint_worlds(&mut self, worlds: Option<Vec<Mat4>>) -> Result<&mut Self> {
        let Model::Head { pack, .. } = self.asset.model() else {
            return Err(Error::invalid(
                "joint worlds",
                format!(
                    "{} is a rig: pose its joints through the pose or joint overrides",
                    self.asset.source()
                ),
            ));
        };
        if let Some(w) = &worlds {
            let j = pack.header.joints.len();
            if w.len() != j {
                return Err(Error::invalid(
                    "joint worlds",
                    format!("{} given for the pack's {j} joints", w.len()),
                ));
            }
            if let Some(i) = w.iter().position(|m| !m.is_finite()) {
                return Err(Error::invalid(format!("joint worlds[{i}]"), "not finite"));
            }
        }
        self.inst.joint_worlds = worlds;
        Ok(self)
    }

    /// Turn head motion on (the default) or off: whether a stream's head and eye angles turn the
    /// head, neck and eye joints.
    pub fn set_head_motion(&mut self, on: bool) -> &mut Self {
        self.inst.head_motion_on = on;
        if let Some(m) = &mut self.inst.motion {
            m.report.applied = on && !m.joints.is_empty();
        }
        self
    }

    fn rebuild_motion(&mut self) -> Result<()> {
        self.inst.motion = match &self.inst.drive {
            Drive::Stream(s) => HeadMotion::new(
                self.asset,
                s.stream(),
                &self.inst.head_names,
                self.inst.head_motion_on,
            )?,
            _ => None,
        };
        Ok(())
    }

    /// Play a Live Link Face CSV recording ([`read_livelink_csv`]: header-driven, timecode rate
    /// inferred).
    ///
    /// # Errors
    /// Unreadable or invalid files (`cannot read ARKit stream PATH`); as
    /// [`InstanceMut::play_stream`].
    pub fn play_livelink_csv(&mut self, path: impl AsRef<Path>) -> Result<&mut Self> {
        let path = path.as_ref();
        let stream = read_livelink_csv(path)
            .with_context(|| format!("cannot read ARKit stream {}", path.display()))?;
        self.play_stream(stream)
    }

    /// Play an ARKit-52 stream file, by extension ([`mien_core::io::read_stream`]): a Live Link
    /// Face `.csv` or an Audio2Face blendshape export `.json`. Returns the notes on what the file
    /// holds but is not applied (Audio2Face's joint tracks).
    ///
    /// # Errors
    /// Unreadable, invalid or unknown files (`cannot read ARKit stream PATH`); as
    /// [`InstanceMut::play_stream`].
    pub fn play_stream_file(&mut self, path: impl AsRef<Path>) -> Result<Vec<String>> {
        let path = path.as_ref();
        let (stream, notes) = mien_core::io::read_stream(path)
            .with_context(|| format!("cannot read ARKit stream {}", path.display()))?;
        self.play_stream(stream)?;
        Ok(notes)
    }

    /// Play some of the character's clips together, in this order (a later clip overrides an
    /// earlier one where both animate the same property).
    ///
    /// # Errors
    /// An unknown clip id; an undrivable linear head.
    pub fn play_clips(&mut self, clips: &[ClipId]) -> Result<&mut Self> {
        let n = self.asset.character().clips.len();
        if let Some(c) = clips.iter().find(|c| c.index() >= n) {
            return Err(Error::invalid(
                format!("clip {}", c.index()),
                format!("{} has {n} clip(s)", self.asset.source()),
            ));
        }
        self.set_drive(Drive::Clips(clips.to_vec()))
    }

    /// Play a clip by name or index, with the other clips of its take (exporters split one take
    /// into a clip per node: `node|take|layer`).
    ///
    /// # Errors
    /// No such clip (the character's clips are listed); an undrivable linear head.
    pub fn play_clip(&mut self, name_or_index: &str) -> Result<&mut Self> {
        let ch = self.asset.character();
        let id = ch.find_clip(name_or_index)?;
        let take = ch.take_of(id);
        self.set_drive(Drive::Clips(take))
    }

    /// Foot placement on this instance ([`mien_core::anim::foot`]): off (the default), found by
    /// humanoid role, or from a definition. It runs after the drive, speech and face, before the
    /// spring bones, on the ground [`InstanceMut::set_ground`] gives.
    ///
    /// # Errors
    /// A linear head; a definition the character does not fit, or a character whose hips and legs
    /// cannot be found by role (every problem named).
    pub fn set_foot_placement(&mut self, foot: FootPlacement) -> Result<&mut Self> {
        if !matches!(foot, FootPlacement::Off) && matches!(self.asset.model(), Model::Head { .. }) {
            return Err(Error::invalid(
                self.asset.source(),
                "a linear head has no legs to place",
            ));
        }
        let ch = self.asset.character();
        self.inst.body.foot = match foot {
            FootPlacement::Off => None,
            FootPlacement::Humanoid => Some(crate::body::foot_placer(ch, None)?),
            FootPlacement::Def(d) => Some(crate::body::foot_placer(ch, Some(&d))?),
        };
        self.inst.body.restart();
        Ok(self)
    }

    /// Simulate the character's own spring bones (VRM `VRMC_springBone` or 0.x
    /// `secondaryAnimation`, [`mien_core::anim::spring`]) on this instance, or stop.
    ///
    /// # Errors
    /// Turning them on for a character that has none.
    pub fn set_spring_bones(&mut self, on: bool) -> Result<&mut Self> {
        self.inst.body.springs = if on {
            Some(crate::body::springs(
                self.asset.character(),
                mien_core::anim::spring::SpringOptions::default(),
            )?)
        } else {
            None
        };
        self.inst.body.restart();
        Ok(self)
    }

    /// Simulate `springs` (a character file's chains merged with the model's spring bones:
    /// [`crate::character::LoadedCharacter::springs`]) on this instance, or stop with `None`.
    ///
    /// # Errors
    /// Springs whose nodes are not this character's.
    pub fn set_springs(
        &mut self,
        springs: Option<&mien_core::anim::spring::SpringBones>,
    ) -> Result<&mut Self> {
        self.inst.body.springs = match springs {
            None => None,
            Some(sb) => Some(mien_core::anim::spring::SpringSim::new(
                sb,
                self.asset.character(),
                mien_core::anim::spring::SpringOptions::default(),
            )?),
        };
        self.inst.body.restart();
        Ok(self)
    }

    /// The ground foot placement stands on (default: flat at y = 0).
    ///
    /// # Errors
    /// A ground whose numbers are out of range ([`mien_core::anim::ground::Ground::check`]).
    pub fn set_ground(&mut self, ground: mien_core::anim::ground::Ground) -> Result<&mut Self> {
        ground.check()?;
        self.inst.body.ground = ground;
        Ok(self)
    }

    /// Where the character stands in the world (its scene's root to world; default the identity),
    /// for the ground and the spring bones. A move farther than the spring bones' teleport
    /// distance in one frame resets them.
    ///
    /// # Errors
    /// A matrix that is not finite or not invertible.
    pub fn set_placement(&mut self, to_world: Mat4) -> Result<&mut Self> {
        let m = to_world.as_dmat4();
        if !(m.is_finite() && m.determinant().abs() > 1e-12) {
            return Err(Error::invalid(
                "placement",
                "not a finite invertible matrix",
            ));
        }
        self.inst.body.placement = m;
        Ok(self)
    }

    /// Locomotion (a character file's idle and walk, [`crate::character`]): the two clips blended
    /// by [`InstanceMut::set_speed`], replacing the drive's pose on the nodes they animate; the
    /// character walks along its forward (+Z), carried by its placement. `None` stops it.
    ///
    /// # Errors
    /// Clips the character lacks; a walk speed that is not in (0, 100] m/s.
    pub fn set_locomotion(
        &mut self,
        locomotion: Option<crate::character::Locomotion>,
    ) -> Result<&mut Self> {
        let ch = self.asset.character();
        self.inst.body.locomotion = match locomotion {
            None => None,
            Some(l) => {
                let n = ch.clips.len();
                if l.idle.index() >= n || l.walk.index() >= n {
                    return Err(Error::invalid(
                        "locomotion",
                        format!(
                            "clips {} and {}: {} has {n}",
                            l.idle.index(),
                            l.walk.index(),
                            self.asset.source()
                        ),
                    ));
                }
                if !(l.walk_speed.is_finite() && l.walk_speed > 0.0 && l.walk_speed <= 100.0) {
                    return Err(Error::invalid(
                        "locomotion walk_speed",
                        format!("{} is not a speed in (0, 100] m/s", l.walk_speed),
                    ));
                }
                Some(crate::body::Loco::new(l, ch))
            }
        };
        Ok(self)
    }

    /// The walking speed, m/s (0 to 100), along the way the character faces: with locomotion
    /// ([`InstanceMut::set_locomotion`]) 0 idles and the walk speed walks at 1×; without it the
    /// drive plays as it is and the placement moves at this speed.
    ///
    /// # Errors
    /// A speed out of range.
    pub fn set_speed(&mut self, speed: f64) -> Result<&mut Self> {
        if !(speed.is_finite() && (0.0..=100.0).contains(&speed)) {
            return Err(Error::invalid(
                "speed",
                format!("{speed} is not in 0–100 m/s"),
            ));
        }
        match &mut self.inst.body.locomotion {
            Some(l) => l.speed = speed,
            // Without locomotion the drive plays as it is and the placement moves.
            None => self.inst.body.velocity = speed,
        }
        Ok(self)
    }

    /// Wind from now on, world space: on the spring bones an acceleration in m/s² (each joint
    /// takes its wind response's share, as gravity; [`mien_core::anim::spring::SpringOptions::wind`]),
    /// on the hair an acceleration across the strands in m/s²
    /// ([`mien_core::hair::HairSimOptions::wind`]), on the cloth the air's velocity in m/s that
    /// its drag pulls it toward ([`mien_core::cloth::ClothMaterial::wind_drag`]: with drag 1/s a
    /// still cloth first feels the same m/s²).
    ///
    /// # Errors
    /// Wind that is not finite or longer than [`mien_core::hair::MAX_ACCEL`] (2,000; checked
    /// before any simulation takes it, so a refused wind changes nothing); an instance that
    /// simulates none of spring bones ([`InstanceMut::set_springs`]), cloth or hair ([`crate::Asset::with_cloth`],
    /// [`crate::Asset::with_hair`]).
    pub fn set_wind(&mut self, wind: glam::DVec3) -> Result<&mut Self> {
        // Checked once for every consumer before any takes it: a refused wind changes nothing.
        let max = mien_core::hair::MAX_ACCEL;
        if !(wind.is_finite() && wind.length() <= max) {
            return Err(Error::invalid(
                "wind",
                format!(
                    "[{}, {}, {}] is not finite or longer than {max} (m/s² for spring bones and hair, m/s of air for cloth)",
                    crate::text::num(wind.x),
                    crate::text::num(wind.y),
                    crate::text::num(wind.z)
                ),
            ));
        }
        if self.inst.body.springs.is_none() && !self.inst.dynamics.active() {
            return Err(Error::invalid(
                "wind",
                "the instance simulates no spring bones (set_spring_bones / set_springs), cloth or hair",
            ));
        }
        if let Some(s) = &mut self.inst.body.springs {
            s.set_wind(wind)?;
        }
        self.inst.dynamics.set_wind(wind)?;
        Ok(self)
    }

    /// Pose the rest pose (the default).
    pub fn rest(&mut self) -> &mut Self {
        self.inst.drive = Drive::Rest;
        self.inst.motion = None;
        self.inst.live_arkit = false;
        self.inst.direct_head_ext = None;
        self
    }

    /// Attach speech ([`Speech::from_file`]) over the drive, or remove it with `None`.
    ///
    /// # Errors
    /// Speech built for another character; an undrivable linear head.
    pub fn set_speech(&mut self, speech: Option<Speech>) -> Result<&mut Self> {
        if let Some(s) = &speech {
            self.same_character("speech", &s.shape)?;
            self.drivable()?;
        }
        self.inst.speech = speech;
        Ok(self)
    }

    /// The speech, to pause, resume, seek or reset it.
    pub fn speech(&mut self) -> Option<&mut Speech> {
        self.inst.speech.as_mut()
    }

    /// Attach a face driver ([`FaceDriver::new`]), or remove it with `None`.
    ///
    /// # Errors
    /// A face driver built for another character; an undrivable linear head.
    pub fn set_face(&mut self, face: Option<FaceDriver>) -> Result<&mut Self> {
        if let Some(f) = &face {
            self.same_character("face driver", &f.shape)?;
            self.drivable()?;
        }
        self.inst.face = face;
        Ok(self)
    }

    /// The face driver, to send signals, expressions, blinks and look-at targets.
    pub fn face(&mut self) -> Option<&mut FaceDriver> {
        self.inst.face.as_mut()
    }

    /// The instance, read-only.
    pub fn get(&self) -> &Instance {
        self.inst
    }
}
