//! What a file holds, as JSON: a character (glTF/GLB/VRM, `.aosrig` linear head, MetaHuman
//! `.dna`, character file, the built-ins), an ARKit-52 stream, a speech timing file, a splat file
//! (3DGS `.ply`, SPZ) or a TressFX groom. What `mien inspect` prints and the Python package's
//! `inspect` returns.

use std::path::Path;

use mien_core::anim::Property;
use mien_core::anim::canon::canonical_name;
use mien_core::io::{gltf::import_gltf, livelink_csv::read_livelink_csv, ply::read_splat_ply};
use mien_core::vrm::{LookAtKind, Override, RangeMap, Vrm, VrmVersion};
use serde_json::json;

use crate::error::{Context, Result};

/// Describe the file at `path` by its extension (a `.json` is an Audio2Face stream when it looks
/// like one, else a speech timing; `*.character.json` a character file), or the built-in head /
/// body by their names ([`crate::character::BUILTIN_HEAD`], [`crate::character::BUILTIN_BODY`]).
/// The value's keys depend on the kind of file; every count is a number, every name a string.
///
/// # Errors
/// An unknown kind of file and every reader's error, with the file named.
///
/// ```
/// let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
/// let v = mien_runtime::inspect::inspect(&data.join("facecap/facecap.glb"))?;
/// assert_eq!(v["kind"], "character (glTF 2.0)");
/// assert_eq!(v["meshes"].as_array().map(Vec::len), Some(4));
/// assert_eq!(v["nodes"], 13);
/// assert!(mien_runtime::inspect::inspect(&data.join("no/such.glb")).is_err());
/// # Ok::<(), mien_runtime::Error>(())
/// ```
pub fn inspect(path: &Path) -> Result<serde_json::Value> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let a2f = (ext.as_deref() == Some("json"))
        .then(|| json_stream(path))
        .flatten();
    let name = path.to_string_lossy().to_ascii_lowercase();
    Ok(match ext.as_deref() {
        _ if path == Path::new(crate::character::BUILTIN_HEAD) => {
            describe(&mien_core::sample::sample_head(), path, "built-in sample head")
        }
        _ if path == Path::new(crate::character::BUILTIN_BODY) => {
            describe(&mien_core::sample::sample_body(), path, "built-in body")
        }
        _ if name.ends_with(".character.json") => character_file(path)?,
        Some("glb" | "gltf" | "vrm") => character(path)?,
        Some("csv") => stream(path)?,
        Some("ply") => splats(path)?,
        Some("spz") => spz(path)?,
        Some("tfx") => tfx(path)?,
        Some("aosrig") => pack(path)?,
        Some("dna") => dna(path)?,
        Some("json") if a2f.is_some() => a2f.unwrap_or_default(),
        _ => speech(path).with_context(|| {
            format!(
                "{}: mien reads .glb/.gltf/.vrm characters, .aosrig linear heads, .dna MetaHuman rigs, Live Link Face .csv streams, 3DGS .ply and SPZ files, TressFX .tfx grooms and speech timings (TextGrid, Gentle, Rhubarb, Polly, Azure, mien JSON)",
                path.display()
            )
        })?,
    })
}

