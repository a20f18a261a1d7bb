//! Checks of meshes (attribute formats with and without `KHR_mesh_quantization`, counts, morph
//! targets, buffer-view usage) that need no buffer data, over every mesh in the file, as the
//! glTF-Validator does. Nodes, skins and animations are checked in `links.rs`.
//!
//! Source: glTF 2.0 §3.7.2.1 (attribute formats table), §3.7.2.2 (morph targets: same target count
//! in every primitive, deltas only for attributes the primitive has), `KHR_mesh_quantization`
//! (extra formats), and glTF-Validator codes `MESH_PRIMITIVE_ATTRIBUTES_ACCESSOR_INVALID_FORMAT`,
//! `MESH_PRIMITIVE_UNEQUAL_ACCESSOR_COUNT`, `MESH_PRIMITIVE_MORPH_TARGET_NO_BASE_ACCESSOR`,
//! `MESH_PRIMITIVE_MORPH_TARGET_INVALID_ATTRIBUTE_COUNT`, `MESH_PRIMITIVE_POSITION_ACCESSOR_WITHOUT_BOUNDS`,
//! `MESH_PRIMITIVES_UNEQUAL_TARGETS_COUNT`, `MESH_INVALID_WEIGHTS_COUNT`, `BUFFER_VIEW_TARGET_OVERRIDE`,
//! `MESH_PRIMITIVE_INDICES_ACCESSOR_WITH_BYTESTRIDE`.

use gltf::json;
use json::accessor::{ComponentType as C, Type};
use json::buffer::Target;
use json::mesh::Semantic;
use json::validation::Checked;

use super::accessor::{Format, format};
use super::structure::KHR_MESH_QUANTIZATION;
use super::validate::semantic_name;
use super::{limits, links, prim_field};
use crate::error::{Error, Result};

/// Whether a format is allowed for a use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allowed {
    /// By core glTF 2.0.
    Core,
    /// Only with `KHR_mesh_quantization`.
    Quantized,
    /// Never.
    No,
}

/// Check every mesh, node, skin and animation, and the size budgets (`limits.rs`).
///
/// # Errors
/// Every problem found, each naming `file` and the field.
pub(super) fn check(root: &json::Root, file: &str) -> Result<()> {
    let mut p = Vec::new();
    meshes(root, file, &mut p);
    links::check(root, file, &mut p);
    limits::check(root, file, &mut p);
    Error::collect(p)
}

/// Number of morph targets of `meshes[m]` (its first primitive's).
pub(super) fn target_count(root: &json::Root, m: usize) -> usize {
    root.meshes
        .get(m)
        .and_then(|m| m.primitives.first())
        .and_then(|p| p.targets.as_ref())
        .map_or(0, Vec::len)
}

fn attribute_allowed(sem: &Semantic, f: Format) -> Allowed {
    use Allowed::*;
    let (ct, n, ty) = (f.ct, f.normalized, f.ty);
    let core_or = |core: bool, quant: bool| {
        if core {
            Core
        } else if quant {
            Quantized
        } else {
            No
        }
    };
    match sem {
        Semantic::Positions if ty == Type::Vec3 => {
            core_or(ct == C::F32, matches!(ct, C::I8 | C::U8 | C::I16 | C::U16))
        }
        Semantic::Normals if ty == Type::Vec3 => {
            core_or(ct == C::F32, n && matches!(ct, C::I8 | C::I16))
        }
        Semantic::Tangents if ty == Type::Vec4 => {
            core_or(ct == C::F32, n && matches!(ct, C::I8 | C::I16))
        }
        Semantic::TexCoords(_) if ty == Type::Vec2 => core_or(
            ct == C::F32 || (n && matches!(ct, C::U8 | C::U16)),
            matches!(ct, C::I8 | C::I16) || (!n && matches!(ct, C::U8 | C::U16)),
        ),
        Semantic::Colors(_) if matches!(ty, Type::Vec3 | Type::Vec4) => {
            core_or(ct == C::F32 || (n && matches!(ct, C::U8 | C::U16)), false)
        }
        Semantic::Joints(_) if ty == Type::Vec4 => {
            core_or(!n && matches!(ct, C::U8 | C::U16), false)
        }
        Semantic::Weights(_) if ty == Type::Vec4 => {
            core_or(ct == C::F32 || (n && matches!(ct, C::U8 | C::U16)), false)
        }
        Semantic::Extras(_) => Core,
        _ => No,
    }
}

