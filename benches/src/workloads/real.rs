//! The workloads built from real inputs (`../shared/data`, never copied): W1 facecap, W2 the ICT
//! OBJ folder as a morph rig, W3 the ICT folder baked as a linear pack, W6 CesiumMan.

use std::path::Path;

use anyhow::Context;
use glam::Mat4;
use mien_core::anim::canon::Binding;
use mien_core::anim::drive::{Drive, StreamDrive};
use mien_core::gnm::bake::obj::{ObjParts, read_obj};
use mien_core::gnm::bake::{BakeOptions, bake_obj_folder};
use mien_core::gnm::controls::{GnmDriver, control_character};
use mien_core::gnm::forward::from_row_major;
use mien_core::io::gltf::import_gltf;
use mien_core::io::livelink_csv::read_livelink_csv;
use mien_core::rig::{
    Character, ClipId, MeshId, MeshInstance, NodeId, PaletteEntry, RigControls, RigData,
};

use super::{Frames, GnmInput, Kind, Model, RING, Workload, vertex_normals};

/// The Live Link Face recording both ICT workloads are driven by.
const LIVELINK: &str = "livelinkface/MySlate_3_Jason_Millers_iPhone.csv";

/// ICT-FaceKit positions are centimetres (DATA.md); the rig is in metres.
const ICT_METRES_PER_UNIT: f64 = 0.01;

/// A delta whose largest component is below this (metres) is not stored: the ICT shapes are full
/// meshes printed with differing float formatting, so untouched vertices differ from the neutral
/// by rounding noise (≤ 1e-6 cm), not by a shape.
pub const ICT_DELTA_FLOOR_M: f32 = 1e-7;

/// Controls `(RING,)` of `rig` (flattened from `ch`) under `drive`, sampled evenly over
/// `[t0, t1)`.
fn ring_of(
    ch: &Character,
    rig: &RigData,
    drive: &mut Drive,
    (t0, t1): (f64, f64),
) -> Vec<RigControls> {
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    let (mut locals, mut world) = (Vec::new(), Vec::new());
    (0..RING)
        .map(|i| {
            let t = t0 + (t1 - t0) * i as f64 / RING as f64;
            drive.pose_at(ch, &rest, t, &mut pose);
            ch.world_matrices(&pose, &mut locals, &mut world);
            let mut c = RigControls::default();
            rig.controls_from_pose(&pose, &world, &mut c);
            c
        })
        .collect()
}

/// A glTF character driven by its first clip's take.
fn gltf_workload(path: &Path, id: &str, kind: Kind, what: &str) -> anyhow::Result<Workload> {
    let ch = import_gltf(path).with_context(|| format!("{id}: importing {}", path.display()))?;
    let rig = RigData::from_character(&ch)?;
    anyhow::ensure!(
        !ch.clips.is_empty(),
        "{id}: {} has no clips",
        path.display()
    );
    let take = ch.take_of(ClipId(0));
    // From the first key (facecap's capture starts at 0.0475 s; before it the first key holds).
    let start = take
        .iter()
        .map(|c| ch.clips[c.index()].start())
        .fold(f64::INFINITY, f64::min);
    let mut drive = Drive::Clips(take);
    let (_, end) = drive.span(&ch);
    let frames = ring_of(&ch, &rig, &mut drive, (start, end));
    let description = format!(
        "{what}: {} vertices, {} morph targets, {} palette entries, {} CSR entries; controls: the clip `{}` (and its take) sampled at {RING} evenly spaced times over [{start:.4}, {end:.3}) s",
        rig.vertex_count(),
        rig.weight_count,
        rig.palette.len(),
        rig.morph_target.len(),
        ch.clips[0].name.as_deref().unwrap_or("0"),
    );
    Ok(Workload {
        id: id.into(),
        kind,
        description,
        model: Model::Rig(rig),
        frames: Frames::Rig(frames),
        surface: Default::default(),
    })
}

