//! Checks of extensions, buffer views and accessors that need no buffer data, over every object in
//! the file (used or not), as the glTF-Validator does. Every problem is collected before failing.
//!
//! Source: glTF 2.0 §3.6 and the glTF-Validator issue codes it mirrors (`NON_REQUIRED_EXTENSION`,
//! `UNEXPECTED_EXTENSION_OBJECT`, `BUFFER_VIEW_TOO_LONG`, `BUFFER_VIEW_INVALID_BYTE_STRIDE`,
//! `BUFFER_VIEW_TOO_BIG_BYTE_STRIDE`, `ACCESSOR_TOO_LONG`, `ACCESSOR_SMALL_BYTESTRIDE`,
//! `ACCESSOR_OFFSET_ALIGNMENT`, `ACCESSOR_TOTAL_OFFSET_ALIGNMENT`, `ACCESSOR_NORMALIZED_INVALID`,
//! `ACCESSOR_SPARSE_COUNT_OUT_OF_RANGE`, `UNDECLARED_EXTENSION`).

use gltf::json;
use json::accessor::ComponentType;
use json::validation::Checked;

use super::{accessor, meshopt};
use crate::error::{Error, Result};

/// The quantization extension, which has no JSON objects of its own.
pub(super) const KHR_MESH_QUANTIZATION: &str = "KHR_mesh_quantization";

/// Check extensions, buffer views and accessors.
///
/// # Errors
/// Every problem found, each naming `file` and the field.
pub(super) fn check(root: &json::Root, file: &str) -> Result<()> {
    let mut p = Vec::new();
    extensions(root, file, &mut p);
    views(root, file, &mut p);
    accessors(root, file, &mut p);
    Error::collect(p)
}

fn extensions(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    for (i, name) in root.extensions_used.iter().enumerate() {
        if name == KHR_MESH_QUANTIZATION && !root.extensions_required.iter().any(|r| r == name) {
            p.push(Error::format(
                file,
                format!("extensionsUsed[{i}]"),
                format!(
                    "extension `{name}` cannot be optional: it must also be in extensionsRequired"
                ),
            ));
        }
    }
    for (i, name) in root.extensions_required.iter().enumerate() {
        if !root.extensions_used.contains(name) {
            p.push(Error::format(
                file,
                format!("extensionsRequired[{i}]"),
                format!("`{name}` is required but not listed in extensionsUsed"),
            ));
        }
    }
    for (i, a) in root.accessors.iter().enumerate() {
        if a.extensions
            .as_ref()
            .is_some_and(|e| e.others.contains_key(KHR_MESH_QUANTIZATION))
        {
            p.push(Error::format(
                file,
                format!("accessors[{i}].extensions.{KHR_MESH_QUANTIZATION}"),
                "unexpected location for this extension (KHR_mesh_quantization has no JSON objects)",
            ));
        }
    }
    for (i, m) in root.meshes.iter().enumerate() {
        if m.extensions
            .as_ref()
            .is_some_and(|e| e.others.contains_key(KHR_MESH_QUANTIZATION))
        {
            p.push(Error::format(
                file,
                format!("meshes[{i}].extensions.{KHR_MESH_QUANTIZATION}"),
                "unexpected location for this extension",
            ));
        }
        for (j, pr) in m.primitives.iter().enumerate() {
            if pr
                .extensions
                .as_ref()
                .is_some_and(|e| e.others.contains_key(KHR_MESH_QUANTIZATION))
            {
                p.push(Error::format(
                    file,
                    format!("meshes[{i}].primitives[{j}].extensions.{KHR_MESH_QUANTIZATION}"),
                    "unexpected location for this extension",
                ));
            }
        }
    }
    let declared = root.extensions_used.iter().any(|n| n == meshopt::NAME);
    for (i, v) in root.buffer_views.iter().enumerate() {
        if !declared
            && v.extensions
                .as_ref()
                .is_some_and(|e| e.others.contains_key(meshopt::NAME))
        {
            p.push(Error::format(
                file,
                format!("bufferViews[{i}].extensions.{}", meshopt::NAME),
                "extension is used but not declared in extensionsUsed",
            ));
        }
    }
}

