//! [`Runtime`]: N instances of one character on one device, driven every frame on the media clock,
//! posed and lifted into splats in one submission per [`Runtime::update`].

use std::sync::Arc;

use glam::Mat4;
use mien_core::gnm::forward::joint_world;
use mien_core::rig::{ControlStats, Pose, PosedVertices, RigControls};
use mien_core::sink::{SlotRange, SplatBuffers};

use crate::asset::{Asset, Model};
use crate::device::Device;
use crate::engine::{self, Engine, SinkRef, Times, no_instance};
use crate::error::{Error, Result};
use crate::instance::{Instance, InstanceMut};
pub use crate::lift::{LiftInfo, LiftKind, LiftOptions, Shading};
use crate::posed::{PosedCheck, rest_geometry};
use mien_cpu::Precision;

/// Default gaussian σ as a fraction of the character's median rest-pose triangle edge: large
/// enough that neighbouring splats overlap on an evenly meshed surface, small enough to keep
/// features.
pub const DEFAULT_SIGMA_EDGES: f32 = 0.6;

/// The σ base when the rest pose has no triangle edge of non-zero length, metres.
pub const NO_EDGE_M: f32 = 0.01;

/// The gaussian σ range, metres: below 1 nm σ² underflows the covariance's f32, above 1 km the
/// covariance of any real character overflows it.
pub const SIGMA_RANGE_M: (f32, f32) = (1e-9, 1e3);

/// The most instances one runtime holds: one GPU dispatch dimension (65,535). More characters
/// take more runtimes (they may share one [`Device`]).
pub const MAX_INSTANCES: u32 = 65_535;

/// From this many instances on, [`Runtime::update`] evaluates the instances' drivers in parallel
/// (rayon); below it waking the pool costs more than the work.
pub const PARALLEL_MIN: usize = 8;

/// How a runtime is built.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeOptions {
    /// Instances N of the character, 1 to [`MAX_INSTANCES`], each with its own drivers, posed in
    /// one submission; N × V splat slots must fit a 32-bit index.
    pub instances: u32,
    /// The lift into splats; `None`: pose only (read [`Runtime::posed`]).
    pub lift: Option<LiftOptions>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions::default()),
        }
    }
}

/// What one instance's rules did in the last [`Runtime::update`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceFrame {
    /// The rig's weight rules (clamped, non-finite, dropped by the active limit); zero for a
    /// linear head.
    pub controls: ControlStats,
    /// The most non-zero weights one mesh had, before the limit.
    pub peak_nonzero: u32,
    /// Linear heads: coefficients the ARKit map's clamp changed.
    pub head_clamped: u64,
    /// The face driver's avatar state, when one is attached.
    pub state: Option<&'static str>,
    /// The face driver's state hash of the pose (seed 003 determinism hash).
    pub state_hash: Option<u64>,
}

/// The per-frame report of [`Runtime::update`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameReport {
    /// The frame's index, from 0 at the first update.
    pub frame: u64,
    /// Its media time, seconds.
    pub time_s: f64,
    /// Per instance `(N,)`.
    pub instances: Vec<InstanceFrame>,
}

/// Bytes a runtime holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The rig or pack on the backend, shared by the instances, plus their per-instance state.
    pub rig_bytes: u64,
    /// The splat sink (four buffers × slots).
    pub sink_bytes: u64,
    /// Slots in the sink (N × V; 0 without a lift).
    pub sink_slots: u64,
    /// Vertices V per instance.
    pub vertices: u32,
    /// Instances N.
    pub instances: u32,
}

