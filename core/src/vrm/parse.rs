//! Reading the `VRM` (0.x) and `VRMC_vrm` (1.0) root extensions into a [`Vrm`].
//!
//! Sources: VRM 0.x `blendShapeMaster`, `humanoid`, `firstPerson` (vrm-specification 0.0
//! schema); VRMC_vrm-1.0 `expressions.md`, `humanoid.md`, `lookAt.md`. An index outside its
//! array (a bind of a mesh or node the file lacks, a humanoid bone on a missing node) and a value
//! of the wrong type are errors naming the field. A morph bind that names a real object but moves
//! nothing — a 1.0 bind on a node without a mesh, a bind of a target index its mesh lacks (either
//! version), a 0.x bind of a mesh no node instances — is **skipped and reported**: a note naming
//! the field and an entry of [`Vrm::skipped_binds`], the avatar's other expressions intact (UniVRM
//! and three-vrm skip such binds too); [`ReadOptions::strict`] refuses the avatar instead. What
//! mien cannot apply (material and texture binds) or corrects (a bind weight above its range, an
//! expression output scale above 1) is a note.

use serde_json::{Map, Value};

use super::look_at::{LookAt, LookAtKind, RangeMap};
use super::table::{V1_PRESETS, v1_preset_of_v0};
use super::{Expression, HumanBone, MorphBind, Override, SkippedBind, Vrm, VrmVersion};
use crate::error::{Error, Result};
use crate::rig::{ImportNote, Mesh, Node, NodeId};

/// What [`read`] needs of the imported scene.
pub struct Scene<'a> {
    /// The file, for messages.
    pub file: &'a str,
    /// The nodes `(N,)`.
    pub nodes: &'a [Node],
    /// The meshes `(M,)`.
    pub meshes: &'a [Mesh],
}

/// How [`read_with`] treats a morph bind that moves nothing (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Refuse the avatar when a morph bind moves nothing (a 1.0 bind on a node without a mesh, a
    /// target index the mesh lacks, a 0.x bind of a mesh no node instances), instead of skipping
    /// and reporting it. Default `false`, as the importer ([`crate::io::gltf`]) reads.
    pub strict: bool,
}

/// [`read_with`] with the default [`ReadOptions`] (binds that move nothing are skipped and
/// reported), as the glTF importer reads.
///
/// # Errors
/// As [`read_with`].
pub fn read(
    ext: &Map<String, Value>,
    scene: &Scene,
    control_node: NodeId,
    notes: &mut Vec<ImportNote>,
) -> Result<Option<Vrm>> {
    read_with(ext, scene, control_node, notes, ReadOptions::default())
}

/// Read the VRM extension of a glTF's root `extensions` (`VRMC_vrm` preferred when both are
/// present, which is noted). `control_node` is the index the importer will give the expression
/// control node. Returns `None` for a file with neither.
///
/// # Errors
/// [`Error::Format`] naming `extensions.VRM…` / `extensions.VRMC_vrm…` and the index: a bind of
/// a mesh or node that does not exist, a negative or non-finite weight, a humanoid bone on a
/// missing node, an unknown override or lookAt type, a value of the wrong JSON type. With
/// [`ReadOptions::strict`], every bind that moves nothing too ([`Error::Many`] when several,
/// each naming its field).
pub fn read_with(
    ext: &Map<String, Value>,
    scene: &Scene,
    control_node: NodeId,
    notes: &mut Vec<ImportNote>,
    options: ReadOptions,
) -> Result<Option<Vrm>> {
    let v1 = ext.get("VRMC_vrm");
    let v0 = ext.get("VRM");
    let mut r = Reader {
        scene,
        notes,
        skipped: Vec::new(),
    };
    let vrm = match (v1, v0) {
        (Some(v), other) => {
            if other.is_some() {
                r.note(
                    "extensions.VRM",
                    "the file has both VRM 0.x and VRMC_vrm 1.0: the 1.0 extension is used",
                );
            }
            r.v1(v, control_node)?
        }
        (None, Some(v)) => r.v0(v, control_node)?,
        (None, None) => return Ok(None),
    };
    if options.strict {
        vrm.require_all_binds(scene.file)?;
    }
    Ok(Some(vrm))
}