/// W1: facecap.glb (Face Cap, MIT via three.js) with its recorded capture.
///
/// # Errors
/// Import errors naming the file.
pub fn load_w1(data: &Path) -> anyhow::Result<Workload> {
    gltf_workload(
        &data.join("facecap/facecap.glb"),
        "W1",
        Kind::Morph,
        "facecap morph path (facecap.glb, Face Cap via three.js, MIT)",
    )
}

/// W6: CesiumMan (CC-BY 4.0, Cesium) with its walk clip.
///
/// # Errors
/// Import errors naming the file.
pub fn load_w6(data: &Path) -> anyhow::Result<Workload> {
    gltf_workload(
        &data.join("khronos/CesiumMan/CesiumMan_chromedays.glb"),
        "W6",
        Kind::Skin,
        "CesiumMan skinning (CesiumMan_chromedays.glb, Cesium, CC-BY 4.0)",
    )
}

/// The ICT-FaceKit folder (MIT, © 2020 USC ICT) as a morph rig: the neutral's positions in metres,
/// area-weighted normals from its polygons (fanned), one target per other `.obj` (named by its
/// stem, sorted by file name), CSR entries where the shape differs from the neutral by at least
/// `ICT_DELTA_FLOOR_M` in some component; one rigid palette entry. Returns the rig and the
/// target names.
///
/// # Errors
/// OBJ reader errors naming the file; a shape whose vertex count is not the neutral's.
pub fn ict_rig(dir: &Path) -> anyhow::Result<(RigData, Vec<String>)> {
    let neutral = read_obj(&dir.join("generic_neutral_mesh.obj"), ObjParts::All)?;
    let nv = neutral.positions.len();
    let mut shapes: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("obj")))
        .filter(|p| !p.ends_with("generic_neutral_mesh.obj"))
        .filter_map(|p| Some((p.file_stem()?.to_str()?.to_owned(), p)))
        .collect();
    shapes.sort();
    let mut deltas: Vec<Vec<[f32; 3]>> = Vec::with_capacity(shapes.len());
    for (name, path) in &shapes {
        let s = read_obj(path, ObjParts::Positions)?;
        anyhow::ensure!(
            s.positions.len() == nv,
            "{}: {} vertices, the neutral has {nv} (shape {name})",
            path.display(),
            s.positions.len()
        );
        deltas.push(
            s.positions
                .iter()
                .zip(&neutral.positions)
                .map(|(a, b)| [0, 1, 2].map(|k| ((a[k] - b[k]) * ICT_METRES_PER_UNIT) as f32))
                .collect(),
        );
    }
    let positions: Vec<[f32; 3]> = neutral
        .positions
        .iter()
        .map(|p| p.map(|x| (x * ICT_METRES_PER_UNIT) as f32))
        .collect();
    let mut triangles = Vec::new();
    for i in 0..neutral.polygon_count() {
        let c: Vec<u32> = neutral.polygon(i).iter().map(|x| x.0).collect();
        for k in 1..c.len().saturating_sub(1) {
            triangles.push([c[0], c[k], c[k + 1]]);
        }
    }
    let normals = vertex_normals(&positions, &triangles);
    let mut rig = RigData {
        instances: vec![MeshInstance {
            node: NodeId(0),
            mesh: MeshId(0),
            weight_base: 0,
            target_count: shapes.len() as u32,
            vertex_base: 0,
            vertex_count: nv as u32,
        }],
        palette: vec![PaletteEntry::Rigid { node: NodeId(0) }],
        weight_count: shapes.len() as u32,
        uvs: vec![[0.0; 2]; nv],
        colors: vec![mien_core::rig::rigdata::DEFAULT_TINT; nv],
        joints: vec![[0; 4]; nv],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; nv],
        morph_offsets: vec![0],
        positions,
        normals,
        triangles,
        ..Default::default()
    };
    for v in 0..nv {
        for (t, d) in deltas.iter().enumerate() {
            if d[v].iter().any(|x| x.abs() >= ICT_DELTA_FLOOR_M) {
                rig.morph_target.push(t as u32);
                rig.morph_position.push(d[v]);
                rig.morph_normal.push([0.0; 3]);
            }
        }
        rig.morph_offsets.push(rig.morph_target.len() as u32);
    }
    rig.validate()?;
    Ok((rig, shapes.into_iter().map(|(n, _)| n).collect()))
}

