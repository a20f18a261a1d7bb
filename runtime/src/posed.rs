//! Every posed frame obeys the rest pose's rule ([`rest_geometry`]): finite and
//! within ±[`MAX_COORD_M`] metres, whatever the outputs asked for. Checked per frame on what the
//! run has anyway, without allocating:
//!
//! - the node world matrices the CPU computes every frame (every engine): a watched node's matrix
//!   must be finite with every element within ±[`MAX_COORD_M`] (a translation within the bound,
//!   no scale above 10⁶);
//! - the posed vertices where the backend holds them on the CPU (the CPU backend);
//! - the lift's centres on a GPU backend, on frames whose splats are read back anyway.
//!
//! A refusal names the character file, the frame, its media time and, where one is to blame, the
//! node whose world matrix went bad.

use glam::Mat4;
use mien_core::rig::Character;

use crate::error::{Error, Result};
use crate::text::num;

/// The largest coordinate a posed position may have, metres, either way: the rest pose's rule and
/// every frame's. Beyond it a file's units or an animation's values are wrong.
pub const MAX_COORD_M: f32 = 1e6;

/// The posed rest geometry `(V,3)` metres must be finite and within ±[`MAX_COORD_M`].
///
/// # Errors
/// [`Error::Invalid`] naming `source` (the character file), the first bad vertex and its position.
pub fn rest_geometry(source: &str, positions: &[[f32; 3]]) -> Result<()> {
    if let Some((i, p)) = positions
        .iter()
        .enumerate()
        .find(|(_, p)| !point_ok(&p[..]))
    {
        let why = if p.iter().all(|c| c.is_finite()) {
            format!("farther than {} m from the origin", num(MAX_COORD_M))
        } else {
            "not a finite position".into()
        };
        return Err(Error::invalid(
            source,
            format!(
                "the rest pose puts vertex {i} at ({}, {}, {}) m, {why}; check the file's node transforms, positions and units",
                num(p[0]),
                num(p[1]),
                num(p[2])
            ),
        ));
    }
    Ok(())
}

/// Whether `m` is finite with every element within ±[`MAX_COORD_M`].
fn matrix_ok(m: &Mat4) -> bool {
    m.to_cols_array()
        .iter()
        .all(|c| c.is_finite() && c.abs() <= MAX_COORD_M)
}

/// Whether a position is finite and within ±[`MAX_COORD_M`] on every axis.
fn point_ok(p: &[f32]) -> bool {
    p.iter().all(|c| c.is_finite() && c.abs() <= MAX_COORD_M)
}

/// The per-frame check of one character: which nodes it watches.
pub struct PosedCheck {
    source: String,
    /// Nodes whose rest world matrix obeys the rule (a node already outside it at rest, such as
    /// a far-away camera, does not place the geometry the rest check accepted).
    watched: Vec<usize>,
}

impl PosedCheck {
    /// The check for `ch`, whose rest world matrices are `rest_world` `(N,)`.
    pub fn new(ch: &Character, rest_world: &[Mat4]) -> Self {
        PosedCheck {
            source: ch.source.clone(),
            watched: (0..rest_world.len())
                .filter(|&i| matrix_ok(&rest_world[i]))
                .collect(),
        }
    }

    /// The first watched node whose world matrix breaks the rule.
    fn bad_node(&self, world: &[Mat4]) -> Option<usize> {
        self.watched
            .iter()
            .copied()
            .find(|&i| world.get(i).is_some_and(|m| !matrix_ok(m)))
    }

    fn err(&self, frame: u64, t: f64, reason: String) -> Error {
        Error::Posed {
            file: self.source.clone(),
            frame,
            time_s: t,
            reason,
        }
    }

    fn node_text(ch: &Character, world: &[Mat4], i: usize) -> String {
        let m = world[i];
        let t = m.w_axis;
        let why = if !m.is_finite() {
            "is not finite".to_string()
        } else if !point_ok(&[t.x, t.y, t.z]) {
            format!(
                "places it at ({}, {}, {}) m, farther than {} m from the origin",
                num(t.x),
                num(t.y),
                num(t.z),
                num(MAX_COORD_M)
            )
        } else {
            format!(
                "scales or shears by more than {} (largest element {})",
                num(MAX_COORD_M),
                num(m.to_cols_array().iter().fold(0.0f32, |a, c| a.max(c.abs())))
            )
        };
        let name = match ch.nodes.get(i).and_then(|n| n.name.as_deref()) {
            Some(n) => format!("node {i} (`{n}`)"),
            None => format!("node {i}"),
        };
        format!("the world matrix of {name} {why}")
    }

