//! A character's cloth and hair (issue 27, seed 003 "Character cloth" and "Hair"): what an
//! [`crate::Asset`] carries ([`Dynamics`]: a [`ClothSetup`], a [`HairSetup`]) and each instance's
//! simulations (`DynState`, internal).
//!
//! Both run in the seed's update order after the skin palette: each frame, once the instance's
//! palette is known, the cloth's pinned vertices take their skinned places (the rig's own LBS of
//! the cloth mesh, in world space through the instance's placement) and the guides' roots the
//! head bone's; capsules on bones move with the pose. The simulations run in world space (walking
//! makes a cape trail), and their results come back into the character's space, where the frame
//! is drawn: the cloth's vertices through a bound lift of its own (the surface lift's gaussians on
//! the cloth's triangles, posed on the simulated vertices instead of the skinned ones), the hair as
//! strands turned into gaussians ([`mien_core::hair::strand_splats`] on the CPU, `hair.wgsl` on a
//! GPU). An instance's slots are `[body | cloth | hair]`.
//!
//! A frame earlier than the last or more than [`crate::body::CUT_S`] later is a cut: the cloth
//! and the groom start again from their skinned places, still.

use std::sync::Arc;

use glam::{DMat4, DVec3, Mat4};
use mien_core::anim::spring::CapsuleDef;
use mien_core::cloth::{Cloth, ClothCapsule, ClothDef, ClothMaterial, ClothReport};
use mien_core::hair::{Groom, HairCapsule, HairSim, HairSimOptions, HairSimReport};
use mien_core::rig::{Character, NodeId, RigControls, RigData};

use crate::error::{Error, Result};

/// Largest collider radius and end offset from its bone, metres.
pub const MAX_COLLIDER_M: f64 = 10.0;

/// A capsule on a bone: the node and its ends (bone space, metres) and radius.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneCapsule {
    /// The node it follows.
    pub node: NodeId,
    /// One end, in the node's space.
    pub a: DVec3,
    /// The other end.
    pub b: DVec3,
    /// Radius, metres.
    pub radius: f64,
}

impl BoneCapsule {
    /// Resolve `defs` against `ch` (the bone by name).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `what` and every problem at once by index: a bone the character
    /// lacks, ends not finite or farther than [`MAX_COLLIDER_M`] from the bone, a radius outside
    /// 0–[`MAX_COLLIDER_M`].
    pub fn resolve(ch: &Character, defs: &[CapsuleDef], what: &str) -> Result<Vec<BoneCapsule>> {
        let mut problems = Vec::new();
        let mut out = Vec::with_capacity(defs.len());
        for (i, c) in defs.iter().enumerate() {
            let at = format!("{what}/colliders/{i}");
            let node = find_node(ch, &c.bone);
            if node.is_none() {
                problems.push(format!(
                    "{at}/bone: `{}` is not a node of {}",
                    c.bone, ch.source
                ));
            }
            let ends = c.offset.iter().chain(&c.tail);
            if !ends
                .clone()
                .all(|x| x.is_finite() && x.abs() <= MAX_COLLIDER_M)
            {
                problems.push(format!(
                    "{at}: offset and tail must be finite and within {MAX_COLLIDER_M} m of the bone"
                ));
            }
            if !(c.radius.is_finite() && (0.0..=MAX_COLLIDER_M).contains(&c.radius)) {
                problems.push(format!(
                    "{at}/radius: {} is not a radius from 0 to {MAX_COLLIDER_M} m",
                    c.radius
                ));
            }
            if let Some(node) = node {
                out.push(BoneCapsule {
                    node,
                    a: DVec3::from(c.offset),
                    b: DVec3::from(c.tail),
                    radius: c.radius,
                });
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(Error::invalid(what, problems.join("; ")))
        }
    }

    fn world(&self, to_world: &DMat4, world: &[Mat4]) -> (DVec3, DVec3) {
        let m = *to_world * world[self.node.index()].as_dmat4();
        (m.transform_point3(self.a), m.transform_point3(self.b))
    }
}

fn find_node(ch: &Character, name: &str) -> Option<NodeId> {
    ch.nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(name))
        .map(|i| NodeId(i as u32))
}