/// N instances of one character on one device.
///
/// ```no_run
/// use mien_runtime::{Asset, Backend, Device, Runtime, RuntimeOptions};
/// # fn main() -> mien_runtime::Result<()> {
/// let asset = Asset::load("facecap.glb")?;
/// let (device, _why) = Device::open(Backend::Auto)?;
/// let mut rt = Runtime::new(asset.into(), &device, &RuntimeOptions::default())?;
/// rt.instance_mut(0)?.play_livelink_csv("take.csv")?;
/// for k in 0..60 {
///     rt.update(k as f64 / 30.0)?;
/// }
/// let splats = rt.splats(0)?; // instance 0's gaussians: centres (G,4) metres, covariances, colours
/// mien_core::io::splat_file::write_splats("frame.spz".as_ref(), &splats, &[splats.all()])?;
/// # let _ = splats; Ok(()) }
/// ```
pub struct Runtime {
    pub(crate) asset: Arc<Asset>,
    pub(crate) device: Device,
    pub(crate) engine: Box<dyn Engine>,
    pub(crate) instances: Vec<Instance>,
    rest: Pose,
    check: PosedCheck,
    /// Rig inputs `(N,)`.
    controls: Vec<RigControls>,
    stats: Vec<ControlStats>,
    /// Linear-head inputs `(N,)`.
    pub(crate) head_ext: Vec<Vec<f32>>,
    pub(crate) joints: Vec<Vec<Mat4>>,
    /// Joint worlds with the pose anchors applied (bundles with anchors on).
    pub(crate) anchored: Vec<Vec<Mat4>>,
    rest_positions: Vec<[f32; 3]>,
    /// Override names a pack did not carry (never: they come from the pack).
    skipped: Vec<String>,
    bounds: [[f32; 3]; 2],
    pub(crate) lift: Option<LiftInfo>,
    report: FrameReport,
    pub(crate) frame: u64,
    warm: Times,
    /// Wall time of the cloth and hair simulations over the updates so far.
    dynamics_time: std::time::Duration,
    /// A bundle's decoded appearance ([`crate::appearance`]), when its branches run decoders.
    pub(crate) appearance: Option<crate::appearance::Appearance>,
    /// The camera view-dependent decoders see ([`Runtime::set_camera`]).
    pub(crate) camera: Option<crate::appearance::Camera>,
    /// The instances' cloth and hair outputs are set from outside (a scenario's capture renderer
    /// draws the run's simulation) instead of simulated per frame.
    pub(crate) external_dynamics: bool,
}

impl Runtime {
    /// Upload `asset` once for `options.instances` instances on `device`, pose them at rest, check
    /// the rest geometry, and attach the lift (σ derived from the rest pose unless given).
    ///
    /// # Errors
    /// 0 or more than [`MAX_INSTANCES`] instances, or N × V slots beyond a 32-bit index (refused
    /// before anything is allocated); upload failures (a model over the device's limits: binding
    /// sizes, dispatch dimensions, out of memory); rest geometry that is not finite or beyond ±10⁶ m (naming the
    /// file and vertex); σ not finite and > 0.
    pub fn new(asset: Arc<Asset>, device: &Device, options: &RuntimeOptions) -> Result<Self> {
        let n = options.instances;
        if !(1..=MAX_INSTANCES).contains(&n) {
            return Err(Error::invalid(
                format!("instances {n}"),
                format!(
                    "a runtime holds 1 to {MAX_INSTANCES} instances; use several runtimes on one device for more"
                ),
            ));
        }
        // The lift's options are checked before anything is built (a surface target of 0 is
        // refused here, with its range, not after the rest pose).
        match options.lift.as_ref().map(|l| &l.kind) {
            Some(LiftKind::Surface(o)) => o.validate().map_err(Error::from)?,
            Some(LiftKind::Texel(o)) => o.validate().map_err(Error::from)?,
            _ => {}
        }
        // A capture whose far gaussians were left rigid to joints poses on the rig with its joint
        // anchors appended (checked against the character's own topology first).
        let asset = match options.lift.as_ref().map(|l| &l.kind) {
            Some(LiftKind::Capture(c)) if c.anchors > 0 => {
                c.check_topology(asset.source(), asset.vertex_count(), asset.triangles())?;
                let palette = asset.rig().map_or(0, |r| r.palette.len());
                if palette != c.anchors as usize {
                    return Err(Error::invalid(
                        asset.source(),
                        format!(
                            "the capture was bound with {} joint anchors; this character's rig has {palette} palette entries",
                            c.anchors
                        ),
                    ));
                }
                Arc::new(asset.with_joint_anchors()?)
            }
            _ => asset,
        };
        let ch = asset.character();
        if asset.vertex_count() == 0 {
            return Err(Error::invalid(
                asset.source(),
                "the displayed scene has no mesh geometry to pose",
            ));
        }
        engine::sink_slots(n, asset.vertex_count())?;
        crate::memory::check_runtime(&asset, device, n, options.lift.as_ref())?;
        let engine = engine::build(device, asset.model(), n)?;
        let instances = (0..n)
            .map(|_| Instance::new(&asset))
            .collect::<Result<Vec<_>>>()?;
        let rest = ch.rest_pose();
        let mut rt = Runtime {
            check: PosedCheck::new(ch, &[]),
            asset: Arc::clone(&asset),
            device: device.clone(),
            engine,
            instances,
            rest,
            controls: vec![RigControls::default(); n as usize],
            stats: vec![ControlStats::default(); n as usize],
            head_ext: Vec::new(),
            joints: Vec::new(),
            anchored: Vec::new(),
            rest_positions: Vec::new(),
            skipped: Vec::new(),
            bounds: [[0.0; 3]; 2],
            lift: None,
            report: FrameReport::default(),
            frame: 0,
            warm: Times::default(),
            dynamics_time: std::time::Duration::ZERO,
            appearance: None,
            camera: None,
            external_dynamics: false,
        };
        if let Model::Head { pack, .. } = asset.model() {
            let (mut j, mut skipped) = (Vec::new(), Vec::new());
            joint_world(pack, &[], &mut j, &mut skipped);
            rt.joints = vec![j; n as usize];
            rt.head_ext = vec![vec![0.0; pack.header.head_ext.dim()]; n as usize];
        }
        // Rest pose: every instance, counted nowhere.
        for i in 0..n as usize {
            let rest = rt.rest.clone();
            rt.instances[i].set_pose(ch, &rest);
        }
        rt.check = PosedCheck::new(ch, &rt.instances[0].world);
        rt.stage_inputs()?;
        for t in &mut rt.instances {
            t.totals = Default::default();
        }
        let rest_pos = rt.engine.pose_and_read(0)?.positions;
        rest_geometry(asset.source(), &rest_pos)?;
        rt.bounds = bounds(&rest_pos);
        if let Some(l) = &options.lift {
            rt.lift = Some(crate::lift::attach(
                &asset,
                rt.engine.as_mut(),
                &rest_pos,
                rt.bounds,
                l,
                n,
                (device.is_software() || matches!(device, Device::Cpu)).then(|| {
                    (
                        device.name(),
                        crate::memory::rig_host_bytes(&asset, device, n),
                    )
                }),
            )?);
        }
        crate::appearance::attach(&mut rt, options, &rest_pos, n)?;
        rt.rest_positions = rest_pos;
        rt.report.instances = vec![InstanceFrame::default(); n as usize];
        // The cloth and hair at rest until the first frame (what render_rest draws).
        let d = rt.asset.dynamics().clone();
        for inst in &mut rt.instances {
            inst.dynamics.rest_outputs(&d, &inst.world);
        }
        rt.stage_dynamics()?;
        Ok(rt)
    }

