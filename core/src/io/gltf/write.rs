//! A [`Character`] written out as a GLB, so a character mien built from another format (a
//! MetaHuman DNA: [`crate::io::dna::dna_character`]) has a glTF file any engine loads and a bake
//! can append its take to (issue 29).
//!
//! **What is written** (glTF 2.0, one binary buffer, the GLB's BIN chunk):
//!
//! - **nodes** (§3.5): name, rest `translation` / `rotation` / `scale` (each left out when it is
//!   the default: zero, identity, one), `children`, `mesh`, `skin`, the node's own `weights`;
//! - **meshes** (§3.7.2): one per character mesh a written node draws, its primitives with
//!   `POSITION` (metres, with `min`/`max`), `NORMAL`, `TANGENT`, `TEXCOORD_0`, `COLOR_0` when the
//!   primitive has them, `JOINTS_0` (u8, or u16 past 256 joints) / `WEIGHTS_0` (f32) for a skinned
//!   one (a zero weight's joint written as 0), and `indices` (u16 up to 65,535 vertices, else
//!   u32) as a triangle list; a primitive with no triangles is written as `POINTS`;
//! - **morph targets** (§3.7.2.2): per target `POSITION` deltas (metres, with `min`/`max`), `NORMAL`
//!   deltas when the morph set has them, `TANGENT` deltas (xyz) when it has those and the
//!   primitive has tangents; the mesh's default `weights` and `extras.targetNames`. A target is
//!   stored the smallest of three ways: no data at all (an accessor without a `bufferView`: zeros,
//!   §3.6.2.1) when it moves nothing, a sparse accessor (§3.6.2.3: the moved vertices' indices
//!   and deltas) when that is smaller than the dense array, else dense. Every reader sees the same
//!   `(V,3)` deltas: the CSR [`crate::rig::MorphSet`] comes back entry for entry;
//! - **skins** (§3.7.3): joints and `inverseBindMatrices` (MAT4, column-major), for the skins a
//!   written node uses;
//! - **the scene** over [`Character::scene_roots`] (§3.5.1), `scene: 0`.
//!
//! Not written: materials and images (primitives use glTF's default material), clips (a bake
//! appends its own take), VRM and spring-bone extensions, the rig logic. Units and axes are the
//! character's, which are glTF's: metres, +Y up, the face toward +Z.
//!
//! **Left-out nodes** ([`WriteOptions::omit`]): mien's own control nodes — the DNA control node
//! ([`crate::rig::riglogic::CONTROL_NODE_NAME`]) and a VRM's expression node
//! ([`crate::vrm::CONTROL_NODE_NAME`]) — are geometry-less meshes that exist only inside mien (a glTF
//! mesh needs a primitive); [`WriteOptions::for_character`] leaves them out. A left-out node takes
//! its descendants with it; the other nodes keep their order, and [`WrittenCharacter`] says where
//! each character node and mesh went.
//!
//! **Deterministic bytes**: everything is written in character order, the JSON by `serde_json`
//! (keys in insertion order, floats in their shortest round-trip form), buffer views 4-byte
//! aligned and zero-padded; the same character and options give the same bytes. The source is
//! named in `asset.extras.mien.source` by its file name only, so the bytes do not depend on how a
//! path was typed.

use glam::{Mat4, Quat, Vec3};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::rig::{Character, NodeId, Primitive};

/// glTF `bufferView.target` for vertex attributes (`ARRAY_BUFFER`).
const ARRAY_BUFFER: u32 = 34962;
/// glTF `bufferView.target` for indices (`ELEMENT_ARRAY_BUFFER`).
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
/// glTF component types.
const U8: u32 = 5121;
const U16: u32 = 5123;
const U32: u32 = 5125;
const F32: u32 = 5126;

/// What [`character_to_glb`] leaves out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Nodes left out of the file, each with its descendants.
    pub omit: Vec<NodeId>,
}

impl WriteOptions {
    /// Leave out mien's own control nodes of `ch`: the DNA control node (`ch.rig_logic`) and a
    /// VRM's expression node (`ch.vrm`). Nothing else.
    pub fn for_character(ch: &Character) -> Self {
        let mut omit = Vec::new();
        if let Some(r) = &ch.rig_logic {
            omit.push(r.control_node);
        }
        if let Some(v) = &ch.vrm {
            omit.push(v.control_node);
        }
        WriteOptions { omit }
    }
}

