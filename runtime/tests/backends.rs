//! The same runtime calls — one asset, N instances with their own drivers, the same media times —
//! posed on the CPU (the reference), wgpu and Vulkan agree within the conformance bounds
//! (`mien_cpu::conformance`: `1e-5 · max(1, largest |reference|)` per array, colour bytes ±1): a
//! rig (Face Cap's `facecap.glb` with the Live Link recording and the built-in head with its
//! performance, face driver and script) and a linear head (facecap baked into a pack).
//!
//! GPU runs skip with a notice without an adapter, unless `MIEN_REQUIRE_GPU=1`. With
//! `MIEN_REQUIRE_GPU=1` (CI) Vulkan runs under the Khronos validation layer and any message fails;
//! `MIEN_VK_VALIDATION=0` turns it off where the layer is not installed (the H200 machine).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mien_core::gnm::bake::{BakeOptions, bake_gltf};
use mien_core::sink::SplatBuffers;
use mien_cpu::conformance::{TOLERANCE, compare_posed};
use mien_runtime::{
    Asset, Backend, Device, DeviceOptions, FaceDriver, FaceSources, LiftKind, LiftOptions, Runtime,
    RuntimeOptions, Script,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn required() -> bool {
    std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// The GPU devices this build and machine have (Vulkan under validation).
fn gpus() -> Vec<Device> {
    let mut out = Vec::new();
    for b in [Backend::Wgpu, Backend::Vulkan] {
        let opts = DeviceOptions {
            allow_software: true,
            vulkan_validation: required()
                && !std::env::var("MIEN_VK_VALIDATION").is_ok_and(|v| v == "0"),
        };
        match Device::open_with(b, &opts) {
            Ok((d, _)) => out.push(d),
            Err(e) if required() => {
                panic!("MIEN_REQUIRE_GPU=1 but {}: {}", b.name(), e.chain_text())
            }
            Err(e) => eprintln!(
                "notice: no {} device ({}); skipped",
                b.name(),
                e.chain_text()
            ),
        }
    }
    out
}

/// Drivers of instance `k` (`setup`) and the frames: every instance's splats and posed vertices
/// after each of the media times.
type Setup = dyn Fn(&mut Runtime) -> mien_runtime::Result<()>;

fn run(
    asset: &Arc<Asset>,
    device: &Device,
    n: u32,
    setup: &Setup,
    times: &[f64],
) -> Vec<Vec<(SplatBuffers, mien_core::rig::PosedVertices)>> {
    run_lift(asset, device, n, setup, times, LiftKind::Debug)
}

fn run_lift(
    asset: &Arc<Asset>,
    device: &Device,
    n: u32,
    setup: &Setup,
    times: &[f64],
    kind: LiftKind,
) -> Vec<Vec<(SplatBuffers, mien_core::rig::PosedVertices)>> {
    let opts = RuntimeOptions {
        instances: n,
        lift: Some(LiftOptions {
            kind,
            ..Default::default()
        }),
    };
    let mut rt = Runtime::new(Arc::clone(asset), device, &opts).unwrap();
    setup(&mut rt).unwrap();
    times
        .iter()
        .map(|&t| {
            rt.update(t).unwrap();
            (0..n as usize)
                .map(|i| (rt.splats(i).unwrap(), rt.posed(i).unwrap()))
                .collect()
        })
        .collect()
}

fn bound(xs: impl Iterator<Item = f32>) -> f64 {
    TOLERANCE * xs.fold(1.0f64, |m, x| m.max(f64::from(x.abs())))
}

fn compare_splats(what: &str, g: &SplatBuffers, w: &SplatBuffers) {
    assert_eq!(g.len(), w.len(), "{what}: slot counts");
    let bc = bound(w.center.iter().flatten().copied());
    let bv = bound(w.cov_a.iter().chain(&w.cov_b).flatten().copied());
    for i in 0..w.len() {
        for k in 0..4 {
            for (name, a, b, bd) in [
                ("center", g.center[i][k], w.center[i][k], bc),
                ("cov_a", g.cov_a[i][k], w.cov_a[i][k], bv),
                ("cov_b", g.cov_b[i][k], w.cov_b[i][k], bv),
            ] {
                assert!(
                    !a.is_nan() && (f64::from(a) - f64::from(b)).abs() <= bd,
                    "{what}: {name}[{i}][{k}] {a} vs reference {b} (bound {bd:e})"
                );
            }
            let (ga, wa) = (
                (g.color[i] >> (8 * k)) & 0xff,
                (w.color[i] >> (8 * k)) & 0xff,
            );
            assert!(
                ga.abs_diff(wa) <= 1,
                "{what}: color[{i}] byte {k}: {ga} vs {wa}"
            );
        }
    }
}

fn check(asset: Asset, n: u32, setup: &Setup, times: &[f64]) {
    check_lift(asset, n, setup, times, LiftKind::Debug);
}

/// The bound gaussians a CPU runtime of `kind` builds (the same on every backend: built on the
/// CPU from the rest pose).
fn bound_setup(asset: &Arc<Asset>, kind: &LiftKind) -> Option<Arc<mien_core::lift::BoundSetup>> {
    let opts = RuntimeOptions {
        instances: 1,
        lift: Some(LiftOptions {
            kind: kind.clone(),
            ..Default::default()
        }),
    };
    let rt = Runtime::new(Arc::clone(asset), &Device::Cpu, &opts).unwrap();
    rt.lift().and_then(|l| l.setup.clone())
}

/// The derived per-gaussian bound of a bound lift on another backend: its posed vertices differ
/// from the CPU's by at most `e` (the vertex conformance bound, `1e-5 × max |position|`, √3 for a
/// vector), so for a triangle of mean edge `k` and smallest altitude `h` the frame turns by at most
/// `θ = 4e/h`, the scale moves by `δk ≤ 2e`, and
///
/// ```text
/// |Δμ|  ≤ e·Σ|βᵢ| + |d|·(δk + k·θ)          |ΔΣ| ≤ ‖Σ‖·(2·δk/k + 2θ)
/// ```
///
/// plus f32 rounding of the lift's own arithmetic (`1e-6` of the values). Each gaussian is checked
/// against its own bound; the array-wide bound would hide a small splat's error.
fn check_bound_splats(
    what: &str,
    setup: &mien_core::lift::BoundSetup,
    posed: &mien_core::rig::PosedVertices,
    got: &SplatBuffers,
    want: &SplatBuffers,
) {
    let pos = &posed.positions;
    let big = pos.iter().flatten().fold(1.0f32, |m, x| m.max(x.abs())) as f64;
    let e = 3f64.sqrt() * TOLERANCE * big;
    let len = |a: [f32; 3], b: [f32; 3]| {
        ((0..3).map(|k| f64::from(a[k] - b[k]).powi(2)).sum::<f64>()).sqrt()
    };
    for (i, g) in setup.gaussians.iter().enumerate() {
        let t = setup.triangles[g.triangle() as usize];
        let p = t.map(|v| pos[v as usize]);
        let edges = [len(p[0], p[1]), len(p[1], p[2]), len(p[2], p[0])];
        let k = (edges.iter().sum::<f64>() / 3.0).max(1e-6);
        let c = [0, 1, 2].map(|x| f64::from(p[1][x] - p[0][x]));
        let d = [0, 1, 2].map(|x| f64::from(p[2][x] - p[0][x]));
        let area2 = ((c[1] * d[2] - c[2] * d[1]).powi(2)
            + (c[2] * d[0] - c[0] * d[2]).powi(2)
            + (c[0] * d[1] - c[1] * d[0]).powi(2))
        .sqrt();
        let h = (area2 / edges.iter().fold(1e-12f64, |m, &x| m.max(x))).max(1e-12);
        // A (near-)degenerate triangle's frame may flip: no bound beyond finiteness.
        let theta = (4.0 * e / h).min(2.0);
        let dk = 2.0 * e;
        let b = [1.0 - g.a[1] - g.a[2], g.a[1], g.a[2]];
        let db = f64::from(b.iter().map(|x| x.abs()).sum::<f32>());
        let off = f64::from(g.a[3].abs());
        let mu = (0..3).fold(0.0f64, |m, x| m.max(f64::from(want.center[i][x].abs())));
        let bc = e * db + off * (dk + k * theta) + 1e-6 * mu.max(big);
        let sig = want.cov_a[i]
            .iter()
            .chain(&want.cov_b[i][..2])
            .fold(0.0f32, |m, x| m.max(x.abs())) as f64;
        let bs = 3.0 * sig * (2.0 * dk / k + 2.0 * theta) + 1e-6 * sig + 1e-20;
        for x in 0..3 {
            let (a, w) = (got.center[i][x], want.center[i][x]);
            assert!(
                a.is_finite() && f64::from((a - w).abs()) <= bc,
                "{what}: gaussian {i} centre {a} vs {w} (bound {bc:e})"
            );
        }
        for (a, w) in got.cov_a[i]
            .iter()
            .chain(&got.cov_b[i])
            .zip(want.cov_a[i].iter().chain(&want.cov_b[i]))
        {
            assert!(
                a.is_finite() && f64::from((a - w).abs()) <= bs,
                "{what}: gaussian {i} covariance {a} vs {w} (bound {bs:e})"
            );
        }
        assert!(got.color[i] == want.color[i], "{what}: gaussian {i} colour");
    }
}

fn check_lift(asset: Asset, n: u32, setup: &Setup, times: &[f64], kind: LiftKind) {
    let asset = Arc::new(asset);
    let bound_lift = bound_setup(&asset, &kind);
    let want = run_lift(&asset, &Device::Cpu, n, setup, times, kind.clone());
    for d in gpus() {
        let got = run_lift(&asset, &d, n, setup, times, kind.clone());
        for (f, (gf, wf)) in got.iter().zip(&want).enumerate() {
            for (i, ((gs, gp), (ws, wp))) in gf.iter().zip(wf).enumerate() {
                let what = format!("{} {} frame {f} instance {i}", d.name(), asset.source());
                compare_posed(&what, gp, wp).unwrap();
                compare_splats(&what, gs, ws);
                if let Some(b) = &bound_lift {
                    check_bound_splats(&what, b, wp, gs, ws);
                }
            }
        }
    }
}

#[test]
fn facecap_with_the_live_link_take_agrees_on_every_backend() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(0)?.play_livelink_csv(&take)?;
        // Instance 1 plays the character's own clip; instance 2 stays at rest.
        rt.instance_mut(1)?.play_clip("0")?;
        Ok(())
    };
    check(
        Asset::load(data("facecap/facecap.glb")).unwrap(),
        3,
        &setup,
        &[0.0, 0.5, 1.25],
    );
}