    /// Map every instance's pose to backend inputs and set them (one batch call), counting what
    /// the rules changed into the totals and the frame report.
    fn stage_inputs(&mut self) -> Result<()> {
        let frame = self.frame;
        self.report
            .instances
            .resize(self.instances.len(), InstanceFrame::default());
        match self.asset.model() {
            Model::Rig(rig) => {
                let anchors = self.asset.pose_anchors().cloned();
                let controls =
                    |((inst, c), rep): ((&Instance, &mut RigControls), &mut InstanceFrame)| {
                        match &anchors {
                            // The whole rig moved by the blended anchor of its raw controls.
                            Some(a) => {
                                let m = a.blend(inst.raw_controls()).as_mat4();
                                let world: Vec<Mat4> = inst.world.iter().map(|w| m * *w).collect();
                                rig.controls_from_pose(&inst.pose, &world, c);
                            }
                            None => rig.controls_from_pose(&inst.pose, &inst.world, c),
                        }
                        rep.peak_nonzero = rig
                            .instances
                            .iter()
                            .map(|m| {
                                let w = &c.weights[m.weight_base as usize
                                    ..(m.weight_base + m.target_count) as usize];
                                w.iter().filter(|x| **x != 0.0).count() as u32
                            })
                            .max()
                            .unwrap_or(0);
                    };
                if self.instances.len() >= PARALLEL_MIN {
                    use rayon::prelude::*;
                    self.instances
                        .par_iter()
                        .zip(self.controls.par_iter_mut())
                        .zip(self.report.instances.par_iter_mut())
                        .for_each(controls);
                } else {
                    self.instances
                        .iter()
                        .zip(self.controls.iter_mut())
                        .zip(self.report.instances.iter_mut())
                        .for_each(controls);
                }
                self.engine.set_rig(&self.controls, &mut self.stats)?;
                for ((inst, s), rep) in self
                    .instances
                    .iter_mut()
                    .zip(&self.stats)
                    .zip(self.report.instances.iter_mut())
                {
                    let t = &mut inst.totals;
                    t.peak_nonzero = t.peak_nonzero.max(rep.peak_nonzero);
                    t.clamped += u64::from(s.clamped);
                    t.non_finite += u64::from(s.non_finite);
                    t.dropped += s.dropped.len() as u64;
                    for &pair in &s.dropped {
                        t.dropped_targets
                            .entry(pair)
                            .and_modify(|e| e.1 += 1)
                            .or_insert((frame, 1));
                    }
                    rep.controls.clone_from(s);
                }
            }
            Model::Head { pack, .. } => {
                for (((inst, h), joints), rep) in self
                    .instances
                    .iter_mut()
                    .zip(self.head_ext.iter_mut())
                    .zip(self.joints.iter_mut())
                    .zip(self.report.instances.iter_mut())
                {
                    if let Some(w) = &inst.joint_worlds {
                        // The body's joint worlds, as given.
                        joints.clone_from(w);
                        inst.joints_at_rest = false;
                    } else if !inst.named.is_empty() || !inst.joints_at_rest {
                        // The pack's rest with head motion and overrides, rebuilt from rest; at
                        // rest they stay as they are (computed once in `new`).
                        joint_world(pack, &inst.named, joints, &mut self.skipped);
                        inst.joints_at_rest = inst.named.is_empty();
                    }
                    let before = inst.totals.head_clamped;
                    match &mut inst.head {
                        _ if inst.direct_head_ext.is_some() => {
                            // Set directly in the gnm / gnm68 space (lengths checked when set).
                            if let Some(x) = &inst.direct_head_ext {
                                h.copy_from_slice(x);
                            }
                        }
                        Some(d) => {
                            let x = d.head_ext_counting(&inst.pose, &mut inst.totals.head_clamped);
                            h.copy_from_slice(x);
                        }
                        None => h.fill(0.0),
                    }
                    rep.head_clamped = inst.totals.head_clamped - before;
                }
                match self.asset.pose_anchors() {
                    // Every joint world moved by the blended anchor of the head_ext (a copy: the
                    // joints at rest are kept from frame to frame).
                    Some(a) => {
                        self.anchored.resize(self.joints.len(), Vec::new());
                        for ((out, j), h) in self
                            .anchored
                            .iter_mut()
                            .zip(&self.joints)
                            .zip(&self.head_ext)
                        {
                            let m = a.blend(h).as_mat4();
                            out.clear();
                            out.extend(j.iter().map(|w| m * *w));
                        }
                        self.engine.set_head(&self.head_ext, &self.anchored)?;
                    }
                    None => self.engine.set_head(&self.head_ext, &self.joints)?,
                }
            }
        }
        for (inst, rep) in self.instances.iter().zip(self.report.instances.iter_mut()) {
            rep.state = inst.face.as_ref().map(|f| f.animator.state().name());
            rep.state_hash = inst.face.as_ref().map(|f| f.last_hash);
        }
        Ok(())
    }

