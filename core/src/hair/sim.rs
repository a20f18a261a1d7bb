//! Guide-strand simulation (issue 27 item 3, seed 003 "Hair"): world space, deterministic, a
//! fixed internal step with the output interpolated between steps.
//!
//! Each step of `h = 1 / step_hz` seconds, for every guide (root first):
//! 1. the root is pinned to its place on the head (the head bone's transform interpolated between
//!    the last frame and this one, so a fast head does not leave the roots behind);
//! 2. every other point is predicted, `p = x + h·v + h²·(g + w)` (gravity, and the wind as an
//!    acceleration across the strand: its component along the segment is removed);
//! 3. pulled back toward its rest shape on the head, `p += (r − p)·(1 − e^(−k·h))` with `k`
//!    falling linearly from `stiffness_root` at the root to `stiffness_tip` at the tip;
//! 4. pushed out of the capsule colliders (onto the surface along the nearest axis point);
//! 5. **follow the leader** (Müller, Kim and Chentanez, "Fast Simulation of Inextensible Hair and
//!    Fur", VRIPHYS 2012): from the root outward each point is put at its segment's rest length
//!    from the one before, `pₖ = pₖ₋₁ + Lₖ·(pₖ − pₖ₋₁)/|pₖ − pₖ₋₁|`, so lengths hold to rounding
//!    (not the 10–20 % a few distance-constraint iterations leave at 30–144 Hz);
//! 6. velocities from the positions with the paper's correction (DFTL): `vₖ = (pₖ − xₖ)/h −
//!    s·dₖ₊₁/h`, `d` the follow-the-leader corrections, `s` = `ftl_damping`, then damped by
//!    `e^(−damping·h)`.
//!
//! Users' reports honoured: a groom spawned on a posed head starts on it, pushed out of the
//! colliders with no velocity (no bounce); a still head settles to a still groom (no flicker);
//! the state is kept relative to the head and the output interpolated between fixed steps in the
//! head's current frame, so a capped simulation rate does not let the head pass through the hair;
//! a head moving farther than `teleport_m` in one update resets the groom onto it (no whip).

use glam::{DMat4, DQuat, DVec3};

use crate::error::{Error, Result, short};

/// Largest gravity or wind, m/s².
pub const MAX_ACCEL: f64 = 2000.0;
/// Largest stiffness or damping, 1/s.
pub const MAX_RATE: f64 = 10_000.0;

/// Rounds of push-out and follow-the-leader a reset runs at most (it stops at the first round
/// that finds no point inside a collider).
const RESET_ITERATIONS: usize = 32;

/// Most fixed steps one update runs (a longer gap is a cut: the groom restarts on the head).
pub const MAX_STEPS_PER_UPDATE: u32 = 64;

/// Simulation settings (module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HairSimOptions {
    /// Fixed step rate, Hz (1–1000; default 120).
    pub step_hz: f64,
    /// Gravity, m/s² (default (0, −9.81, 0)).
    pub gravity: DVec3,
    /// Wind, m/s², across the strands (default none).
    pub wind: DVec3,
    /// Shape stiffness at the root and the tip, 1/s (≥ 0; default 60 and 4).
    pub stiffness: [f64; 2],
    /// Velocity damping, 1/s (≥ 0; default 4).
    pub damping: f64,
    /// The follow-the-leader velocity correction `s` (0–1; default 0.9, the paper's).
    pub ftl_damping: f64,
    /// A head moving farther than this in one update resets the groom (metres, > 0; default 1).
    pub teleport_m: f64,
}

impl Default for HairSimOptions {
    fn default() -> Self {
        HairSimOptions {
            step_hz: 120.0,
            gravity: DVec3::new(0.0, -9.81, 0.0),
            wind: DVec3::ZERO,
            stiffness: [60.0, 4.0],
            damping: 4.0,
            ftl_damping: 0.9,
            teleport_m: 1.0,
        }
    }
}

/// A capsule collider in world space: the segment `a`–`b` swept by `radius` (metres).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HairCapsule {
    /// One end.
    pub a: DVec3,
    /// The other end.
    pub b: DVec3,
    /// Radius.
    pub radius: f64,
}