/// The cloth of a character: its mesh's vertex range in the flattened rig, its triangles in
/// cloth-local indices, its rest (bind pose, world) vertices, material and capsules.
#[derive(Clone, Debug)]
pub struct ClothSetup {
    /// The definition.
    pub def: ClothDef,
    /// Its material, defaults filled in.
    pub material: ClothMaterial,
    /// The mesh node's name.
    pub mesh: String,
    /// First vertex of the cloth in the rig's flattened vertices.
    pub first: u32,
    /// Vertices `Vc`.
    pub count: u32,
    /// Triangles `(Tc,3)` over cloth-local indices `0..Vc`.
    pub triangles: Vec<[u32; 3]>,
    /// Rest vertices `(Vc,3)`, character space (skinned at rest).
    pub rest: Vec<[f32; 3]>,
    /// Capsules on bones.
    pub colliders: Vec<BoneCapsule>,
    /// What a generated cape made.
    pub cape: Option<mien_core::cloth::cape::CapeReport>,
}

impl ClothSetup {
    /// The cloth named by `def` on the flattened `rig` of `ch` (a generated cape is already part
    /// of `ch`, named as its report says).
    ///
    /// # Errors
    /// [`Error::Invalid`] when no drawn mesh has that name (naming the meshes there are), a mesh
    /// without triangles, an unknown collider bone; the definition's refusals.
    pub fn new(
        ch: &Character,
        rig: &RigData,
        def: &ClothDef,
        file: &str,
        cape: Option<mien_core::cloth::cape::CapeReport>,
    ) -> Result<Self> {
        let material = def.check(file)?;
        let name = match (&cape, &def.mesh) {
            (Some(c), _) => c.name.clone(),
            (None, Some(m)) => m.clone(),
            (None, None) => unreachable!("check refuses a cloth without mesh or cape"),
        };
        let named = |inst: &mien_core::rig::MeshInstance| {
            ch.nodes[inst.node.index()].name.as_deref() == Some(name.as_str())
                || ch.meshes[inst.mesh.index()].name.as_deref() == Some(name.as_str())
        };
        let Some(inst) = rig.instances.iter().find(|i| named(i)) else {
            let have: Vec<String> = rig
                .instances
                .iter()
                .filter_map(|i| ch.nodes[i.node.index()].name.clone())
                .collect();
            return Err(Error::invalid(
                format!("{file}: /mesh"),
                format!(
                    "no drawn mesh named `{name}` in {} (it has {})",
                    ch.source,
                    have.join(", ")
                ),
            ));
        };
        let (first, count) = (inst.vertex_base, inst.vertex_count);
        let range = first..first + count;
        let triangles: Vec<[u32; 3]> = rig
            .triangles
            .iter()
            .filter(|t| range.contains(&t[0]))
            .map(|t| t.map(|v| v - first))
            .collect();
        if triangles.is_empty() {
            return Err(Error::invalid(
                format!("{file}: /mesh"),
                format!("`{name}` has no triangles to simulate as cloth"),
            ));
        }
        let rest_pose = ch.rest_pose();
        let (mut locals, mut world) = (Vec::new(), Vec::new());
        ch.world_matrices(&rest_pose, &mut locals, &mut world);
        let mut controls = RigControls::default();
        rig.controls_from_pose(&rest_pose, &world, &mut controls);
        let mut normals = Vec::new();
        RigData::normal_palette(&controls.palette, &mut normals);
        let rest = range
            .map(|v| {
                rig.pose_vertex(v as usize, &controls.weights, &controls.palette, &normals)
                    .0
            })
            .collect();
        let colliders = BoneCapsule::resolve(ch, &def.colliders, file)?;
        Ok(ClothSetup {
            def: def.clone(),
            material,
            mesh: name,
            first,
            count,
            triangles,
            rest,
            colliders,
            cape,
        })
    }