    /// Pose every instance at media time `t` seconds — drive, speech and face (see
    /// [`crate::instance`]), the backend's rig or linear-head passes, and the lift — in one
    /// submission, and return what the rules did. Frames are counted from 0.
    ///
    /// On a GPU the call returns once the frame is submitted, without waiting for it: up to two
    /// frames run while the next is recorded (frames in flight). Read-backs
    /// ([`Runtime::splats`], [`Runtime::posed`]) wait for what they read; work of your own on the
    /// same queue is ordered after mien's submissions; [`Runtime::finish`] waits for all of them.
    ///
    /// `t` is a media clock, not a frame counter: any finite time is taken, in any order — going
    /// back replays (a seek), a negative time is before every driver's start (clips and streams
    /// hold their first key, speech is silent). Each driver maps it through its own timing
    /// ([`InstanceMut::set_drive_timing`], the speech transport).
    ///
    /// # Errors
    /// A non-finite `t`; a driver that fails (an unknown scripted expression); a frame that breaks
    /// the rest pose's rule ([`Error::Posed`], checked on the node world matrices every frame and
    /// on the posed vertices where the backend holds them on the CPU; a GPU backend's are checked
    /// when read back by [`Runtime::splats`]); backend failures (device loss).
    pub fn update(&mut self, t: f64) -> Result<&FrameReport> {
        if !t.is_finite() {
            return Err(Error::invalid(
                "media time",
                format!("{} is not a finite number of seconds", crate::text::num(t)),
            ));
        }
        self.evaluate(t)?;
        self.frame_posed(t)
    }