/// The surface lift (`lift_bound.wgsl` against [`mien_core::lift::BoundSetup::pose`]): Face Cap's
/// textured head, three instances, the Live Link take and a clip.
#[test]
fn facecap_surface_lift_agrees_on_every_backend() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(0)?.play_livelink_csv(&take)?;
        rt.instance_mut(1)?.play_clip("0")?;
        Ok(())
    };
    let opts = mien_core::lift::SurfaceOptions {
        target: 40_000,
        ..Default::default()
    };
    check_lift(
        Asset::load(data("facecap/facecap.glb")).unwrap(),
        3,
        &setup,
        &[0.0, 1.25],
        LiftKind::Surface(opts),
    );
}

/// The texel lift (`lift_bound.wgsl` again, over a UV raster): Face Cap at 128², two instances.
#[test]
fn facecap_texel_lift_agrees_on_every_backend() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(1)?.play_livelink_csv(&take)?;
        Ok(())
    };
    let opts = mien_core::lift::TexelOptions {
        resolution: 128,
        ..Default::default()
    };
    check_lift(
        Asset::load(data("facecap/facecap.glb")).unwrap(),
        2,
        &setup,
        &[0.0, 0.9],
        LiftKind::Texel(opts),
    );
}

/// The surface lift on a linear head (facecap baked into a pack: no normals, normal colours).
#[test]
fn a_linear_head_surface_lift_agrees_on_every_backend() {
    let baked = bake_gltf(&data("facecap/facecap.glb"), &BakeOptions::default()).unwrap();
    let asset = Asset::from_pack(baked.pack, "facecap.aosrig").unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(1)?.play_livelink_csv(&take)?;
        Ok(())
    };
    let opts = mien_core::lift::SurfaceOptions {
        target: 20_000,
        ..Default::default()
    };
    check_lift(asset, 2, &setup, &[0.0, 0.8], LiftKind::Surface(opts));
}

