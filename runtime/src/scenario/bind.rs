//! Binding a scenario's names to its character: morph targets (exactly, else through the ARKit
//! canonicaliser, as the face controller's overrides match), nodes, expressions and recorded
//! hashes; each assertion becomes a [`Check`] with indices, or a problem at its pointer.

use std::collections::HashSet;

use mien_core::face::{Animator, AvatarState};
use mien_core::rig::{Character, NodeId};

use super::Problem;
use super::model::{Assertion, BoneMeasure, FaceAction, Range};

/// A resolved assertion.
pub enum Check {
    /// Weight of target `target` on node `node`'s mesh.
    Morph {
        /// Mesh node index.
        node: usize,
        /// Target index in its mesh.
        target: usize,
        /// `target on node`.
        label: String,
        /// Bounds.
        range: Range,
    },
    /// A node's world position or forward component.
    Bone {
        /// Node index.
        node: usize,
        /// 0, 1, 2.
        axis: usize,
        /// Position or forward.
        of: BoneMeasure,
        /// `eyeLeft position y`.
        label: String,
        /// Bounds.
        range: Range,
    },
    /// A node's world height, placement included.
    BoneY {
        /// Node index.
        node: usize,
        /// `LeftFoot height`.
        label: String,
        /// Bounds.
        range: Range,
    },
    /// The slide of a planted foot.
    FootSlide {
        /// The leg, in the foot definition's order.
        leg: usize,
        /// `LeftFoot slide while planted`.
        label: String,
        /// Largest allowed, metres.
        max: f64,
    },
    /// A spring chain's tip.
    ChainTip {
        /// The spring, in the simulation's order.
        spring: usize,
        /// 0, 1, 2.
        axis: usize,
        /// `hair tip y`.
        label: String,
        /// Bounds.
        range: Range,
    },
    /// The cloth's largest stretch.
    ClothMaxStretch {
        /// Largest allowed.
        max: f64,
    },
    /// The hair guides' mean tip.
    HairTip {
        /// 0, 1, 2.
        axis: usize,
        /// Bounds.
        range: Range,
    },
    /// Media time.
    Time(Range),
    /// Avatar state.
    State(AvatarState),
    /// A recorded hash.
    Hash {
        /// Its name.
        name: String,
        /// Expected.
        equals: u64,
    },
}

/// Whether some drawn mesh has a target called `name` (exactly or canonically), as overrides
/// match.
fn has_target(ch: &Character, name: &str) -> bool {
    mesh_targets(ch).any(|(_, names)| find_target(names, name).is_some())
}

fn mesh_targets(ch: &Character) -> impl Iterator<Item = (NodeId, &Vec<String>)> {
    ch.mesh_nodes()
        .into_iter()
        .filter_map(move |n| ch.node_mesh(n).map(|(_, m)| (n, &m.target_names)))
}

/// The index of `name` among `names`: exact, else by canonical ARKit name.
fn find_target(names: &[String], name: &str) -> Option<usize> {
    use mien_core::anim::canon::canonical_name;
    names.iter().position(|n| n == name).or_else(|| {
        let c = canonical_name(name)?;
        names.iter().position(|n| canonical_name(n) == Some(c))
    })
}