    /// A fresh simulation of this cloth.
    ///
    /// # Errors
    /// [`mien_core::cloth::Cloth::new`]'s refusals (a degenerate edge, no pinned vertex).
    pub fn simulation(&self) -> Result<Cloth> {
        Ok(Cloth::new(
            &self.rest,
            &self.triangles,
            self.def.pin_height,
            self.def.max_distance,
            self.material,
        )?)
    }
}

/// The hair of a character: its groom (head-bone space), the head bone, simulation settings and
/// capsules.
#[derive(Clone, Debug)]
pub struct HairSetup {
    /// The groom.
    pub groom: Arc<Groom>,
    /// The head bone.
    pub head: NodeId,
    /// Simulation settings.
    pub options: HairSimOptions,
    /// Capsules on bones.
    pub colliders: Vec<BoneCapsule>,
}

impl HairSetup {
    /// The groom on `ch`'s bone [`Groom::head_bone`].
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the head bone the character lacks or a collider bone;
    /// [`HairSim::new`]'s refusals of the groom or the options.
    pub fn new(
        ch: &Character,
        groom: Groom,
        options: HairSimOptions,
        colliders: &[CapsuleDef],
        what: &str,
    ) -> Result<Self> {
        let head = find_node(ch, &groom.head_bone).ok_or_else(|| {
            Error::invalid(
                format!("{what}/groom/head_bone"),
                format!("`{}` is not a node of {}", groom.head_bone, ch.source),
            )
        })?;
        HairSim::new(&groom.guides, groom.segments, options)?;
        let colliders = BoneCapsule::resolve(ch, colliders, what)?;
        Ok(HairSetup {
            groom: Arc::new(groom),
            head,
            options,
            colliders,
        })
    }

    /// Slots one instance's strands take: `C·S`.
    pub fn slots(&self) -> u32 {
        (self.groom.child_count() * self.groom.segments) as u32
    }
}

/// What an asset simulates besides its skeleton.
#[derive(Clone, Debug, Default)]
pub struct Dynamics {
    /// The cloth.
    pub cloth: Option<Arc<ClothSetup>>,
    /// The hair.
    pub hair: Option<Arc<HairSetup>>,
}

impl Dynamics {
    /// Whether there is anything to simulate.
    pub fn is_empty(&self) -> bool {
        self.cloth.is_none() && self.hair.is_none()
    }
}

/// The last frame's cloth and hair of an instance ([`crate::Instance::dynamics_report`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DynamicsReport {
    /// The cloth's last update.
    pub cloth: Option<ClothReport>,
    /// The hair's last update.
    pub hair: Option<HairSimReport>,
    /// The last update was a cut (both restarted).
    pub cut: bool,
}

/// One instance's cloth and hair simulations and their outputs (character space).
#[derive(Clone, Debug, Default)]
pub(crate) struct DynState {
    pub cloth: Option<Cloth>,
    pub hair: Option<HairSim>,
    /// Air velocity (cloth, m/s) and wind acceleration (hair, m/s²), world.
    pub wind: DVec3,
    last_t: Option<f64>,
    /// Cloth vertices and normals `(Vc,3)`, character space.
    pub cloth_out: (Vec<[f32; 3]>, Vec<[f32; 3]>),
    /// Guide points `(G·(S+1),3)`, character space.
    pub hair_out: Vec<[f32; 3]>,
    pub report: DynamicsReport,
    /// Scratch.
    places: Vec<DVec3>,
    normals: Vec<glam::Mat3>,
}

impl DynState {
    pub(crate) fn new(d: &Dynamics) -> Result<Self> {
        Ok(DynState {
            cloth: d.cloth.as_ref().map(|c| c.simulation()).transpose()?,
            hair: d
                .hair
                .as_ref()
                .map(|h| HairSim::new(&h.groom.guides, h.groom.segments, h.options))
                .transpose()?,
            ..Default::default()
        })
    }

    pub(crate) fn active(&self) -> bool {
        self.cloth.is_some() || self.hair.is_some()
    }