#[test]
fn the_builtin_head_with_its_face_driver_agrees_on_every_backend() {
    let setup = |rt: &mut Runtime| {
        let ch = rt.asset().character().clone();
        for k in 0..2 {
            let face = FaceDriver::new(
                &ch,
                mien_core::face::FaceDef::arkit_default(),
                Script::builtin(),
                (k == 1).then_some([0.3, 0.1, 1.0]),
                0.0,
                &FaceSources::default(),
            )?;
            let mut i = rt.instance_mut(k)?;
            i.play_stream(mien_core::sample::sample_performance(60.0))?;
            i.set_face(Some(face))?;
        }
        Ok(())
    };
    check(Asset::builtin(), 2, &setup, &[0.2, 1.4, 2.5]);
}

#[test]
fn a_linear_head_agrees_on_every_backend() {
    let baked = bake_gltf(&data("facecap/facecap.glb"), &BakeOptions::default()).unwrap();
    let asset = Asset::from_pack(baked.pack, "facecap.aosrig").unwrap();
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(1)?.play_livelink_csv(&take)?;
        Ok(())
    };
    check(asset, 2, &setup, &[0.0, 0.8]);
}

/// Khronos' AnimatedMorphCube (TANGENT and tangent deltas on both targets, a weights animation)
/// played through the runtime: every backend's posed tangents equal an f64 reference computed
/// here from the imported primitive — base + Σ w·δ for normal and tangent, the tangent
/// re-orthogonalised against the blended normal (the base direction where they are parallel),
/// then turned by the node's world matrix — within `1e-5` (unit vectors; the cube's blended
/// tangents stay far from their normals, so the rounding is not amplified).
///
/// The file as published cannot move a tangent: its tangent deltas are all zero and its one
/// moving normal delta (target 1, the −y face) turns the normals in the y–z plane, orthogonal to
/// the (1, 0, 0) tangents. So it is played twice: as published, where the clip must turn some
/// normal by more than 1e-3 (it played) and leave every tangent where it was; and with tangent
/// deltas `(0, 0.3, 0.2)` added to target 1 on the vertices it moves, where the animation must
/// move some tangent by more than 1e-3 — a backend that ignored tangent deltas would fail there.
#[test]
fn animated_morph_cube_tangents_equal_an_f64_reference_on_every_backend() {
    let ch = Asset::load(data("khronos/AnimatedMorphCube/AnimatedMorphCube.gltf"))
        .unwrap()
        .character()
        .clone();
    cube_tangents(ch.clone(), false);
    // Tangent deltas on target 1 wherever it has an entry (vertices 12–15).
    let mut edited = ch;
    let p = &mut edited.meshes[0].primitives[0];
    let (nv, m) = (p.vertex_count(), &p.morph);
    let dense = |t: u32, stream: &[[f32; 3]]| {
        let mut d = vec![[0.0f32; 3]; nv];
        for (v, out) in d.iter_mut().enumerate() {
            let (lo, hi) = (
                m.vertex_offsets()[v] as usize,
                m.vertex_offsets()[v + 1] as usize,
            );
            for (&target, delta) in m.entry_target()[lo..hi].iter().zip(&stream[lo..hi]) {
                if target == t {
                    *out = *delta;
                }
            }
        }
        d
    };
    let targets: Vec<mien_core::rig::morph::DenseTarget> = (0..m.target_count() as u32)
        .map(|t| {
            let mut tangent = dense(t, m.entry_tangent().unwrap());
            if t == 1 {
                for (v, d) in tangent.iter_mut().enumerate() {
                    if dense(1, m.entry_normal().unwrap())[v] != [0.0; 3] {
                        *d = [0.0, 0.3, 0.2];
                    }
                }
            }
            mien_core::rig::morph::DenseTarget {
                position: Some(dense(t, m.entry_position())),
                normal: Some(dense(t, m.entry_normal().unwrap())),
                tangent: Some(tangent),
            }
        })
        .collect();
    p.morph = mien_core::rig::morph::MorphSet::from_dense(nv, &targets).unwrap();
    cube_tangents(edited, true);
}