/// Read a VRM Animation's humanoid map (`extensions.VRMC_vrm_animation.humanoid.humanBones`,
/// VRMC_vrm_animation-1.0): which node of the `.vrma` file is which humanoid bone. Returns `None`
/// for a file without the extension. Expression and lookAt tracks are not read yet (noted when
/// present).
///
/// # Errors
/// [`Error::Format`] naming `extensions.VRMC_vrm_animation…`: a humanoid bone on a missing node,
/// a value of the wrong JSON type.
pub fn read_animation(
    ext: &Map<String, Value>,
    scene: &Scene,
    notes: &mut Vec<ImportNote>,
) -> Result<Option<super::VrmAnimation>> {
    let Some(v) = ext.get("VRMC_vrm_animation") else {
        return Ok(None);
    };
    let base = "extensions.VRMC_vrm_animation";
    let mut r = Reader {
        scene,
        notes,
        skipped: Vec::new(),
    };
    let root = r.object(v, base)?;
    let spec_version = root
        .get("specVersion")
        .and_then(Value::as_str)
        .unwrap_or("1.0")
        .to_string();
    let humanoid = r.humanoid_v1(root.get("humanoid"), &format!("{base}.humanoid"))?;
    for key in ["expressions", "lookAt"] {
        let present = match root.get(key) {
            Some(Value::Object(m)) => m.values().any(|x| match x {
                Value::Object(o) => !o.is_empty(),
                _ => true,
            }),
            Some(_) => true,
            None => false,
        };
        if present {
            r.note(
                &format!("{base}.{key}"),
                format!(
                    "VRM Animation {key} tracks are not played yet: only the humanoid bones are"
                ),
            );
        }
    }
    Ok(Some(super::VrmAnimation {
        spec_version,
        humanoid,
    }))
}

/// Where each version keeps its lookAt fields.
struct LookAtKeys {
    kind: &'static str,
    bone: &'static str,
    expression: &'static str,
    offset: &'static str,
    /// Horizontal inner, horizontal outer, vertical down, vertical up.
    maps: [&'static str; 4],
    input: &'static str,
    output: &'static str,
    curves: bool,
}

impl LookAtKeys {
    /// VRM 0.x `firstPerson`.
    const V0: LookAtKeys = LookAtKeys {
        kind: "lookAtTypeName",
        bone: "Bone",
        expression: "BlendShape",
        offset: "firstPersonBoneOffset",
        maps: [
            "lookAtHorizontalInner",
            "lookAtHorizontalOuter",
            "lookAtVerticalDown",
            "lookAtVerticalUp",
        ],
        input: "xRange",
        output: "yRange",
        curves: true,
    };
    /// VRMC_vrm 1.0 `lookAt`.
    const V1: LookAtKeys = LookAtKeys {
        kind: "type",
        bone: "bone",
        expression: "expression",
        offset: "offsetFromHeadBone",
        maps: [
            "rangeMapHorizontalInner",
            "rangeMapHorizontalOuter",
            "rangeMapVerticalDown",
            "rangeMapVerticalUp",
        ],
        input: "inputMaxValue",
        output: "outputScale",
        curves: false,
    };
}

struct Reader<'a, 'b> {
    scene: &'a Scene<'a>,
    notes: &'b mut Vec<ImportNote>,
    /// Binds that move nothing, skipped (module doc).
    skipped: Vec<SkippedBind>,
}

fn obj(v: &Value) -> Option<&Map<String, Value>> {
    v.as_object()
}

impl Reader<'_, '_> {
    fn err(&self, field: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::format(self.scene.file, field, reason)
    }

    fn note(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.notes.push(ImportNote {
            field: field.into(),
            message: message.into(),
        });
    }

    /// Skip a bind that moves nothing: noted and listed in [`Vrm::skipped_binds`].
    fn skip(&mut self, field: String, reason: String) {
        self.note(
            &field,
            format!("{reason}: the bind moves nothing and is skipped"),
        );
        self.skipped.push(SkippedBind { field, reason });
    }