impl HairCapsule {
    /// `p` moved onto the capsule's surface when inside it, else `None`.
    pub fn push_out(&self, p: DVec3) -> Option<DVec3> {
        let ab = self.b - self.a;
        let t = if ab.length_squared() > 0.0 {
            ((p - self.a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = self.a + ab * t;
        let d = p - c;
        let len = d.length();
        if len >= self.radius {
            return None;
        }
        let n = if len > 1e-12 {
            d / len
        } else {
            ab.any_orthonormal_vector()
        };
        Some(c + n * self.radius)
    }
}

/// What one update did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct HairSimReport {
    /// Fixed steps run.
    pub steps: u32,
    /// The groom was reset onto the head (first update, a teleport, or a cut).
    pub reset: bool,
    /// Points pushed out of colliders in the last step.
    pub collided: usize,
    /// Largest relative segment length error after the last step.
    pub max_length_error: f64,
}

/// The simulation of a groom's guides (module doc).
#[derive(Clone, Debug)]
pub struct HairSim {
    options: HairSimOptions,
    segments: usize,
    /// Rest points `(G·(S+1))` in the head bone's space.
    rest: Vec<DVec3>,
    /// Rest segment lengths `(G·(S+1))`, 0 at roots.
    lengths: Vec<f64>,
    x: Vec<DVec3>,
    v: Vec<DVec3>,
    /// Scratch of a step: the positions before it, and the follow-the-leader corrections.
    old: Vec<DVec3>,
    d: Vec<DVec3>,
    /// The state at the last two steps in the head's space at each step, for interpolation.
    local_prev: Vec<DVec3>,
    local_cur: Vec<DVec3>,
    last_head: Option<DMat4>,
    left: f64,
    out: Vec<DVec3>,
    /// A mesh collider in the head bone's space and its margin, metres.
    mesh: Option<(std::sync::Arc<crate::hair::MeshSdf>, f64)>,
}

fn lerp_head(a: &DMat4, b: &DMat4, t: f64) -> DMat4 {
    let (sa, ra, ta) = a.to_scale_rotation_translation();
    let (sb, rb, tb) = b.to_scale_rotation_translation();
    DMat4::from_scale_rotation_translation(
        sa.lerp(sb, t),
        DQuat::slerp(ra, rb, t).normalize(),
        ta.lerp(tb, t),
    )
}

impl HairSim {
    /// A simulation of `guides` (`(G·(S+1), 3)`, head-bone space, root first, as
    /// [`crate::hair::Groom::guides`]) of `segments` segments each.
    ///
    /// # Errors
    /// [`Error::Invalid`] for guides not a whole number of strands, a non-finite or zero-length
    /// segment, or options out of range (each named).
    pub fn new(guides: &[[f32; 3]], segments: usize, options: HairSimOptions) -> Result<Self> {
        let s1 = segments + 1;
        let bad = |what: &str, reason: String| Error::Invalid {
            what: format!("hair simulation {what}"),
            reason,
        };
        if segments == 0 || guides.is_empty() || !guides.len().is_multiple_of(s1) {
            return Err(bad(
                "guides",
                format!("{} points are not whole strands of {s1}", guides.len()),
            ));
        }
        let o = options;
        if !(o.step_hz.is_finite() && (1.0..=1000.0).contains(&o.step_hz)) {
            return Err(bad("step_hz", format!("{} is not 1–1000 Hz", o.step_hz)));
        }
        if !(o.gravity.is_finite()
            && o.wind.is_finite()
            && o.gravity.length() <= MAX_ACCEL
            && o.wind.length() <= MAX_ACCEL)
        {
            return Err(bad(
                "forces",
                format!("gravity and wind must be finite and at most {MAX_ACCEL} m/s²"),
            ));
        }
        // Each option on its own, named with its value.
        let rate = |k: f64| k.is_finite() && (0.0..=MAX_RATE).contains(&k);
        if !o.stiffness.iter().all(|k| rate(*k)) {
            return Err(bad(
                "stiffness",
                format!(
                    "[{}, {}] is not two rates from 0 to {MAX_RATE} 1/s (root, tip)",
                    short(o.stiffness[0]),
                    short(o.stiffness[1])
                ),
            ));
        }
        if !rate(o.damping) {
            return Err(bad(
                "damping",
                format!(
                    "{} is not a rate from 0 to {MAX_RATE} 1/s",
                    short(o.damping)
                ),
            ));
        }
        if !(0.0..=1.0).contains(&o.ftl_damping) {
            return Err(bad(
                "ftl_damping",
                format!("{} is not from 0 to 1", short(o.ftl_damping)),
            ));
        }
        if !(o.teleport_m.is_finite() && o.teleport_m > 0.0) {
            return Err(bad(
                "teleport_m",
                format!("{} is not a distance > 0 m", short(o.teleport_m)),
            ));
        }
        let rest: Vec<DVec3> = guides
            .iter()
            .map(|p| DVec3::from(p.map(f64::from)))
            .collect();
        let mut lengths = vec![0.0; rest.len()];
        for (i, l) in lengths.iter_mut().enumerate() {
            if i % s1 != 0 {
                *l = rest[i].distance(rest[i - 1]);
                if !(l.is_finite() && *l > 0.0) {
                    return Err(bad(
                        "guides",
                        format!("strand {} segment {} has length {l}", i / s1, i % s1),
                    ));
                }
            }
        }
        let n = rest.len();
        Ok(HairSim {
            options,
            segments,
            rest,
            lengths,
            x: vec![DVec3::ZERO; n],
            v: vec![DVec3::ZERO; n],
            old: vec![DVec3::ZERO; n],
            d: vec![DVec3::ZERO; n],
            local_prev: vec![DVec3::ZERO; n],
            local_cur: vec![DVec3::ZERO; n],
            last_head: None,
            left: 0.0,
            out: vec![DVec3::ZERO; n],
            mesh: None,
        })
    }

    /// Change the wind from the next step on, m/s².
    ///
    /// # Errors
    /// Wind that is not finite.
    pub fn set_wind(&mut self, wind: DVec3) -> Result<()> {
        if !(wind.is_finite() && wind.length() <= MAX_ACCEL) {
            return Err(Error::Invalid {
                what: "hair wind".into(),
                reason: format!("{wind} is not finite or over {MAX_ACCEL} m/s²"),
            });
        }
        self.options.wind = wind;
        Ok(())
    }

    /// Collide with `mesh` (a signed distance field in the head bone's space, moving with the
    /// head) as well as the capsules, keeping `margin` metres out; `None` removes it.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a margin that is not finite and ≥ 0.
    pub fn set_mesh_collider(
        &mut self,
        mesh: Option<std::sync::Arc<crate::hair::MeshSdf>>,
        margin: f64,
    ) -> Result<()> {
        if !(margin.is_finite() && margin >= 0.0) {
            return Err(Error::Invalid {
                what: "hair mesh collider margin".into(),
                reason: format!("{margin} is not a distance ≥ 0"),
            });
        }
        self.mesh = mesh.map(|m| (m, margin));
        Ok(())
    }

    /// Segments per strand.
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// The guides' simulated velocities `(G·(S+1))`, m/s.
    pub fn velocities(&self) -> &[DVec3] {
        &self.v
    }

    /// Forget the head's last place: the next [`HairSim::update`] puts the groom back on the
    /// head at rest (a cut: a seek, a gap, a new shot).
    pub fn restart(&mut self) {
        self.last_head = None;
    }

    /// The guides' points as last output `(G·(S+1))`, world metres.
    pub fn points(&self) -> &[DVec3] {
        &self.out
    }

    /// Put the groom on the head at rest, pushed out of the colliders, still.
    fn reset(&mut self, head: &DMat4, colliders: &[HairCapsule]) {
        for (x, r) in self.x.iter_mut().zip(&self.rest) {
            *x = head.transform_point3(*r);
        }
        // Each strand out of the colliders and back to its rest lengths, a few times over
        // (lengths last), on its own: its result does not depend on the other strands.
        let head_inv = head.inverse();
        let mesh = self.mesh.as_ref();
        let s1 = self.segments + 1;
        for (((x, d), rest), lengths) in self
            .x
            .chunks_mut(s1)
            .zip(self.d.chunks_mut(s1))
            .zip(self.rest.chunks(s1))
            .zip(self.lengths.chunks(s1))
        {
            for _ in 0..RESET_ITERATIONS {
                let mut inside = false;
                for p in x.iter_mut().skip(1) {
                    for c in colliders {
                        if let Some(q) = c.push_out(*p) {
                            *p = q;
                            inside = true;
                        }
                    }
                    if let Some(q) = mesh_out(mesh, *p, head, &head_inv) {
                        *p = q;
                        inside = true;
                    }
                }
                if !inside {
                    break;
                }
                follow_the_leader(x, d, rest, lengths);
            }
        }
        self.v.fill(DVec3::ZERO);
        for (l, x) in self.local_cur.iter_mut().zip(&self.x) {
            *l = head_inv.transform_point3(*x);
        }
        self.local_prev.clone_from(&self.local_cur);
        self.left = 0.0;
    }

    /// One fixed step (steps 1–6 of the module doc) to the head at `head`, every strand on its
    /// own (in parallel with the `parallel` feature for a large groom: the strands do not
    /// interact, so the result is the same bits either way); then the state in the head's frame
    /// into `local_cur` (the one before kept in `local_prev`). Returns the points pushed out of
    /// colliders.
    fn step(&mut self, head: &DMat4, colliders: &[HairCapsule]) -> usize {
        std::mem::swap(&mut self.local_prev, &mut self.local_cur);
        let c = StepCtx {
            o: self.options,
            segments: self.segments,
            head: *head,
            head_inv: head.inverse(),
            colliders,
            mesh: self.mesh.as_ref(),
        };
        let s1 = self.segments + 1;
        #[cfg(feature = "parallel")]
        if self.x.len() >= PARALLEL_MIN_POINTS {
            use rayon::prelude::*;
            return self
                .x
                .par_chunks_mut(s1)
                .zip(self.v.par_chunks_mut(s1))
                .zip(self.old.par_chunks_mut(s1))
                .zip(self.d.par_chunks_mut(s1))
                .zip(self.local_cur.par_chunks_mut(s1))
                .zip(self.rest.par_chunks(s1))
                .zip(self.lengths.par_chunks(s1))
                .map(|((((((x, v), old), d), cur), rest), lengths)| {
                    c.strand(Strand {
                        x,
                        v,
                        old,
                        d,
                        cur,
                        rest,
                        lengths,
                    })
                })
                .sum();
        }
        self.x
            .chunks_mut(s1)
            .zip(self.v.chunks_mut(s1))
            .zip(self.old.chunks_mut(s1))
            .zip(self.d.chunks_mut(s1))
            .zip(self.local_cur.chunks_mut(s1))
            .zip(self.rest.chunks(s1))
            .zip(self.lengths.chunks(s1))
            .map(|((((((x, v), old), d), cur), rest), lengths)| {
                c.strand(Strand {
                    x,
                    v,
                    old,
                    d,
                    cur,
                    rest,
                    lengths,
                })
            })
            .sum()
    }

    /// Advance by `dt` seconds to a frame whose head bone has world transform `head`, with the
    /// capsule colliders where they are this frame; the output ([`HairSim::points`]) is the state
    /// interpolated between the last two fixed steps and placed on `head`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a `dt` that is not finite and ≥ 0, or a non-finite `head`.
    pub fn update(
        &mut self,
        dt: f64,
        head: DMat4,
        colliders: &[HairCapsule],
    ) -> Result<HairSimReport> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::Invalid {
                what: "hair simulation dt".into(),
                reason: format!("{dt} is not a time step in seconds ≥ 0"),
            });
        }
        if !head.is_finite() {
            return Err(Error::Invalid {
                what: "hair simulation head".into(),
                reason: "not a finite matrix".into(),
            });
        }
        let mut report = HairSimReport::default();
        let h = 1.0 / self.options.step_hz;
        let steps_due = ((self.left + dt) / h).floor();
        let jump = self
            .last_head
            .map(|l| l.w_axis.truncate().distance(head.w_axis.truncate()));
        if self.last_head.is_none()
            || jump.is_some_and(|j| j > self.options.teleport_m)
            || steps_due > f64::from(MAX_STEPS_PER_UPDATE)
        {
            self.reset(&head, colliders);
            report.reset = true;
        } else {
            let last = self.last_head.unwrap_or(head);
            self.left += dt;
            let n = steps_due as u32;
            for k in 1..=n {
                // The head at this step's time within the frame.
                let f = if dt > 0.0 {
                    ((f64::from(k) * h - (self.left - dt)) / dt).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                let at = lerp_head(&last, &head, f);
                report.collided = self.step(&at, colliders);
            }
            self.left -= f64::from(n) * h;
            report.steps = n;
        }
        self.last_head = Some(head);
        // The output: between the last two steps, in the head's frame now.
        let alpha = (self.left / h).clamp(0.0, 1.0);
        let s1 = self.segments + 1;
        // Per strand: its output points, and its largest relative length error. Blending two
        // states can cut a chord through a collider a point slid around between them: the drawn
        // points are pushed out of this frame's colliders (roots stay pinned).
        // The mesh field lives in the head's space, as the states do: a state on its own (the
        // blend at 0 or 1, as at a frame rate dividing the step rate) is already outside it.
        let blended = alpha > 1e-9 && alpha < 1.0 - 1e-9;
        let mesh = self.mesh.as_ref().filter(|_| blended);
        let head_inv = head.inverse();
        let strand =
            |(((o, a), b), (x, l)): (((&mut [DVec3], &[DVec3]), &[DVec3]), (&[DVec3], &[f64]))| {
                for (k, ((o, a), b)) in o.iter_mut().zip(a).zip(b).enumerate() {
                    let mut p = head.transform_point3(a.lerp(*b, alpha));
                    if k > 0 {
                        for c in colliders {
                            if let Some(q) = c.push_out(p) {
                                p = q;
                            }
                        }
                        if let Some(q) = mesh_out(mesh, p, &head, &head_inv) {
                            p = q;
                        }
                    }
                    *o = p;
                }
                (1..x.len())
                    .map(|k| (x[k].distance(x[k - 1]) / l[k] - 1.0).abs())
                    .fold(0.0, f64::max)
            };
        #[cfg(feature = "parallel")]
        if self.x.len() >= PARALLEL_MIN_POINTS {
            use rayon::prelude::*;
            report.max_length_error = self
                .out
                .par_chunks_mut(s1)
                .zip(self.local_prev.par_chunks(s1))
                .zip(self.local_cur.par_chunks(s1))
                .zip(self.x.par_chunks(s1).zip(self.lengths.par_chunks(s1)))
                .map(strand)
                .reduce(|| 0.0, f64::max);
            return Ok(report);
        }
        report.max_length_error = self
            .out
            .chunks_mut(s1)
            .zip(self.local_prev.chunks(s1))
            .zip(self.local_cur.chunks(s1))
            .zip(self.x.chunks(s1).zip(self.lengths.chunks(s1)))
            .map(strand)
            .fold(0.0, f64::max);
        Ok(report)
    }
}