    /// Set the wind (module doc of [`crate::InstanceMut::set_wind`]).
    pub(crate) fn set_wind(&mut self, wind: DVec3) -> Result<()> {
        if let Some(h) = &mut self.hair {
            h.set_wind(wind)?;
        }
        self.wind = wind;
        Ok(())
    }

    /// Step both simulations to media time `t` after the palette: `controls` this frame's,
    /// `world` the instance's world matrices (character space), `placement` character → world.
    pub(crate) fn step(
        &mut self,
        d: &Dynamics,
        rig: &RigData,
        controls: &RigControls,
        world: &[Mat4],
        placement: DMat4,
        t: f64,
    ) -> Result<()> {
        let (dt, cut) = match self.last_t {
            Some(l) if t >= l && t - l <= crate::body::CUT_S => (t - l, false),
            Some(_) => (0.0, true),
            None => (0.0, false),
        };
        self.last_t = Some(t);
        self.report.cut = cut;
        let back = placement.inverse();
        if let (Some(sim), Some(setup)) = (&mut self.cloth, &d.cloth) {
            if cut {
                sim.reset();
            }
            RigData::normal_palette(&controls.palette, &mut self.normals);
            self.places.clear();
            for v in setup.first..setup.first + setup.count {
                let (p, _) = rig.pose_vertex(
                    v as usize,
                    &controls.weights,
                    &controls.palette,
                    &self.normals,
                );
                self.places
                    .push(placement.transform_point3(DVec3::from(p.map(f64::from))));
            }
            let caps: Vec<ClothCapsule> = setup
                .colliders
                .iter()
                .map(|c| {
                    let (a, b) = c.world(&placement, world);
                    ClothCapsule {
                        a,
                        b,
                        radius: c.radius,
                    }
                })
                .collect();
            self.report.cloth = Some(sim.update(dt, &self.places, &caps, self.wind)?);
            let pos: Vec<[f32; 3]> = sim
                .positions()
                .iter()
                .map(|p| back.transform_point3(*p).as_vec3().to_array())
                .collect();
            let normals = mien_core::lift::color::vertex_normals(&pos, &setup.triangles);
            self.cloth_out = (pos, normals);
        }
        if let (Some(sim), Some(setup)) = (&mut self.hair, &d.hair) {
            if cut {
                sim.restart();
            }
            let head = placement * world[setup.head.index()].as_dmat4();
            let caps: Vec<HairCapsule> = setup
                .colliders
                .iter()
                .map(|c| {
                    let (a, b) = c.world(&placement, world);
                    HairCapsule {
                        a,
                        b,
                        radius: c.radius,
                    }
                })
                .collect();
            self.report.hair = Some(sim.update(dt, head, &caps)?);
            self.hair_out.clear();
            self.hair_out.extend(
                sim.points()
                    .iter()
                    .map(|p| back.transform_point3(*p).as_vec3().to_array()),
            );
        }
        Ok(())
    }

    /// The outputs at rest: the cloth on its rest vertices, the groom on the head at rest
    /// (`world` the rest world matrices), before any frame.
    pub(crate) fn rest_outputs(&mut self, d: &Dynamics, world: &[Mat4]) {
        if let Some(c) = &d.cloth {
            let normals = mien_core::lift::color::vertex_normals(&c.rest, &c.triangles);
            self.cloth_out = (c.rest.clone(), normals);
        }
        if let Some(h) = &d.hair {
            let head = world[h.head.index()];
            self.hair_out = h
                .groom
                .guides
                .iter()
                .map(|p| head.transform_point3(glam::Vec3::from(*p)).to_array())
                .collect();
        }
    }

    /// Feed the state hash: positions and velocities of both simulations.
    pub(crate) fn hash_into(&self, eat: &mut dyn FnMut(&[u8])) {
        let mut vecs = |v: &[DVec3]| {
            for p in v {
                for x in p.to_array() {
                    eat(&x.to_bits().to_le_bytes());
                }
            }
        };
        if let Some(c) = &self.cloth {
            vecs(c.positions());
            vecs(c.velocities());
        }
        if let Some(h) = &self.hair {
            vecs(h.points());
            vecs(h.velocities());
        }
    }
}