fn target_allowed(name: &str, f: Format) -> Allowed {
    use Allowed::*;
    if f.ty != Type::Vec3 {
        return No;
    }
    let core_or = |core: bool, quant: bool| {
        if core {
            Core
        } else if quant {
            Quantized
        } else {
            No
        }
    };
    match name {
        "POSITION" => core_or(f.ct == C::F32, matches!(f.ct, C::I8 | C::I16)),
        _ => core_or(
            f.ct == C::F32,
            f.normalized && matches!(f.ct, C::I8 | C::I16),
        ),
    }
}

fn judge(
    p: &mut Vec<Error>,
    file: &str,
    field: String,
    allowed: Allowed,
    quantized: bool,
    fmt: Format,
) {
    match allowed {
        Allowed::Core => {}
        Allowed::Quantized if quantized => {}
        Allowed::Quantized => p.push(Error::format(
            file,
            field,
            format!(
                "{} needs the KHR_mesh_quantization extension",
                fmt.describe()
            ),
        )),
        Allowed::No => p.push(Error::format(
            file,
            field,
            format!("invalid accessor format {}", fmt.describe()),
        )),
    }
}

/// How a buffer view is used, for `BUFFER_VIEW_TARGET_OVERRIDE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Usage {
    Vertex,
    Index,
}