    fn object<'v>(&self, v: &'v Value, field: &str) -> Result<&'v Map<String, Value>> {
        obj(v).ok_or_else(|| self.err(field, "not a JSON object"))
    }

    fn array<'v>(&self, v: Option<&'v Value>, field: &str) -> Result<&'v [Value]> {
        match v {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(self.err(field, "not a JSON array")),
        }
    }

    fn index(&self, v: Option<&Value>, field: &str, len: usize, what: &str) -> Result<usize> {
        let i = v
            .and_then(Value::as_u64)
            .ok_or_else(|| self.err(field, "missing or not a non-negative integer"))?;
        usize::try_from(i).ok().filter(|&i| i < len).ok_or_else(|| {
            self.err(
                field,
                format!("{what} {i} does not exist (the file has {len})"),
            )
        })
    }

    fn number(&self, v: Option<&Value>, field: &str, default: f32) -> Result<f32> {
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(x) => x
                .as_f64()
                .map(|f| f as f32)
                .filter(|f| f.is_finite())
                .ok_or_else(|| self.err(field, "not a finite number")),
        }
    }

    fn boolean(&self, v: Option<&Value>, field: &str) -> Result<bool> {
        match v {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.err(field, "not true or false")),
        }
    }

    fn vec3(&self, v: Option<&Value>, field: &str, default: [f32; 3]) -> Result<[f32; 3]> {
        match v {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Array(a)) if a.len() == 3 => {
                let mut out = [0.0; 3];
                for (k, x) in a.iter().enumerate() {
                    out[k] = self.number(Some(x), &format!("{field}[{k}]"), 0.0)?;
                }
                Ok(out)
            }
            Some(Value::Object(o)) => Ok([
                self.number(o.get("x"), &format!("{field}.x"), 0.0)?,
                self.number(o.get("y"), &format!("{field}.y"), 0.0)?,
                self.number(o.get("z"), &format!("{field}.z"), 0.0)?,
            ]),
            Some(_) => Err(self.err(field, "not three numbers")),
        }
    }

    /// A bind weight in `[0, max]`; above `max` noted and applied as `max`, divided by `max`.
    fn weight(&mut self, v: Option<&Value>, field: &str, max: f32, v0: bool) -> Result<f32> {
        let w = self.number(v, field, if v0 { 100.0 } else { 1.0 })?;
        if w < 0.0 {
            return Err(self.err(field, format!("bind weight {w} is negative")));
        }
        if w > max {
            let why = if v0 {
                format!("bind weight {w} is above 100 (VRM 0.x binds are 0–100): applied as 100")
            } else {
                format!(
                    "bind weight {w} is above 1 (VRM 1.0 binds are 0–1; a 0–100 value written by an exporter?): applied as 1, not ×{w}"
                )
            };
            self.note(field, why);
            return Ok(1.0);
        }
        Ok(w / max)
    }

    /// A bind's morph target index in `mesh`; `None` (skipped, reported) for an index the mesh
    /// lacks.
    fn target(&mut self, mesh: usize, v: Option<&Value>, field: &str) -> Result<Option<usize>> {
        let n = self.scene.meshes[mesh].target_count();
        let i = v
            .and_then(Value::as_u64)
            .ok_or_else(|| self.err(field, "missing or not a non-negative integer"))?;
        match usize::try_from(i).ok().filter(|&i| i < n) {
            Some(t) => Ok(Some(t)),
            None => {
                self.skip(
                    field.to_owned(),
                    format!("morph target {i} does not exist: mesh {mesh} has {n} target(s)"),
                );
                Ok(None)
            }
        }
    }

    fn v0(&mut self, v: &Value, control_node: NodeId) -> Result<Vrm> {
        let base = "extensions.VRM";
        let root = self.object(v, base)?;
        let spec_version = root
            .get("specVersion")
            .and_then(Value::as_str)
            .unwrap_or("0.0")
            .to_string();
        if !spec_version.starts_with("0.") {
            self.note(
                format!("{base}.specVersion"),
                format!("`{spec_version}` is not a 0.x version: read as VRM 0.x"),
            );
        }
        let mut expressions: Vec<Expression> = Vec::new();
        let groups_field = format!("{base}.blendShapeMaster.blendShapeGroups");
        let groups = self.array(
            root.get("blendShapeMaster")
                .and_then(|m| m.get("blendShapeGroups")),
            &groups_field,
        )?;
        let mut material = 0usize;
        for (gi, g) in groups.iter().enumerate() {
            let field = format!("{groups_field}[{gi}]");
            let g = self.object(g, &field)?;
            let file_name = g
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let preset_raw = g
                .get("presetName")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            let preset = v1_preset_of_v0(preset_raw);
            if preset.is_none() && !preset_raw.eq_ignore_ascii_case("unknown") {
                self.note(
                    format!("{field}.presetName"),
                    format!(
                        "`{preset_raw}` is not a VRM 0.x preset: read as a custom expression named after the group"
                    ),
                );
            }
            let name = match (preset, file_name.is_empty()) {
                (Some(p), _) => p.to_string(),
                (None, false) => file_name.clone(),
                (None, true) => format!("expression_{gi}"),
            };
            let mut binds = Vec::new();
            for (bi, b) in self
                .array(g.get("binds"), &format!("{field}.binds"))?
                .iter()
                .enumerate()
            {
                let bf = format!("{field}.binds[{bi}]");
                let b = self.object(b, &bf)?;
                let mesh = self.index(
                    b.get("mesh"),
                    &format!("{bf}.mesh"),
                    self.scene.meshes.len(),
                    "mesh",
                )?;
                let Some(target) = self.target(mesh, b.get("index"), &format!("{bf}.index"))?
                else {
                    continue;
                };
                let weight = self.weight(b.get("weight"), &format!("{bf}.weight"), 100.0, true)?;
                let nodes: Vec<NodeId> = self
                    .scene
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.mesh.map(|m| m.index()) == Some(mesh))
                    .map(|(i, _)| NodeId(i as u32))
                    .collect();
                if nodes.is_empty() {
                    self.skip(bf.clone(), format!("no node instances mesh {mesh}"));
                }
                binds.extend(nodes.into_iter().map(|node| MorphBind {
                    node,
                    target,
                    weight,
                }));
            }
            let mv = self
                .array(g.get("materialValues"), &format!("{field}.materialValues"))?
                .len();
            material += mv;
            let e = Expression {
                name,
                preset: preset.map(str::to_string),
                file_name,
                is_binary: self.boolean(g.get("isBinary"), &format!("{field}.isBinary"))?,
                override_blink: Override::None,
                override_look_at: Override::None,
                override_mouth: Override::None,
                morph_binds: binds,
                material_color_binds: mv,
                texture_transform_binds: 0,
            };
            self.push(&mut expressions, e, &field);
        }
        if material > 0 {
            self.note(
                format!("{groups_field}[*].materialValues"),
                format!(
                    "{material} material value binds not applied (mien's splats carry no material)"
                ),
            );
        }
        let humanoid = self.humanoid_v0(root.get("humanoid"), &format!("{base}.humanoid"))?;
        let look_at = self.look_at(
            root.get("firstPerson"),
            &format!("{base}.firstPerson"),
            &LookAtKeys::V0,
        )?;
        let vrm = Vrm {
            version: VrmVersion::V0,
            spec_version,
            expressions,
            control_node,
            humanoid,
            look_at,
            skipped_binds: std::mem::take(&mut self.skipped),
        };
        self.check_eyes(&vrm, base);
        Ok(vrm)
    }

    fn v1(&mut self, v: &Value, control_node: NodeId) -> Result<Vrm> {
        let base = "extensions.VRMC_vrm";
        let root = self.object(v, base)?;
        let spec_version = root
            .get("specVersion")
            .and_then(Value::as_str)
            .unwrap_or("1.0")
            .to_string();
        if !spec_version.starts_with("1.") {
            self.note(
                format!("{base}.specVersion"),
                format!("`{spec_version}` is not a 1.x version: read as VRM 1.0"),
            );
        }
        let mut expressions = Vec::new();
        let (mut colors, mut transforms) = (0usize, 0usize);
        if let Some(ex) = root.get("expressions") {
            let ex = self.object(ex, &format!("{base}.expressions"))?;
            for kind in ["preset", "custom"] {
                let Some(set) = ex.get(kind) else { continue };
                let set_field = format!("{base}.expressions.{kind}");
                let set = self.object(set, &set_field)?;
                for (name, e) in set {
                    let field = format!("{set_field}.{name}");
                    if kind == "preset" && !V1_PRESETS.contains(&name.as_str()) {
                        self.note(
                            &field,
                            format!(
                                "`{name}` is not a VRM 1.0 preset: read as a custom expression"
                            ),
                        );
                    }
                    let e = self.object(e, &field)?;
                    let mut binds = Vec::new();
                    for (bi, b) in self
                        .array(
                            e.get("morphTargetBinds"),
                            &format!("{field}.morphTargetBinds"),
                        )?
                        .iter()
                        .enumerate()
                    {
                        let bf = format!("{field}.morphTargetBinds[{bi}]");
                        let b = self.object(b, &bf)?;
                        let node = self.index(
                            b.get("node"),
                            &format!("{bf}.node"),
                            self.scene.nodes.len(),
                            "node",
                        )?;
                        let Some(mesh) = self.scene.nodes[node].mesh else {
                            self.skip(format!("{bf}.node"), format!("node {node} has no mesh"));
                            continue;
                        };
                        let Some(target) =
                            self.target(mesh.index(), b.get("index"), &format!("{bf}.index"))?
                        else {
                            continue;
                        };
                        let weight =
                            self.weight(b.get("weight"), &format!("{bf}.weight"), 1.0, false)?;
                        binds.push(MorphBind {
                            node: NodeId(node as u32),
                            target,
                            weight,
                        });
                    }
                    let mc = self
                        .array(
                            e.get("materialColorBinds"),
                            &format!("{field}.materialColorBinds"),
                        )?
                        .len();
                    let tt = self
                        .array(
                            e.get("textureTransformBinds"),
                            &format!("{field}.textureTransformBinds"),
                        )?
                        .len();
                    colors += mc;
                    transforms += tt;
                    let preset = (kind == "preset" && V1_PRESETS.contains(&name.as_str()))
                        .then(|| name.clone());
                    let expr = Expression {
                        name: name.clone(),
                        preset,
                        file_name: name.clone(),
                        is_binary: self.boolean(e.get("isBinary"), &format!("{field}.isBinary"))?,
                        override_blink: self
                            .over(e.get("overrideBlink"), &format!("{field}.overrideBlink"))?,
                        override_look_at: self
                            .over(e.get("overrideLookAt"), &format!("{field}.overrideLookAt"))?,
                        override_mouth: self
                            .over(e.get("overrideMouth"), &format!("{field}.overrideMouth"))?,
                        morph_binds: binds,
                        material_color_binds: mc,
                        texture_transform_binds: tt,
                    };
                    self.push(&mut expressions, expr, &field);
                }
            }
        }
        if colors + transforms > 0 {
            self.note(
                format!("{base}.expressions"),
                format!("{colors} material colour and {transforms} texture transform binds not applied (mien's splats carry no material); those expressions' morph binds are applied"),
            );
        }
        let humanoid = self.humanoid_v1(root.get("humanoid"), &format!("{base}.humanoid"))?;
        let look_at = self.look_at(
            root.get("lookAt"),
            &format!("{base}.lookAt"),
            &LookAtKeys::V1,
        )?;
        let vrm = Vrm {
            version: VrmVersion::V1,
            spec_version,
            expressions,
            control_node,
            humanoid,
            look_at,
            skipped_binds: std::mem::take(&mut self.skipped),
        };
        self.check_eyes(&vrm, base);
        Ok(vrm)
    }

    /// Add `e` unless its name is taken (noted).
    fn push(&mut self, list: &mut Vec<Expression>, e: Expression, field: &str) {
        if list.iter().any(|x| x.name == e.name) {
            self.note(
                field,
                format!(
                    "a second expression named `{}`: ignored (the first is used)",
                    e.name
                ),
            );
        } else {
            list.push(e);
        }
    }

    fn over(&self, v: Option<&Value>, field: &str) -> Result<Override> {
        match v {
            None | Some(Value::Null) => Ok(Override::None),
            Some(Value::String(s)) => match s.as_str() {
                "none" => Ok(Override::None),
                "block" => Ok(Override::Block),
                "blend" => Ok(Override::Blend),
                other => Err(self.err(field, format!("`{other}` is not none, block or blend"))),
            },
            Some(_) => Err(self.err(field, "not a string")),
        }
    }

    fn bone_node(&self, v: Option<&Value>, field: &str) -> Result<NodeId> {
        let n = self.index(v, field, self.scene.nodes.len(), "node")?;
        Ok(NodeId(n as u32))
    }

    fn humanoid_v0(&mut self, v: Option<&Value>, base: &str) -> Result<Vec<HumanBone>> {
        let Some(v) = v else { return Ok(Vec::new()) };
        let h = self.object(v, base)?;
        let field = format!("{base}.humanBones");
        let mut out: Vec<HumanBone> = Vec::new();
        for (i, b) in self.array(h.get("humanBones"), &field)?.iter().enumerate() {
            let bf = format!("{field}[{i}]");
            let b = self.object(b, &bf)?;
            let Some(bone) = b.get("bone").and_then(Value::as_str) else {
                return Err(self.err(format!("{bf}.bone"), "missing or not a string"));
            };
            let node = self.bone_node(b.get("node"), &format!("{bf}.node"))?;
            if out.iter().any(|x| x.bone == bone) {
                self.note(
                    &bf,
                    format!("bone `{bone}` listed twice: the first is used"),
                );
                continue;
            }
            out.push(HumanBone {
                bone: bone.to_string(),
                node,
            });
        }
        Ok(out)
    }

    fn humanoid_v1(&mut self, v: Option<&Value>, base: &str) -> Result<Vec<HumanBone>> {
        let Some(v) = v else { return Ok(Vec::new()) };
        let h = self.object(v, base)?;
        let field = format!("{base}.humanBones");
        let Some(bones) = h.get("humanBones") else {
            return Ok(Vec::new());
        };
        let bones = self.object(bones, &field)?;
        let mut out = Vec::new();
        for (bone, b) in bones {
            let bf = format!("{field}.{bone}");
            let b = self.object(b, &bf)?;
            out.push(HumanBone {
                bone: bone.clone(),
                node: self.bone_node(b.get("node"), &format!("{bf}.node"))?,
            });
        }
        Ok(out)
    }

    /// lookAt of either version, by its [`LookAtKeys`]: the type, the offset and the four maps
    /// (0.x maps may carry a curve).
    fn look_at(&mut self, v: Option<&Value>, base: &str, k: &LookAtKeys) -> Result<LookAt> {
        let Some(v) = v else {
            return Ok(LookAt::default());
        };
        let f = self.object(v, base)?;
        let kind = match f.get(k.kind).and_then(Value::as_str) {
            None => LookAtKind::Bone,
            Some(t) if t == k.bone => LookAtKind::Bone,
            Some(t) if t == k.expression => LookAtKind::Expression,
            Some(other) => {
                return Err(self.err(
                    format!("{base}.{}", k.kind),
                    format!("`{other}` is not {} or {}", k.bone, k.expression),
                ));
            }
        };
        let default_out = if kind == LookAtKind::Bone { 10.0 } else { 1.0 };
        let map = |me: &mut Self, key: &str| -> Result<RangeMap> {
            let field = format!("{base}.{key}");
            let Some(m) = f.get(key) else {
                return Ok(RangeMap::linear(90.0, default_out));
            };
            let m = me.object(m, &field)?;
            let curve = match m.get("curve") {
                Some(c) if k.curves && !c.is_null() => Some(me.curve(c, &field)?),
                _ => None,
            };
            let r = RangeMap {
                input_max_deg: me.number(m.get(k.input), &format!("{field}.{}", k.input), 90.0)?,
                output_scale: me.number(
                    m.get(k.output),
                    &format!("{field}.{}", k.output),
                    default_out,
                )?,
                curve,
            };
            me.checked_map(r, kind, &field, k.input, k.output)
        };
        Ok(LookAt {
            kind,
            offset_from_head: self.vec3(
                f.get(k.offset),
                &format!("{base}.{}", k.offset),
                [0.0, 0.06, 0.0],
            )?,
            horizontal_inner: map(self, k.maps[0])?,
            horizontal_outer: map(self, k.maps[1])?,
            vertical_down: map(self, k.maps[2])?,
            vertical_up: map(self, k.maps[3])?,
        })
    }

    /// A 0.x curve: keys of 4 numbers (time, value, inTangent, outTangent) in time order.
    fn curve(&self, c: &Value, field: &str) -> Result<Vec<[f32; 4]>> {
        let c = self.array(Some(c), &format!("{field}.curve"))?;
        if c.len() % 4 != 0 || c.is_empty() {
            return Err(self.err(
                format!("{field}.curve"),
                format!(
                    "{} numbers; a curve is keys of 4 (time, value, inTangent, outTangent)",
                    c.len()
                ),
            ));
        }
        let mut keys: Vec<[f32; 4]> = Vec::with_capacity(c.len() / 4);
        for (k, chunk) in c.chunks(4).enumerate() {
            let mut key = [0.0f32; 4];
            for (j, x) in chunk.iter().enumerate() {
                key[j] = self.number(Some(x), &format!("{field}.curve[{}]", 4 * k + j), 0.0)?;
            }
            if keys.last().is_some_and(|p| p[0] > key[0]) {
                return Err(self.err(
                    format!("{field}.curve[{}]", 4 * k),
                    "key times are not in ascending order",
                ));
            }
            keys.push(key);
        }
        Ok(keys)
    }

    /// A map with an input max not above 0 (noted: it maps to 0) or, for an expression lookAt, an
    /// output scale above 1 (noted: the weight it gives is clamped to 1 each frame, as UniVRM and
    /// three-vrm clamp expression values).
    fn checked_map(
        &mut self,
        r: RangeMap,
        kind: LookAtKind,
        field: &str,
        input: &str,
        output: &str,
    ) -> Result<RangeMap> {
        if r.input_max_deg <= 0.0 {
            self.note(
                format!("{field}.{input}"),
                format!(
                    "{} is not above 0: this direction does not move",
                    r.input_max_deg
                ),
            );
        }
        if r.output_scale < 0.0 {
            return Err(self.err(
                format!("{field}.{output}"),
                format!("{} is negative", r.output_scale),
            ));
        }
        if kind == LookAtKind::Expression && r.output_scale > 1.0 {
            self.note(
                format!("{field}.{output}"),
                format!(
                    "{} is above 1, the largest expression weight: a look expression reaches 1 at 1/{} of the input range and is clamped beyond (counted per frame)",
                    r.output_scale, r.output_scale
                ),
            );
        }
        Ok(r)
    }

    fn check_eyes(&mut self, vrm: &Vrm, base: &str) {
        if vrm.look_at.kind == LookAtKind::Bone
            && (vrm.bone("leftEye").is_none() || vrm.bone("rightEye").is_none())
        {
            self.note(
                format!("{base}.humanoid"),
                "lookAt is of type bone but the humanoid has no leftEye / rightEye: gaze turns no eye",
            );
        }
        if vrm.look_at.kind == LookAtKind::Expression
            && !["lookUp", "lookDown", "lookLeft", "lookRight"]
                .iter()
                .any(|n| vrm.expression(n).is_some())
        {
            self.note(
                format!("{base}.lookAt"),
                "lookAt is of type expression but the avatar has no look expression: gaze moves nothing",
            );
        }
    }
}
