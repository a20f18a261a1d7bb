//! Guide-strand simulation (issue 27 item 3) on the built-in body's groom and on Sintel's guides:
//! lengths kept by follow-the-leader (relative error ≤ 1e-6 through violent head motion), a still
//! head settles to a still groom, a groom spawned inside a collider is pushed out without a
//! bounce, a teleport carries the groom, wind blows the tips, update rates agree through the fixed
//! step, the head never passes through the hair at a capped rate.

use std::path::Path;

use glam::{DMat4, DQuat, DVec3};
use mien_core::hair::{GroomDef, HairCapsule, HairSim, HairSimOptions, read_tfx};

fn groom() -> mien_core::hair::Groom {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/grooms/builtin_body.groom.json"),
    )
    .unwrap();
    let mut d = GroomDef::from_json(&text, "g.json").unwrap();
    d.guides = 64;
    d.build().unwrap()
}

/// The head bone at time `t` of a violent shake: ±60° about Y at 3 Hz while moving 2 m/s.
fn shake(t: f64) -> DMat4 {
    DMat4::from_rotation_translation(
        DQuat::from_rotation_y(60f64.to_radians() * (std::f64::consts::TAU * 3.0 * t).sin()),
        DVec3::new(2.0 * t, 1.46, 0.0),
    )
}

fn head_sphere(head: &DMat4) -> HairCapsule {
    let c = head.transform_point3(DVec3::new(0.0, 0.07, -0.005));
    HairCapsule {
        a: c,
        b: c,
        radius: 0.075,
    }
}

#[test]
fn lengths_hold_through_a_violent_shake() {
    let g = groom();
    let mut sim = HairSim::new(&g.guides, g.segments, HairSimOptions::default()).unwrap();
    let mut worst: f64 = 0.0;
    for f in 0..=180 {
        let t = f64::from(f) / 60.0;
        let head = shake(t);
        let r = sim.update(1.0 / 60.0, head, &[head_sphere(&head)]).unwrap();
        worst = worst.max(r.max_length_error);
    }
    assert!(worst <= 1e-6, "segment length error {worst}");
}

#[test]
fn a_still_head_settles_to_a_still_groom() {
    let g = groom();
    let mut sim = HairSim::new(&g.guides, g.segments, HairSimOptions::default()).unwrap();
    let head = DMat4::from_translation(DVec3::new(0.0, 1.46, 0.0));
    let mut last = Vec::new();
    let mut moves = Vec::new();
    for _ in 0..360 {
        sim.update(1.0 / 60.0, head, &[head_sphere(&head)]).unwrap();
        let p = sim.points().to_vec();
        if !last.is_empty() {
            let m = p
                .iter()
                .zip(&last)
                .map(|(a, b): (&DVec3, &DVec3)| a.distance(*b))
                .fold(0.0, f64::max);
            moves.push(m);
        }
        last = p;
    }
    // Settled: the last second moves no point more than a micrometre a frame, and the motion
    // only decays (no flicker: no frame in the last two seconds moves more than the one before
    // it by more than rounding).
    assert!(
        moves[moves.len() - 60..].iter().all(|m| *m < 1e-6),
        "{:?}",
        &moves[moves.len() - 5..]
    );
    let tail = &moves[moves.len() - 120..];
    assert!(
        tail.windows(2).all(|w| w[1] <= w[0] + 1e-9),
        "flicker: {tail:?}"
    );
}

#[test]
fn a_groom_spawned_in_a_collider_is_pushed_out_without_a_bounce() {
    let g = groom();
    let mut sim = HairSim::new(&g.guides, g.segments, HairSimOptions::default()).unwrap();
    let head = DMat4::from_translation(DVec3::new(0.0, 1.46, 0.0));
    // A shoulder capsule through where the hair hangs.
    let shoulder = HairCapsule {
        a: DVec3::new(-0.3, 1.40, -0.08),
        b: DVec3::new(0.3, 1.40, -0.08),
        radius: 0.06,
    };
    let r = sim.update(0.0, head, &[shoulder]).unwrap();
    assert!(r.reset);
    let first = sim.points().to_vec();
    let s1 = g.segments + 1;
    for (i, p) in first.iter().enumerate() {
        if i % s1 != 0 {
            assert!(
                shoulder.push_out(*p).is_none_or(|q| q.distance(*p) < 1e-3),
                "point {i} inside"
            );
        }
    }
    // No velocity was injected: the next frame moves points by gravity's few millimetres only.
    sim.update(1.0 / 60.0, head, &[shoulder]).unwrap();
    let moved = sim
        .points()
        .iter()
        .zip(&first)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0, f64::max);
    assert!(moved < 0.01, "bounced {moved} m in one frame");
}