fn views(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    for (i, v) in root.buffer_views.iter().enumerate() {
        let Some(buffer) = root.buffers.get(v.buffer.value()) else {
            continue;
        };
        let off = v.byte_offset.map_or(0, |o| o.0);
        let len = v.byte_length.0;
        if len == 0 {
            p.push(Error::format(
                file,
                format!("bufferViews[{i}].byteLength"),
                "must be at least 1",
            ));
        }
        if off
            .checked_add(len)
            .is_none_or(|e| e > buffer.byte_length.0)
        {
            p.push(Error::format(
                file,
                format!("bufferViews[{i}].byteLength"),
                format!(
                    "bufferView ({off}+{len}) does not fit buffers[{}] byteLength ({})",
                    v.buffer.value(),
                    buffer.byte_length.0
                ),
            ));
        }
        if let Some(s) = v.byte_stride {
            if s.0 % 4 != 0 {
                p.push(Error::format(
                    file,
                    format!("bufferViews[{i}].byteStride"),
                    format!("{} is not a multiple of 4", s.0),
                ));
            }
            if s.0 as u64 > len {
                p.push(Error::format(
                    file,
                    format!("bufferViews[{i}].byteStride"),
                    format!("{} is greater than byteLength {len}", s.0),
                ));
            }
        }
        if let Some(ext) = v
            .extensions
            .as_ref()
            .and_then(|e| e.others.get(meshopt::NAME))
        {
            match meshopt::parse(file, i, ext, len, v.byte_stride.map(|s| s.0)) {
                Ok(c) => match root.buffers.get(c.buffer) {
                    None => p.push(Error::format(
                        file,
                        format!("bufferViews[{i}].extensions.{}.buffer", meshopt::NAME),
                        format!("buffer {} does not exist", c.buffer),
                    )),
                    Some(b)
                        if (c.byte_offset as u64)
                            .checked_add(c.byte_length as u64)
                            .is_none_or(|e| e > b.byte_length.0) =>
                    {
                        p.push(Error::format(
                            file,
                            format!("bufferViews[{i}].extensions.{}.byteLength", meshopt::NAME),
                            format!(
                                "compressed bytes ({}+{}) do not fit buffers[{}] byteLength ({})",
                                c.byte_offset, c.byte_length, c.buffer, b.byte_length.0
                            ),
                        ))
                    }
                    Some(_) => {}
                },
                Err(e) => p.push(e),
            }
        }
    }
}

/// Accessors that overflow one buffer view: one problem (the view is too short for what reads it),
/// reported once with the first accessor's numbers and the others named, not once per accessor.
struct Overflow {
    view: usize,
    first: usize,
    reason: String,
    others: Vec<usize>,
}

/// Most accessors named in one overflow message before "and N more".
const OVERFLOW_NAMED: usize = 8;

