//! The benchmark workloads of issue 8 (W1–W6) and the synthetic morph sweep: a model (a flattened
//! rig or a linear-head pack) and a ring of per-frame controls that `B` characters read at offset
//! positions, so every character of a batch gets different controls.
//!
//! | id | model | controls |
//! |---|---|---|
//! | W1 | facecap.glb, 2,694 vertices × 52 targets (morph path) | its recorded clip (the first take) |
//! | W2 | ICT-FaceKit OBJ folder as a morph rig, 26,719 vertices × 57 targets (CSR) | the Live Link CSV, mapped by name |
//! | W3 | the ICT folder baked in memory as a linear pack (fp16 basis) | the Live Link CSV through the pack's ARKit table ([`mien_core::gnm::controls::GnmDriver`]) |
//! | W4 | seeded random pack, 17,821 vertices × 383 coefficients (regions of [`HeadExtLayout::gnm`]) + 4 gaze | seeded random head_ext, every coefficient non-zero |
//! | W5 | seeded MetaHuman-scale morph rig, 24,000 vertices × 669 local targets | seeded, 16–32 active targets per frame |
//! | W6 | CesiumMan, 3,273 vertices × 19 joints (skinning) | its walk clip |
//!
//! Ring frame `i` of a clip-driven workload is the clip at `t = span · i / RING`; character `c` at
//! frame `k` reads ring entry `(k + c) mod RING` ([`Workload::ring_index`]), an offset clip time.
//! With [`RING`] = 257 every character of a batch of 256 reads a different entry.
//!
//! [`HeadExtLayout::gnm`]: mien_core::gnm::HeadExtLayout::gnm

mod real;
mod synth;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use glam::Mat4;
use mien_core::gnm::GnmPack;
use mien_core::lift::BoundSetup;
use mien_core::rig::{RigControls, RigData};

pub use real::{ict_rig, load_w1, load_w2, load_w3, load_w6};
pub use synth::{MorphShape, W4_SEED, W5_SEED, load_w4, load_w5, synthetic_morph};

use crate::bytes::{self, Bytes};
use crate::harness::LiftMode;

/// Gaussians per character the surface-lift rows ask for (the surface lift's default target,
/// [`mien_core::lift::SurfaceOptions`]); the lift places about this many.
pub const SURFACE_TARGET: u32 = 100_000;

/// Entries in a workload's ring of per-frame controls (a prime, > the largest batch of 256).
pub const RING: usize = 257;

/// The workloads of issue 8, in order.
pub const ALL: [&str; 6] = ["W1", "W2", "W3", "W4", "W5", "W6"];

/// What a workload's per-vertex pass is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// CSR morph blend then LBS (the rig path).
    Morph,
    /// A linear head: neutral + fp16 basis · coefficients, eyes, seam, LBS.
    Gnm,
    /// LBS only (a rig without morph targets).
    Skin,
}

/// The data a workload poses.
#[derive(Clone, Debug)]
pub enum Model {
    /// A flattened rig (morph and skin workloads).
    Rig(RigData),
    /// A linear-head pack.
    Gnm(GnmPack),
}

/// One frame of a linear head's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct GnmInput {
    /// head_ext `(E+4,)`: coefficients (unitless), then gaze radians.
    pub head_ext: Vec<f32>,
    /// Joint world matrices `(J,)`, column-major, metres.
    pub joint_world: Vec<Mat4>,
}

/// The ring of per-frame controls.
#[derive(Clone, Debug)]
pub enum Frames {
    /// Rig controls `(RING,)` (weights before the backend's rules, palette matrices).
    Rig(Vec<RigControls>),
    /// Linear-head inputs `(RING,)`.
    Gnm(Vec<GnmInput>),
}

/// A benchmark workload: a model and its controls ring.
#[derive(Clone, Debug)]
pub struct Workload {
    /// `W1`…`W6`, or a sweep label (`sweep-v24000-t669-a32`).
    pub id: String,
    /// What the per-vertex pass is.
    pub kind: Kind,
    /// One paragraph: sources, sizes, how controls are made, measured density.
    pub description: String,
    /// The model.
    pub model: Model,
    /// The controls ring.
    pub frames: Frames,
    /// The surface lift's setup, built on first use ([`Workload::surface`]).
    pub surface: OnceLock<Option<Arc<BoundSetup>>>,
}

impl Workload {
    /// Vertices V one character poses.
    pub fn vertices(&self) -> u32 {
        match &self.model {
            Model::Rig(r) => r.vertex_count() as u32,
            Model::Gnm(p) => p.vertex_count() as u32,
        }
    }

    /// Targets (morph), coefficients (GNM, without gaze) or joints (skin).
    pub fn controls_count(&self) -> u32 {
        match (&self.model, self.kind) {
            (Model::Rig(r), Kind::Skin) => r.palette.len() as u32,
            (Model::Rig(r), _) => r.weight_count,
            (Model::Gnm(p), _) => p.coeff_count() as u32,
        }
    }

    /// Entries in the controls ring.
    pub fn ring_len(&self) -> usize {
        match &self.frames {
            Frames::Rig(f) => f.len(),
            Frames::Gnm(f) => f.len(),
        }
    }

    /// The ring entry character `character` reads at frame `frame`: `(frame + character) mod RING`.
    pub fn ring_index(&self, character: u32, frame: u64) -> usize {
        let n = self.ring_len().max(1) as u64;
        ((frame + u64::from(character)) % n) as usize
    }

    /// Triangles `(T,3)` of one character.
    pub fn triangles(&self) -> &[[u32; 3]] {
        match &self.model {
            Model::Rig(r) => &r.triangles,
            Model::Gnm(p) => &p.faces,
        }
    }