/// W2: the ICT rig ([`ict_rig`]) driven by the Live Link CSV, channels bound to targets by name.
///
/// # Errors
/// OBJ or CSV reader errors naming the file; a stream that binds to no target.
pub fn load_w2(data: &Path) -> anyhow::Result<Workload> {
    let (rig, names) = ict_rig(&data.join("ict-facekit"))?;
    let stream = read_livelink_csv(&data.join(LIVELINK))?;
    let binding = Binding::new(&stream.channels, &names);
    binding.require_routes("W2: Live Link → ICT targets")?;
    let mut scratch = vec![0.0; stream.channel_count()];
    let duration = stream.duration();
    let frames: Vec<RigControls> = (0..RING)
        .map(|i| {
            stream.sample(duration * i as f64 / RING as f64, &mut scratch);
            let mut weights = vec![0.0; names.len()];
            binding.apply(&scratch, &mut weights);
            RigControls {
                weights,
                palette: vec![Mat4::IDENTITY],
            }
        })
        .collect();
    let (v, t, nnz) = (rig.vertex_count(), rig.weight_count, rig.morph_target.len());
    let description = format!(
        "ICT-FaceKit morph path (ICT-FaceKit OBJ folder, MIT, © 2020 USC ICT; cm → m): {v} vertices, {t} targets, {nnz} CSR entries (density {:.2}% of V·T; deltas below {ICT_DELTA_FLOOR_M} m not stored); controls: the Live Link Face CSV ({} channels, {:.3} s) bound by name ({} routes), sampled at {RING} evenly spaced times",
        100.0 * nnz as f64 / (v as f64 * f64::from(t)),
        stream.channel_count(),
        duration,
        binding.routes().len(),
    );
    Ok(Workload {
        id: "W2".into(),
        kind: Kind::Morph,
        description,
        model: Model::Rig(rig),
        frames: Frames::Rig(frames),
        surface: Default::default(),
    })
}

/// W3: the ICT folder baked in memory as a linear pack ([`bake_obj_folder`], default options),
/// driven by the Live Link CSV through its control character and baked ARKit table; joints at
/// rest.
///
/// # Errors
/// Bake or CSV errors naming the file.
pub fn load_w3(data: &Path) -> anyhow::Result<Workload> {
    let baked = bake_obj_folder(
        &data.join("ict-facekit"),
        &BakeOptions::default(),
        &mut |_, _, _| {},
    )?;
    let pack = baked.pack;
    let mut driver = GnmDriver::new(&pack, None, None, "W3 (ICT pack)")?;
    let ch = control_character("W3 control character")?;
    let stream = read_livelink_csv(&data.join(LIVELINK))?;
    let duration = stream.duration();
    let mut drive = Drive::Stream(StreamDrive::new(stream, &ch)?);
    let rest = ch.rest_pose();
    let mut pose = rest.clone();
    let joint_world: Vec<Mat4> = pack.rest_world.iter().map(from_row_major).collect();
    let frames: Vec<GnmInput> = (0..RING)
        .map(|i| {
            drive.pose_at(&ch, &rest, duration * i as f64 / RING as f64, &mut pose);
            GnmInput {
                head_ext: driver.head_ext(&pose).to_vec(),
                joint_world: joint_world.clone(),
            }
        })
        .collect();
    let description = format!(
        "ICT-FaceKit linear pack (baked in memory from the OBJ folder, fp16 basis): {} vertices × {} coefficients + 4 gaze, {} joints, basis {} bytes; controls: the Live Link Face CSV through the pack's ARKit table, {RING} evenly spaced times over {duration:.3} s, joints at rest",
        pack.vertex_count(),
        pack.coeff_count(),
        pack.header.joints.len(),
        pack.basis.len() * 4,
    );
    Ok(Workload {
        id: "W3".into(),
        kind: Kind::Gnm,
        description,
        model: Model::Gnm(pack),
        frames: Frames::Gnm(frames),
        surface: Default::default(),
    })
}