/// The body of [`animated_morph_cube_tangents_equal_an_f64_reference_on_every_backend`] for one
/// version of the cube: `tangents_move` says whether its animation must move a tangent (else it
/// must move a normal and no tangent).
fn cube_tangents(ch: mien_core::rig::Character, tangents_move: bool) {
    use mien_core::rig::ClipId;
    let asset = Arc::new(Asset::from_character(ch.clone()).unwrap());
    let times = [0.6, 1.5, 2.9];
    let reference = |t: f64| -> Vec<[f64; 4]> {
        let mut pose = ch.rest_pose();
        ch.apply_clip(ClipId(0), t, &mut pose);
        let (mut scratch, mut world) = (Vec::new(), Vec::new());
        ch.world_matrices(&pose, &mut scratch, &mut world);
        let node = ch.mesh_nodes()[0];
        let w = &pose.weights[node.index()];
        let m = world[node.index()].as_dmat4();
        let p = &ch.meshes[0].primitives[0];
        let (en, et) = (
            p.morph.entry_normal().unwrap(),
            p.morph.entry_tangent().unwrap(),
        );
        let off = p.morph.vertex_offsets();
        (0..p.vertex_count())
            .map(|v| {
                let mut n = glam::DVec3::from(p.normals[v].map(f64::from));
                let tv = p.tangents[v];
                let base = glam::DVec3::new(tv[0].into(), tv[1].into(), tv[2].into());
                let mut t = base;
                let mut touched = false;
                for e in off[v] as usize..off[v + 1] as usize {
                    let we = f64::from(w[p.morph.entry_target()[e] as usize]);
                    touched |= we != 0.0;
                    n += we * glam::DVec3::from(en[e].map(f64::from));
                    t += we * glam::DVec3::from(et[e].map(f64::from));
                }
                if touched {
                    // The file's tangents are (1,0,0) on every face, parallel to the ±x faces'
                    // normals: there the rule keeps the base direction.
                    let n = n.normalize();
                    t = (t - n * n.dot(t)).try_normalize().unwrap_or(base);
                }
                let t = m.transform_vector3(t).normalize();
                [t.x, t.y, t.z, f64::from(tv[3])]
            })
            .collect()
    };
    // The file's tangents turned by the node's world matrix, with no morph: what a backend that
    // ignored the tangent deltas (or a clip that never played) would show.
    // The file's normals (through the normal matrix) and tangents turned by the node's world
    // matrix, with no morph: what a backend that ignored the deltas (or a clip that never played)
    // would show.
    let (rest_normals, unmorphed): (Vec<glam::DVec3>, Vec<glam::DVec3>) = {
        let pose = ch.rest_pose();
        let (mut scratch, mut world) = (Vec::new(), Vec::new());
        ch.world_matrices(&pose, &mut scratch, &mut world);
        let m = world[ch.mesh_nodes()[0].index()].as_dmat4();
        let nm = glam::DMat3::from_mat4(m).inverse().transpose();
        let p = &ch.meshes[0].primitives[0];
        let v3 = |x: &[f32]| glam::DVec3::new(x[0].into(), x[1].into(), x[2].into());
        (
            p.normals.iter().map(|n| (nm * v3(n)).normalize()).collect(),
            p.tangents
                .iter()
                .map(|t| m.transform_vector3(v3(t)).normalize())
                .collect(),
        )
    };
    let mut devices = vec![Device::Cpu];
    devices.extend(gpus());
    for d in &devices {
        let pose_only = RuntimeOptions {
            instances: 1,
            lift: None,
        };
        let mut rt = Runtime::new(Arc::clone(&asset), d, &pose_only).unwrap();
        rt.instance_mut(0).unwrap().play_clip("0").unwrap();
        let (mut moved, mut turned) = (0.0f64, 0.0f64);
        for &t in &times {
            rt.update(t).unwrap();
            let posed = rt.posed(0).unwrap();
            let got = posed.tangents;
            for (n, r) in posed.normals.iter().zip(&rest_normals) {
                let n = glam::DVec3::new(n[0].into(), n[1].into(), n[2].into());
                turned = turned.max((n - *r).length());
            }
            let want = reference(t);
            assert_eq!(got.len(), want.len(), "{}: tangents read back", d.name());
            for (g, u) in got.iter().zip(&unmorphed) {
                let g = glam::DVec3::new(g[0].into(), g[1].into(), g[2].into());
                moved = moved.max((g - *u).length());
            }
            for (v, (g, w)) in got.iter().zip(&want).enumerate() {
                for k in 0..4 {
                    let err = (f64::from(g[k]) - w[k]).abs();
                    assert!(
                        err <= 1e-5,
                        "{} t={t} vertex {v}: {g:?} vs f64 {w:?}",
                        d.name()
                    );
                }
            }
        }
        if tangents_move {
            assert!(
                moved > 1e-3,
                "{}: the animation moved no tangent by more than 1e-3 (largest {moved})",
                d.name()
            );
        } else {
            assert!(
                turned > 1e-3 && moved < 1e-5,
                "{}: the published cube must turn a normal (largest {turned}) and no tangent (largest {moved})",
                d.name()
            );
        }
    }
}

