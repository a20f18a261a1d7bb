//! Character bundles (seed 000's `CharacterBundle`): a character file with the bundle blocks —
//! `rig` (the backend and its file), `expression_space`, `branches` (named regions of the rig's
//! output with their own meshes, slot ranges held for life and the decoders they run),
//! `decoders` (ONNX appearance networks, [`mien_decoder`]), `arkit_to_rig` and `pose_anchors`.
//! Every file is resolved relative to the character file, and every part is checked against the
//! others, with every problem named at once ([`crate::CharacterDef::load`]).
//!
//! The branches become one lift ([`crate::LiftKind::Bundle`]): each branch's gaussians (its texel or
//! surface lift over its own mesh) in a contiguous run of the instance's slots, in manifest order.
//! A branch's decoders re-colour (and may move, scale and turn) its gaussians per instance
//! ([`crate::appearance`]).

mod def;
pub(crate) mod lift;
mod mesh;
pub(crate) mod model;
mod space;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use def::{
    ArkitToRigDef, BranchDef, BranchLiftDef, BundleDefs, DecoderDef, PoseAnchorsDef, RigDef,
    SegmentDef, SpaceDef,
};
pub use space::{BundleSpace, POSE_ANCHOR_NEIGHBOURS, PoseAnchors};

use crate::asset::{Asset, Model};

/// How a bundle is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BundleOptions {
    /// Use a decoder's fp16 sibling where the bundle ships one (seed 000 `preferFp16`). `None`
    /// (the default): on a GPU execution provider (CUDA), where half precision is fast; not on
    /// the CPU provider, where ONNX Runtime converts half-precision tensors around most kernels
    /// and the fp16 sibling ran 1.4× slower than its fp32 twin (docs/PERFORMANCE.md).
    pub prefer_fp16: Option<bool>,
    /// How decoder sessions are built (threads, execution provider).
    pub decoder: mien_decoder::DecoderOptions,
    /// Apply the bundle's pose anchors when it ships them, whatever the file says (`None`: as the
    /// file says, which defaults to off).
    pub pose_anchors: Option<bool>,
}

/// How a branch's gaussians sit on its surface.
#[derive(Clone, Debug, PartialEq)]
pub enum BranchLift {
    /// One gaussian per UV texel ([`mien_core::lift::texel`]).
    Texel(mien_core::lift::TexelOptions),
    /// Gaussians spread over the triangles ([`mien_core::lift::surface`]).
    Surface(mien_core::lift::SurfaceOptions),
}

/// A loaded decoder with the per-vertex features it is fed.
#[derive(Debug)]
pub struct BundleDecoder {
    /// Its name in the bundle.
    pub name: String,
    /// The session.
    pub decoder: mien_decoder::Decoder,
    /// The fp16 sibling was loaded.
    pub fp16: bool,
    /// Per-vertex features `(V_branch, F)` row-major, when the model takes features.
    pub features: Option<Vec<f32>>,
    /// Bytes of its features file.
    pub features_bytes: u64,
}

/// One branch, resolved.
#[derive(Clone, Debug)]
pub struct Branch {
    /// Its name.
    pub name: String,
    /// `[first, end)` rig vertices.
    pub vertices: [u32; 2],
    /// Triangles `(F,3)` in rig-vertex indices (the mesh's polygons, fanned).
    pub triangles: Vec<[u32; 3]>,
    /// Texture coordinates per triangle corner `(F,3,2)`, when the mesh has them.
    pub corner_uv: Option<Vec<[[f32; 2]; 3]>>,
    /// Its lift.
    pub lift: BranchLift,
    /// Display colour where no decoder colours it.
    pub color: [f32; 3],
    /// Its decoders, in order.
    pub decoders: Vec<Arc<BundleDecoder>>,
    /// Bytes of its mesh file.
    pub mesh_bytes: u64,
}