/// A written character: the GLB and where each character node and mesh went.
#[derive(Clone, Debug, PartialEq)]
pub struct WrittenCharacter {
    /// The GLB bytes.
    pub glb: Vec<u8>,
    /// `(N,)` by character node: its glTF node index, `None` when left out.
    pub node_index: Vec<Option<usize>>,
    /// `(M,)` by character mesh: its glTF mesh index, `None` when no written node draws it.
    pub mesh_index: Vec<Option<usize>>,
}

/// The BIN chunk under construction: bytes, buffer views and accessors.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Bin {
    /// A buffer view over `data` (4-byte aligned), with `target` when given; its index.
    fn view(&mut self, data: &[u8], target: Option<u32>) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.bytes.extend_from_slice(data);
        self.views.push(v);
        self.views.len() - 1
    }

    /// An accessor; its index.
    fn accessor(&mut self, a: Value) -> usize {
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    /// A dense f32 accessor of `count` elements of `ty` (`VEC2` …) over `data`, with `min`/`max`
    /// per component when `bounds`.
    fn floats(&mut self, data: &[f32], width: usize, ty: &str, bounds: bool) -> usize {
        let view = self.view(&f32_bytes(data), Some(ARRAY_BUFFER));
        let mut a = json!({"bufferView": view, "componentType": F32, "count": data.len() / width, "type": ty});
        if bounds {
            let (lo, hi) = min_max(data, width, false);
            a["min"] = json!(lo);
            a["max"] = json!(hi);
        }
        self.accessor(a)
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Per-component minimum and maximum of `data` `(n × width)`; with `zero`, 0 counts as a value
/// too (the elements a sparse accessor leaves at zero).
fn min_max(data: &[f32], width: usize, zero: bool) -> (Vec<f32>, Vec<f32>) {
    let init = if zero { 0.0 } else { f32::INFINITY };
    let mut lo = vec![init; width];
    let mut hi = vec![if zero { 0.0 } else { f32::NEG_INFINITY }; width];
    for c in data.chunks_exact(width) {
        for k in 0..width {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    (lo, hi)
}

fn problem(file: &str, field: String, reason: impl Into<String>) -> Error {
    Error::Invalid {
        what: format!("{file}: glTF export: {field}"),
        reason: reason.into(),
    }
}

/// Write `ch` as a GLB (module docs), leaving out `opts.omit`.
///
/// # Errors
/// [`Character::validate`]'s problems; then, all collected, each naming the character's field
/// (`nodes[i]`, `meshes[m].primitives[p]`, `skins[s]`) in an [`Error::Invalid`]: an omitted node
/// out of range; a written node whose mesh has no primitive (a control node not left out), a
/// primitive without vertices, a non-finite rest transform; a skin a written node uses whose joint
/// is left out or that has more than 65,536 joints; a skinned primitive whose joint index is not
/// below the joint count of a skin it is drawn with. [`Error::Limit`] for a file over the GLB's
/// 32-bit length.
pub fn character_to_glb(ch: &Character, opts: &WriteOptions) -> Result<WrittenCharacter> {
    ch.validate()?;
    let file = std::path::Path::new(&ch.source)
        .file_name()
        .map_or_else(|| ch.source.clone(), |f| f.to_string_lossy().into_owned());
    let f = ch.source.as_str();
    let mut problems = Vec::new();

    // Nodes kept: not omitted, no omitted ancestor (parent-first order).
    let mut keep = vec![true; ch.nodes.len()];
    for n in &opts.omit {
        match keep.get_mut(n.index()) {
            Some(k) => *k = false,
            None => problems.push(problem(
                f,
                "omit".into(),
                format!("node {n} does not exist ({} nodes)", ch.nodes.len()),
            )),
        }
    }
    for &id in ch.hierarchy.order() {
        if let Some(p) = ch.nodes[id.index()].parent
            && !keep[p.index()]
        {
            keep[id.index()] = false;
        }
    }
    let mut node_index = vec![None; ch.nodes.len()];
    let mut next = 0;
    for (i, k) in keep.iter().enumerate() {
        if *k {
            node_index[i] = Some(next);
            next += 1;
        }
    }
    // Meshes and skins the written nodes use, in character order.
    let mut mesh_used = vec![false; ch.meshes.len()];
    let mut skin_used = vec![false; ch.skins.len()];
    for (i, n) in ch.nodes.iter().enumerate() {
        if keep[i] {
            if let Some(m) = n.mesh {
                mesh_used[m.index()] = true;
            }
            if let Some(s) = n.skin {
                skin_used[s.index()] = true;
            }
        }
    }
    let renumber = |used: &[bool]| {
        let mut k = 0;
        used.iter()
            .map(|&u| {
                u.then(|| {
                    k += 1;
                    k - 1
                })
            })
            .collect::<Vec<Option<usize>>>()
    };
    let mesh_index = renumber(&mesh_used);
    let skin_index = renumber(&skin_used);

    // Checks before anything is written.
    for (i, n) in ch.nodes.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let r = &n.rest;
        if !(r.translation.is_finite() && r.rotation.is_finite() && r.scale.is_finite()) {
            problems.push(problem(
                f,
                format!("nodes[{i}]"),
                "its rest transform is not finite",
            ));
        }
        if let Some((_, m)) = ch.node_mesh(NodeId(i as u32))
            && m.primitives.is_empty()
        {
            problems.push(problem(
                f,
                format!("nodes[{i}].mesh"),
                format!(
                    "mesh `{}` has no primitive (glTF needs one): a control node is mien's own — leave it out (WriteOptions::for_character)",
                    m.name.as_deref().unwrap_or("")
                ),
            ));
        }
        if let (Some(m), Some(s)) = (n.mesh, n.skin) {
            let joints = ch.skins[s.index()].joints.len();
            for (pi, p) in ch.meshes[m.index()].primitives.iter().enumerate() {
                let Some(inf) = &p.influences else { continue };
                let over = inf
                    .joints
                    .iter()
                    .zip(&inf.weights)
                    .position(|(j, w)| (0..4).any(|k| w[k] != 0.0 && j[k] as usize >= joints));
                if let Some(v) = over {
                    problems.push(problem(
                        f,
                        format!("meshes[{}].primitives[{pi}].JOINTS_0", m.index()),
                        format!(
                            "vertex {v} names joint ≥ the {joints} joints of skins[{}] (drawn by node {i})",
                            s.index()
                        ),
                    ));
                }
            }
        }
    }
    for (mi, m) in ch.meshes.iter().enumerate() {
        if !mesh_used[mi] {
            continue;
        }
        for (pi, p) in m.primitives.iter().enumerate() {
            if p.vertex_count() == 0 {
                problems.push(problem(
                    f,
                    format!("meshes[{mi}].primitives[{pi}]"),
                    "no vertices (a glTF accessor holds at least one)",
                ));
            }
        }
    }
    for (si, s) in ch.skins.iter().enumerate() {
        if !skin_used[si] {
            continue;
        }
        if s.joints.len() > 1 << 16 {
            problems.push(problem(
                f,
                format!("skins[{si}].joints"),
                format!(
                    "{} joints: JOINTS_0 holds at most 65,536 (u16)",
                    s.joints.len()
                ),
            ));
        }
        if let Some(k) = s.joints.iter().position(|j| !keep[j.index()]) {
            problems.push(problem(
                f,
                format!("skins[{si}].joints[{k}]"),
                format!("joint node {} is left out of the file", s.joints[k]),
            ));
        }
    }
    Error::collect(problems)?;

    let mut bin = Bin::default();
    let mut meshes = Vec::new();
    for (mi, m) in ch.meshes.iter().enumerate() {
        if !mesh_used[mi] {
            continue;
        }
        let primitives: Vec<Value> = m
            .primitives
            .iter()
            .map(|p| primitive(&mut bin, p))
            .collect();
        let mut mesh = json!({"primitives": primitives});
        if let Some(n) = &m.name {
            mesh["name"] = json!(n);
        }
        if m.target_count() > 0 {
            mesh["weights"] = json!(m.default_weights);
            mesh["extras"] = json!({"targetNames": m.target_names});
        }
        meshes.push(mesh);
    }
    let mut skins = Vec::new();
    for (si, s) in ch.skins.iter().enumerate() {
        if !skin_used[si] {
            continue;
        }
        let ibm: Vec<f32> = s
            .inverse_bind
            .iter()
            .flat_map(Mat4::to_cols_array)
            .collect();
        let view = bin.view(&f32_bytes(&ibm), None);
        let a = bin.accessor(json!({"bufferView": view, "componentType": F32, "count": s.joints.len(), "type": "MAT4"}));
        let joints: Vec<usize> = s
            .joints
            .iter()
            .filter_map(|j| node_index[j.index()])
            .collect();
        let mut skin = json!({"joints": joints, "inverseBindMatrices": a});
        if let Some(n) = &s.name {
            skin["name"] = json!(n);
        }
        skins.push(skin);
    }
    let mut nodes = Vec::new();
    for (i, n) in ch.nodes.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let mut node = json!({});
        if let Some(name) = &n.name {
            node["name"] = json!(name);
        }
        let r = &n.rest;
        if r.translation != Vec3::ZERO {
            node["translation"] = json!(r.translation.to_array());
        }
        if r.rotation != Quat::IDENTITY {
            node["rotation"] = json!(r.rotation.normalize().to_array());
        }
        if r.scale != Vec3::ONE {
            node["scale"] = json!(r.scale.to_array());
        }
        let children: Vec<usize> = n
            .children
            .iter()
            .filter_map(|c| node_index[c.index()])
            .collect();
        if !children.is_empty() {
            node["children"] = json!(children);
        }
        if let Some(m) = n.mesh.and_then(|m| mesh_index[m.index()]) {
            node["mesh"] = json!(m);
        }
        if let Some(s) = n.skin.and_then(|s| skin_index[s.index()]) {
            node["skin"] = json!(s);
        }
        if let Some(w) = &n.weights {
            node["weights"] = json!(w);
        }
        nodes.push(node);
    }
    let roots: Vec<usize> = ch
        .scene_roots
        .iter()
        .filter_map(|r| node_index.get(r.index()).copied().flatten())
        .collect();
    let Bin {
        bytes,
        views,
        accessors,
    } = bin;
    let mut root = json!({
        "asset": {"version": "2.0", "generator": "mien (character export)", "extras": {"mien": {"source": file}}},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
    });
    if !meshes.is_empty() {
        root["meshes"] = json!(meshes);
    }
    if !skins.is_empty() {
        root["skins"] = json!(skins);
    }
    if !accessors.is_empty() {
        root["accessors"] = json!(accessors);
        root["bufferViews"] = json!(views);
        root["buffers"] = json!([{"byteLength": bytes.len().next_multiple_of(4)}]);
    }
    let glb = super::write_glb(&root, bytes, &ch.source)?;
    Ok(WrittenCharacter {
        glb,
        node_index,
        mesh_index,
    })
}

/// One primitive's attributes, indices and targets into `bin`; its JSON.
fn primitive(bin: &mut Bin, p: &Primitive) -> Value {
    let nv = p.vertex_count();
    let flat3 = |v: &[[f32; 3]]| v.iter().flatten().copied().collect::<Vec<f32>>();
    let mut attributes = json!({"POSITION": bin.floats(&flat3(&p.positions), 3, "VEC3", true)});
    if !p.normals.is_empty() {
        attributes["NORMAL"] = json!(bin.floats(&flat3(&p.normals), 3, "VEC3", false));
    }
    if !p.tangents.is_empty() {
        let t: Vec<f32> = p.tangents.iter().flatten().copied().collect();
        attributes["TANGENT"] = json!(bin.floats(&t, 4, "VEC4", false));
    }
    if !p.uvs.is_empty() {
        let t: Vec<f32> = p.uvs.iter().flatten().copied().collect();
        attributes["TEXCOORD_0"] = json!(bin.floats(&t, 2, "VEC2", false));
    }
    if !p.colors.is_empty() {
        let t: Vec<f32> = p.colors.iter().flatten().copied().collect();
        attributes["COLOR_0"] = json!(bin.floats(&t, 4, "VEC4", false));
    }
    if let Some(inf) = &p.influences {
        // A joint named twice by one vertex is written once with the weights summed (the same
        // skinning; glTF forbids the repeat), and a zero weight's joint as 0 (glTF-Validator: a
        // joint used with zero weight).
        let merged: Vec<([u32; 4], [f32; 4])> = inf
            .joints
            .iter()
            .zip(&inf.weights)
            .map(|(j, w)| {
                let (mut j, mut w) = (*j, *w);
                for a in 0..4 {
                    for b in a + 1..4 {
                        if w[a] != 0.0 && w[b] != 0.0 && j[a] == j[b] {
                            w[a] += w[b];
                            w[b] = 0.0;
                        }
                    }
                }
                for k in 0..4 {
                    if w[k] == 0.0 {
                        j[k] = 0;
                    }
                }
                (j, w)
            })
            .collect();
        let joints: Vec<u32> = merged.iter().flat_map(|(j, _)| *j).collect();
        let wide = joints.iter().any(|&j| j > u32::from(u8::MAX));
        let (bytes, ct): (Vec<u8>, u32) = if wide {
            (
                joints
                    .iter()
                    .flat_map(|&j| (j as u16).to_le_bytes())
                    .collect(),
                U16,
            )
        } else {
            (joints.iter().map(|&j| j as u8).collect(), U8)
        };
        let view = bin.view(&bytes, Some(ARRAY_BUFFER));
        attributes["JOINTS_0"] = json!(bin.accessor(
            json!({"bufferView": view, "componentType": ct, "count": nv, "type": "VEC4"})
        ));
        let w: Vec<f32> = merged.iter().flat_map(|(_, w)| *w).collect();
        attributes["WEIGHTS_0"] = json!(bin.floats(&w, 4, "VEC4", false));
    }
    let mut prim = json!({"attributes": attributes});
    if p.indices.is_empty() {
        prim["mode"] = json!(0); // POINTS: the vertices without triangles
    } else {
        let (bytes, ct): (Vec<u8>, u32) = if nv <= usize::from(u16::MAX) {
            let b = p.indices.iter().flat_map(|&i| (i as u16).to_le_bytes());
            (b.collect(), U16)
        } else {
            (
                p.indices.iter().flat_map(|i| i.to_le_bytes()).collect(),
                U32,
            )
        };
        let view = bin.view(&bytes, Some(ELEMENT_ARRAY_BUFFER));
        prim["indices"] = json!(bin.accessor(json!({"bufferView": view, "componentType": ct, "count": p.indices.len(), "type": "SCALAR"})));
        prim["mode"] = json!(4);
    }
    if p.morph.target_count() > 0 {
        prim["targets"] = json!(targets(bin, p));
    }
    prim
}

/// One target's moved vertices (ascending) and their deltas per stream.
#[derive(Default)]
struct TargetRows {
    vertices: Vec<u32>,
    streams: [Vec<f32>; 3],
}

/// The primitive's morph targets (module docs: empty, sparse or dense per target).
fn targets(bin: &mut Bin, p: &Primitive) -> Vec<Value> {
    let m = &p.morph;
    let nv = p.vertex_count();
    let normal = m.entry_normal().filter(|_| !p.normals.is_empty());
    let tangent = m.entry_tangent().filter(|_| !p.tangents.is_empty());
    let streams: Vec<(&str, &[[f32; 3]])> = [
        Some(("POSITION", m.entry_position())),
        normal.map(|n| ("NORMAL", n)),
        tangent.map(|t| ("TANGENT", t)),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Transpose the CSR rows (vertex-major) into one list per target (vertex-ascending).
    let mut rows: Vec<TargetRows> = (0..m.target_count())
        .map(|_| TargetRows::default())
        .collect();
    let (offsets, entry_target) = (m.vertex_offsets(), m.entry_target());
    for v in 0..m.vertex_count() {
        for e in offsets[v] as usize..offsets[v + 1] as usize {
            let row = &mut rows[entry_target[e] as usize];
            // A target named twice in one row adds up (as the blend does).
            let again = row.vertices.last() == Some(&(v as u32));
            if !again {
                row.vertices.push(v as u32);
            }
            for (s, (_, data)) in streams.iter().enumerate() {
                if again {
                    let n = row.streams[s].len();
                    for k in 0..3 {
                        row.streams[s][n - 3 + k] += data[e][k];
                    }
                } else {
                    row.streams[s].extend_from_slice(&data[e]);
                }
            }
        }
    }
    let idx_wide = nv > 1 << 16;
    let idx_size = if idx_wide { 4 } else { 2 };
    rows.iter()
        .map(|row| {
            let nnz = row.vertices.len();
            let sparse = nnz > 0 && nnz * (idx_size + 12) < nv * 12;
            let indices_view = sparse.then(|| {
                let bytes: Vec<u8> = if idx_wide {
                    row.vertices.iter().flat_map(|i| i.to_le_bytes()).collect()
                } else {
                    row.vertices
                        .iter()
                        .flat_map(|&i| (i as u16).to_le_bytes())
                        .collect()
                };
                bin.view(&bytes, None)
            });
            let mut target = json!({});
            for (s, (name, _)) in streams.iter().enumerate() {
                let values = &row.streams[s];
                let mut a = json!({"componentType": F32, "count": nv, "type": "VEC3"});
                if let Some(iv) = indices_view {
                    let vv = bin.view(&f32_bytes(values), None);
                    a["sparse"] = json!({
                        "count": nnz,
                        "indices": {"bufferView": iv, "componentType": if idx_wide { U32 } else { U16 }},
                        "values": {"bufferView": vv},
                    });
                } else if nnz > 0 {
                    let mut dense = vec![0.0f32; 3 * nv];
                    for (i, &v) in row.vertices.iter().enumerate() {
                        dense[3 * v as usize..3 * v as usize + 3]
                            .copy_from_slice(&values[3 * i..3 * i + 3]);
                    }
                    a["bufferView"] = json!(bin.view(&f32_bytes(&dense), Some(ARRAY_BUFFER)));
                }
                if *name == "POSITION" {
                    let (lo, hi) = min_max(values, 3, nnz < nv);
                    a["min"] = json!(lo);
                    a["max"] = json!(hi);
                }
                target[*name] = json!(bin.accessor(a));
            }
            target
        })
        .collect()
}
