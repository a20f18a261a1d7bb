//! The face controller: expressions that fade, blinks, gaze, per-target overrides and clamping,
//! written onto a character's pose every frame on the media clock.
//!
//! Each mesh's weights are composited with seed 004's add / override layers (`compose.rs` over
//! [`super::layers`], folded in this order onto the base the drive and speech wrote): one **add**
//! layer per expression (weight = its current fade, values = its target weights) → blink, an **override**
//! layer toward the closed lids with the blink amount as weight (`w + a·(closed − w)`, exactly
//! `closed` at 1) → gaze, an **override** of the `eyeLook*` targets (morph mode) → the caller's
//! per-target overrides (override, weight 1) → the per-channel clamp: `[0, 1]` where the
//! definition says, none elsewhere. In joint mode gaze rotates the eye joints instead. Source:
//! seed 003 "Face", seed 004 "animation-channel composition".

use glam::{Mat4, Quat, Vec3};

use super::blink::Blinker;
use super::compose::MeshFace;
use super::def::{Clamp, FaceDef, LookMode};
use super::gaze::{EyeAngles, aim, eye_rotation, look_weights, step, world_position};
use crate::anim::canon::Binding;
use crate::error::{Error, Result};
use crate::rig::{Character, NodeId, Pose};

/// What the avatar's state asks of idle behaviour this frame (from the animation config).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdleBehaviour {
    /// Blink interval range, seconds.
    pub blink_interval: (f64, f64),
    /// Gaze wander amplitude around straight ahead, radians (0 = still).
    pub wander_amplitude: f32,
    /// Gaze wander period, seconds.
    pub wander_period: f64,
    /// Where to look when nothing else is asked (a speaker), world metres.
    pub focus: Option<Vec3>,
}

impl Default for IdleBehaviour {
    fn default() -> Self {
        IdleBehaviour {
            blink_interval: (2.0, 6.0),
            wander_amplitude: 0.0,
            wander_period: 4.0,
            focus: None,
        }
    }
}

/// The ARKit look targets of one eye: up, down, in, out.
const LOOK_LEFT: [&str; 4] = [
    "eyeLookUpLeft",
    "eyeLookDownLeft",
    "eyeLookInLeft",
    "eyeLookOutLeft",
];
const LOOK_RIGHT: [&str; 4] = [
    "eyeLookUpRight",
    "eyeLookDownRight",
    "eyeLookInRight",
    "eyeLookOutRight",
];

/// How the eyes are driven, resolved for the character.
#[derive(Clone, Debug, PartialEq)]
enum Eyes {
    /// Eye joints `(left, right)` with their rest rotations and their forward and up axes in
    /// their own frames.
    Joints {
        nodes: [NodeId; 2],
        rest: [Quat; 2],
        forward: [Vec3; 2],
        up: [Vec3; 2],
    },
    /// `eyeLook*` morphs; eye centres in the space of `node`'s mesh.
    Morphs { node: NodeId, centers: [Vec3; 2] },
    /// Nothing to turn.
    None,
}

/// The face controller of one character.
#[derive(Clone, Debug)]
pub struct FaceController {
    def: FaceDef,
    meshes: Vec<MeshFace>,
    eyes: Eyes,
    current: Vec<f32>,
    target: Vec<f32>,
    blinker: Blinker,
    look_at: Option<Vec3>,
    angles: [EyeAngles; 2],
    overrides: Vec<(String, f32)>,
    last_t: Option<f64>,
}