/// A loaded, checked bundle (what [`crate::LiftKind::Bundle`] carries).
#[derive(Debug)]
pub struct Bundle {
    /// The character file.
    pub file: String,
    /// Branches in manifest order.
    pub branches: Vec<Branch>,
    /// The expression space block, resolved.
    pub space: Option<BundleSpace>,
    /// The rig's control names (the block's, else the rig's own).
    pub control_names: Vec<String>,
    /// The rig backend: `gnm`, `orl` or `none`.
    pub backend: String,
    /// Resident bytes by bundle-relative file (meshes, rig file, decoders, features).
    pub files: BTreeMap<String, u64>,
    /// The ONNX Runtime the decoders run in, when there are decoders.
    pub ort: Option<mien_decoder::Ort>,
    /// The pose anchors applied every frame, when the bundle ships them and they are on
    /// ([`BundleOptions::pose_anchors`], else the file's `enabled`; off by default).
    pub anchors: Option<Arc<PoseAnchors>>,
}

/// Two bundles are equal when they are the same load (a bundle holds live decoder sessions).
impl PartialEq for Bundle {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Bundle {
    /// Whether any branch runs a decoder.
    pub fn has_decoders(&self) -> bool {
        self.branches.iter().any(|b| !b.decoders.is_empty())
    }

    /// Whether any decoder takes the view (re-decoded when the camera moves).
    pub fn view_dependent(&self) -> bool {
        self.branches
            .iter()
            .flat_map(|b| &b.decoders)
            .any(|d| d.decoder.contract().view_dir)
    }

