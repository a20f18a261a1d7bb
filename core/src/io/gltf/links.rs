//! Checks of nodes, skins, scenes and animations that need no buffer data: how they refer to each
//! other and to accessors of the right format and count.
//!
//! Source: glTF 2.0 §3.5 (nodes: `matrix` xor TRS, unit rotation, the hierarchy a set of disjoint
//! strict trees), §3.7.3 (skins: inverse bind
//! matrices `MAT4` float, one per joint), §3.11 (animation samplers: input `SCALAR` float with
//! bounds, output formats per path, `CUBICSPLINE` with ≥ 2 keys and 3 elements per key), and the
//! glTF-Validator codes `NODE_WEIGHTS_INVALID`, `NODE_MATRIX_TRS`, `NODE_SKIN_WITH_NON_SKINNED_MESH`,
//! `ANIMATION_CHANNEL_TARGET_NODE_WEIGHTS_NO_MORPHS`, `ANIMATION_DUPLICATE_TARGETS`,
//! `ANIMATION_SAMPLER_INPUT_ACCESSOR_TOO_FEW_ELEMENTS`, `ANIMATION_SAMPLER_OUTPUT_ACCESSOR_INVALID_COUNT`,
//! `SKIN_IBM_INVALID_FORMAT`, `SCENE_NON_ROOT_NODE`.

use gltf::json;
use json::accessor::{ComponentType as C, Type};
use json::animation::{Interpolation, Property};
use json::mesh::Semantic;
use json::validation::Checked;

use super::accessor::format;
use super::checks::target_count;
use crate::error::Error;
use crate::rig::skeleton::check_forest;

/// Tolerance on `| |q| − 1 |` for rotations: glTF-Validator's `unitLengthThresholdVec4` (slightly
/// more than the error of signed 8-bit quantization).
pub(super) const UNIT_QUATERNION_TOLERANCE: f32 = 0.00769;

/// Append every problem of nodes, skins, scenes and animations to `p`.
pub(super) fn check(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    nodes(root, file, p);
    let in_cycle = hierarchy(root, file, p);
    skins(root, file, p);
    scenes(root, file, p, &in_cycle);
    animations(root, file, p);
}

/// The node hierarchy's problems (a node listing a child twice or itself, two parents, cycles
/// named with their nodes), via [`check_forest`]; returns which nodes lie on a cycle, so that the
/// scene check does not call a node of a cycle "not a root node".
fn hierarchy(root: &json::Root, file: &str, p: &mut Vec<Error>) -> Vec<bool> {
    let children: Vec<Vec<usize>> = root
        .nodes
        .iter()
        .map(|n| n.children.iter().flatten().map(|c| c.value()).collect())
        .collect();
    let forest = check_forest(file, &children);
    p.extend(forest.problems);
    forest.in_cycle
}

fn nodes(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    for (i, n) in root.nodes.iter().enumerate() {
        let f = |x: &str| format!("nodes[{i}].{x}");
        if let Some(w) = &n.weights {
            match n.mesh.map(|m| m.value()) {
                None => p.push(Error::format(
                    file,
                    f("weights"),
                    "weights on a node without a mesh",
                )),
                Some(m) if w.len() != target_count(root, m) => p.push(Error::format(
                    file,
                    f("weights"),
                    format!(
                        "{} weights for a mesh with {} morph targets",
                        w.len(),
                        target_count(root, m)
                    ),
                )),
                _ => {}
            }
        }
        if n.matrix.is_some()
            && (n.translation.is_some() || n.rotation.is_some() || n.scale.is_some())
        {
            p.push(Error::format(
                file,
                f("matrix"),
                "a node has either a matrix or translation/rotation/scale, not both",
            ));
        }
        if let Some(q) = n.rotation {
            let len = q.0.iter().map(|x| x * x).sum::<f32>().sqrt();
            if !len.is_finite() || (len - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                p.push(Error::format(
                    file,
                    f("rotation"),
                    format!("quaternion {:?} is not of unit length ({len})", q.0),
                ));
            }
        }
        for (name, v) in [("translation", n.translation), ("scale", n.scale)] {
            if v.is_some_and(|v| !v.iter().all(|x| x.is_finite())) {
                p.push(Error::format(file, f(name), "not finite"));
            }
        }
        if n.skin.is_some() {
            let skinned = n
                .mesh
                .and_then(|m| root.meshes.get(m.value()))
                .is_some_and(|m| {
                    m.primitives.iter().all(|pr| {
                        pr.attributes
                            .contains_key(&Checked::Valid(Semantic::Joints(0)))
                    })
                });
            if !skinned {
                p.push(Error::format(
                    file,
                    f("skin"),
                    "a skin on a node whose mesh has no JOINTS_0/WEIGHTS_0",
                ));
            }
        }
    }
}