    /// The surface lift of this workload ([`SURFACE_TARGET`] gaussians, untextured colours) bound
    /// to ring entry 0 posed on the CPU reference; `None` for a model without triangles or one
    /// the lift refuses. Built once, outside every timed region.
    pub fn surface(&self) -> Option<Arc<BoundSetup>> {
        self.surface
            .get_or_init(|| self.build_surface().ok().map(Arc::new))
            .clone()
    }

    fn build_surface(&self) -> anyhow::Result<BoundSetup> {
        use mien_core::gnm::GnmBackend;
        use mien_core::lift::{SurfaceColors, SurfaceOptions, surface_lift};
        use mien_core::rig::RigBackend;
        let tris = self.triangles();
        anyhow::ensure!(!tris.is_empty(), "{}: no triangles", self.id);
        let mut enc = mien_cpu::CpuEncoder::default();
        let (pos, nrm) = match (&self.model, &self.frames) {
            (Model::Rig(r), Frames::Rig(f)) => {
                let mut b = mien_cpu::CpuRigBackend::new();
                let h = b.upload_batch(r, 1)?[0];
                b.set_controls(h, &f[0])?;
                b.encode(&mut enc)?;
                let (p, n) = b.posed(h);
                (p.to_vec(), n.to_vec())
            }
            (Model::Gnm(pack), Frames::Gnm(f)) => {
                let mut b = mien_cpu::CpuGnmBackend::new();
                let h = b.upload_gnm_batch(pack, 1)?[0];
                b.set_head_ext(h, &f[0].head_ext, &f[0].joint_world)?;
                b.encode(&mut enc)?;
                let p = b.posed(h)?.to_vec();
                let n = mien_core::lift::color::vertex_normals(&p, tris);
                (p, n)
            }
            _ => anyhow::bail!("{}: model and frames disagree", self.id),
        };
        let colors = SurfaceColors::untextured(tris, &nrm, None);
        let opts = SurfaceOptions {
            target: SURFACE_TARGET,
            ..Default::default()
        };
        let lift = surface_lift(&pos, &nrm, tris, &colors, &opts)?;
        Ok(BoundSetup::new(&lift.gaussians, lift.triangles)?)
    }

    /// Splats one character writes per frame under `lift`: 0, V, or the surface lift's gaussians
    /// (0 when it cannot be built).
    pub fn slots(&self, lift: LiftMode) -> u32 {
        match lift {
            LiftMode::Off => 0,
            LiftMode::Debug => self.vertices(),
            LiftMode::Surface => self.surface().map_or(0, |s| s.gaussians.len() as u32),
        }
    }

    /// Bytes that must move per frame per character, averaged over the ring
    /// ([`crate::bytes`] states the formulas).
    pub fn bytes(&self, lift: LiftMode) -> Bytes {
        let n = self.ring_len().max(1);
        let mut total = Bytes::default();
        let entries = match &self.model {
            Model::Rig(r) => bytes::target_entries(r),
            Model::Gnm(_) => Vec::new(),
        };
        for i in 0..n {
            let b = match (&self.model, &self.frames) {
                (Model::Rig(r), Frames::Rig(f)) => bytes::rig_frame_with(r, &f[i], &entries),
                (Model::Gnm(p), Frames::Gnm(f)) => bytes::gnm_frame(p, &f[i].head_ext),
                _ => Bytes::default(),
            };
            total.reads += b.reads;
            total.writes += b.writes;
        }
        let mut mean = Bytes {
            reads: total.reads / n as u64,
            writes: total.writes / n as u64,
        };
        let l = match lift {
            LiftMode::Off => Bytes::default(),
            LiftMode::Debug => bytes::lift(u64::from(self.vertices())),
            LiftMode::Surface => bytes::bound_lift(
                u64::from(self.vertices()),
                self.triangles().len() as u64,
                u64::from(self.slots(LiftMode::Surface)),
            ),
        };
        mean.reads += l.reads;
        mean.writes += l.writes;
        mean
    }
}

/// Where the real inputs are: `MIEN_DATA` when set, else `../shared/data` from the current
/// directory, else the folder beside this crate's workspace (`<workspace>/../shared/data`).
pub fn data_dir() -> PathBuf {
    if let Ok(d) = std::env::var("MIEN_DATA") {
        return PathBuf::from(d);
    }
    let cwd = Path::new("../shared/data");
    if cwd.is_dir() {
        return cwd.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// Build workload `id` (`W1`…`W6`, any case) from `data` (the real inputs' folder).
///
/// # Errors
/// An unknown id; every importer error of the real inputs (the file is named).
pub fn load(id: &str, data: &Path) -> anyhow::Result<Workload> {
    match id.to_ascii_uppercase().as_str() {
        "W1" => load_w1(data),
        "W2" => load_w2(data),
        "W3" => load_w3(data),
        "W4" => Ok(load_w4(W4_SEED)),
        "W5" => Ok(load_w5(W5_SEED)),
        "W6" => load_w6(data),
        other => anyhow::bail!("unknown workload `{other}` (the workloads are W1 to W6)"),
    }
}

/// Area-weighted vertex normals `(V,3)` of `triangles` over `positions` (a vertex in no triangle,
/// or in degenerate ones only, gets +Z).
pub fn vertex_normals(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> Vec<[f32; 3]> {
    let mut acc = vec![glam::Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| glam::Vec3::from(positions[i as usize]));
        let n = (b - a).cross(c - a);
        for &i in t {
            acc[i as usize] += n;
        }
    }
    acc.iter()
        .map(|n| n.try_normalize().unwrap_or(glam::Vec3::Z).to_array())
        .collect()
}