    /// Resident bundle bytes (every file the bundle holds: meshes, rig file, decoders, features).
    pub fn resident_bytes(&self) -> u64 {
        self.files.values().sum()
    }
}

/// The rig file a `rig` block names, loaded as the character's model; `None` (with the problem
/// pushed) when it cannot be.
pub(crate) fn rig_model(
    rig: &RigDef,
    model: &str,
    dir: &Path,
    problems: &mut Vec<String>,
) -> Option<(Asset, Option<String>)> {
    let need = |key: &str, given: &Option<String>, problems: &mut Vec<String>| match given {
        Some(p) => Some(p.clone()),
        None => {
            problems.push(format!(
                "/rig/{key}: missing (a `{}` rig names its {key} file)",
                rig.backend
            ));
            None
        }
    };
    let file = match rig.backend.as_str() {
        "gnm" => need("pack", &rig.pack, problems)?,
        "orl" => need("dna", &rig.dna, problems)?,
        "none" => {
            if model.is_empty() {
                problems.push("/model: missing (a `none` rig poses the file's model)".into());
            }
            return None;
        }
        other => {
            problems.push(format!("/rig/backend: `{other}` is not gnm, orl or none"));
            return None;
        }
    };
    if !model.is_empty() {
        problems.push(format!(
            "/model: `{model}` beside a `{}` rig (the rig's {} is the model; give one)",
            rig.backend,
            if rig.backend == "gnm" { "pack" } else { "DNA" }
        ));
        return None;
    }
    let path = dir.join(&file);
    let ext_ok = match rig.backend.as_str() {
        "gnm" => file.ends_with(".aosrig"),
        _ => file.ends_with(".dna"),
    };
    if !ext_ok {
        problems.push(format!(
            "/rig/{}: `{file}` is not a {} file",
            if rig.backend == "gnm" { "pack" } else { "dna" },
            if rig.backend == "gnm" {
                ".aosrig"
            } else {
                ".dna"
            }
        ));
        return None;
    }
    match Asset::load(&path) {
        Ok(a) => Some((a, Some(file))),
        Err(e) => {
            problems.push(format!("/rig: {}", e.chain_text()));
            None
        }
    }
}

/// Check and resolve the bundle blocks against `asset` (the rig's model); push every problem.
/// Returns the asset (with the space's ARKit map or the `arkit_to_rig` rest applied) and the
/// bundle, or `None` when there were problems.
pub(crate) fn build(
    defs: &BundleDefs<'_>,
    asset: &Asset,
    rig_file: Option<&str>,
    dir: &Path,
    file: &str,
    options: &BundleOptions,
    problems: &mut Vec<String>,
) -> Option<(Asset, Arc<Bundle>)> {
    let before = problems.len();
    let mut asset = asset.clone();
    let mut files = BTreeMap::new();
    if let Some(f) = rig_file {
        files.insert(
            f.to_owned(),
            std::fs::metadata(dir.join(f)).map_or(0, |m| m.len()),
        );
    }
    let backend = defs.rig.map_or("none", |r| r.backend.as_str()).to_owned();
    // The rig block against the rig.
    let own_names = control_names(&asset);
    if let Some(r) = defs.rig {
        if r.vertex_count != 0 && r.vertex_count != u64::from(asset.vertex_count()) {
            problems.push(format!(
                "/rig/vertex_count: {} but the rig outputs {} vertices",
                r.vertex_count,
                asset.vertex_count()
            ));
        }
        if !r.control_names.is_empty() {
            if r.control_names.len() != own_names.len() {
                problems.push(format!(
                    "/rig/control_names: {} names but the rig has {} controls",
                    r.control_names.len(),
                    own_names.len()
                ));
            } else if let Some(i) =
                (0..own_names.len()).find(|&i| r.control_names[i] != own_names[i])
            {
                problems.push(format!(
                    "/rig/control_names/{i}: `{}` but the rig's control {i} is `{}`",
                    r.control_names[i], own_names[i]
                ));
            }
        }
    }
    let control_names = defs
        .rig
        .filter(|r| !r.control_names.is_empty())
        .map_or(own_names, |r| r.control_names.clone());
    // The expression space, and ARKit onto the rig.
    let space = match defs.space {
        Some(s) => match space::resolve(s, &asset, problems) {
            Some((sp, with)) => {
                if let Some(a) = with {
                    asset = a;
                }
                Some(sp)
            }
            None => None,
        },
        None => None,
    };
    if let Some(a2r) = defs.arkit_to_rig {
        match space::arkit_to_rig(a2r, &asset) {
            Ok(a) => asset = a,
            Err(e) => problems.push(format!("/arkit_to_rig: {}", e.chain_text())),
        }
    }
    let mut anchors = None;
    if let Some(pa) = defs.pose_anchors {
        let enabled = options.pose_anchors.unwrap_or(pa.enabled);
        if backend == "none" {
            problems.push(
                "/pose_anchors: a `none` rig has no controls to find the trained poses by".into(),
            );
        } else {
            match space::pose_anchors(pa, dir, control_names.len()) {
                Ok((a, bytes)) => {
                    files.insert(pa.file.clone(), bytes);
                    if enabled {
                        anchors = Some(Arc::new(a));
                    }
                }
                Err(e) => problems.push(format!("/pose_anchors/file: {e}")),
            }
        }
    }
    // Decoders: each loaded once, checked against the contract.
    let mut decoders: BTreeMap<String, (Arc<BundleDecoder>, bool)> = BTreeMap::new();
    let mut ort = None;
    if let Some(ds) = defs.decoders.filter(|d| !d.is_empty()) {
        match mien_decoder::Ort::load() {
            Ok(o) => ort = Some(o),
            Err(e) => problems.push(format!("/decoders: {e}")),
        }
        for (name, d) in ds {
            let Some(o) = &ort else { break };
            let field = format!("/decoders/{name}");
            let prefer = options.prefer_fp16.unwrap_or(matches!(
                options.decoder.provider,
                mien_decoder::Provider::Cuda { .. }
            ));
            let (chosen, fp16) = match &d.fp16 {
                Some(h) if prefer => (h.clone(), true),
                _ => (d.file.clone(), false),
            };
            // The file the bundle names first is checked even when its sibling runs, and the two
            // must take and give the same.
            if fp16 && let Err(p) = siblings(o, dir, &d.file, &chosen, &options.decoder) {
                problems.push(format!("{field}/{p}"));
                continue;
            }
            let loaded = match mien_decoder::Decoder::load(o, &dir.join(&chosen), &options.decoder)
            {
                Ok(x) => x,
                Err(e) => {
                    problems.push(format!(
                        "{field}/{}: {e}",
                        if fp16 { "fp16" } else { "file" }
                    ));
                    continue;
                }
            };
            files.insert(chosen.clone(), loaded.byte_len());
            if let Some(c) = loaded.contract().controls
                && c != control_names.len()
            {
                problems.push(format!(
                    "{field}: the model takes {c} controls but the rig has {}",
                    control_names.len()
                ));
            }
            let (features, fbytes) = match (&d.features, loaded.contract().features) {
                (Some(f), Some(w)) => match mesh::read_features(&dir.join(f), w) {
                    Ok((v, b)) => {
                        files.insert(f.clone(), b);
                        (Some(v), b)
                    }
                    Err(e) => {
                        problems.push(format!("{field}/features: {e}"));
                        continue;
                    }
                },
                (None, Some(w)) => {
                    problems.push(format!(
                        "{field}/features: missing (the model takes {w} features per gaussian)"
                    ));
                    continue;
                }
                (Some(_), None) => {
                    problems.push(format!(
                        "{field}/features: given, but the model takes no `features` input"
                    ));
                    continue;
                }
                (None, None) => (None, 0),
            };
            decoders.insert(
                name.clone(),
                (
                    Arc::new(BundleDecoder {
                        name: name.clone(),
                        decoder: loaded,
                        fp16,
                        features,
                        features_bytes: fbytes,
                    }),
                    false,
                ),
            );
        }
    }
    // Branches.
    let rest = mesh::rest_positions(&asset);
    let mut branches = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    let mut owner: Vec<Option<usize>> = vec![None; asset.vertex_count() as usize];
    for (bi, b) in defs.branches.iter().enumerate() {
        let field = format!("/branches/{bi}");
        if b.name.is_empty() || !names.insert(b.name.clone()) {
            problems.push(format!(
                "{field}/name: `{}` is {}",
                b.name,
                if b.name.is_empty() {
                    "empty"
                } else {
                    "used by an earlier branch"
                }
            ));
        }
        let got = mesh::branch(b, &field, &asset, &rest, dir, problems);
        let Some(mut br) = got else { continue };
        // Slot ranges: a rig vertex belongs to one branch.
        if let Some(v) = (br.vertices[0]..br.vertices[1]).find(|&v| owner[v as usize].is_some()) {
            let other = owner[v as usize].unwrap_or(0);
            problems.push(format!(
                "{field}/vertices: [{}, {}) overlaps branch {other} (`{}`) at rig vertex {v}",
                br.vertices[0], br.vertices[1], defs.branches[other].name
            ));
            continue;
        }
        for v in br.vertices[0]..br.vertices[1] {
            owner[v as usize] = Some(bi);
        }
        files.insert(b.mesh.clone(), br.mesh_bytes);
        let verts = (br.vertices[1] - br.vertices[0]) as usize;
        let mut written: BTreeMap<&'static str, String> = BTreeMap::new();
        for (di, dn) in b.decoders.iter().enumerate() {
            let Some((d, used)) = decoders.get_mut(dn) else {
                if defs.decoders.is_some_and(|d| d.contains_key(dn)) {
                    // Its own problem is already named.
                    problems.push(format!(
                        "{field}/decoders/{di}: `{dn}` could not be loaded (see /decoders/{dn})"
                    ));
                    continue;
                }
                problems.push(format!(
                    "{field}/decoders/{di}: `{dn}` is not a decoder of this file ({})",
                    defs.decoders
                        .map(|d| d.keys().cloned().collect::<Vec<_>>().join(", "))
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| "it has none".into())
                ));
                continue;
            };
            *used = true;
            let c = d.decoder.contract();
            if let (Some(f), Some(w)) = (&d.features, c.features)
                && f.len() != verts * w
            {
                problems.push(format!(
                        "{field}/decoders/{di}: `{dn}`'s features hold {} rows but the branch has {verts} vertices",
                        f.len() / w.max(1)
                    ));
            }
            let g = c.geometry;
            let outs = [
                ("rgb", true),
                ("opacity", true),
                ("offset", g.offset),
                ("log_scale", g.log_scale),
                ("rotation", g.rotation),
            ];
            for (o, yes) in outs {
                if !yes {
                    continue;
                }
                if let Some(prev) = written.insert(o, dn.clone()) {
                    problems.push(format!(
                        "{field}/decoders/{di}: `{dn}` writes `{o}`, which `{prev}` already writes for this branch"
                    ));
                }
            }
            br.decoders.push(Arc::clone(d));
        }
        if b.color.is_some() && written.contains_key("rgb") {
            problems.push(format!(
                "{field}/color: given, but `{}` writes the branch's colour (a decoder's rgb replaces it every decode): leave one out",
                written["rgb"]
            ));
        }
        branches.push(br);
    }
    if defs.branches.is_empty() && defs.decoders.is_some_and(|d| !d.is_empty()) {
        problems.push(
            "/branches: none, so no decoder runs (a branch names the decoders it runs)".into(),
        );
    }
    // A decoder no branch names (a branch that failed for another reason still names its own).
    for name in decoders.keys() {
        let named = defs
            .branches
            .iter()
            .any(|b| b.decoders.iter().any(|d| d == name));
        if !named && !defs.branches.is_empty() {
            problems.push(format!("/decoders/{name}: no branch runs it"));
        }
    }
    if problems.len() > before {
        return None;
    }
    let asset = asset.with_pose_anchors(anchors.clone());
    Some((
        asset,
        Arc::new(Bundle {
            file: file.to_owned(),
            branches,
            space,
            control_names,
            backend,
            files,
            ort,
            anchors,
        }),
    ))
}