/// Points from which [`HairSim`]'s step runs over the strands in parallel (feature `parallel`):
/// below it waking the thread pool costs more than the work (the built-in groom's 4,160 points
/// step in ~0.25 ms on one core).
#[cfg(feature = "parallel")]
pub const PARALLEL_MIN_POINTS: usize = 16_384;

/// `p` (world) pushed out of `mesh` (a field in the head bone's space and its margin) on the
/// head at `head` (`inv` its inverse).
fn mesh_out(
    mesh: Option<&(std::sync::Arc<crate::hair::MeshSdf>, f64)>,
    p: DVec3,
    head: &DMat4,
    inv: &DMat4,
) -> Option<DVec3> {
    let (m, margin) = mesh?;
    m.push_out(inv.transform_point3(p), *margin)
        .map(|q| head.transform_point3(q))
}

/// What one step shares across the strands.
struct StepCtx<'a> {
    o: HairSimOptions,
    segments: usize,
    head: DMat4,
    head_inv: DMat4,
    colliders: &'a [HairCapsule],
    mesh: Option<&'a (std::sync::Arc<crate::hair::MeshSdf>, f64)>,
}

/// One guide's state `(S+1)` each, root first.
struct Strand<'a> {
    x: &'a mut [DVec3],
    v: &'a mut [DVec3],
    old: &'a mut [DVec3],
    d: &'a mut [DVec3],
    cur: &'a mut [DVec3],
    rest: &'a [DVec3],
    lengths: &'a [f64],
}

