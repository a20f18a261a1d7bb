//! Baking a glTF mesh with morph targets: the pack poses like the morph path. facecap.glb (Face
//! Cap, bannaflak.com, via three.js examples, MIT) posed through the core morph path (CSR blend →
//! palette, `RigData::pose_vertex`) and through the pack (`gnm::forward::pose`) with the same
//! weights — random ones, and the recorded clip's at every key — agrees within a bound derived
//! from fp16 rounding of each delta plus f32 summation error; a small skinned glTF written here
//! checks the skin carried into the pack.

use glam::{DMat4, DVec3, Mat4};
use mien_core::gnm::bake::{BakeOptions, Baked, bake_gltf};
use mien_core::gnm::forward::pose;
use mien_core::gnm::pack::GnmPack;
use mien_core::io::gltf::import_gltf;
use mien_core::rig::{
    ACTIVE_MORPH_LIMIT, Character, ControlStats, LimitStats, MorphLimiter, RigControls, RigData,
};
use serde_json::json;

mod gltf_common;
mod support;

/// u = 2⁻²⁴, the f32 unit roundoff.
const U: f64 = 1.0 / 16_777_216.0;

/// SplitMix64 (STYLE 9): a fixed, seeded stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Dense mesh-space position deltas `(T, V)` of the instance's mesh, and its base positions.
fn mesh_deltas(ch: &Character, mesh: usize) -> (Vec<[f32; 3]>, Vec<Vec<[f32; 3]>>) {
    let m = &ch.meshes[mesh];
    let mut base = Vec::new();
    let mut d = vec![Vec::new(); m.target_count()];
    for p in &m.primitives {
        let off = base.len();
        base.extend_from_slice(&p.positions);
        for t in &mut d {
            t.resize(base.len(), [0.0; 3]);
        }
        let ms = &p.morph;
        for v in 0..ms.vertex_count() {
            for e in ms.vertex_offsets()[v] as usize..ms.vertex_offsets()[v + 1] as usize {
                d[ms.entry_target()[e] as usize][off + v] = ms.entry_position()[e];
            }
        }
    }
    (base, d)
}

/// Where the pack's basis lives relative to the morph path's output.
enum Space {
    /// World space: the morph path's output is `M·(p + Σ w δ)` with this one matrix.
    World(DMat4),
    /// Mesh space, skinned: each output is a convex blend of joint matrices whose entries are at
    /// most this matrix's in magnitude.
    Skinned(DMat4),
}

/// Pose `weights` (per target of `mesh`) through the morph path and the pack; check every
/// component against the bound and return the largest deviation and the bound there.
///
/// Bound per component c of vertex v:
/// - fp16 basis: Σₜ |wₜ|·(|Δₜc|·2⁻¹¹ + sₜ·2⁻²⁵), Δ the delta in the pack's space (`World`: the
///   world delta `L·δ`; `Skinned`: the mesh delta, then carried through the joint matrices, so
///   Σⱼ |B_cj|·(|δₜⱼ|·2⁻¹¹ + sₜ·2⁻²⁵)), s the pack's scale of t;
/// - f32 slack for both paths, (2k + 10)·u·A with k active targets and A = Σⱼ|M_cj|·(|pⱼ| +
///   Σₜ|wₜ||δₜⱼ|) + |t_c| (Higham's γₙ bound on an n-term sum: the morph blend, the palette
///   transform, the pack's neutral and its coefficient sum).
fn compare(
    ch: &Character,
    b: &Baked,
    mesh: usize,
    weights: &[f32],
    joint_world: &[Mat4],
    space: &Space,
) -> (f64, f64) {
    let p = &b.pack;
    let node = ch
        .nodes
        .iter()
        .position(|n| n.mesh.map(|m| m.index()) == Some(mesh))
        .unwrap();
    let (rig, morph) =
        gltf_common::pose(ch, None, 0.0, |pose| pose.weights[node] = weights.to_vec());
    let inst = rig
        .instances
        .iter()
        .find(|i| i.mesh.index() == mesh)
        .unwrap();
    let morph = &morph[inst.vertex_base as usize..(inst.vertex_base + inst.vertex_count) as usize];
    let names = &ch.meshes[mesh].target_names;
    let coeff = |t: usize| p.header.names.iter().position(|n| n == &names[t]).unwrap();
    let mut head_ext = vec![0.0f32; p.header.head_ext.dim()];
    for (t, w) in weights.iter().enumerate() {
        head_ext[coeff(t)] = *w;
    }
    let mut packed = Vec::new();
    pose(p, &head_ext, joint_world, &mut packed).unwrap();
    let (base, deltas) = mesh_deltas(ch, mesh);
    let active = weights.iter().filter(|w| **w != 0.0).count() as f64;
    let m = match space {
        Space::World(m) | Space::Skinned(m) => *m,
    };
    let lin = |c: usize, j: usize| m.col(j)[c];
    let mut worst = (0.0f64, 0.0f64);
    for v in 0..morph.len() {
        for c in 0..3 {
            let mut fp16 = 0.0;
            let mut a = m.col(3)[c].abs();
            for j in 0..3 {
                let moved: f64 = weights
                    .iter()
                    .zip(&deltas)
                    .map(|(w, d)| f64::from(w.abs()) * f64::from(d[v][j]).abs())
                    .sum();
                a += lin(c, j).abs() * (f64::from(base[v][j]).abs() + moved);
            }
            for (t, w) in weights.iter().enumerate() {
                let (w, s) = (f64::from(w.abs()), f64::from(p.basis_scale[coeff(t)]));
                let d = |j: usize| f64::from(deltas[t][v][j]);
                fp16 += w * match space {
                    Space::World(_) => {
                        (0..3).map(|j| lin(c, j) * d(j)).sum::<f64>().abs() / 2048.0
                            + s / 33_554_432.0
                    }
                    Space::Skinned(_) => (0..3)
                        .map(|j| lin(c, j).abs() * (d(j).abs() / 2048.0 + s / 33_554_432.0))
                        .sum::<f64>(),
                };
            }
            let bound = fp16 + (2.0 * active + 10.0) * U * a;
            let dev = (f64::from(morph[v][c]) - f64::from(packed[v][c])).abs();
            assert!(
                dev <= bound,
                "vertex {v} axis {c}: morph {} pack {} deviation {dev:e} > bound {bound:e}",
                morph[v][c],
                packed[v][c]
            );
            if dev > worst.0 {
                worst = (dev, bound);
            }
        }
    }
    worst
}