/// Ready Player Me's avatar (TANGENT on its skinned footwear; 57 ARKit-named targets on the head)
/// driven by the Live Link take with a joint override turning the hips: the posed tangents agree on
/// every backend within the conformance bounds, and the override turns them (skinned tangents
/// follow the joints), so a backend that dropped or froze them would fail.
#[test]
fn a_skinned_avatar_with_tangents_agrees_on_every_backend() {
    let asset = Arc::new(Asset::load(data("avatars/rpm_male.glb")).unwrap());
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let hips = vec![("Hips".to_string(), glam::Quat::from_rotation_y(0.4))];
    let setup = move |rt: &mut Runtime| {
        let mut i = rt.instance_mut(0)?;
        i.play_livelink_csv(&take)?;
        assert!(i.set_joint_overrides(&hips)?.is_empty(), "Hips found");
        Ok(())
    };
    let frames = run(&asset, &Device::Cpu, 2, &setup, &[0.0, 1.25]);
    let (posed, rest) = (&frames[1][0].1, &frames[1][1].1);
    assert!(!rest.tangents.is_empty(), "the avatar carries tangents");
    let moved = posed
        .tangents
        .iter()
        .zip(&rest.tangents)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0f32, f32::max))
        .fold(0.0f32, f32::max);
    assert!(moved > 0.1, "the hips turn the tangents (by {moved})");
    let asset = Arc::try_unwrap(asset).ok().unwrap();
    check(asset, 2, &setup, &[0.0, 1.25]);
}