    /// Evaluate every instance's drivers and controls at media time `t` (seconds) without posing
    /// vertices or lifting: what a bake samples ([`crate::bake::bake`] keys the pose, the
    /// weights after the per-frame rules and, for a linear head, its head_ext). The frame is
    /// counted and the world matrices are checked as in [`Runtime::update`]; the dynamics are not
    /// stepped, and [`Runtime::posed`] / [`Runtime::splats`] still give the last frame
    /// [`Runtime::update`] posed. The report's per-instance controls are this frame's.
    ///
    /// # Errors
    /// As [`Runtime::update`], less the posed-vertex checks.
    pub fn sample(&mut self, t: f64) -> Result<&FrameReport> {
        if !t.is_finite() {
            return Err(Error::invalid(
                "media time",
                format!("{} is not a finite number of seconds", crate::text::num(t)),
            ));
        }
        self.evaluate(t)?;
        let asset = Arc::clone(&self.asset);
        let ch = asset.character();
        for inst in &self.instances {
            self.check.matrices(ch, &inst.world, self.frame, t)?;
        }
        self.stage_inputs()?;
        self.report.frame = self.frame;
        self.report.time_s = t;
        self.frame += 1;
        Ok(&self.report)
    }

    /// Every instance's drivers at `t` (in parallel from [`PARALLEL_MIN`] instances).
    fn evaluate(&mut self, t: f64) -> Result<()> {
        let ch = self.asset.character();
        let rest = &self.rest;
        if self.instances.len() >= PARALLEL_MIN {
            // Each instance's drivers on its own (rayon); the first failure in instance order.
            use rayon::prelude::*;
            let results: Vec<Result<()>> = self
                .instances
                .par_iter_mut()
                .map(|inst| inst.evaluate(ch, rest, t))
                .collect();
            results.into_iter().collect::<Result<()>>()?;
        } else {
            for inst in &mut self.instances {
                inst.evaluate(ch, rest, t)?;
            }
        }
        Ok(())
    }

    /// The cloth and hair of every instance after the palette ([`crate::dynamics`]), staged
    /// into the engine.
    fn step_dynamics(&mut self, t: f64) -> Result<()> {
        let d = self.asset.dynamics();
        if d.is_empty() {
            return Ok(());
        }
        if self.external_dynamics {
            return self.stage_dynamics();
        }
        let Some(rig) = self.asset.rig() else {
            return Ok(());
        };
        let step = |(inst, c): (&mut Instance, &RigControls)| {
            let placement = inst.body.placement;
            inst.dynamics.step(d, rig, c, &inst.world, placement, t)
        };
        if self.instances.len() >= PARALLEL_MIN {
            use rayon::prelude::*;
            let r: Vec<Result<()>> = self
                .instances
                .par_iter_mut()
                .zip(self.controls.par_iter())
                .map(step)
                .collect();
            r.into_iter().collect::<Result<()>>()?;
        } else {
            for x in self.instances.iter_mut().zip(self.controls.iter()) {
                step(x)?;
            }
        }
        self.stage_dynamics()
    }

    /// Instance `i`'s cloth and hair outputs taken from `d` (a scenario's run) rather than
    /// simulated here (with [`Runtime::external_dynamics`]).
    pub(crate) fn set_dynamics_outputs(&mut self, i: usize, d: &crate::dynamics::DynState) {
        if let Some(inst) = self.instances.get_mut(i) {
            inst.dynamics.cloth_out.clone_from(&d.cloth_out);
            inst.dynamics.hair_out.clone_from(&d.hair_out);
        }
    }

    /// Hand every instance's cloth and hair outputs to the engine.
    fn stage_dynamics(&mut self) -> Result<()> {
        for (i, inst) in self.instances.iter().enumerate() {
            let (p, n) = &inst.dynamics.cloth_out;
            if !p.is_empty() {
                self.engine.set_cloth(i, p, n)?;
            }
            if !inst.dynamics.hair_out.is_empty() {
                self.engine.set_hair(i, &inst.dynamics.hair_out)?;
            }
        }
        Ok(())
    }