#[test]
fn facecap_pack_reproduces_the_morph_path() {
    let path = support::data_dir().join("facecap/facecap.glb");
    let ch = import_gltf(&path).unwrap();
    let b = bake_gltf(&path, &BakeOptions::default()).unwrap();
    let p = &b.pack;
    // The head: mesh 2, 2,694 vertices, 52 targets, all ARKit; tongueOut is empty.
    assert_eq!((p.vertex_count(), p.coeff_count()), (2694, 52));
    assert_eq!(b.report.unmapped, Vec::<String>::new());
    assert_eq!(b.report.empty, ["tongueOut"]);
    assert!(b.report.arkit_missing.is_empty());
    let regions: Vec<(&str, usize)> = p
        .header
        .head_ext
        .regions
        .iter()
        .map(|(n, c)| (n.as_str(), *c))
        .collect();
    assert_eq!(
        regions,
        [
            ("left_eye", 7),
            ("right_eye", 7),
            ("brows", 5),
            ("lower_face", 32),
            ("tongue", 1)
        ]
    );
    assert_eq!(p.header.arkit.as_ref().unwrap()["browInnerUp"].len(), 1);
    // Deterministic and round-trips.
    assert!(bake_gltf(&path, &BakeOptions::default()).unwrap().bytes == b.bytes);
    assert_eq!(GnmPack::parse(&b.bytes, "facecap.aosrig").unwrap(), b.pack);

    // The node's world matrix at rest (f64 from the imported f32), as the morph path uses it.
    let (mut scratch, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut scratch, &mut world);
    let node = ch
        .nodes
        .iter()
        .position(|n| n.mesh.map(|m| m.index()) == Some(2))
        .unwrap();
    let m = world[node].as_dmat4();
    let mut rng = Rng(0x6d69_656e);
    let mut worst = (0.0, 0.0);
    for trial in 0..24 {
        // Up to 32 active targets (the morph path's limit), weights in [0, 1].
        let active = 1 + (rng.next() % 32) as usize;
        let mut w = vec![0.0f32; 52];
        for _ in 0..active {
            w[(rng.next() % 52) as usize] = rng.unit();
        }
        if trial == 0 {
            w = vec![0.0; 52];
        }
        let r = compare(&ch, &b, 2, &w, &[Mat4::IDENTITY], &Space::World(m));
        if r.0 > worst.0 {
            worst = r;
        }
    }
    eprintln!(
        "facecap: largest deviation {:e} m (bound there {:e} m)",
        worst.0, worst.1
    );
    assert!(
        worst.0 > 0.0,
        "the pack cannot be bit-identical to the f32 morph path"
    );
}