fn accessors(root: &json::Root, file: &str, p: &mut Vec<Error>) {
    let mut overflow: Vec<Overflow> = Vec::new();
    let mut by_view: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (i, a) in root.accessors.iter().enumerate() {
        let field = format!("accessors[{i}]");
        let Some(fmt) = accessor::format(root, i) else {
            continue;
        };
        if a.count.0 == 0 {
            p.push(Error::format(
                file,
                format!("{field}.count"),
                "must be at least 1",
            ));
        }
        if fmt.normalized
            && !matches!(
                fmt.ct,
                ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16
            )
        {
            p.push(Error::format(
                file,
                format!("{field}.normalized"),
                "only (u)byte and (u)short accessors can be normalized",
            ));
        }
        let cs = fmt.ct.size() as u64;
        let esize = fmt.element_size() as u64;
        if let Some(view) = a
            .buffer_view
            .and_then(|v| root.buffer_views.get(v.value()).map(|bv| (v.value(), bv)))
        {
            let (v, bv) = view;
            let off = a.byte_offset.map_or(0, |o| o.0);
            if off % cs != 0 {
                p.push(Error::format(
                    file,
                    format!("{field}.byteOffset"),
                    format!("{off} is not a multiple of the component size {cs}"),
                ));
            } else if (bv.byte_offset.map_or(0, |o| o.0) + off) % cs != 0 {
                p.push(Error::format(file, format!("{field}.byteOffset"), format!("bufferViews[{v}].byteOffset + byteOffset is not a multiple of the component size {cs}")));
            }
            let stride = bv.byte_stride.map_or(esize, |s| s.0 as u64);
            if stride < esize {
                p.push(Error::format(file, field.to_string(), format!("bufferViews[{v}] byteStride {stride} is smaller than the {esize}-byte element")));
            }
            let need = a
                .count
                .0
                .saturating_sub(1)
                .checked_mul(stride)
                .and_then(|x| x.checked_add(off))
                .and_then(|x| x.checked_add(esize));
            if need.is_none_or(|n| n > bv.byte_length.0) {
                let reason = format!(
                    "{} elements of {esize} bytes (stride {stride}, offset {off}) do not fit bufferViews[{v}] ({} bytes)",
                    a.count.0, bv.byte_length.0
                );
                match by_view.get(&v) {
                    Some(&k) => overflow[k].others.push(i),
                    None => {
                        by_view.insert(v, overflow.len());
                        overflow.push(Overflow {
                            view: v,
                            first: i,
                            reason,
                            others: Vec::new(),
                        });
                    }
                }
            }
        } else if a.buffer_view.is_none()
            && a.count.0.saturating_mul(fmt.width() as u64) > accessor::MAX_IMPLICIT_COMPONENTS
        {
            p.push(Error::format(
                file,
                format!("{field}.count"),
                format!(
                    "{} elements without a bufferView exceed mien's limit of {} components",
                    a.count.0,
                    accessor::MAX_IMPLICIT_COMPONENTS
                ),
            ));
        }
        if let Some(s) = &a.sparse {
            sparse(root, file, &field, a.count.0, esize, s, p);
        }
    }
    for o in overflow {
        let mut reason = o.reason;
        if !o.others.is_empty() {
            let named: Vec<String> = o
                .others
                .iter()
                .take(OVERFLOW_NAMED)
                .map(|k| format!("accessors[{k}]"))
                .collect();
            let more = o.others.len().saturating_sub(OVERFLOW_NAMED);
            reason.push_str(&format!(
                "; {} more accessor{} on bufferViews[{}] do not fit either: {}{}",
                o.others.len(),
                if o.others.len() == 1 { "" } else { "s" },
                o.view,
                named.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
        p.push(Error::format(
            file,
            format!("accessors[{}]", o.first),
            reason,
        ));
    }
}

fn sparse(
    root: &json::Root,
    file: &str,
    field: &str,
    count: u64,
    esize: u64,
    s: &json::accessor::sparse::Sparse,
    p: &mut Vec<Error>,
) {
    let n = s.count.0;
    if n == 0 || n > count {
        p.push(Error::format(file, format!("{field}.sparse.count"), format!("sparse accessor overrides {n} elements; the base accessor has {count} (1..={count} allowed)")));
    }
    let isize = match s.indices.component_type {
        Checked::Valid(c) => c.0.size() as u64,
        Checked::Invalid => return,
    };
    for (part, view, off, size) in [
        (
            "indices",
            s.indices.buffer_view.value(),
            s.indices.byte_offset.0,
            isize,
        ),
        (
            "values",
            s.values.buffer_view.value(),
            s.values.byte_offset.0,
            esize,
        ),
    ] {
        let Some(bv) = root.buffer_views.get(view) else {
            continue;
        };
        if bv.byte_stride.is_some() {
            p.push(Error::format(
                file,
                format!("{field}.sparse.{part}.bufferView"),
                format!(
                    "bufferViews[{view}] has a byteStride; only buffer views with vertex data can"
                ),
            ));
        }
        if n.checked_mul(size)
            .and_then(|x| x.checked_add(off))
            .is_none_or(|e| e > bv.byte_length.0)
        {
            p.push(Error::format(
                file,
                format!("{field}.sparse.{part}"),
                format!(
                    "{n} × {size} bytes at offset {off} do not fit bufferViews[{view}] ({} bytes)",
                    bv.byte_length.0
                ),
            ));
        }
    }
}