/// VRM avatars: Godette (0.x, a 68-joint skin, expressions driven by a Live Link take through the
/// ARKit → VRM table, lookAt expressions from a gaze) and the 1.0 file (expressions set in the
/// `vrm` space). Their expression control node is a mesh node without vertices: every backend
/// must pose the rest exactly as the CPU does.
#[test]
fn vrm_avatars_agree_on_every_backend() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(0)?.play_livelink_csv(&take)?;
        rt.instance_mut(1)?
            .set_vrm_gaze(Some(mien_core::vrm::Gaze {
                yaw_deg: 25.0,
                pitch_deg: -10.0,
            }))?;
        Ok(())
    };
    check(
        Asset::load(data("vrm/Godette_vrm_v4.vrm")).unwrap(),
        2,
        &setup,
        &[0.0, 0.75, 2.0],
    );
    let setup = |rt: &mut Runtime| {
        let n = rt.asset().space_len(mien_runtime::ExpressionSpace::Vrm)?;
        let x: Vec<f32> = (0..n).map(|i| (i % 3) as f32 * 0.4).collect();
        rt.instance_mut(0)?
            .set_controls(mien_runtime::ExpressionSpace::Vrm, &x)?;
        Ok(())
    };
    check(
        Asset::load(data("vrm/expression_migration.vrm")).unwrap(),
        1,
        &setup,
        &[0.0],
    );
}

/// The MetaHuman-style ICT DNA rig (`metahuman_dna/mien_ict_rig.dna`, RigLogic → joints through
/// the skin, channels through the morph blend): one instance on the Live Link take (ARKit onto
/// the face board), one set in its raw-control space, one speaking (Gentle timings → visemes →
/// ARKit on the control node → RigLogic).
#[test]
fn a_dna_character_agrees_on_every_backend() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let timings = data("gentle/lucier_golden.json");
    let setup = move |rt: &mut Runtime| {
        rt.instance_mut(0)?.play_livelink_csv(&take)?;
        let speech =
            mien_runtime::Speech::from_file(&timings, &Default::default(), rt.asset().character())?;
        rt.instance_mut(2)?.set_speech(Some(speech))?;
        let n = rt.asset().space_len(mien_runtime::ExpressionSpace::Rig)?;
        let x: Vec<f32> = (0..n).map(|i| (i % 4) as f32 * 0.3).collect();
        rt.instance_mut(1)?
            .set_controls(mien_runtime::ExpressionSpace::Rig, &x)?;
        Ok(())
    };
    check(
        Asset::load(data("metahuman_dna/mien_ict_rig.dna")).unwrap(),
        3,
        &setup,
        &[0.0, 1.5, 4.0],
    );
}