    /// Check, stage, pose and lift the instances' current poses as frame `self.frame` at `t`.
    fn frame_posed(&mut self, t: f64) -> Result<&FrameReport> {
        if !t.is_finite() {
            return Err(Error::invalid(
                "media time",
                format!("{} is not a finite number of seconds", crate::text::num(t)),
            ));
        }
        let asset = Arc::clone(&self.asset);
        let ch = asset.character();
        for inst in &self.instances {
            self.check.matrices(ch, &inst.world, self.frame, t)?;
        }
        self.stage_inputs()?;
        self.decode_appearance(t)?;
        let t_dyn = std::time::Instant::now();
        self.step_dynamics(t)?;
        self.dynamics_time += t_dyn.elapsed();
        self.engine.frame()?;
        for (i, inst) in self.instances.iter().enumerate() {
            if let Some(p) = self.engine.posed_cpu(i) {
                self.check.positions(ch, &inst.world, p, self.frame, t)?;
            }
        }
        self.report.frame = self.frame;
        self.report.time_s = t;
        self.frame += 1;
        Ok(&self.report)
    }

    /// Pose every instance from poses the caller built (its own animation system, a scenario's
    /// steps): `poses` `(N,)` in the character's node order (see
    /// [`mien_core::rig::Character::rest_pose`] for the shape), posed and lifted as
    /// [`Runtime::update`] does; the instances' drivers are not evaluated.
    ///
    /// # Errors
    /// `poses` not `(N,)`, a pose of another shape than the character's, a rotation that is not a
    /// unit quaternion (within 1e-3); as [`Runtime::update`].
    pub fn update_with_poses(&mut self, t: f64, poses: &[Pose]) -> Result<&FrameReport> {
        if poses.len() != self.instances.len() {
            return Err(Error::invalid(
                "poses",
                format!(
                    "{} given for {} instance(s)",
                    poses.len(),
                    self.instances.len()
                ),
            ));
        }
        let ch = self.asset.character();
        for (k, p) in poses.iter().enumerate() {
            if let Some((j, t)) = p.locals.iter().enumerate().find(|(_, t)| {
                let l = t.rotation.length();
                !(t.rotation.is_finite() && (l - 1.0).abs() <= 1e-3)
            }) {
                return Err(Error::invalid(
                    format!("poses[{k}].locals[{j}]"),
                    format!("rotation {:?} is not a unit quaternion", t.rotation),
                ));
            }
            let same = p.locals.len() == self.rest.locals.len()
                && p.weights.len() == self.rest.weights.len()
                && p.weights
                    .iter()
                    .zip(&self.rest.weights)
                    .all(|(a, b)| a.len() == b.len());
            if !same {
                return Err(Error::invalid(
                    format!("poses[{k}]"),
                    format!(
                        "not a pose of {} (node or morph-weight counts differ)",
                        ch.source
                    ),
                ));
            }
        }
        for (inst, p) in self.instances.iter_mut().zip(poses) {
            inst.set_pose(ch, p);
        }
        self.frame_posed(t)
    }

    /// Before the first [`Runtime::update`]: lift the rest pose and read instance 0's splats (a
    /// preview's budget check). Its time is not counted in [`Runtime::times`].
    ///
    /// # Errors
    /// After an update; no lift attached; backend failures.
    pub fn render_rest(&mut self) -> Result<SplatBuffers> {
        if self.frame > 0 {
            return Err(Error::invalid(
                "render_rest",
                "the runtime has already posed a frame",
            ));
        }
        self.engine.frame()?;
        let s = self.engine.splats(0)?;
        // The frame's GPU times arrive with its completion: gather them before the snapshot.
        self.engine.finish()?;
        self.warm = self.engine.times();
        Ok(s)
    }