/// `file` and its fp16 sibling `half` both load and take and give the same tensors; the problem
/// (prefixed by the field at fault) otherwise.
fn siblings(
    o: &mien_decoder::Ort,
    dir: &Path,
    file: &str,
    half: &str,
    options: &mien_decoder::DecoderOptions,
) -> std::result::Result<(), String> {
    let a = mien_decoder::Decoder::load(o, &dir.join(file), options)
        .map_err(|e| format!("file: {e}"))?;
    let b = mien_decoder::Decoder::load(o, &dir.join(half), options)
        .map_err(|e| format!("fp16: {e}"))?;
    let (a, b) = (a.contract(), b.contract());
    if (a.features, a.controls, a.view_dir, a.fixed_n, a.geometry)
        != (b.features, b.controls, b.view_dir, b.fixed_n, b.geometry)
    {
        return Err(format!(
            "fp16: `{half}` takes or gives other tensors than `{file}` (features {:?} vs {:?}, controls {:?} vs {:?}, view {} vs {}, geometry {:?} vs {:?}): a sibling is the same network in half precision",
            b.features,
            a.features,
            b.controls,
            a.controls,
            b.view_dir,
            a.view_dir,
            b.geometry,
            a.geometry
        ));
    }
    Ok(())
}

/// The rig's own control names, in the order a decoder's `controls` input takes them: a linear
/// head's head_ext — each coefficient's shape name where the pack names them all (`browInnerUp_L`),
/// else the layout's (`brows_000`), then the four gaze angles — and a DNA character's raw
/// controls; empty for another rig.
pub fn control_names(asset: &Asset) -> Vec<String> {
    match asset.model() {
        Model::Head { pack, .. } => {
            let mut n = pack.header.head_ext.names();
            let e = pack.header.head_ext.expr_dim();
            if pack.header.names.len() == e {
                n[..e].clone_from_slice(&pack.header.names);
            }
            n
        }
        Model::Rig(_) => match &asset.character().rig_logic {
            Some(r) => r.raw_names.clone(),
            None => Vec::new(),
        },
    }
}