fn meshes(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    let quantized = root
        .extensions_used
        .iter()
        .any(|e| e == KHR_MESH_QUANTIZATION);
    let mut usage: Vec<Option<Usage>> = root
        .buffer_views
        .iter()
        .map(|v| match v.target {
            Some(Checked::Valid(Target::ArrayBuffer)) => Some(Usage::Vertex),
            Some(Checked::Valid(Target::ElementArrayBuffer)) => Some(Usage::Index),
            _ => None,
        })
        .collect();
    let mut mark = |p: &mut Vec<Error>, acc: usize, now: Usage, field: &str| {
        let Some(v) = root
            .accessors
            .get(acc)
            .and_then(|a| a.buffer_view)
            .map(|v| v.value())
        else {
            return;
        };
        let Some(slot) = usage.get_mut(v) else { return };
        match *slot {
            Some(before) if before != now => {
                p.push(Error::format(file, field, format!("bufferViews[{v}] is used as {before:?} data and here as {now:?} data (target override)")))
            }
            _ => *slot = Some(now),
        }
    };
    for (mi, mesh) in root.meshes.iter().enumerate() {
        if mesh.primitives.is_empty() {
            p.push(Error::format(
                file,
                format!("meshes[{mi}].primitives"),
                "a mesh needs at least one primitive",
            ));
            continue;
        }
        let t0 = target_count(root, mi);
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            let pf = prim_field(mi, pi);
            let pos = prim
                .attributes
                .get(&Checked::Valid(Semantic::Positions))
                .map(|a| a.value());
            let vcount = pos.and_then(|a| root.accessors.get(a)).map(|a| a.count.0);
            for (sem, acc) in &prim.attributes {
                let field = format!("{pf}.attributes.{}", semantic_name(sem));
                let (Checked::Valid(sem), Some(fmt)) = (sem, format(root, acc.value())) else {
                    continue;
                };
                judge(
                    p,
                    file,
                    field.clone(),
                    attribute_allowed(sem, fmt),
                    quantized,
                    fmt,
                );
                if let (Some(n), Some(a)) = (vcount, root.accessors.get(acc.value()))
                    && a.count.0 != n
                {
                    p.push(Error::format(
                        file,
                        field.clone(),
                        format!("{} elements, POSITION has {n}", a.count.0),
                    ));
                }
                mark(p, acc.value(), Usage::Vertex, &field);
                let pair = match sem {
                    Semantic::Joints(k) => Some(Semantic::Weights(*k)),
                    Semantic::Weights(k) => Some(Semantic::Joints(*k)),
                    _ => None,
                };
                if let Some(other) =
                    pair.filter(|o| !prim.attributes.contains_key(&Checked::Valid(o.clone())))
                {
                    p.push(Error::format(
                        file,
                        field,
                        format!("has no matching {}", other.to_string()),
                    ));
                }
            }
            if let Some(idx) = prim.indices.map(|i| i.value()) {
                let field = format!("{pf}.indices");
                if let Some(fmt) = format(root, idx)
                    && (fmt.ty != Type::Scalar
                        || fmt.normalized
                        || !matches!(fmt.ct, C::U8 | C::U16 | C::U32))
                {
                    p.push(Error::format(
                        file,
                        field.clone(),
                        format!("invalid indices format {}", fmt.describe()),
                    ));
                }
                let view = root
                    .accessors
                    .get(idx)
                    .and_then(|a| a.buffer_view)
                    .and_then(|v| root.buffer_views.get(v.value()));
                if view.is_some_and(|v| v.byte_stride.is_some()) {
                    p.push(Error::format(
                        file,
                        field.clone(),
                        "the indices' bufferView has a byteStride",
                    ));
                }
                mark(p, idx, Usage::Index, &field);
            }
            let targets = prim.targets.as_deref().unwrap_or(&[]);
            for (k, t) in targets.iter().enumerate() {
                for (name, acc, base) in [
                    ("POSITION", t.positions, Semantic::Positions),
                    ("NORMAL", t.normals, Semantic::Normals),
                    ("TANGENT", t.tangents, Semantic::Tangents),
                ] {
                    let Some(acc) = acc.map(|a| a.value()) else {
                        continue;
                    };
                    let field = format!("{pf}.targets[{k}].{name}");
                    let Some(a) = root.accessors.get(acc) else {
                        continue;
                    };
                    if !prim.attributes.contains_key(&Checked::Valid(base)) {
                        p.push(Error::format(
                            file,
                            field.clone(),
                            format!(
                                "the primitive does not define {name}, so a target cannot morph it"
                            ),
                        ));
                    }
                    if vcount.is_some_and(|n| n != a.count.0) {
                        p.push(Error::format(
                            file,
                            field.clone(),
                            format!(
                                "{} deltas, the base accessor has {}",
                                a.count.0,
                                vcount.unwrap_or(0)
                            ),
                        ));
                    }
                    if name == "POSITION" && (a.min.is_none() || a.max.is_none()) {
                        p.push(Error::format(
                            file,
                            field.clone(),
                            "accessor.min and accessor.max must be defined for a POSITION accessor",
                        ));
                    }
                    if let Some(fmt) = format(root, acc) {
                        judge(
                            p,
                            file,
                            field.clone(),
                            target_allowed(name, fmt),
                            quantized,
                            fmt,
                        );
                    }
                    mark(p, acc, Usage::Vertex, &field);
                }
            }
            if pi > 0 && targets.len() != t0 {
                let field = if prim.targets.is_some() {
                    format!("{pf}.targets")
                } else {
                    pf.clone()
                };
                p.push(Error::format(file, field, format!("{} morph targets, primitive 0 has {t0}: all primitives must have the same number", targets.len())));
            }
        }
        if let Some(w) = &mesh.weights
            && w.len() != t0
        {
            p.push(Error::format(
                file,
                format!("meshes[{mi}].weights"),
                format!("{} weights for {t0} morph targets", w.len()),
            ));
        }
    }
}