/// Check that every expression and override target of a face step exists.
pub fn face_names(
    ch: &Character,
    a: &Animator,
    actions: &[FaceAction],
    at: &str,
    p: &mut Vec<Problem>,
) {
    for act in actions {
        match act {
            FaceAction::Expression(name, _) if !a.face().expression_names().any(|n| n == name) => {
                p.push(Problem::new(
                    format!("{at}/expression"),
                    format!(
                        "unknown expression `{name}`; the face has {}",
                        a.face().expression_names().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            FaceAction::Override(target, _) if !has_target(ch, target) => {
                p.push(Problem::new(
                    format!("{at}/override/target"),
                    format!("no mesh of the character has a morph target `{target}`"),
                ));
            }
            _ => {}
        }
    }
}

/// The node named `node`, or a problem at `{at}/node` listing some of the names there are.
fn node_index(ch: &Character, node: &str, at: &str, p: &mut Vec<Problem>) -> Option<usize> {
    let found = ch
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some(node));
    if found.is_none() {
        let names: Vec<&str> = ch
            .nodes
            .iter()
            .filter_map(|n| n.name.as_deref())
            .take(12)
            .collect();
        p.push(Problem::new(
            format!("{at}/node"),
            format!(
                "the character has no node named `{node}` (it has {}{})",
                names.join(", "),
                if ch.nodes.len() > 12 { ", …" } else { "" }
            ),
        ));
    }
    found
}

/// Resolve assertion `a` (at pointer `at`) against `ch` and the hashes recorded before it.
pub(crate) fn assertion(
    ch: &Character,
    a: &Assertion,
    hashes: &HashSet<&str>,
    body: &super::body::BodyPlan,
    dynamics: &crate::dynamics::Dynamics,
    at: &str,
    p: &mut Vec<Problem>,
) -> Option<Check> {
    if let Some(Range {
        min: Some(lo),
        max: Some(hi),
    }) = a.range()
    {
        if lo > hi {
            p.push(Problem::new(
                format!("{at}/min"),
                format!("{lo} is above max {hi}"),
            ));
            return None;
        }
    }
    match a {
        Assertion::Morph {
            target,
            node,
            range,
        } => {
            let found = mesh_targets(ch)
                .filter(|(n, _)| {
                    node.as_ref()
                        .is_none_or(|want| ch.nodes[n.index()].name.as_ref() == Some(want))
                })
                .find_map(|(n, names)| find_target(names, target).map(|k| (n, k)));
            match found {
                Some((n, k)) => Some(Check::Morph {
                    node: n.index(),
                    target: k,
                    label: format!("{target} on {}", crate::node_label(ch, n.index())),
                    range: *range,
                }),
                None => {
                    let (ptr, what) = match node {
                        Some(want)
                            if !mesh_targets(ch)
                                .any(|(n, _)| ch.nodes[n.index()].name.as_ref() == Some(want)) =>
                        {
                            (
                                format!("{at}/node"),
                                format!("no drawn mesh node is named `{want}`"),
                            )
                        }
                        Some(want) => (
                            format!("{at}/target"),
                            format!("mesh node `{want}` has no morph target `{target}`"),
                        ),
                        None => (
                            format!("{at}/target"),
                            format!("no mesh of the character has a morph target `{target}`"),
                        ),
                    };
                    p.push(Problem::new(ptr, what));
                    None
                }
            }
        }
        Assertion::Bone {
            node,
            axis,
            of,
            range,
        } => node_index(ch, node, at, p).map(|k| Check::Bone {
            node: k,
            axis: *axis,
            of: *of,
            label: format!(
                "{node} {} {}",
                match of {
                    BoneMeasure::Position => "position",
                    BoneMeasure::Forward => "forward",
                },
                ["x", "y", "z"][*axis]
            ),
            range: *range,
        }),
        Assertion::BoneY { node, range } => node_index(ch, node, at, p).map(|k| Check::BoneY {
            node: k,
            label: format!("{node} height"),
            range: *range,
        }),
        Assertion::FootSlide { foot, max } => {
            if body.feet.is_empty() {
                p.push(Problem::new(
                    format!("{at}/foot"),
                    "foot slide is measured on planted feet, and this scenario places none (body.foot_ik)",
                ));
                return None;
            }
            match body.feet.iter().position(|f| f == foot) {
                Some(leg) => Some(Check::FootSlide {
                    leg,
                    label: format!("{foot} slide while planted"),
                    max: *max,
                }),
                None => {
                    p.push(Problem::new(
                        format!("{at}/foot"),
                        format!(
                            "`{foot}` is not the ankle of a placed leg (they are {})",
                            body.feet.join(", ")
                        ),
                    ));
                    None
                }
            }
        }
        Assertion::ChainTip {
            spring,
            axis,
            range,
        } => match body.springs.iter().position(|s| s == spring) {
            Some(k) => Some(Check::ChainTip {
                spring: k,
                axis: *axis,
                label: format!("{spring} tip {}", ["x", "y", "z"][*axis]),
                range: *range,
            }),
            None if body.springs.is_empty() => {
                p.push(Problem::new(
                    format!("{at}/spring"),
                    "this scenario simulates no spring bones (body.springs)",
                ));
                None
            }
            None => {
                p.push(Problem::new(
                    format!("{at}/spring"),
                    format!(
                        "no simulated spring is named `{spring}` (they are {})",
                        body.springs.join(", ")
                    ),
                ));
                None
            }
        },
        Assertion::ClothMaxStretch { max } => {
            if dynamics.cloth.is_none() {
                p.push(Problem::new(
                    at.to_string(),
                    "the character wears no cloth (its character file's `cloth`)",
                ));
                return None;
            }
            Some(Check::ClothMaxStretch { max: *max })
        }
        Assertion::HairTip { axis, range } => {
            if dynamics.hair.is_none() {
                p.push(Problem::new(
                    at.to_string(),
                    "the character has no hair (its character file's `hair`)",
                ));
                return None;
            }
            Some(Check::HairTip {
                axis: *axis,
                range: *range,
            })
        }
        Assertion::Time(r) => Some(Check::Time(*r)),
        Assertion::State(s) => Some(Check::State(*s)),
        Assertion::Hash { name, equals } => {
            if !hashes.contains(name.as_str()) {
                p.push(Problem::new(
                    format!("{at}/name"),
                    format!("no earlier step records a hash named `{name}`"),
                ));
                return None;
            }
            Some(Check::Hash {
                name: name.clone(),
                equals: *equals,
            })
        }
    }
}