impl StepCtx<'_> {
    /// Steps 1–6 on one strand, then its state in the head's frame into `cur`; the points pushed
    /// out of colliders.
    fn strand(&self, s: Strand<'_>) -> usize {
        let o = self.o;
        let h = 1.0 / o.step_hz;
        let mut collided = 0;
        s.old.copy_from_slice(s.x);
        for k in 0..s.x.len() {
            let target = self.head.transform_point3(s.rest[k]);
            if k == 0 {
                s.x[0] = target;
                continue;
            }
            let seg = (s.x[k] - s.x[k - 1]).normalize_or(DVec3::ZERO);
            let wind = o.wind - seg * o.wind.dot(seg);
            let mut p = s.x[k] + s.v[k] * h + (o.gravity + wind) * (h * h);
            let t = k as f64 / self.segments as f64;
            let stiff = o.stiffness[0] + (o.stiffness[1] - o.stiffness[0]) * t;
            p += (target - p) * (1.0 - (-stiff * h).exp());
            for c in self.colliders {
                if let Some(q) = c.push_out(p) {
                    p = q;
                    collided += 1;
                }
            }
            if let Some(q) = mesh_out(self.mesh, p, &self.head, &self.head_inv) {
                p = q;
                collided += 1;
            }
            s.x[k] = p;
        }
        follow_the_leader(s.x, s.d, s.rest, s.lengths);
        let keep = (-o.damping * h).exp();
        let n = s.x.len();
        for k in 0..n {
            if k == 0 {
                s.v[0] = DVec3::ZERO;
                continue;
            }
            let next = if k + 1 < n { s.d[k + 1] } else { DVec3::ZERO };
            s.v[k] = ((s.x[k] - s.old[k]) / h - next * (o.ftl_damping / h)) * keep;
        }
        for (l, x) in s.cur.iter_mut().zip(s.x.iter()) {
            *l = self.head_inv.transform_point3(*x);
        }
        collided
    }
}

