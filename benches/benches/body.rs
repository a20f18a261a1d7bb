//! Criterion benches of the body step (issue 26 item 9): one character's body update — sampling
//! the knight's walk, retargeting it onto the Ready Player Me avatar, foot placement on a 10°
//! slope — and the spring bones of many Godettes (VRM 0.x hair), one at a time and batched over
//! the host's cores with rayon (each avatar's simulation is independent, so the batch is a
//! parallel map). Real inputs from `../shared/data`; the bench is skipped when they are absent.
//!
//! ```sh
//! cargo bench -p mien-benches --bench body        # MIEN_DATA=DIR reads the inputs from DIR
//! ```

use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{DMat4, Quat};
use mien_core::anim::foot::{FootIkDef, FootPlacer};
use mien_core::anim::ground::Ground;
use mien_core::anim::retarget::{Reference, RetargetDef, RetargetOptions, Retargeter};
use mien_core::anim::spring::{SpringOptions, SpringSim};
use mien_core::io::gltf::import_gltf;
use rayon::prelude::*;

/// `$MIEN_DATA/rel`, else `../shared/data/rel` beside the repository
/// ([`mien_benches::workloads::data_dir`]).
fn data(rel: &str) -> PathBuf {
    mien_benches::workloads::data_dir().join(rel)
}

fn body(c: &mut Criterion) {
    if !data("bodies/KnightCharacter.glb").exists() {
        eprintln!("body bench: ../shared/data is absent; skipped");
        return;
    }
    let knight = import_gltf(&data("bodies/KnightCharacter.glb")).unwrap();
    let rpm = import_gltf(&data("avatars/rpm_male.glb")).unwrap();
    let walk = knight.find_clip("HumanArmature|Walking").unwrap();
    let o = RetargetOptions {
        source_reference: Reference::TPose,
        target_reference: Reference::TPose,
        strict: false,
    };
    let rt = Retargeter::new(
        &RetargetDef::auto(&knight, &rpm).unwrap(),
        &knight,
        &rpm,
        &o,
    )
    .unwrap();
    let mut fp = FootPlacer::new(&FootIkDef::humanoid(&rpm).unwrap(), &rpm).unwrap();
    let slope = Ground::Slope {
        origin: [0.0, 0.0],
        height: 0.0,
        direction: [0.0, 1.0],
        degrees: 10.0,
    };
    let mut g = c.benchmark_group("body");
    let mut t = 0.0;
    let mut src = knight.rest_pose();
    let mut pose = rpm.rest_pose();
    g.bench_function("rpm_walk_retarget_foot_ik", |b| {
        b.iter(|| {
            t = (t + 1.0 / 60.0) % 1.0;
            src.clone_from(&knight.rest_pose());
            knight.apply_clip(walk, t, &mut src);
            pose.locals = rt.retarget_locals(&knight, &src.locals);
            fp.update(1.0 / 60.0, &rpm, &mut pose, DMat4::IDENTITY, &slope)
                .unwrap()
        })
    });

    let godette = import_gltf(&data("vrm/Godette_vrm_v4.vrm")).unwrap();
    let sb = godette.spring_bones.clone().unwrap();
    let head = godette
        .nodes
        .iter()
        .position(|n| n.name.as_deref() == Some("head_Armature"))
        .unwrap();
    for n in [1usize, 1000] {
        let mut sims: Vec<SpringSim> = (0..n)
            .map(|_| SpringSim::new(&sb, &godette, SpringOptions::default()).unwrap())
            .collect();
        let mut poses: Vec<_> = (0..n).map(|_| godette.rest_pose()).collect();
        let mut f = 0u32;
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("godette_springs_60hz", n), &n, |b, _| {
            b.iter(|| {
                f += 1;
                let a = 0.6 * (f64::from(f) / 60.0 * std::f64::consts::TAU).sin();
                sims.par_iter_mut()
                    .zip(poses.par_iter_mut())
                    .for_each(|(s, p)| {
                        p.clone_from(&godette.rest_pose());
                        p.locals[head].rotation = Quat::from_rotation_y(a as f32);
                        s.update(1.0 / 60.0, &godette, p, DMat4::IDENTITY).unwrap();
                    });
            })
        });
    }
    g.finish();
}

criterion_group!(benches, body);
criterion_main!(benches);