/// The weights of `mesh`'s instance that the morph path applies at time `t` of clip `clip`: the
/// clip sampled into the pose, then the path's rules (non-finite → 0, clamp ±2, the
/// [`ACTIVE_MORPH_LIMIT`] largest kept); and how many were non-zero before the rules.
fn applied_weights(
    ch: &Character,
    rig: &RigData,
    clip: &str,
    mesh: usize,
    t: f64,
) -> (Vec<f32>, usize) {
    let mut pose = ch.rest_pose();
    ch.apply_clip(ch.find_clip(clip).unwrap(), t, &mut pose);
    let (mut locals, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&pose, &mut locals, &mut world);
    let mut controls = RigControls::default();
    rig.controls_from_pose(&pose, &world, &mut controls);
    let inst = rig
        .instances
        .iter()
        .find(|i| i.mesh.index() == mesh)
        .unwrap();
    let range = inst.weight_base as usize..(inst.weight_base + inst.target_count) as usize;
    let before = controls.weights[range.clone()]
        .iter()
        .filter(|w| **w != 0.0)
        .count();
    rig.limit_weights(
        &mut controls.weights,
        &mut MorphLimiter::new(),
        &mut LimitStats::default(),
        &mut ControlStats::default(),
    );
    (controls.weights[range].to_vec(), before)
}

/// The recorded capture (335 keys of 52 weights, `Key|Take 001|BaseLayer`, the only clip that
/// animates the head's node, and only its weights): at every key the pack posed with the weights
/// the morph path applied (after its 32-active limit) reproduces the morph path's vertices within
/// the bound of [`compare`].
#[test]
fn facecap_pack_reproduces_the_recorded_clip() {
    const CLIP: &str = "Key|Take 001|BaseLayer";
    let path = support::data_dir().join("facecap/facecap.glb");
    let ch = import_gltf(&path).unwrap();
    let b = bake_gltf(&path, &BakeOptions::default()).unwrap();
    let rig = RigData::from_character(&ch).unwrap();
    let (mut scratch, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut scratch, &mut world);
    let node = ch
        .nodes
        .iter()
        .position(|n| n.mesh.map(|m| m.index()) == Some(2))
        .unwrap();
    let m = world[node].as_dmat4();
    let clip = &ch.clips[ch.find_clip(CLIP).unwrap().index()];
    let times: Vec<f32> = clip.channels[0].sampler.times().to_vec();
    assert_eq!((times.len(), clip.channels.len()), (335, 1));
    let (mut worst, mut limited, mut most) = ((0.0, 0.0, 0.0f32), 0, 0);
    for &t in &times {
        let (w, before) = applied_weights(&ch, &rig, CLIP, 2, f64::from(t));
        assert!(w.iter().filter(|x| **x != 0.0).count() <= ACTIVE_MORPH_LIMIT);
        most = most.max(before);
        limited += usize::from(before > ACTIVE_MORPH_LIMIT);
        let r = compare(&ch, &b, 2, &w, &[Mat4::IDENTITY], &Space::World(m));
        if r.0 > worst.0 {
            worst = (r.0, r.1, t);
        }
    }
    eprintln!(
        "facecap clip: {} keys ({limited} limited to {ACTIVE_MORPH_LIMIT} active, at most {most} non-zero); largest deviation {:.3e} m at t = {} s (bound there {:.3e} m)",
        times.len(),
        worst.0,
        worst.2,
        worst.1
    );
    // The clip really moves the face, and the pack is not bit-identical to the f32 morph path.
    assert!(worst.0 > 0.0 && most > 20, "{worst:?} {most}");
}