#[test]
fn a_teleport_carries_the_groom_and_wind_blows_it() {
    let g = groom();
    let opts = HairSimOptions::default();
    let mut sim = HairSim::new(&g.guides, g.segments, opts).unwrap();
    let head = DMat4::from_translation(DVec3::new(0.0, 1.46, 0.0));
    for _ in 0..120 {
        sim.update(1.0 / 60.0, head, &[]).unwrap();
    }
    let before = sim.points().to_vec();
    let far = DMat4::from_translation(DVec3::new(10.0, 1.46, 0.0));
    let r = sim.update(1.0 / 60.0, far, &[]).unwrap();
    assert!(r.reset, "a 10 m jump resets");
    // Every point lands where the rest groom sits on the moved head: within the settled sag.
    let s1 = g.segments + 1;
    for (i, (a, b)) in sim.points().iter().zip(&before).enumerate() {
        assert!(
            (a.x - b.x - 10.0).abs() < 0.05,
            "point {i}: {} → {}",
            b.x,
            a.x
        );
        if i % s1 == 0 {
            assert!((a.x - b.x - 10.0).abs() < 1e-9);
        }
    }
    // Wind along +X blows the tips that way.
    let mut windy = HairSim::new(&g.guides, g.segments, opts).unwrap();
    windy.set_wind(DVec3::new(30.0, 0.0, 0.0)).unwrap();
    let mut calm = HairSim::new(&g.guides, g.segments, opts).unwrap();
    for _ in 0..120 {
        windy.update(1.0 / 60.0, head, &[]).unwrap();
        calm.update(1.0 / 60.0, head, &[]).unwrap();
    }
    let tips = |s: &HairSim| -> f64 {
        (0..g.guide_count())
            .map(|k| s.points()[k * s1 + s1 - 1].x)
            .sum::<f64>()
            / g.guide_count() as f64
    };
    assert!(
        tips(&windy) - tips(&calm) > 0.01,
        "{} vs {}",
        tips(&windy),
        tips(&calm)
    );
}

/// The fixed internal step: frames at 30, 60 and 165 Hz through the same head motion agree at
/// common times within a millimetre.
#[test]
fn update_rates_agree_through_the_fixed_step() {
    let g = groom();
    let run = |hz: f64| {
        let mut sim = HairSim::new(&g.guides, g.segments, HairSimOptions::default()).unwrap();
        let frames = (2.0 * hz).round() as u32;
        for f in 0..=frames {
            let t = f64::from(f) / hz;
            let head = shake(t * 0.3);
            sim.update(if f == 0 { 0.0 } else { 1.0 / hz }, head, &[])
                .unwrap();
        }
        sim.points().to_vec()
    };
    let (a, b, c) = (run(30.0), run(60.0), run(165.0));
    let diff = |x: &[DVec3], y: &[DVec3]| {
        x.iter()
            .zip(y)
            .map(|(p, q)| p.distance(*q))
            .fold(0.0, f64::max)
    };
    assert!(
        diff(&a, &b) < 0.01 && diff(&b, &c) < 0.01,
        "{} {}",
        diff(&a, &b),
        diff(&b, &c)
    );
}

/// Sintel's 228 guides, resampled to 24 segments, simulate with their lengths kept.
#[test]
fn sintels_guides_simulate() {
    let t = read_tfx(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/hair/sintel_hair_rust_vulkan_tressfx.tfx"),
    )
    .unwrap();
    let guides = t.resampled(24).unwrap();
    // Blender units → metres on the bust's scale (the groom is about 20 units tall): 1/100.
    let guides: Vec<[f32; 3]> = guides.iter().map(|p| p.map(|c| c * 0.01)).collect();
    let mut sim = HairSim::new(&guides, 24, HairSimOptions::default()).unwrap();
    let mut worst: f64 = 0.0;
    for f in 0..=120 {
        let r = sim
            .update(1.0 / 60.0, shake(f64::from(f) / 60.0), &[])
            .unwrap();
        worst = worst.max(r.max_length_error);
    }
    assert!(worst <= 1e-6, "{worst}");
}

#[test]
fn bad_inputs_are_refused() {
    let g = groom();
    assert!(HairSim::new(&g.guides[..5], g.segments, HairSimOptions::default()).is_err());
    let o = HairSimOptions {
        step_hz: 0.0,
        ..Default::default()
    };
    assert!(HairSim::new(&g.guides, g.segments, o).is_err());
    let mut sim = HairSim::new(&g.guides, g.segments, HairSimOptions::default()).unwrap();
    assert!(sim.update(f64::NAN, DMat4::IDENTITY, &[]).is_err());
    assert!(sim.update(-1.0, DMat4::IDENTITY, &[]).is_err());
    assert!(sim.set_wind(DVec3::splat(f64::INFINITY)).is_err());
}