/// A MetaHuman DNA: descriptor, definition counts per LOD, behaviour, geometry, the layers read but
/// not evaluated, the consistency check and ARKit's reach on its face board.
fn dna(path: &Path) -> Result<serde_json::Value> {
    use mien_core::io::dna::{DnaLoad, read_dna_file, riglogic_spec};
    let d = read_dna_file(path, &DnaLoad::default())?;
    let df = &d.definition;
    let b = &d.behavior;
    let lods: Vec<_> = (0..d.descriptor.lod_count)
        .map(|l| {
            json!({
                "lod": l,
                "joints": df.joint_indices_for_lod(l).len(),
                "blend_shape_channels": df.blend_shape_channel_indices_for_lod(l).len(),
                "animated_maps": df.animated_map_indices_for_lod(l).len(),
                "meshes": df.mesh_indices_for_lod(l).iter().map(|&m| df.mesh_names.get(usize::from(m)).cloned().unwrap_or_default()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let meshes: Vec<_> = d
        .meshes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            json!({
                "name": df.mesh_names.get(i),
                "vertices": m.positions.len(),
                "vertex_layouts": m.layouts.len(),
                "faces": m.faces.len(),
                "max_influences": m.max_influences,
                "blend_shape_targets": m.blend_shape_targets.len(),
                "deltas": m.blend_shape_targets.iter().map(|t| t.deltas.len()).sum::<usize>(),
            })
        })
        .collect();
    // Consistent means what loading it as a character needs: the indices (validate) and units and
    // axes mien can convert (a mirrored or degenerate coordinate system is refused there).
    let check = match (
        d.validate(),
        mien_core::io::dna::convert::Units::new(&d.descriptor),
    ) {
        (Ok(()), Ok(_)) => json!("consistent"),
        (Err(e), Ok(_)) | (Ok(()), Err(e)) => json!(e.to_string()),
        (Err(e), Err(u)) => json!(format!("{e}\n{u}")),
    };
    let spec = riglogic_spec(&d)?;
    let reach = mien_core::rig::riglogic::ArkitBoardMap::new(&df.raw_control_names)
        .reach(&df.raw_control_names);
    let desc = &d.descriptor;
    Ok(json!({
        "file": path.display().to_string(),
        "kind": "MetaHuman DNA (RigLogic rig)",
        "format": format!("{}.{}", d.version.generation, d.version.version),
        "name": desc.name,
        "units": format!("translation {:?}, rotation {:?}", desc.translation_unit, desc.rotation_unit),
        "coordinate_system": format!(
            "x {:?}, y {:?}, z {:?}",
            desc.coordinate_system.x, desc.coordinate_system.y, desc.coordinate_system.z
        ),
        "rotation_sequence": format!("{:?}", desc.rotation_sequence),
        "lod_count": desc.lod_count,
        "controls": {
            "gui": df.gui_control_names.len(),
            "raw": df.raw_control_names.len(),
            "psd": b.psd_count,
            "ml": spec.ml_count,
            "rbf_pose": spec.rbf_count,
        },
        "joints": df.joint_names.len(),
        "joint_groups": b.joints.groups.len(),
        "blend_shape_channels": df.blend_shape_channel_names.len(),
        "animated_maps": df.animated_map_names.len(),
        "lods": lods,
        "meshes": meshes,
        "not_evaluated": spec.not_evaluated,
        "consistency": check,
        "arkit_reach": {
            "reached_raw_controls": reach.reached.len(),
            "unreached_raw_controls": reach.unreached,
            "unmapped_arkit_channels": reach.unmapped_arkit,
        },
    }))
}

fn pack(path: &Path) -> Result<serde_json::Value> {
    let p = mien_core::gnm::GnmPack::read(path)?;
    let h = &p.header;
    let regions: Vec<_> = h
        .head_ext
        .slices()
        .into_iter()
        .map(|(name, r)| {
            let names = if h.names.is_empty() {
                Vec::new()
            } else {
                h.names[r.clone()].to_vec()
            };
            json!({
                "region": name,
                "coefficients": r.len(),
                "slots": format!("{}..{}", r.start, r.end),
                "shapes": names,
            })
        })
        .collect();
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let blobs: Vec<_> = h
        .buffers
        .iter()
        .map(|b| {
            json!({
                "blob": b.name,
                "dtype": b.dtype,
                "shape": b.shape,
                "offset": b.offset,
                "bytes": b.length,
            })
        })
        .collect();
    let (terms, channels) = h.arkit.as_ref().map_or((0, 0), |t| {
        (t.values().map(Vec::len).sum::<usize>(), t.len())
    });
    let basis = h
        .buffers
        .iter()
        .find(|b| b.name == "basis")
        .map_or(0, |b| b.length);
    let nv = p.vertex_count();
    let eye_weighted: Vec<usize> = p
        .eye_weights
        .chunks(nv)
        .map(|w| w.iter().filter(|x| **x != 0.0).count())
        .collect();
    // What a bundle's `rig.control_names` and a decoder's `controls` input follow.
    let control_names = crate::bundle::control_names(&crate::Asset::from_pack(
        p.clone(),
        &path.display().to_string(),
    )?);
    Ok(json!({
        "file": path.display().to_string(),
        "kind": "linear head pack (.aosrig)",
        "version": h.version,
        "model": h.model,
        "vertices": h.vertex_count,
        "coefficients": h.coeff_count,
        "head_ext": format!("{} coefficients + 4 gaze angles = {}", h.head_ext.expr_dim(), h.head_ext.dim()),
        "reduced_view": h.head_ext.reduced_dim(),
        "regions": regions,
        "triangles": p.faces.len(),
        "quads": p.quads.as_ref().map(Vec::len),
        "uv": p.uv.is_some(),
        "seam": p.seam.is_some(),
        "joints": h.joints.iter().map(|j| format!("{} (parent {})", j.name, j.parent)).collect::<Vec<_>>(),
        "eye_centres_m": p.eye_positions,
        "eye_weighted_vertices": eye_weighted,
        "arkit_map": if channels == 0 { json!("none: ARKit input to this pack is refused") } else { json!(format!("{channels} ARKit channels → {terms} terms")) },
        "control_names": control_names,
        "blobs": blobs,
        "bytes": {
            "file": file_bytes,
            "basis_fp16": basis,
            "basis_per_pose_read": basis,
            "arrays_resident": p.byte_len(),
        },
        "source": h.source,
    }))
}

fn speech(path: &Path) -> Result<serde_json::Value> {
    let (f, format) = mien_core::io::speech::read_speech(path, None)?;
    let aligned = f.to_aligned(0.0).map(|a| a.intervals().len());
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for s in f.segments() {
        *counts.entry(s.unit.name().to_owned()).or_default() += 1;
    }
    Ok(json!({
        "file": path.display().to_string(),
        "kind": format!("speech timings ({})", format.name()),
        "label": f.label(),
        "duration_s": f.duration(),
        "units": format!("{:?}", f.unit_kind()).to_lowercase(),
        "segments": f.segments().len(),
        "first": f.segments().first().map(|s| format!("{} {:.3}–{:.3} s", s.unit.name(), s.start, s.end)),
        "last": f.segments().last().map(|s| format!("{} {:.3}–{:.3} s", s.unit.name(), s.start, s.end)),
        "counts": counts,
        "held_visemes": aligned.map_err(|e| e.to_string()).map_or_else(|e| json!(e), |n| json!(n)),
        "conversion": f.report(),
    }))
}

/// A character file: its model described as a character, with what the file adds (clips by name,
/// locomotion, foot placement, the simulated springs).
fn character_file(path: &Path) -> Result<serde_json::Value> {
    let l = crate::character::CharacterDef::load(path)?;
    let ch = l.asset.character();
    // A bundle's linear head or DNA rig is described as its own file would be.
    let rig_file = l
        .bundle
        .as_ref()
        .filter(|b| b.backend != "none")
        .map(|_| Path::new(&ch.source));
    let mut out = match rig_file {
        Some(p) if p.extension().is_some_and(|e| e == "aosrig") => pack(p)?,
        Some(p) if p.extension().is_some_and(|e| e == "dna") => dna(p)?,
        _ => describe(ch, path, "character file (mien-character)"),
    };
    out["file"] = json!(path.display().to_string());
    out["kind"] = json!(if l.bundle.is_some() {
        "character bundle (mien-character)"
    } else {
        "character file (mien-character)"
    });
    let clip = |id: mien_core::rig::ClipId| {
        format!(
            "{}: {}",
            id.index(),
            ch.clips[id.index()].name.as_deref().unwrap_or("(unnamed)")
        )
    };
    out["character_file"] = json!({
        "model": ch.source,
        "clips": l.clips.iter().map(|(k, v)| (k.clone(), json!(clip(*v)))).collect::<serde_json::Map<_, _>>(),
        "locomotion": l.locomotion.map(|m| json!({
            "idle": clip(m.idle),
            "walk": clip(m.walk),
            "walk_speed_m_s": m.walk_speed,
            "stride_speed_m_s": m.stride_speed,
        })),
        "foot_placement": match &l.foot {
            crate::FootPlacement::Off => "off".to_string(),
            crate::FootPlacement::Humanoid => "legs found by humanoid role".to_string(),
            crate::FootPlacement::Def(d) => format!(
                "pelvis {}, legs {}",
                d.pelvis,
                d.legs.iter().map(|g| format!("{} → {} → {}", g.hip, g.knee, g.ankle)).collect::<Vec<_>>().join(", ")
            ),
        },
        "springs": l.springs.as_ref().map(|s| s.springs.iter().map(|x| x.name.clone()).collect::<Vec<_>>()),
    });
    if let Some(b) = &l.bundle {
        out["bundle"] = bundle(b);
    }
    Ok(out)
}

/// A bundle's blocks as loaded: the rig, the expression space, each branch with its vertices,
/// triangles, lift and decoders (their contracts), the resident files.
fn bundle(b: &crate::bundle::Bundle) -> serde_json::Value {
    json!({
        "rig": b.backend,
        "controls": b.control_names.len(),
        "expression_space": b.space.as_ref().map(|s| json!({
            "kind": s.kind.name(),
            "dim": s.dim,
            "segments": s.segments.iter().map(|(n, a, c)| json!({"name": n, "start": a, "count": c})).collect::<Vec<_>>(),
            "arkit_map": s.arkit_map.is_some(),
        })),
        "branches": b.branches.iter().map(|br| json!({
            "name": br.name,
            "vertices": br.vertices,
            "triangles": br.triangles.len(),
            "lift": match &br.lift {
                crate::bundle::BranchLift::Texel(o) => format!("texel {0}×{0}", o.resolution),
                crate::bundle::BranchLift::Surface(o) => format!("surface, about {} gaussians", o.target),
            },
            "decoders": br.decoders.iter().map(|d| json!({
                "name": d.name,
                "file": d.decoder.file(),
                "fp16": d.fp16,
                "contract": d.decoder.contract(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "pose_anchors": b.anchors.as_ref().map(|a| a.poses.len()),
        "onnxruntime": b.ort.as_ref().map(|o| json!({"library": o.path(), "version": o.version()})),
        "files": b.files,
        "resident_bytes": b.resident_bytes(),
    })
}

fn character(path: &Path) -> Result<serde_json::Value> {
    let ch = import_gltf(path).with_context(|| format!("cannot load {}", path.display()))?;
    let mut out = describe(&ch, path, "character (glTF 2.0)");
    if uses_gaussian_splatting(path) {
        // A splat file (mien's `--format glb`, or another tool's): its points are gaussians.
        let splats: usize = ch
            .meshes
            .iter()
            .flat_map(|m| &m.primitives)
            .filter(|p| p.indices.is_empty())
            .map(|p| p.positions.len())
            .sum();
        out["kind"] = json!("3D Gaussian splats (glTF 2.0, extension KHR_gaussian_splatting)");
        out["splats"] = json!(splats);
        // The character importer's notes (the extension's attributes ignored, normals computed)
        // describe a point cloud read as a mesh, not the splat file.
        out["import_notes"] = json!([
            "a splat file: its gaussians' rotation, scale, opacity and colour are KHR_gaussian_splatting attributes, not a character's"
        ]);
    }
    Ok(out)
}

/// What a character holds: meshes and targets, skins, clips, its skeleton read by humanoid role
/// (the names a retarget map, a foot-ik file and a scenario's `bone_y` use), its facing, its
/// spring bones by name (what a scenario's `chain_tip` names), its VRM section.
fn describe(ch: &mien_core::rig::Character, path: &Path, kind: &str) -> serde_json::Value {
    let meshes: Vec<_> = ch
        .meshes
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let targets: Vec<String> = m
                .target_names
                .iter()
                .map(|n| match canonical_name(n) {
                    Some(c) if c != n => format!("{n} (ARKit {c})"),
                    Some(_) => format!("{n} (ARKit)"),
                    None => n.clone(),
                })
                .collect();
            json!({
                "mesh": format!("{i}: {}", m.name.as_deref().unwrap_or("(unnamed)")),
                "primitives": m.primitives.len(),
                "vertices": m.vertex_count(),
                "triangles": m.primitives.iter().map(|p| p.indices.len() / 3).sum::<usize>(),
                "skinned": m.primitives.iter().any(|p| p.influences.is_some()),
                "morph_targets": targets,
            })
        })
        .collect();
    let arkit = ch
        .meshes
        .iter()
        .flat_map(|m| &m.target_names)
        .filter(|n| canonical_name(n).is_some())
        .count();
    let clips: Vec<_> = ch
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let count = |p: Property| c.channels.iter().filter(|x| x.property == p).count();
            json!({
                "clip": format!("{i}: {}", c.name.as_deref().unwrap_or("(unnamed)")),
                "span_s": [c.start(), c.end()],
                "channels": format!(
                    "{} weights, {} translation, {} rotation, {} scale",
                    count(Property::Weights), count(Property::Translation), count(Property::Rotation), count(Property::Scale)
                ),
            })
        })
        .collect();
    let skins: Vec<_> = ch
        .skins
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"skin": format!("{i}: {}", s.name.as_deref().unwrap_or("(unnamed)")), "joints": s.joints.len()}))
        .collect();
    // Where each role's bone stands at rest (world metres): what a groom's scalp, a cape's
    // colliders and foot placement are fitted to.
    let (mut scratch, mut rest_world) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut scratch, &mut rest_world);
    let roles: Vec<String> = mien_core::anim::retarget::roles(ch)
        .into_iter()
        .map(|(r, n)| {
            let p = rest_world
                .get(n.index())
                .map(|m| m.w_axis.truncate())
                .unwrap_or_default();
            format!(
                "{r}: {} at ({:.3}, {:.3}, {:.3}) m",
                ch.nodes[n.index()].name.as_deref().unwrap_or("(unnamed)"),
                p.x,
                p.y,
                p.z
            )
        })
        .collect();
    let joints: Vec<String> = ch
        .skins
        .iter()
        .flat_map(|s| &s.joints)
        .filter_map(|j| ch.nodes[j.index()].name.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out = json!({
        "file": path.display().to_string(),
        "kind": kind,
        "nodes": ch.nodes.len(),
        "required_extensions": ch.required_extensions,
        "meshes": meshes,
        "arkit_named_targets": arkit,
        "skins": skins,
        "clips": clips,
        "import_notes": ch.notes.iter().map(|n| format!("{}: {}", n.field, n.message)).collect::<Vec<_>>(),
    });
    if !roles.is_empty() || !joints.is_empty() {
        out["skeleton"] = json!({
            "humanoid_roles": roles,
            "facing": mien_core::anim::retarget::facing_of(ch).map(|f| {
                if f.z > 0.99 { "+Z".to_string() } else if f.z < -0.99 { "-Z".to_string() } else { format!("{:.2?}", f.to_array()) }
            }),
            "joints": joints,
        });
    }
    if let Some(sb) = &ch.spring_bones {
        out["spring_bones"] = json!({
            "source": sb.source,
            "springs": sb.springs.iter().map(|s| format!("{} ({} joints)", s.name, s.joints.len())).collect::<Vec<_>>(),
            "colliders": sb.colliders.len(),
        });
    }
    if let Some(v) = &ch.vrm {
        out["kind"] = json!(match v.version {
            VrmVersion::V0 => "VRM 0.x avatar (glTF 2.0, extension VRM)",
            VrmVersion::V1 => "VRM 1.0 avatar (glTF 2.0, extension VRMC_vrm)",
        });
        out["vrm"] = vrm_section(ch, v);
        out["nodes"] = json!(format!(
            "{} (+ the VRM expression control node mien appends)",
            ch.nodes.len() - 1
        ));
    }
    out
}

/// Whether a `.glb` / `.gltf` lists `KHR_gaussian_splatting` in `extensionsUsed` (read from its
/// JSON chunk; false for anything unreadable, which the importer has already refused).
fn uses_gaussian_splatting(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let json = if bytes.starts_with(b"glTF") && bytes.len() >= 20 {
        let len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
        bytes.get(20..20usize.saturating_add(len)).unwrap_or(&[])
    } else {
        &bytes[..]
    };
    serde_json::from_slice::<serde_json::Value>(json).is_ok_and(|v| {
        v["extensionsUsed"]
            .as_array()
            .is_some_and(|a| a.iter().any(|e| e == "KHR_gaussian_splatting"))
    })
}

/// The `vrm` section of `inspect`: expressions (binds by target name), humanoid bones, lookAt.
fn vrm_section(ch: &mien_core::rig::Character, v: &Vrm) -> serde_json::Value {
    let node_name = |n: mien_core::rig::NodeId| {
        ch.nodes
            .get(n.index())
            .and_then(|x| x.name.clone())
            .unwrap_or_else(|| format!("node {}", n.index()))
    };
    let over = |o: Override| match o {
        Override::None => "none",
        Override::Block => "block",
        Override::Blend => "blend",
    };
    let expressions: Vec<String> = v
        .expressions
        .iter()
        .map(|e| {
            let binds: Vec<String> = e
                .morph_binds
                .iter()
                .map(|b| {
                    let target = ch
                        .node_mesh(b.node)
                        .and_then(|(_, m)| m.target_names.get(b.target).cloned())
                        .unwrap_or_else(|| format!("target {}", b.target));
                    format!("{}.{target} ×{}", node_name(b.node), b.weight)
                })
                .collect();
            let mut s = format!(
                "{}{}: {}",
                e.name,
                if e.preset.is_some() {
                    " (preset)"
                } else {
                    " (custom)"
                },
                if binds.is_empty() {
                    "no morph bind".to_string()
                } else {
                    binds.join(", ")
                }
            );
            if e.is_binary {
                s.push_str("; binary");
            }
            for (what, o) in [
                ("blink", e.override_blink),
                ("lookAt", e.override_look_at),
                ("mouth", e.override_mouth),
            ] {
                if o != Override::None {
                    s.push_str(&format!("; {} {what}", over(o)));
                }
            }
            let unapplied = e.material_color_binds + e.texture_transform_binds;
            if unapplied > 0 {
                s.push_str(&format!(
                    "; {unapplied} material/texture bind(s) not applied"
                ));
            }
            s
        })
        .collect();
    let humanoid: Vec<String> = v
        .humanoid
        .iter()
        .map(|b| format!("{}: {}", b.bone, node_name(b.node)))
        .collect();
    let map = |m: &RangeMap| {
        format!(
            "{}° → {}{}{}",
            m.input_max_deg,
            m.output_scale,
            if v.look_at.kind == LookAtKind::Bone {
                "°"
            } else {
                ""
            },
            if m.curve.is_some() { " (curve)" } else { "" }
        )
    };
    let l = &v.look_at;
    json!({
        "spec_version": v.spec_version,
        "expressions": expressions,
        "humanoid_bones": humanoid,
        "look_at": {
            "type": match l.kind { LookAtKind::Bone => "bone", LookAtKind::Expression => "expression" },
            "offset_from_head_m": l.offset_from_head.map(|x| (f64::from(x) * 1e4).round() / 1e4 + 0.0),
            "horizontal_inner": map(&l.horizontal_inner),
            "horizontal_outer": map(&l.horizontal_outer),
            "vertical_down": map(&l.vertical_down),
            "vertical_up": map(&l.vertical_up),
            "eyes": match (v.bone("leftEye"), v.bone("rightEye")) {
                (Some(l), Some(r)) => format!("{}, {}", node_name(l), node_name(r)),
                _ => "none (the humanoid has no leftEye / rightEye bone)".to_string(),
            },
        },
    })
}

fn stream(path: &Path) -> Result<serde_json::Value> {
    let s = read_livelink_csv(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(stream_json(
        path,
        &s,
        "ARKit weight stream (Live Link Face CSV)",
    ))
}

/// An Audio2Face blendshape-weight export (or a MediaPipe JSON) as a stream, when it is one.
fn json_stream(path: &Path) -> Option<serde_json::Value> {
    let text = mien_core::io::read::read_file_capped(path, 256 << 20).ok()?;
    let text = std::str::from_utf8(&text).ok()?;
    if !mien_core::io::audio2face::looks_like_audio2face(text) {
        return None;
    }
    let (s, _) = mien_core::io::read_stream(path).ok()?;
    Some(stream_json(
        path,
        &s,
        "ARKit weight stream (Audio2Face blendshape-weight JSON)",
    ))
}

fn stream_json(path: &Path, s: &mien_core::anim::WeightStream, kind: &str) -> serde_json::Value {
    let channels: Vec<String> = s
        .channels
        .iter()
        .map(|n| match canonical_name(n) {
            Some(c) => format!("{n} (ARKit {c})"),
            None => format!("{n} (not ARKit)"),
        })
        .collect();
    json!({
        "file": path.display().to_string(),
        "kind": kind,
        "frames": s.frame_count(),
        "nominal_fps": s.nominal_fps,
        "duration_s": s.duration(),
        "channels": channels,
        "aux_channels": s.aux_channels,
    })
}

/// A TressFX groom: its strands and points, the pinned roots, and the extent of the roots and of
/// every point in the file's units (what a character file's `tfx_options.scale` and `origin`
/// are chosen from: docs/hair.md).
fn tfx(path: &Path) -> Result<serde_json::Value> {
    let t = mien_core::hair::read_tfx(path)?;
    let bounds = |pts: &mut dyn Iterator<Item = [f32; 3]>| {
        let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
        for p in pts {
            for k in 0..3 {
                b[0][k] = b[0][k].min(p[k]);
                b[1][k] = b[1][k].max(p[k]);
            }
        }
        json!({"min": b[0], "max": b[1]})
    };
    let s1 = t.points_per_strand;
    let mut lengths: Vec<f64> = (0..t.strands)
        .map(|s| {
            (1..s1)
                .map(|k| {
                    let (a, b) = (t.positions[s * s1 + k - 1], t.positions[s * s1 + k]);
                    (0..3)
                        .map(|i| f64::from(b[i] - a[i]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                })
                .sum()
        })
        .collect();
    lengths.sort_by(f64::total_cmp);
    Ok(json!({
        "file": path.display().to_string(),
        "kind": "TressFX groom",
        "version": t.version,
        "strands": t.strands,
        "points_per_strand": s1,
        "pinned_points": t.pinned.iter().filter(|p| **p).count(),
        "roots": bounds(&mut (0..t.strands).map(|s| t.positions[s * s1])),
        "all_points": bounds(&mut t.positions.iter().copied()),
        "strand_length": {
            "median": lengths.get(lengths.len() / 2).copied().unwrap_or(0.0),
            "max": lengths.last().copied().unwrap_or(0.0),
        },
        "units": "the file's own (a character file's tfx_options.scale takes them to metres)",
    }))
}

fn spz(path: &Path) -> Result<serde_json::Value> {
    let c = mien_core::io::spz::read_spz(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let bytes = std::fs::read(path).unwrap_or_default();
    let version = mien_core::io::spz::spz_version(&bytes).unwrap_or(0);
    let mut v = cloud_json(path, &c);
    v["kind"] = json!(format!(
        "SPZ version {version} (Niantic, 3D Gaussian Splatting)"
    ));
    if let Some(o) = v.as_object_mut() {
        o.remove("properties");
    }
    Ok(v)
}

fn splats(path: &Path) -> Result<serde_json::Value> {
    let c = read_splat_ply(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut v = cloud_json(path, &c);
    // A bound capture (`mien bind`) says what it is bound to.
    let bytes =
        mien_core::io::read::read_file_capped(path, mien_core::io::bound_ply::MAX_BOUND_BYTES)
            .unwrap_or_default();
    if let Ok(b) = mien_core::io::bound_ply::parse_bound_ply(&bytes, &path.display().to_string()) {
        v["kind"] = json!(
            "mien bound capture (3D Gaussian Splatting .ply + an embedding on a character's triangles; play it with animate --capture)"
        );
        v["bound_to"] = json!(b.character);
        v["topology"] = json!(format!(
            "{} vertices, {} triangles, fingerprint {:016x}",
            b.vertex_count, b.triangle_count, b.fingerprint
        ));
        v["joint_anchors"] = json!(b.anchors);
    }
    Ok(v)
}

fn cloud_json(path: &Path, c: &mien_core::io::ply::SplatCloud) -> serde_json::Value {
    let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
    for p in &c.center {
        for k in 0..3 {
            b[0][k] = b[0][k].min(p[k]);
            b[1][k] = b[1][k].max(p[k]);
        }
    }
    json!({
        "file": path.display().to_string(),
        "kind": if c.properties.iter().any(|p| p.name == "packed_position") {
            "SuperSplat compressed .ply (3D Gaussian Splatting)"
        } else {
            "3D Gaussian Splatting .ply"
        },
        "splats": c.len(),
        "sh_degree": c.sh_degree(),
        "properties": c.properties.iter().map(|p| p.name.clone()).collect::<Vec<_>>().join(" "),
        "bounds_m": if c.is_empty() { serde_json::Value::Null } else { json!(b) },
    })
}