    /// Frame `frame` at media time `t`: the world matrices `world` `(N,)`.
    ///
    /// # Errors
    /// Naming the character file, the frame, its time and the first watched node at fault.
    pub fn matrices(&self, ch: &Character, world: &[Mat4], frame: u64, t: f64) -> Result<()> {
        if let Some(i) = self.bad_node(world) {
            return Err(self.err(frame, t, format!(
                "{}; check the animation's values for that node and its parents (the rest pose's rule: every position finite and within ±{} m)",
                Self::node_text(ch, world, i),
                num(MAX_COORD_M)
            )));
        }
        Ok(())
    }

    /// Frame `frame` at media time `t`: posed positions `(V,3)` or `(V,4)` (xyz first), metres.
    ///
    /// # Errors
    /// Naming the character file, the frame, its time, the first vertex out of range and its
    /// position, and the node to blame when a world matrix is.
    pub fn positions<const K: usize>(
        &self,
        ch: &Character,
        world: &[Mat4],
        positions: &[[f32; K]],
        frame: u64,
        t: f64,
    ) -> Result<()> {
        let Some((v, p)) = positions
            .iter()
            .enumerate()
            .find(|(_, p)| !point_ok(&p[..3.min(K)]))
        else {
            return Ok(());
        };
        let why = if p.iter().take(3).all(|c| c.is_finite()) {
            format!("farther than {} m from the origin", num(MAX_COORD_M))
        } else {
            "not a finite position".into()
        };
        let blame = match self.bad_node(world) {
            Some(i) => format!("; {}", Self::node_text(ch, world, i)),
            None => String::new(),
        };
        let c = |k: usize| p.get(k).map_or_else(String::new, |x| num(*x));
        Err(self.err(frame, t, format!(
            "puts vertex {v} at ({}, {}, {}) m, {why} (the rest pose's rule){blame}; check the animation's values (clips, stream, morph weights)",
            c(0),
            c(1),
            c(2)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn character(n: usize) -> Character {
        let mut ch = mien_core::sample::sample_head();
        ch.source = "head.glb".into();
        ch.nodes.truncate(n.max(1));
        ch
    }

    #[test]
    fn finite_in_range_frames_pass_and_bad_ones_name_frame_time_and_node() {
        let ch = character(1);
        let rest = vec![Mat4::IDENTITY];
        let c = PosedCheck::new(&ch, &rest);
        c.matrices(&ch, &rest, 0, 0.0).unwrap();
        c.positions(&ch, &rest, &[[1e6f32, -1e6, 0.0]], 0, 0.0)
            .unwrap();
        let far = [Mat4::from_translation(Vec3::new(1e30, 0.0, 0.0))];
        let e = c.matrices(&ch, &far, 7, 0.25).unwrap_err().to_string();
        for n in [
            "head.glb",
            "frame 7",
            "media time 0.250 s",
            "node 0",
            "1e30",
        ] {
            assert!(e.contains(n), "lacks `{n}`: {e}");
        }
        let huge = [Mat4::from_scale(Vec3::splat(3e38))];
        let e = c
            .positions(
                &ch,
                &huge,
                &[[0.0f32; 3], [f32::INFINITY, 0.0, 0.0]],
                3,
                0.1,
            )
            .unwrap_err()
            .to_string();
        for n in ["frame 3", "vertex 1", "not a finite position", "node 0"] {
            assert!(e.contains(n), "lacks `{n}`: {e}");
        }
        // Just past the bound, from morph weights alone: no node to blame.
        let e = c
            .positions(&ch, &rest, &[[0.0f32, 1.000_001e6, 0.0, 0.0]], 1, 0.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("farther than 1000000 m") && !e.contains("node"),
            "{e}"
        );
    }

    #[test]
    fn a_node_already_outside_at_rest_is_not_watched() {
        let ch = character(2);
        let rest = vec![
            Mat4::IDENTITY,
            Mat4::from_translation(Vec3::new(5e6, 0.0, 0.0)),
        ];
        let c = PosedCheck::new(&ch, &rest);
        c.matrices(&ch, &rest, 0, 0.0).unwrap();
        let nan = [Mat4::IDENTITY, Mat4::from_scale(Vec3::splat(f32::NAN))];
        c.matrices(&ch, &nan, 0, 0.0).unwrap();
        let nan = [Mat4::from_scale(Vec3::splat(f32::NAN)), Mat4::IDENTITY];
        let e = c.matrices(&ch, &nan, 2, 1.0).unwrap_err().to_string();
        assert!(e.contains("is not finite") && e.contains("node 0"), "{e}");
    }
}