/// A simulation capped at 30 Hz drawn at 120 Hz while the head shakes: the output is interpolated
/// in the head's current frame, so no drawn point is ever inside the head.
#[test]
fn a_capped_rate_does_not_let_the_head_through_the_hair() {
    let g = groom();
    let o = HairSimOptions {
        step_hz: 30.0,
        ..Default::default()
    };
    let mut sim = HairSim::new(&g.guides, g.segments, o).unwrap();
    let s1 = g.segments + 1;
    for f in 0..=240 {
        let head = shake(f64::from(f) / 120.0);
        let sphere = head_sphere(&head);
        sim.update(if f == 0 { 0.0 } else { 1.0 / 120.0 }, head, &[sphere])
            .unwrap();
        for (i, p) in sim.points().iter().enumerate() {
            if i % s1 != 0 {
                let d = p.distance(sphere.a);
                assert!(
                    d > sphere.radius - 2e-3,
                    "frame {f} point {i}: {d} m from the centre"
                );
            }
        }
    }
}

/// The field of a unit cube (12 triangles, outward winding) against hand-worked distances: the
/// centre is 0.5 inside, a point 0.3 beyond a face 0.3 outside, a point beyond an edge the
/// distance to the edge; a point pushed out lands the margin away.
#[test]
fn a_mesh_sdf_measures_a_cube() {
    use mien_core::hair::MeshSdf;
    let v: Vec<[f64; 3]> = (0..8)
        .map(|i| {
            [
                f64::from(i & 1),
                f64::from((i >> 1) & 1),
                f64::from((i >> 2) & 1),
            ]
        })
        .collect();
    // Faces as quads of corner indices, counter-clockwise seen from outside.
    let quads = [
        [0, 2, 3, 1], // z = 0
        [4, 5, 7, 6], // z = 1
        [0, 1, 5, 4], // y = 0
        [2, 6, 7, 3], // y = 1
        [0, 4, 6, 2], // x = 0
        [1, 3, 7, 5], // x = 1
    ];
    let tris: Vec<[u32; 3]> = quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    let sdf = MeshSdf::from_mesh(&v, &tris, 41, 0.5).unwrap();
    let close = |p: [f64; 3], want: f64, tol: f64| {
        let d = sdf.distance(DVec3::from(p));
        assert!((d - want).abs() <= tol, "at {p:?}: {d} vs {want}");
    };
    // Grid points: exact to f32.
    close([0.5, 0.5, 0.5], -0.5, 1e-6);
    close([1.3, 0.5, 0.5], 0.3, 1e-6);
    close([1.25, 1.25, 0.5], 0.25 * 2f64.sqrt(), 1e-6);
    // Between grid points: the trilinear error of |x| over a 0.05 cell.
    close([0.52, 0.51, 0.49], -0.48, 0.03);
    // Far outside the grid: the box distance plus the field at the box.
    close([5.0, 0.5, 0.5], 4.0, 1e-5);
    let q = sdf.push_out(DVec3::new(0.9, 0.5, 0.5), 0.02).unwrap();
    assert!((q.x - 1.02).abs() < 0.01 && (q.y - 0.5).abs() < 1e-3, "{q}");
    assert!(sdf.push_out(DVec3::new(1.5, 0.5, 0.5), 0.02).is_none());
    assert!(MeshSdf::from_mesh(&v, &[[0, 1, 9]], 16, 0.0).is_err());
    assert!(MeshSdf::from_mesh(&v, &tris, 2, 0.0).is_err());
}