fn skins(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    for (i, s) in root.skins.iter().enumerate() {
        if s.joints.is_empty() {
            p.push(Error::format(
                file,
                format!("skins[{i}].joints"),
                "a skin needs at least one joint",
            ));
        }
        for (k, j) in s.joints.iter().enumerate() {
            if s.joints[..k].contains(j) {
                p.push(Error::format_at(
                    file,
                    format!("skins[{i}].joints"),
                    k,
                    format!("node {} is listed twice", j.value()),
                ));
            }
        }
        let Some(ibm) = s.inverse_bind_matrices.map(|a| a.value()) else {
            continue;
        };
        let field = format!("skins[{i}].inverseBindMatrices");
        if let Some(fmt) = format(root, ibm)
            && (fmt.ty != Type::Mat4 || fmt.ct != C::F32)
        {
            p.push(Error::format(
                file,
                field.clone(),
                format!("must be f32 MAT4, found {}", fmt.describe()),
            ));
        }
        if let Some(a) = root.accessors.get(ibm)
            && a.count.0 != s.joints.len() as u64
        {
            p.push(Error::format(
                file,
                field,
                format!("{} matrices for {} joints", a.count.0, s.joints.len()),
            ));
        }
    }
}

fn scenes(root: &json::Root, file: &str, p: &mut Vec<Error>, in_cycle: &[bool]) {
    let mut has_parent = vec![false; root.nodes.len()];
    for n in &root.nodes {
        for c in n.children.iter().flatten() {
            if let Some(x) = has_parent.get_mut(c.value()) {
                *x = true;
            }
        }
    }
    for (s, scene) in root.scenes.iter().enumerate() {
        for (k, n) in scene.nodes.iter().enumerate() {
            let cycle = in_cycle.get(n.value()).copied().unwrap_or(false);
            if !cycle && has_parent.get(n.value()).copied().unwrap_or(false) {
                p.push(Error::format_at(
                    file,
                    format!("scenes[{s}].nodes"),
                    k,
                    format!("node {} is not a root node", n.value()),
                ));
            }
        }
    }
}

fn animations(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    for (a, anim) in root.animations.iter().enumerate() {
        for (s, smp) in anim.samplers.iter().enumerate() {
            let field = format!("animations[{a}].samplers[{s}]");
            let input = root.accessors.get(smp.input.value());
            if let Some(fmt) = format(root, smp.input.value())
                && (fmt.ty != Type::Scalar || fmt.ct != C::F32)
            {
                p.push(Error::format(
                    file,
                    format!("{field}.input"),
                    format!("must be f32 SCALAR, found {}", fmt.describe()),
                ));
            }
            if input.is_some_and(|i| i.min.is_none() || i.max.is_none()) {
                p.push(Error::format(
                    file,
                    format!("{field}.input"),
                    "accessor.min and accessor.max must be defined for an animation input",
                ));
            }
            if smp.interpolation == Checked::Valid(Interpolation::CubicSpline)
                && input.is_some_and(|i| i.count.0 < 2)
            {
                p.push(Error::format(
                    file,
                    format!("{field}.input"),
                    "a CUBICSPLINE sampler needs at least 2 keyframes",
                ));
            }
        }
        let mut seen: Vec<(usize, Property)> = Vec::new();
        for (c, ch) in anim.channels.iter().enumerate() {
            let field = format!("animations[{a}].channels[{c}]");
            let (Checked::Valid(path), node) = (ch.target.path, ch.target.node.value()) else {
                continue;
            };
            if seen.contains(&(node, path)) {
                p.push(Error::format(
                    file,
                    field.clone(),
                    format!("node {node} {path:?} is animated twice in this animation"),
                ));
            }
            seen.push((node, path));
            let targets = root
                .nodes
                .get(node)
                .and_then(|n| n.mesh)
                .map(|m| target_count(root, m.value()));
            if path == Property::MorphTargetWeights && targets.unwrap_or(0) == 0 {
                p.push(Error::format(
                    file,
                    format!("{field}.target"),
                    "animates weights of a node whose mesh has no morph targets",
                ));
                continue;
            }
            let Some(smp) = anim.samplers.get(ch.sampler.value()) else {
                continue;
            };
            let sfield = format!("animations[{a}].samplers[{}].output", ch.sampler.value());
            let (Some(fmt), Some(out), Some(inp)) = (
                format(root, smp.output.value()),
                root.accessors.get(smp.output.value()),
                root.accessors.get(smp.input.value()),
            ) else {
                continue;
            };
            let norm_int = fmt.normalized && matches!(fmt.ct, C::I8 | C::U8 | C::I16 | C::U16);
            let (ok, per_key) = match path {
                Property::Translation | Property::Scale => {
                    (fmt.ty == Type::Vec3 && fmt.ct == C::F32, 1)
                }
                Property::Rotation => (fmt.ty == Type::Vec4 && (fmt.ct == C::F32 || norm_int), 1),
                Property::MorphTargetWeights => (
                    fmt.ty == Type::Scalar && (fmt.ct == C::F32 || norm_int),
                    targets.unwrap_or(0) as u64,
                ),
            };
            if !ok {
                p.push(Error::format(
                    file,
                    sfield.clone(),
                    format!(
                        "{} is not a valid output format for {path:?} ({field})",
                        fmt.describe()
                    ),
                ));
            }
            let cubic = if smp.interpolation == Checked::Valid(Interpolation::CubicSpline) {
                3
            } else {
                1
            };
            let want = inp.count.0.saturating_mul(per_key).saturating_mul(cubic);
            if out.count.0 != want {
                p.push(Error::format(
                    file,
                    sfield,
                    format!(
                        "{} elements for {} keys, {field} needs {want}",
                        out.count.0, inp.count.0
                    ),
                ));
            }
        }
    }
}