/// One branch's memory.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BranchMemory {
    /// The branch.
    pub name: String,
    /// Splat slots over every instance.
    pub slots: u64,
    /// Lift bytes over every instance: its slots in the sink (52 bytes each: centre, colour,
    /// covariance), its bound records (48 bytes each, one copy per instance when decoded, else
    /// shared) and its triangles (12 bytes each, shared).
    pub bytes: u64,
}

/// Where a bundle character's memory went (seed 000 `MemoryReport`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BundleMemory {
    /// Per branch, in manifest order.
    pub branches: Vec<BranchMemory>,
    /// Slots over every instance.
    pub slots: u64,
    /// Lift bytes over every branch.
    pub bytes: u64,
    /// Whether those bytes are GPU memory (else host memory: the CPU backend).
    pub on_gpu: bool,
    /// Resident bundle bytes (meshes, rig file, decoders, features), by file.
    pub files: BTreeMap<String, u64>,
    /// Their sum.
    pub resident_bytes: u64,
}

impl BundleMemory {
    /// The memory of `bundle` lifted into `ranges` for `instances` instances.
    pub fn of(
        bundle: &Bundle,
        ranges: &[(String, mien_core::sink::SlotRange)],
        instances: u64,
        on_gpu: bool,
    ) -> BundleMemory {
        let branches: Vec<BranchMemory> = bundle
            .branches
            .iter()
            .zip(ranges)
            .map(|(b, (name, r))| {
                let g = u64::from(r.count);
                let copies = if b.decoders.is_empty() { 1 } else { instances };
                BranchMemory {
                    name: name.clone(),
                    slots: g * instances,
                    bytes: 52 * g * instances + 48 * g * copies + 12 * b.triangles.len() as u64,
                }
            })
            .collect();
        BundleMemory {
            slots: branches.iter().map(|b| b.slots).sum(),
            bytes: branches.iter().map(|b| b.bytes).sum(),
            branches,
            on_gpu,
            files: bundle.files.clone(),
            resident_bytes: bundle.resident_bytes(),
        }
    }
}