/// A captured splat cloud bound to CesiumMan with its far gaussians left rigid to joints
/// (`FarGaussians::Joint`: the rig's joint anchors appended to the posed vertices): the capture is
/// CesiumMan's own surface splats at rest plus three blobs 0.2–0.3 m off the surface; two
/// instances walking at different times. Every backend poses the anchors with the skin and the
/// gaussians with `lift_bound.wgsl`.
#[test]
fn a_capture_with_joint_anchors_agrees_on_every_backend() {
    use mien_core::lift::{BindOptions, FarGaussians, SurfaceOptions};
    let asset = Arc::new(Asset::load(data("khronos/CesiumMan/CesiumMan_chromedays.glb")).unwrap());
    let rest = {
        let opts = RuntimeOptions {
            instances: 1,
            lift: Some(LiftOptions {
                kind: LiftKind::Surface(SurfaceOptions {
                    target: 4_000,
                    ..Default::default()
                }),
                ..Default::default()
            }),
        };
        Runtime::new(Arc::clone(&asset), &Device::Cpu, &opts)
            .unwrap()
            .render_rest()
            .unwrap()
    };
    let path = std::env::temp_dir().join(format!("mien-anchor-capture-{}.ply", std::process::id()));
    let all = |n: usize| {
        [mien_core::sink::SlotRange {
            offset: 0,
            count: n as u32,
        }]
    };
    let ply = mien_core::io::ply::PlyOptions::default();
    mien_core::io::ply::write_splat_ply_with(&path, &rest, &all(rest.len()), &ply).unwrap();
    let mut cloud = mien_core::io::ply::read_splat_ply(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let top = *cloud
        .center
        .iter()
        .max_by(|a, b| a[1].total_cmp(&b[1]))
        .unwrap();
    for (dy, dx) in [(0.2, 0.0), (0.25, 0.05), (0.3, -0.05)] {
        cloud.center.push([top[0] + dx, top[1] + dy, top[2]]);
        cloud.rgba.push([0.9, 0.3, 0.1, 0.9]);
        cloud
            .covariance
            .push([[3e-4, 0.0, 0.0], [0.0, 2e-4, 0.0], [0.0, 0.0, 1e-4]]);
    }
    let bound = mien_runtime::capture::bind_capture(
        &asset,
        &cloud,
        &BindOptions {
            far: FarGaussians::Joint,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(bound.report.rigid, 3);
    assert!(bound.capture.anchors > 0);
    let setup = |rt: &mut Runtime| {
        rt.instance_mut(0)?.play_clip("0")?;
        rt.instance_mut(1)?
            .play_clip("0")?
            .set_drive_timing(0.4, true)?;
        Ok(())
    };
    check_lift(
        Asset::load(data("khronos/CesiumMan/CesiumMan_chromedays.glb")).unwrap(),
        2,
        &setup,
        &[0.0, 0.6],
        LiftKind::Capture(bound.capture),
    );
}

/// The built-in body with its cape and groom walking (issue 27 item 4): the simulations run on the
/// CPU alike for every backend, so the body's gaussians, the cloth's (posed on the simulated
/// vertices) and the strands (interpolated on the device from the uploaded guides) agree with the
/// CPU runtime: the body's and the cloth's within the bound lift's derived bound, the strands
/// within `mien_core::hair::splat_bounds`.
#[test]
fn the_built_in_body_with_cape_and_hair_agrees_on_every_backend() {
    let loaded = mien_runtime::character::CharacterDef::builtin_body().unwrap();
    let asset = Arc::new(loaded.asset.clone());
    let d = asset.dynamics().clone();
    let (cloth, hair) = (d.cloth.unwrap(), d.hair.unwrap());
    let opts = RuntimeOptions {
        instances: 2,
        lift: Some(LiftOptions::default()),
    };
    let times = [0.0, 1.0 / 60.0, 2.0 / 60.0, 0.1];
    let go = |device: &Device| {
        let mut rt = Runtime::new(Arc::clone(&asset), device, &opts).unwrap();
        for i in 0..2 {
            let mut inst = rt.instance_mut(i).unwrap();
            loaded.apply(&mut inst).unwrap();
            inst.set_speed(0.6 * (i + 1) as f64).unwrap();
            inst.set_wind(glam::DVec3::new(4.0, 0.0, 0.0)).unwrap();
        }
        let mut out = Vec::new();
        for &t in &times {
            rt.update(t).unwrap();
            for i in 0..2 {
                let inst = rt.instance(i).unwrap();
                let extra = (inst.cloth_vertices().to_vec(), inst.hair_guides().to_vec());
                out.push((rt.splats(i).unwrap(), rt.posed(i).unwrap(), extra));
            }
        }
        (out, rt.lift().unwrap().setup.clone().unwrap())
    };
    let (want, body_setup) = go(&Device::Cpu);
    let body = body_setup.slots() as usize;
    let hair_slots = hair.slots() as usize;
    // The cloth's own setup: what the CPU lift split off (the gaussians between body and hair).
    let per = want[0].0.len();
    let cloth_slots = per - body - hair_slots;
    assert!(cloth_slots > 100, "the cape has gaussians: {cloth_slots}");
    let sub = |s: &SplatBuffers, a: usize, b: usize| SplatBuffers {
        center: s.center[a..b].to_vec(),
        color: s.color[a..b].to_vec(),
        cov_a: s.cov_a[a..b].to_vec(),
        cov_b: s.cov_b[a..b].to_vec(),
    };
    for dev in gpus() {
        let (got, _) = go(&dev);
        for (k, ((gs, gp, gx), (ws, wp, wx))) in got.iter().zip(&want).enumerate() {
            let what = format!(
                "{} built-in body frame {} instance {}",
                dev.name(),
                k / 2,
                k % 2
            );
            assert_eq!(
                gx, wx,
                "{what}: the simulations are the CPU's on every backend"
            );
            compare_posed(&what, gp, wp).unwrap();
            check_bound_splats(&what, &body_setup, wp, &sub(gs, 0, body), &sub(ws, 0, body));
            compare_splats(
                &format!("{what} cloth"),
                &sub(gs, body, body + cloth_slots),
                &sub(ws, body, body + cloth_slots),
            );
            let bounds = mien_core::hair::splat_bounds(&hair.groom, &wx.1).unwrap();
            let h0 = body + cloth_slots;
            for (j, (bc, bv)) in bounds.iter().enumerate() {
                let s = h0 + j;
                for x in 0..3 {
                    let d = f64::from((gs.center[s][x] - ws.center[s][x]).abs());
                    assert!(d <= *bc, "{what}: strand slot {j} centre {d:e} > {bc:e}");
                }
                for (a, b) in gs.cov_a[s]
                    .iter()
                    .chain(&gs.cov_b[s])
                    .zip(ws.cov_a[s].iter().chain(&ws.cov_b[s]))
                {
                    let d = f64::from((a - b).abs());
                    assert!(
                        d <= *bv,
                        "{what}: strand slot {j} covariance {d:e} > {bv:e}"
                    );
                }
            }
            assert_eq!(cloth.count as usize, wx.0.len());
        }
    }
}

/// [`Runtime::set_precision`]`(Precision::Fast)` on the CPU (fused multiply-adds, SIMD): a morph
/// rig (Face Cap with the Live Link take, four instances, so the fast path's pair blend runs) and
/// a linear head (facecap baked into a pack) stay within the conformance bounds of the exact CPU
/// runtime — the bounds every GPU backend is held to — and differ from it somewhere (the fast
/// path ran). A GPU device refuses the setting.
#[test]
fn the_cpu_fast_precision_is_within_the_bounds_of_the_exact_one() {
    let take = data("livelinkface/MySlate_3_Jason_Millers_iPhone.csv");
    let rig = Arc::new(Asset::load(data("facecap/facecap.glb")).unwrap());
    let baked = bake_gltf(&data("facecap/facecap.glb"), &BakeOptions::default()).unwrap();
    let head = Arc::new(Asset::from_pack(baked.pack, "facecap.aosrig").unwrap());
    for asset in [rig, head] {
        let take = take.clone();
        let drive = move |rt: &mut Runtime| -> mien_runtime::Result<()> {
            for i in 0..4 {
                rt.instance_mut(i)?
                    .play_livelink_csv(&take)?
                    .set_drive_timing(0.37 * i as f64, true)?;
            }
            Ok(())
        };
        let exact = drive.clone();
        let fast = move |rt: &mut Runtime| -> mien_runtime::Result<()> {
            drive(rt)?;
            rt.set_precision(mien_runtime::Precision::Fast)
        };
        let times = [0.0, 0.8, 2.1];
        let want = run(&asset, &Device::Cpu, 4, &exact, &times);
        let got = run(&asset, &Device::Cpu, 4, &fast, &times);
        let mut differs = false;
        for (f, (gf, wf)) in got.iter().zip(&want).enumerate() {
            for (i, ((gs, gp), (ws, wp))) in gf.iter().zip(wf).enumerate() {
                let what = format!("cpu fast {} frame {f} instance {i}", asset.source());
                compare_posed(&what, gp, wp).unwrap();
                compare_splats(&what, gs, ws);
                differs |= gp.positions != wp.positions;
            }
        }
        assert!(differs, "{}: the fast path left every bit", asset.source());
    }
    for d in gpus() {
        let opts = RuntimeOptions {
            instances: 1,
            lift: None,
        };
        let mut rt = Runtime::new(Arc::new(Asset::builtin()), &d, &opts).unwrap();
        let e = rt.set_precision(mien_runtime::Precision::Fast).unwrap_err();
        assert!(e.to_string().contains("CPU device"), "{}: {e}", d.name());
    }
}