/// The rotation part of an affine matrix (scale removed), normalised.
fn rotation_of(m: &Mat4) -> Quat {
    let (_, r, _) = m.to_scale_rotation_translation();
    if r.is_finite() {
        r.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// Normalised node name for eye-joint detection: lowercase, no separators.
fn key(name: &str) -> String {
    name.rsplit([':', '|'])
        .next()
        .unwrap_or(name)
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Find eye joints by name: a node whose name has `eye` and a side (`left`/`l`, `right`/`r`) and
/// nothing of a lid, brow, lash or look.
fn find_eye_joints(ch: &Character) -> Option<[NodeId; 2]> {
    let mut found: [Option<NodeId>; 2] = [None, None];
    for (i, n) in ch.nodes.iter().enumerate() {
        let Some(name) = &n.name else { continue };
        let k = key(name);
        if !k.contains("eye")
            || [
                "lid", "brow", "lash", "look", "blink", "grp", "socket", "target",
            ]
            .iter()
            .any(|x| k.contains(x))
        {
            continue;
        }
        let rest = k.replacen("eye", "", 1);
        let side = if rest.contains("left")
            || rest == "l"
            || k.ends_with("eyel")
            || k.starts_with("leye")
            || rest.starts_with('l') && rest.len() == 1
        {
            0
        } else if rest.contains("right")
            || rest == "r"
            || k.ends_with("eyer")
            || k.starts_with("reye")
        {
            1
        } else {
            continue;
        };
        found[side].get_or_insert(NodeId(i as u32));
    }
    Some([found[0]?, found[1]?])
}

impl FaceController {
    /// Bind `def` to `character`: targets by name (the canonicaliser, so ARKit spellings match
    /// `_L/_R` rigs), eye joints or `eyeLook*` morphs, and the first blink one interval after `t0`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the definition drives nothing on this character (no target of any
    /// expression, blink or look binds, and no VRM lookAt the gaze moves:
    /// [`crate::vrm::Vrm::gaze_moves`]), or joints were asked for and not found.
    pub fn new(character: &Character, def: FaceDef, t0: f64, interval: (f64, f64)) -> Result<Self> {
        let mut meshes = Vec::new();
        let mut any = false;
        for node in character.mesh_nodes() {
            let Some((_, mesh)) = character.node_mesh(node) else {
                continue;
            };
            if mesh.target_count() == 0 {
                continue;
            }
            let names = &mesh.target_names;
            let bind = |list: &[(String, f32)]| -> Vec<(u32, f32)> {
                let channels: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
                let b = Binding::new(&channels, names);
                let mut out = Vec::new();
                for (ci, (n, w)) in list.iter().enumerate() {
                    if let Some(i) = names.iter().position(|t| t == n) {
                        out.push((i as u32, *w));
                    } else {
                        out.extend(
                            b.routes()
                                .iter()
                                .filter(|r| r.channel == ci)
                                .map(|r| (r.target as u32, w * r.gain)),
                        );
                    }
                }
                out
            };
            let mut expressions = Vec::new();
            for (ei, e) in def.expressions.iter().enumerate() {
                expressions.extend(bind(&e.targets).into_iter().map(|(t, w)| (ei as u32, t, w)));
            }
            let blink = bind(&def.blink.targets);
            let mut look = [[u32::MAX; 4]; 2];
            for (side, list) in [LOOK_LEFT, LOOK_RIGHT].iter().enumerate() {
                let l: Vec<(String, f32)> = list.iter().map(|n| ((*n).to_owned(), 1.0)).collect();
                let b = Binding::new(&l.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), names);
                for r in b.routes() {
                    look[side][r.channel] = r.target as u32;
                }
            }
            let mut driven: Vec<u32> = expressions
                .iter()
                .map(|e| e.1)
                .chain(blink.iter().map(|b| b.0))
                .chain(look.iter().flatten().copied().filter(|t| *t != u32::MAX))
                .collect();
            if !driven.is_empty() {
                any = true;
            }
            driven.sort_unstable();
            driven.dedup();
            let clamp = match &def.clamp {
                Clamp::Driven => driven,
                Clamp::All => (0..names.len() as u32).collect(),
                Clamp::None => Vec::new(),
                Clamp::Targets(t) => bind(&t.iter().map(|n| (n.clone(), 1.0)).collect::<Vec<_>>())
                    .into_iter()
                    .map(|x| x.0)
                    .collect(),
            };
            meshes.push(MeshFace::new(
                node,
                names.clone(),
                &expressions,
                def.expressions.len(),
                &blink,
                look,
                &clamp,
            )?);
        }
        let joints = match &def.look.joints {
            Some((l, r)) => {
                let find = |n: &str| {
                    character
                        .nodes
                        .iter()
                        .position(|x| x.name.as_deref() == Some(n))
                        .map(|i| NodeId(i as u32))
                };
                match (find(l), find(r)) {
                    (Some(a), Some(b)) => Some([a, b]),
                    _ => {
                        return Err(Error::Invalid {
                            what: "face look joints".into(),
                            reason: format!("the character has no nodes named `{l}` and `{r}`"),
                        });
                    }
                }
            }
            None => find_eye_joints(character),
        };
        let eyes = match (def.look.mode, joints) {
            (LookMode::Joints, None) => return Err(Error::Invalid {
                what: "face look".into(),
                reason:
                    "joints were asked for but no eye joints were found (name them in look.joints)"
                        .into(),
            }),
            (LookMode::Joints | LookMode::Auto, Some(j)) => {
                // Forward and up in each joint's own frame: given, or the character's forward (+Z)
                // and up (+Y) seen from the joint's rest frame (the eyes look ahead at rest).
                let rest_pose = character.rest_pose();
                let (mut locals, mut world) = (Vec::new(), Vec::new());
                character.world_matrices(&rest_pose, &mut locals, &mut world);
                let axes = |n: NodeId| {
                    let inv = rotation_of(&world[n.index()]).inverse();
                    (
                        def.look
                            .forward
                            .map_or(inv * Vec3::Z, Vec3::from)
                            .normalize(),
                        def.look.up.map_or(inv * Vec3::Y, Vec3::from).normalize(),
                    )
                };
                let (f0, u0) = axes(j[0]);
                let (f1, u1) = axes(j[1]);
                Eyes::Joints {
                    nodes: j,
                    rest: [
                        character.nodes[j[0].index()].rest.rotation,
                        character.nodes[j[1].index()].rest.rotation,
                    ],
                    forward: [f0, f1],
                    up: [u0, u1],
                }
            }
            (LookMode::Morphs | LookMode::Auto, _) => match meshes
                .iter()
                .find(|m| m.look.iter().flatten().any(|t| *t != u32::MAX))
            {
                Some(m) => Eyes::Morphs {
                    node: m.node,
                    centers: Self::eye_centers(character, m, &def),
                },
                None => Eyes::None,
            },
        };
        // A VRM avatar's lookAt takes the look-at point itself (the runtime feeds it the gaze), so
        // a VRM whose only expressions are the `look*` ones is driven by the face too.
        let vrm_gaze = character.vrm.as_ref().is_some_and(|v| v.gaze_moves());
        if !any && eyes == Eyes::None && !vrm_gaze {
            return Err(Error::Invalid {
                what: format!("face → {}", character.source),
                reason: "no expression, blink or look target of the face definition exists on the character".into(),
            });
        }
        let n = def.expressions.len();
        let blinker = Blinker::new(
            def.blink.seed,
            def.blink.duration,
            def.blink.close_fraction,
            t0,
            def.blink.interval.unwrap_or(interval),
        );
        Ok(FaceController {
            def,
            meshes,
            eyes,
            current: vec![0.0; n],
            target: vec![0.0; n],
            blinker,
            look_at: None,
            angles: [EyeAngles::default(); 2],
            overrides: Vec::new(),
            last_t: None,
        })
    }

    /// Eye centres in mesh space: from the definition, else the centroid of the bind positions
    /// each eye's `eyeLookOut` target moves.
    fn eye_centers(character: &Character, m: &MeshFace, def: &FaceDef) -> [Vec3; 2] {
        if let Some((l, r)) = def.look.centers {
            return [Vec3::from(l), Vec3::from(r)];
        }
        let Some((_, mesh)) = character.node_mesh(m.node) else {
            return [Vec3::ZERO; 2];
        };
        let mut out = [Vec3::ZERO; 2];
        for side in 0..2 {
            let t = m.look[side][3];
            let (mut sum, mut n) = (glam::DVec3::ZERO, 0u32);
            for p in &mesh.primitives {
                let ms = &p.morph;
                for v in 0..ms.vertex_count() {
                    let (a, b) = (
                        ms.vertex_offsets()[v] as usize,
                        ms.vertex_offsets()[v + 1] as usize,
                    );
                    if (a..b).any(|e| ms.entry_target()[e] == t) {
                        sum += Vec3::from(p.positions[v]).as_dvec3();
                        n += 1;
                    }
                }
            }
            if n > 0 {
                out[side] = (sum / f64::from(n)).as_vec3();
            }
        }
        out
    }

    /// Names of the expressions.
    pub fn expression_names(&self) -> impl Iterator<Item = &str> {
        self.def.expressions.iter().map(|e| e.name.as_str())
    }

    /// Fade expression `name` toward `weight` (0–1) at the definition's speed.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown name (listing the known ones) or a weight outside [0, 1].
    pub fn set_expression(&mut self, name: &str, weight: f32) -> Result<()> {
        if !(0.0..=1.0).contains(&weight) {
            return Err(Error::Invalid {
                what: format!("expression `{name}` weight"),
                reason: format!("{weight} is outside [0, 1]"),
            });
        }
        let i = self
            .def
            .expressions
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| Error::Invalid {
                what: format!("expression `{name}`"),
                reason: format!(
                    "unknown; the face has {}",
                    self.def
                        .expressions
                        .iter()
                        .map(|e| e.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        self.target[i] = weight;
        Ok(())
    }

    /// Fade every expression out.
    pub fn clear_expressions(&mut self) {
        self.target.fill(0.0);
    }

    /// Blink now (at media time `t`).
    pub fn blink_now(&mut self, t: f64) {
        self.blinker.blink_now(t);
    }

    /// Turn automatic blinking on or off.
    pub fn set_blink_enabled(&mut self, on: bool) {
        self.blinker.set_enabled(on);
    }

    /// Look at a world point (metres), or `None` to release the gaze to idle behaviour.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite point.
    pub fn look_at(&mut self, point: Option<Vec3>) -> Result<()> {
        if let Some(p) = point {
            if !p.is_finite() {
                return Err(Error::Invalid {
                    what: "look-at point".into(),
                    reason: format!("{p} is not finite"),
                });
            }
        }
        self.look_at = point;
        Ok(())
    }

    /// Force `target` (any spelling the canonicaliser knows) to `value`, or `None` to release it.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-finite value.
    pub fn set_override(&mut self, target: &str, value: Option<f32>) -> Result<()> {
        self.overrides.retain(|(n, _)| n != target);
        if let Some(v) = value {
            if !v.is_finite() {
                return Err(Error::Invalid {
                    what: format!("override `{target}`"),
                    reason: format!("{v} is not finite"),
                });
            }
            self.overrides.push((target.to_owned(), v));
        }
        Ok(())
    }

    /// The point the face was told to look at ([`FaceController::look_at`]), world metres.
    pub fn look_target(&self) -> Option<Vec3> {
        self.look_at
    }

    /// The current eye angles (left, right).
    pub fn eye_angles(&self) -> [EyeAngles; 2] {
        self.angles
    }

    /// Apply the face at media time `t` onto `pose` (whose drive and speech are already applied).
    /// `world` holds the world matrices of that pose (eye centres and head frame are read from it).
    /// Time may jump (a seek): a backward or first step applies without smoothing.
    pub fn update(
        &mut self,
        character: &Character,
        t: f64,
        idle: &IdleBehaviour,
        world: &[Mat4],
        pose: &mut Pose,
    ) {
        let dt = self.last_t.map_or(0.0, |l| t - l);
        self.last_t = Some(t);
        // Expressions fade linearly at the definition's speed.
        let max = (f64::from(self.def.expression_speed) * dt.max(0.0)) as f32;
        for (c, g) in self.current.iter_mut().zip(&self.target) {
            // First frame: hold; a backward jump (seek): arrive at once.
            if dt > 0.0 {
                *c += (g - *c).clamp(-max, max);
            } else if dt < 0.0 {
                *c = *g;
            }
        }
        let blink = if dt < 0.0 {
            0.0
        } else {
            self.blinker.update(t, idle.blink_interval)
        };
        // Gaze: desired angles per eye.
        let (centers, fwd, up) = match &self.eyes {
            Eyes::Joints {
                nodes,
                rest,
                forward,
                up,
            } => {
                let c = [
                    world_position(&world[nodes[0].index()]),
                    world_position(&world[nodes[1].index()]),
                ];
                // The left eye's frame without gaze: its parent's world rotation × its rest rotation.
                let n = nodes[0].index();
                let parent = character.nodes[n]
                    .parent
                    .map_or(Mat4::IDENTITY, |p| world[p.index()]);
                let r = rotation_of(&parent) * rest[0];
                (c, r * forward[0], r * up[0])
            }
            Eyes::Morphs { node, centers } => {
                let m = world[node.index()];
                let r = rotation_of(&m);
                (
                    [
                        m.transform_point3(centers[0]),
                        m.transform_point3(centers[1]),
                    ],
                    r * Vec3::Z,
                    r * Vec3::Y,
                )
            }
            Eyes::None => ([Vec3::ZERO; 2], Vec3::Z, Vec3::Y),
        };
        let target = self.look_at.or(idle.focus);
        for side in 0..2 {
            let mut want = match target {
                Some(p) => aim(centers[side], p, fwd, up),
                None => EyeAngles::default(),
            };
            if idle.wander_amplitude > 0.0 && self.look_at.is_none() {
                // A slow deterministic wander: two incommensurate sines per axis.
                let w = std::f64::consts::TAU * t / idle.wander_period.max(0.1);
                want.yaw +=
                    idle.wander_amplitude * (w.sin() * 0.7 + (w * 0.37 + 1.3).sin() * 0.3) as f32;
                want.pitch += 0.5 * idle.wander_amplitude * ((w * 0.61 + 0.4).sin()) as f32;
            }
            let l = &self.def.look;
            self.angles[side] = step(
                self.angles[side],
                want,
                l.yaw_limit,
                l.pitch_limit,
                l.max_speed,
                dt,
            );
        }
        if let Eyes::Joints {
            nodes,
            rest,
            forward,
            up,
        } = &self.eyes
        {
            for side in 0..2 {
                let q = eye_rotation(self.angles[side], forward[side], up[side]);
                pose.locals[nodes[side].index()].rotation = (rest[side] * q).normalize();
            }
        }
        let gaze = matches!(self.eyes, Eyes::Morphs { .. }).then(|| {
            [0, 1].map(|side| {
                look_weights(self.angles[side], side == 0, self.def.look.radians_per_unit)
            })
        });
        for m in &mut self.meshes {
            let w = &mut pose.weights[m.node.index()];
            m.compose(w, &self.current, blink, gaze, &self.overrides);
        }
    }

    /// Feed the controller's state into a hasher (expression weights, blink, gaze, overrides).
    pub fn hash_into(&self, h: &mut impl std::hash::Hasher) {
        for (c, g) in self.current.iter().zip(&self.target) {
            h.write_u32(c.to_bits());
            h.write_u32(g.to_bits());
        }
        self.blinker.hash_into(h);
        for a in &self.angles {
            h.write_u32(a.yaw.to_bits());
            h.write_u32(a.pitch.to_bits());
        }
        if let Some(p) = self.look_at {
            for x in p.to_array() {
                h.write_u32(x.to_bits());
            }
        }
        for (n, v) in &self.overrides {
            h.write(n.as_bytes());
            h.write_u32(v.to_bits());
        }
    }
}

/// A 64-bit FNV-1a hash of a pose (every local transform and morph weight, bit for bit) and of the
/// face controller's state: the determinism check of seed 003 (`state_hash`). The same inputs give
/// the same hash on every run of the same build on the same machine.
pub fn state_hash(pose: &Pose, face: Option<&FaceController>) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    for l in &pose.locals {
        for x in l
            .translation
            .to_array()
            .into_iter()
            .chain(l.rotation.to_array())
            .chain(l.scale.to_array())
        {
            h.write_u32(x.to_bits());
        }
    }
    for w in &pose.weights {
        h.write_usize(w.len());
        for x in w {
            h.write_u32(x.to_bits());
        }
    }
    if let Some(f) = face {
        f.hash_into(&mut h);
    }
    h.finish()
}
