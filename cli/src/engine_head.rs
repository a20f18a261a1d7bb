//! Engines that pose a linear head (`.aosrig`): per frame a head_ext vector and joint world
//! matrices in, posed vertices out, lifted into splats as the rig engines do.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail, ensure};
use glam::Mat4;
use mien_core::gnm::GnmPack;
use mien_core::gnm::forward::pose;
use mien_core::lift::DebugLiftParams;
use mien_core::rig::{ControlStats, RigControls};
use mien_core::sink::{SlotRange, SplatBuffers, SplatSink};
use mien_cpu::{CpuDebugLift, CpuEncoder, CpuSplatSink};

use crate::args::BackendChoice;
use crate::engine::{Engine, EngineTimes};

/// The CPU engine for a linear head: [`mien_core::gnm::forward::pose`], the reference.
pub struct CpuHeadEngine {
    pack: Arc<GnmPack>,
    head_ext: Vec<f32>,
    joints: Vec<Mat4>,
    pos: Vec<[f32; 3]>,
    /// A pack has no normals and none are recomputed (as on the GPU): zero normals make the
    /// debug lift's normal shading use the centroid direction.
    nrm: Vec<[f32; 3]>,
    sink: Option<(CpuSplatSink, CpuDebugLift, SlotRange)>,
    enc: CpuEncoder,
}

impl CpuHeadEngine {
    fn new(pack: &Arc<GnmPack>) -> Self {
        let nv = pack.vertex_count();
        let (mut joints, mut skipped) = (Vec::new(), Vec::new());
        mien_core::gnm::forward::joint_world(pack, &[], &mut joints, &mut skipped);
        CpuHeadEngine {
            pack: Arc::clone(pack),
            head_ext: vec![0.0; pack.header.head_ext.dim()],
            joints,
            pos: Vec::with_capacity(nv),
            nrm: vec![[0.0; 3]; nv],
            sink: None,
            enc: CpuEncoder::default(),
        }
    }

    fn pose(&mut self) -> Result<()> {
        let t0 = Instant::now();
        pose(&self.pack, &self.head_ext, &self.joints, &mut self.pos)?;
        self.enc.rig += t0.elapsed();
        Ok(())
    }
}

impl Engine for CpuHeadEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn adapter(&self) -> Option<String> {
        None
    }
    fn set_controls(&mut self, _controls: &RigControls) -> Result<ControlStats> {
        bail!("a linear head takes head_ext coefficients, not morph weights")
    }
    fn set_head_ext(&mut self, head_ext: &[f32], joint_world: &[Mat4]) -> Result<()> {
        ensure!(
            head_ext.len() == self.head_ext.len() && joint_world.len() == self.joints.len(),
            "head_ext has {} values and {} joint matrices; the pack needs {} and {}",
            head_ext.len(),
            joint_world.len(),
            self.head_ext.len(),
            self.joints.len()
        );
        if let Some(i) = head_ext.iter().position(|x| !x.is_finite()) {
            bail!("head_ext[{i}] is not finite");
        }
        self.head_ext.copy_from_slice(head_ext);
        self.joints.copy_from_slice(joint_world);
        Ok(())
    }
    fn pose_and_read(&mut self) -> Result<Vec<[f32; 3]>> {
        self.pose()?;
        Ok(self.pos.clone())
    }
    fn attach_lift(&mut self, params: DebugLiftParams) -> Result<()> {
        let nv = self.pack.vertex_count() as u32;
        let mut sink = CpuSplatSink::new(nv);
        let range = sink.allocate(nv)?;
        ensure!(
            range == params.range,
            "the lift's range {:?} is not the sink's first {nv} slots",
            params.range
        );
        let lift = CpuDebugLift::for_vertices(nv, Vec::new(), &sink, params)?;
        self.sink = Some((sink, lift, range));
        Ok(())
    }
    fn frame(&mut self) -> Result<()> {
        self.pose()?;
        let Some((sink, lift, _)) = &mut self.sink else {
            bail!("no lift attached")
        };
        lift.encode_posed(&mut self.enc, &self.pos, &self.nrm, sink)?;
        Ok(())
    }
    fn splats(&mut self) -> Result<SplatBuffers> {
        let Some((sink, _, r)) = &self.sink else {
            bail!("no lift attached")
        };
        Ok(crate::engine::copy_range(sink, *r))
    }
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    fn times(&self) -> EngineTimes {
        EngineTimes {
            rig: self.enc.rig,
            lift: self.enc.lift,
            gpu_ms: None,
        }
    }
    fn bytes(&self) -> (u64, u64) {
        (
            self.pack.byte_len(),
            self.sink.as_ref().map_or(0, |s| s.0.bytes()),
        )
    }
}

/// Choose and build the engine that poses `pack` for `choice`; returns it and why.
///
/// # Errors
/// `--backend wgpu|vulkan` without a device; upload failures.
pub fn choose(choice: BackendChoice, pack: &Arc<GnmPack>) -> Result<(Box<dyn Engine>, String)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuHeadEngine::new(pack)), "asked for".into())),
        BackendChoice::Auto => Ok((
            Box::new(CpuHeadEngine::new(pack)),
            "a linear head poses on the CPU reference until its GPU kernels land".into(),
        )),
        other => bail!(
            "--backend {}: linear heads (.aosrig) pose on the CPU in this build",
            format!("{other:?}").to_lowercase()
        ),
    }
}