/// `docs/bundles/make_test_bundle.py`: the generator of mien's test bundle.
pub const TEST_BUNDLE_SCRIPT: &str = include_str!("../../../docs/bundles/make_test_bundle.py");

/// Build mien's test bundle in `out`: the ICT-FaceKit head in `ict_dir` baked into `ict.aosrig`,
/// its control names, then [`TEST_BUNDLE_SCRIPT`] run by `python3` (numpy, onnx and onnxruntime
/// installed): head / eye / teeth branch meshes, per-vertex features, the decoders (`skin.onnx`,
/// its fp16 sibling, `eyes.onnx`), ONNX Runtime's golden outputs and `head.character.json`.
/// Returns the manifest's path. What the tests, the example `bundle` and the benchmark load.
///
/// # Errors
/// The bake's errors; `python3` missing or the script failing (its stderr quoted).
pub fn make_test_bundle(ict_dir: &Path, out: &Path) -> crate::Result<std::path::PathBuf> {
    use mien_core::gnm::bake::{BakeOptions, bake_obj_folder};
    let io = |p: &Path, e: std::io::Error| crate::Error::from(mien_core::Error::io(p, e));
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let pack = out.join("ict.aosrig");
    bake_obj_folder(ict_dir, &BakeOptions::default(), &mut |_, _, _| {})?.write(&pack)?;
    let names = control_names(&Asset::load(&pack)?);
    let names_path = out.join("names.json");
    std::fs::write(
        &names_path,
        serde_json::to_string(&names).unwrap_or_default(),
    )
    .map_err(|e| io(&names_path, e))?;
    let script = out.join("make_test_bundle.py");
    std::fs::write(&script, TEST_BUNDLE_SCRIPT).map_err(|e| io(&script, e))?;
    let run = std::process::Command::new("python3")
        .arg(&script)
        .arg(ict_dir)
        .arg(out)
        .arg(&names_path)
        .arg("ict.aosrig")
        .output()
        .map_err(|e| io(Path::new("python3"), e))?;
    if !run.status.success() {
        return Err(crate::Error::invalid(
            script.display().to_string(),
            format!(
                "failed (it needs python3 with numpy, onnx and onnxruntime): {}",
                String::from_utf8_lossy(&run.stderr).trim()
            ),
        ));
    }
    Ok(out.join("head.character.json"))
}