/// Sintel's full groom (11,400 strands × 16 points, metres) on its watertight collider as a mesh
/// field: spawned pushed out of the collider without velocity, simulated through a head turn with
/// no point inside the collider by more than a grid cell's interpolation error, lengths kept, and
/// drawn as splats.
#[test]
fn sintels_full_groom_simulates_on_its_mesh_collider_and_draws() {
    use mien_core::gnm::bake::obj::{ObjParts, read_obj};
    use mien_core::hair::{Groom, HairColourDef, MeshSdf, TfxGroomOptions, strand_splats};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/hair");
    let obj = read_obj(&dir.join("sintel_collider_frostbitten.obj"), ObjParts::All).unwrap();
    let mut tris = Vec::new();
    for i in 0..obj.polygon_count() {
        let p = obj.polygon(i);
        for k in 1..p.len() - 1 {
            tris.push([p[0].0, p[k].0, p[k + 1].0]);
        }
    }
    assert_eq!(tris.len(), 678);
    let sdf = std::sync::Arc::new(MeshSdf::from_mesh(&obj.positions, &tris, 48, 0.05).unwrap());
    let tfx = read_tfx(&dir.join("sintel_hair_frostbitten_16points.tfx")).unwrap();
    let opts = TfxGroomOptions {
        head_bone: "head".into(),
        segments: 15,
        children_per_guide: 1,
        scale: 1.0,
        origin: [0.0; 3],
        clump: 0.0,
        thickness: [0.0008, 0.0002],
        colour: HairColourDef {
            root: [0.3, 0.15, 0.05],
            tip: [0.7, 0.5, 0.2],
            variation: 0.1,
        },
        seed: 1,
    };
    let groom = Groom::from_tfx(&tfx, &opts).unwrap();
    let mut sim = HairSim::new(&groom.guides, 15, HairSimOptions::default()).unwrap();
    let margin = 0.002;
    sim.set_mesh_collider(Some(sdf.clone()), margin).unwrap();
    // The head turns 40° about Y over a second, around the collider's centre (y ≈ 1.5).
    let pivot = DVec3::new(0.0, 1.5, 0.0);
    let head = |t: f64| {
        DMat4::from_translation(pivot)
            * DMat4::from_rotation_y(40f64.to_radians() * (t * std::f64::consts::PI).sin())
            * DMat4::from_translation(-pivot)
    };
    let tol = sdf.cell();
    let mut worst_len: f64 = 0.0;
    for f in 0..=60 {
        let t = f64::from(f) / 60.0;
        let r = sim.update(1.0 / 60.0, head(t), &[]).unwrap();
        if f == 0 {
            assert!(r.reset);
            // Pushed out at spawn, still.
            assert!(sim.velocities().iter().all(|v| *v == DVec3::ZERO));
        }
        worst_len = worst_len.max(r.max_length_error);
        let inv = head(t).inverse();
        let s1 = 16;
        for (i, p) in sim.points().iter().enumerate() {
            if i % s1 == 0 {
                continue;
            }
            let d = sdf.distance(inv.transform_point3(*p));
            assert!(d > -tol, "frame {f} point {i}: {d} m inside the collider");
        }
    }
    assert!(worst_len <= 1e-6, "{worst_len}");
    let guides: Vec<[f32; 3]> = sim
        .points()
        .iter()
        .map(|p| p.as_vec3().to_array())
        .collect();
    let mut out = mien_core::sink::SplatBuffers::new(11_400 * 15);
    assert_eq!(
        strand_splats(&groom, &guides, &mut out, 0).unwrap(),
        171_000
    );
    assert!(out.center.iter().all(|c| c.iter().all(|x| x.is_finite())));
}

/// The strands do not interact: Sintel's full groom (171,000 points: stepped over its strands in
/// parallel when the `parallel` feature is on, as in the workspace) gives its first 400 strands
/// (6,400 points: stepped on the calling thread) the very bits a simulation of those 400 alone
/// gives, through a head turn on the mesh collider and a wind.
#[test]
fn a_large_groom_steps_in_parallel_to_the_same_bits() {
    use mien_core::hair::MeshSdf;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/hair");
    let sdf = std::sync::Arc::new(
        MeshSdf::from_obj(&dir.join("sintel_collider_frostbitten.obj"), 32, 0.05).unwrap(),
    );
    let tfx = read_tfx(&dir.join("sintel_hair_frostbitten_16points.tfx")).unwrap();
    let s1 = tfx.points_per_strand;
    let few = 400 * s1;
    let options = HairSimOptions {
        wind: DVec3::new(4.0, 0.0, 1.0),
        ..HairSimOptions::default()
    };
    let mut all = HairSim::new(&tfx.positions, s1 - 1, options).unwrap();
    let mut part = HairSim::new(&tfx.positions[..few], s1 - 1, options).unwrap();
    for s in [&mut all, &mut part] {
        s.set_mesh_collider(Some(sdf.clone()), 0.002).unwrap();
    }
    let pivot = DVec3::new(0.0, 1.5, 0.0);
    for f in 0..30 {
        let t = f64::from(f) / 60.0;
        let head = DMat4::from_translation(pivot)
            * DMat4::from_rotation_y(0.7 * (t * 6.0).sin())
            * DMat4::from_translation(-pivot);
        all.update(1.0 / 60.0, head, &[]).unwrap();
        part.update(1.0 / 60.0, head, &[]).unwrap();
        assert_eq!(&all.points()[..few], part.points(), "frame {f}");
        assert_eq!(&all.velocities()[..few], part.velocities(), "frame {f}");
    }
    assert!(all.velocities().iter().any(|v| v.length() > 0.01));
}