/// A two-joint skinned quad with two morph targets: skin joints listed child first, a bind pose
/// that differs from the rest pose, and a mesh node transform glTF ignores.
fn skinned_gltf() -> Vec<u8> {
    let mut bin = Vec::new();
    let f32s = |bin: &mut Vec<u8>, v: &[f32]| bin.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    f32s(
        &mut bin,
        &[0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.2, 0.6, 0.0, 0.0, 0.6, 0.0],
    ); // 0: positions
    bin.extend([0u8, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]); // 48: joints (skin order: spine, hip)
    // 64: weights, exact in f16 (the pack stores skin weights as f16).
    f32s(
        &mut bin,
        &[
            0.0, 1.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0, 0.875, 0.125, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
        ],
    );
    f32s(
        &mut bin,
        &[
            0.0, -0.01, 0.0, 0.0, -0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ],
    ); // 128: jawOpen
    f32s(
        &mut bin,
        &[
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.003, -0.004, 0.001, 0.0, -0.005, 0.0,
        ],
    ); // 176: eyeBlink_L
    // 224: inverse binds (column-major): spine bound at (0, 1.4, 0), hip at (0, 0.9, 0).
    let ib = |y: f32| {
        [
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -y, 0.0, 1.0,
        ]
    };
    f32s(&mut bin, &ib(1.4));
    f32s(&mut bin, &ib(0.9));
    bin.extend([0u8, 0, 1, 0, 2, 0, 0, 0, 2, 0, 3, 0]); // 352: indices
    let view = |o: usize, l: usize| json!({"buffer": 0, "byteOffset": o, "byteLength": l});
    let doc = json!({
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0, 2]}],
        "nodes": [
            {"name": "hip", "translation": [0.0, 1.0, 0.0], "children": [1]},
            {"name": "spine", "translation": [0.0, 0.5, 0.0], "rotation": [0.0, 0.0, 0.19509, 0.98079]},
            {"name": "body", "mesh": 0, "skin": 0, "translation": [5.0, 0.0, 0.0]}
        ],
        "skins": [{"joints": [1, 0], "inverseBindMatrices": 5}],
        "meshes": [{"extras": {"targetNames": ["jawOpen", "eyeBlink_L"]}, "primitives": [{
            "attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}, "indices": 6,
            "targets": [{"POSITION": 3}, {"POSITION": 4}]}]}],
        "bufferViews": [view(0, 48), view(48, 16), view(64, 64), view(128, 48), view(176, 48), view(224, 128), view(352, 12)],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "type": "VEC3", "count": 4, "min": [0, 0, 0], "max": [0.2, 0.6, 0]},
            {"bufferView": 1, "componentType": 5121, "type": "VEC4", "count": 4},
            {"bufferView": 2, "componentType": 5126, "type": "VEC4", "count": 4},
            {"bufferView": 3, "componentType": 5126, "type": "VEC3", "count": 4, "min": [0, -0.01, 0], "max": [0, 0, 0]},
            {"bufferView": 4, "componentType": 5126, "type": "VEC3", "count": 4, "min": [0, -0.005, 0], "max": [0.003, 0, 0.001]},
            {"bufferView": 5, "componentType": 5126, "type": "MAT4", "count": 2},
            {"bufferView": 6, "componentType": 5123, "type": "SCALAR", "count": 6}
        ]
    });
    gltf_common::with_data_uri(doc, &bin)
}

#[test]
fn a_skinned_mesh_keeps_its_skin() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skinned.gltf");
    std::fs::write(&path, skinned_gltf()).unwrap();
    let ch = import_gltf(&path).unwrap();
    let b = bake_gltf(&path, &BakeOptions::default()).unwrap();
    let p = &b.pack;
    // Joints parent first (hip, spine), rest world = inverse bind⁻¹, influences remapped.
    let joints: Vec<(&str, i32)> = p
        .header
        .joints
        .iter()
        .map(|j| (j.name.as_str(), j.parent))
        .collect();
    assert_eq!(joints, [("hip", -1), ("spine", 0)]);
    assert_eq!((p.rest_world[0][7], p.rest_world[1][7]), (0.9, 1.4));
    assert_eq!((p.skin_index[0][0], p.skin_weight[0][0]), (0, 1.0));
    assert_eq!(p.skin_index[1][..2], [0, 1]);
    assert_eq!(p.neutral[2], [0.2, 0.6, 0.0]);
    assert!(b.report.skin.contains("2 joints"));
    // At the character's rest pose (joint worlds from the file), with random weights.
    let (mut scratch, mut world) = (Vec::new(), Vec::new());
    ch.world_matrices(&ch.rest_pose(), &mut scratch, &mut world);
    let by_name = |n: &str| {
        ch.nodes
            .iter()
            .position(|x| x.name.as_deref() == Some(n))
            .unwrap()
    };
    let jw = [world[by_name("hip")], world[by_name("spine")]];
    // The skin matrices world·inverseBind, bounded entrywise for the slack.
    let skin = [
        jw[1].as_dmat4() * DMat4::from_translation(DVec3::new(0.0, -1.4, 0.0)),
        jw[0].as_dmat4() * DMat4::from_translation(DVec3::new(0.0, -0.9, 0.0)),
    ];
    let big = DMat4::from_cols_array(&std::array::from_fn(|i| {
        skin.iter()
            .map(|m| m.to_cols_array()[i].abs())
            .fold(0.0, f64::max)
    }));
    let mut rng = Rng(7);
    let mut worst = (0.0, 0.0);
    for _ in 0..16 {
        let w = [rng.unit(), rng.unit()];
        let r = compare(&ch, &b, 0, &w, &jw, &Space::Skinned(big));
        if r.0 > worst.0 {
            worst = r;
        }
    }
    eprintln!(
        "skinned: largest deviation {:e} m (bound there {:e} m)",
        worst.0, worst.1
    );
    // The ARKit table drives the sided target; jawOpen is lower_face.
    assert_eq!(p.header.names, ["eyeBlink_L", "jawOpen"]);
}