/// Step 5 on one strand's points `x` `(S+1)`, recording each point's correction in `d`.
fn follow_the_leader(x: &mut [DVec3], d: &mut [DVec3], rest: &[DVec3], lengths: &[f64]) {
    d[0] = DVec3::ZERO;
    for k in 1..x.len() {
        let prev = x[k - 1];
        let dir = (x[k] - prev).normalize_or((rest[k] - rest[k - 1]).normalize_or(DVec3::NEG_Y));
        let p = prev + dir * lengths[k];
        d[k] = p - x[k];
        x[k] = p;
    }
}

/// The simulation block of a character file's hair (`"simulation"`): every field optional,
/// defaults from [`HairSimOptions::default`].
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HairSimDef {
    /// Fixed step rate, Hz (1–1000).
    #[serde(default)]
    pub step_hz: Option<f64>,
    /// Gravity, m/s².
    #[serde(default)]
    pub gravity: Option<[f64; 3]>,
    /// Shape stiffness at the root and the tip, 1/s (≥ 0).
    #[serde(default)]
    pub stiffness: Option<[f64; 2]>,
    /// Velocity damping, 1/s (≥ 0).
    #[serde(default)]
    pub damping: Option<f64>,
    /// The follow-the-leader velocity correction (0–1).
    #[serde(default)]
    pub ftl_damping: Option<f64>,
    /// A head jump farther than this resets the groom, metres (> 0).
    #[serde(default)]
    pub teleport_m: Option<f64>,
}

impl HairSimDef {
    /// The options with the defaults filled in (checked by [`HairSim::new`]).
    pub fn options(&self) -> HairSimOptions {
        let d = HairSimOptions::default();
        HairSimOptions {
            step_hz: self.step_hz.unwrap_or(d.step_hz),
            gravity: self.gravity.map_or(d.gravity, DVec3::from),
            wind: d.wind,
            stiffness: self.stiffness.unwrap_or(d.stiffness),
            damping: self.damping.unwrap_or(d.damping),
            ftl_damping: self.ftl_damping.unwrap_or(d.ftl_damping),
            teleport_m: self.teleport_m.unwrap_or(d.teleport_m),
        }
    }
}