    /// Attach drivers to instance `i`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an instance the runtime does not have.
    pub fn instance_mut(&mut self, i: usize) -> Result<InstanceMut<'_>> {
        let n = self.instances.len();
        let inst = self.instances.get_mut(i).ok_or_else(|| no_instance(i, n))?;
        Ok(InstanceMut {
            asset: &self.asset,
            inst,
        })
    }

    /// Instance `i`, read-only.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an instance the runtime does not have.
    pub fn instance(&self, i: usize) -> Result<&Instance> {
        self.instances
            .get(i)
            .ok_or_else(|| no_instance(i, self.instances.len()))
    }

    /// Instances N.
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Whether the runtime has no instances (never: a runtime has at least one).
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The character.
    pub fn asset(&self) -> &Arc<Asset> {
        &self.asset
    }

    /// The device it poses on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How the CPU device rounds the rig pass from the next [`Runtime::update`] on:
    /// [`Precision::Exact`] (the default: the reference's bits, what every GPU backend is
    /// compared against) or [`Precision::Fast`] (fused multiply-adds, SIMD and every core, within
    /// the conformance bound of the reference — Higham, *Accuracy and Stability of Numerical
    /// Algorithms*, 2nd ed., §3.1; `mien-cpu`'s `Precision` docs). The lifts and the rest pose
    /// taken when the runtime was created are unchanged. (Through the `mien` facade: `use
    /// mien::{Asset, Device, Precision, Runtime, RuntimeOptions};`.)
    ///
    /// ```
    /// use mien_runtime::{Asset, Device, Precision, Runtime, RuntimeOptions};
    /// # fn main() -> mien_runtime::Result<()> {
    /// let opts = RuntimeOptions { instances: 16, lift: None };
    /// let mut rt = Runtime::new(Asset::builtin().into(), &Device::Cpu, &opts)?;
    /// rt.set_precision(Precision::Fast)?;
    /// rt.update(0.0)?;
    /// assert_eq!(rt.posed(15)?.positions.len(), rt.rest_positions().len());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::Invalid`] on a GPU device: its rounding is chosen when its context opens
    /// (`ContextOptions::cooperative_matrix` of `mien-wgpu` and `mien-vulkan`).
    pub fn set_precision(&mut self, precision: Precision) -> Result<()> {
        self.engine.set_precision(precision)
    }

    /// Instance `i`'s splats of the last frame, **instance-local**: slots `0..S` for the `S`
    /// gaussians of the lift ([`LiftInfo::slots`]; V for the debug lift) — a copy on the CPU, a
    /// readback on a GPU. Centres `(S,4)` metres, colours `(S,)` RGBA8, covariances `(S,4)` +
    /// `(S,4)` m² (DESIGN "Splat sink"). Write it whole with [`SplatBuffers::all`]:
    /// `write_splats(path, &s, &[s.all()])`. On a GPU the centres are checked against the rest
    /// pose's rule.
    ///
    /// The sink-global view is [`Runtime::splats_all`] with [`Runtime::sink_range`].
    ///
    /// # Errors
    /// No frame posed yet; no lift attached; an unknown instance; [`Error::Posed`]; backend
    /// failures.
    pub fn splats(&mut self, i: usize) -> Result<SplatBuffers> {
        if self.frame == 0 {
            self.instance(i)?;
            return Err(Error::invalid(
                format!("splats of instance {i}"),
                "no frame posed yet: call update(t) first (render_rest() draws the rest pose)",
            ));
        }
        let s = self.engine.splats(i)?;
        if self.engine.posed_cpu(i).is_none() && self.frame > 0 {
            let ch = self.asset.character();
            self.check.positions(
                ch,
                &self.instances[i].world,
                &s.center,
                self.frame - 1,
                self.report.time_s,
            )?;
        }
        Ok(s)
    }

    /// Instance `i`'s posed vertices of the last frame: world positions `(V,3)` metres and normals
    /// `(V,3)` (zero for a linear head). A copy on the CPU, a readback on a GPU (tests, export).
    ///
    /// # Errors
    /// An unknown instance; backend failures.
    pub fn posed(&mut self, i: usize) -> Result<PosedVertices> {
        self.engine.read_posed(i)
    }

    /// Instance `i`'s posed positions `(V,3)` without a copy, when the backend holds them on the
    /// CPU (`None` on a GPU, and for an instance the runtime does not have).
    pub fn posed_cpu(&self, i: usize) -> Option<&[[f32; 3]]> {
        self.engine.posed_cpu(i)
    }

    /// A linear head's inputs of instance `i` for the last frame: head_ext `(E+4,)` (coefficients,
    /// then the eyes' pitch and yaw, radians) and the pack's joint world matrices `(J,)`; `None`
    /// for a rig or an instance out of range.
    pub fn head_inputs(&self, i: usize) -> Option<(&[f32], &[Mat4])> {
        Some((
            self.head_ext.get(i)?.as_slice(),
            self.joints.get(i)?.as_slice(),
        ))
    }

    /// The rest pose's positions of instance 0 `(V,3)`, metres.
    pub fn rest_positions(&self) -> &[[f32; 3]] {
        &self.rest_positions
    }

    /// The rest pose's bounding box `[min, max]`, metres.
    pub fn rest_bounds(&self) -> [[f32; 3]; 2] {
        self.bounds
    }

    /// The lift's σ and shading (`None` without a lift).
    pub fn lift(&self) -> Option<&LiftInfo> {
        self.lift.as_ref()
    }

    /// Instance `i`'s slots in the sink, **sink-global**: `i·S .. (i+1)·S` for `S` slots per
    /// instance (V for the debug lift, the gaussian count for the surface lift) — the range into
    /// the sink's buffers ([`Runtime::sink`]) and into [`Runtime::splats_all`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for an instance the runtime does not have.
    pub fn sink_range(&self, i: usize) -> Result<SlotRange> {
        self.instance(i)?;
        Ok(engine::slot_range(i, self.slots_per_instance()))
    }

    /// Every instance's splats of the last frame in sink order, `(N·S,…)`: instance `i` at
    /// [`Runtime::sink_range`]`(i)`, equal to [`Runtime::splats`]`(i)` there. One file of all
    /// instances: `write_splats(path, &all, &[all.all()])`.
    ///
    /// # Errors
    /// As [`Runtime::splats`].
    pub fn splats_all(&mut self) -> Result<SplatBuffers> {
        let mut all = SplatBuffers::default();
        for i in 0..self.instances.len() {
            let s = self.splats(i)?;
            all.center.extend_from_slice(&s.center);
            all.color.extend_from_slice(&s.color);
            all.cov_a.extend_from_slice(&s.cov_a);
            all.cov_b.extend_from_slice(&s.cov_b);
        }
        Ok(all)
    }

    /// Slots (gaussians) per instance: the lift's count, V without a lift.
    fn slots_per_instance(&self) -> u32 {
        self.lift
            .as_ref()
            .map_or(self.asset.vertex_count(), |l| l.slots)
    }

    /// The splat sink itself, for a caller that renders where it lies (the wgpu or Vulkan buffers
    /// on a GPU). Read it after [`Runtime::finish`] or order your own work after the runtime's
    /// submission (on wgpu the queue orders it).
    pub fn sink(&self) -> SinkRef<'_> {
        self.engine.sink()
    }

    /// The last frame's report.
    pub fn last_frame(&self) -> &FrameReport {
        &self.report
    }

    /// Frames posed so far.
    pub fn frames(&self) -> u64 {
        self.frame
    }

    /// Bytes held.
    pub fn memory(&self) -> MemoryReport {
        let (rig_bytes, sink_bytes) = self.engine.bytes();
        let v = self.asset.vertex_count();
        MemoryReport {
            rig_bytes,
            sink_bytes,
            sink_slots: if self.lift.is_some() {
                u64::from(self.slots_per_instance()) * self.instances.len() as u64
            } else {
                0
            },
            vertices: v,
            instances: self.instances.len() as u32,
        }
    }

    /// Wall and GPU time of the updates so far, cumulative (subtract an earlier snapshot with
    /// [`Times::since`] for one frame's), including the rest pose [`Runtime::new`] poses once
    /// ([`Runtime::render_rest`] not counted). On the CPU `rig` and `lift` are the work itself; on
    /// a GPU they are recording and submitting (the device's own time is `gpu_ms`).
    /// GPU frames run in flight (up to three): the GPU stage times count the
    /// frames completed so far; call [`Runtime::finish`] first for every submitted frame.
    pub fn times(&self) -> Times {
        let mut t = self.engine.times().since(&self.warm);
        t.dynamics = self.dynamics_time;
        t
    }

    /// Wait for the device to finish every submitted frame.
    ///
    /// # Errors
    /// Device loss; Vulkan validation messages.
    pub fn finish(&mut self) -> Result<()> {
        self.engine.finish()
    }
}

fn bounds(p: &[[f32; 3]]) -> [[f32; 3]; 2] {
    let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
    for v in p {
        for k in 0..3 {
            b[0][k] = b[0][k].min(v[k]);
            b[1][k] = b[1][k].max(v[k]);
        }
    }
    b
}

/// Median triangle edge length of the posed rest positions (metres); `None` when no triangle has
/// an edge of finite, non-zero length.
pub fn median_edge(triangles: &[[u32; 3]], pos: &[[f32; 3]]) -> Option<f32> {
    let mut e: Vec<f32> = triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .filter_map(|(a, b)| Some((pos.get(a as usize)?, pos.get(b as usize)?)))
        .map(|(a, b)| {
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .filter(|l| l.is_finite() && *l > 0.0)
        .collect();
    if e.is_empty() {
        return None;
    }
    let mid = e.len() / 2;
    Some(*e.select_nth_unstable_by(mid, f32::total_cmp).1)
}
