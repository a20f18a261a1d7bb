//! Character cloth (issue 27 item 1): a generated cape (a sheet pinned along its top) following
//! its skinned places — pins exactly, free vertices within their maximum distance — an arm
//! sweeping through it at 5 m/s without tunnelling (and the same sweep without interpolation
//! tunnelling, so the check can fail), pins faster than 15 m/s stretching it and the stretch
//! settling within two seconds, a teleport carrying it, the same run twice equal.

use glam::{DMat4, DVec3};
use mien_core::cloth::{Cloth, ClothCapsule, ClothMaterial};

/// A cape `w × h` metres hanging in the plane z = −0.15 from y = 1.35, `nx × ny` vertices.
fn cape(nx: usize, ny: usize) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let (w, h) = (0.4, 0.8);
    let mut v = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let x = -w / 2.0 + w * i as f32 / (nx - 1) as f32;
            let y = 1.35 - h * j as f32 / (ny - 1) as f32;
            v.push([x, y, -0.15]);
        }
    }
    let mut t = Vec::new();
    for j in 0..ny - 1 {
        for i in 0..nx - 1 {
            let a = (j * nx + i) as u32;
            let (b, c, d) = (a + 1, a + nx as u32, a + nx as u32 + 1);
            t.push([a, c, b]);
            t.push([b, c, d]);
        }
    }
    (v, t)
}

fn places(rest: &[[f32; 3]], m: DMat4) -> Vec<DVec3> {
    rest.iter()
        .map(|p| m.transform_point3(DVec3::from(p.map(f64::from))))
        .collect()
}

#[test]
fn pins_follow_exactly_and_free_vertices_stay_within_reach() {
    let (rest, tris) = cape(9, 17);
    let mut c = Cloth::new(&rest, &tris, 0.001, [0.0, 0.3], ClothMaterial::default()).unwrap();
    for f in 0..=120 {
        let t = f64::from(f) / 60.0;
        // The body walks forward and turns.
        let m = DMat4::from_rotation_translation(
            glam::DQuat::from_rotation_y(0.5 * t.sin()),
            DVec3::new(0.0, 0.0, 1.2 * t),
        );
        let p = places(&rest, m);
        c.update(1.0 / 60.0, &p, &[], DVec3::ZERO).unwrap();
        for (i, x) in c.positions().iter().enumerate() {
            if c.pinned()[i] {
                assert!(x.distance(p[i]) < 1e-12, "pin {i} off its place");
            } else {
                // The hem may stray 0.3 m, the row below the pins 0 m.
                // Linear in bind height from just below the pins (top − 1 mm) to the hem.
                let (top, low) = (f64::from(rest[0][1]), f64::from(rest[rest.len() - 1][1]));
                let y = f64::from(rest[i][1]);
                let reach = 0.3 * ((top - 0.001 - y) / (top - 0.001 - low)).clamp(0.0, 1.0);
                let d = x.distance(p[i]);
                assert!(
                    d <= reach + 1e-9,
                    "vertex {i} strays {d} > {reach} at frame {f}"
                );
            }
        }
    }
    assert_eq!(c.pinned().iter().filter(|p| **p).count(), 9);
}

/// An arm (a capsule across the cape) sweeping through the cape's plane at 5 m/s: with the motion
/// interpolated the cloth ends in front of the arm; without (one step, one substep) the arm
/// jumps past some of it, which is what the interpolation is for.
#[test]
fn an_arm_sweeping_through_at_5_m_s_does_not_tunnel() {
    let (rest, tris) = cape(9, 17);
    let run = |material: ClothMaterial| {
        let mut c = Cloth::new(&rest, &tris, 0.001, [0.6, 1.0], material).unwrap();
        let p = places(&rest, DMat4::IDENTITY);
        let arm = |z: f64| ClothCapsule {
            a: DVec3::new(-0.3, 1.0, z),
            b: DVec3::new(0.3, 1.0, z),
            radius: 0.05,
        };
        let mut z = -0.45;
        c.update(1.0 / 60.0, &p, &[arm(z)], DVec3::ZERO).unwrap();
        for _ in 0..6 {
            z += 5.0 / 60.0;
            c.update(1.0 / 60.0, &p, &[arm(z)], DVec3::ZERO).unwrap();
        }
        // Vertices in the arm's path: none left behind it.
        c.positions()
            .iter()
            .zip(&rest)
            .filter(|(_, r)| (f64::from(r[1]) - 1.0).abs() < 0.03 && r[0].abs() < 0.15)
            .filter(|(x, _)| x.z < z)
            .count()
    };
    assert_eq!(
        run(ClothMaterial::default()),
        0,
        "tunnelled with interpolation"
    );
    let crude = ClothMaterial {
        substeps: 1,
        motion_steps: 1,
        ..Default::default()
    };
    assert!(
        run(crude) > 0,
        "the crude solver should tunnel (else the check cannot fail)"
    );
}

#[test]
fn fast_pins_stretch_it_and_it_settles_within_two_seconds() {
    let (rest, tris) = cape(9, 17);
    let mut c = Cloth::new(&rest, &tris, 0.001, [0.0, 0.5], ClothMaterial::default()).unwrap();
    let mut x = 0.0;
    let mut peak: f64 = 0.0;
    c.update(
        1.0 / 60.0,
        &places(&rest, DMat4::IDENTITY),
        &[],
        DVec3::ZERO,
    )
    .unwrap();
    // A 0.2 s burst at 20 m/s sideways, then still.
    for f in 0..180 {
        if f < 12 {
            x += 20.0 / 60.0;
        }
        let r = c
            .update(
                1.0 / 60.0,
                &places(&rest, DMat4::from_translation(DVec3::new(x, 0.0, 0.0))),
                &[],
                DVec3::ZERO,
            )
            .unwrap();
        assert!(!r.teleported);
        if f < 12 {
            peak = peak.max(r.max_stretch);
        }
        if f >= 12 + 120 {
            assert!(
                r.max_stretch < 0.01,
                "frame {f}: still stretched {}",
                r.max_stretch
            );
        }
    }
    assert!(peak > 0.01, "a 20 m/s burst should stretch it ({peak})");
}

#[test]
fn a_teleport_carries_it_and_runs_repeat() {
    let (rest, tris) = cape(9, 17);
    let run = || {
        let mut c = Cloth::new(&rest, &tris, 0.001, [0.0, 0.3], ClothMaterial::default()).unwrap();
        let mut reports = Vec::new();
        for f in 0..60 {
            let m = if f < 30 {
                DMat4::IDENTITY
            } else {
                DMat4::from_translation(DVec3::new(0.0, 0.0, 8.0))
            };
            reports.push(
                c.update(
                    1.0 / 60.0,
                    &places(&rest, m),
                    &[],
                    DVec3::new(2.0, 0.0, 0.0),
                )
                .unwrap(),
            );
        }
        (c.positions().to_vec(), reports)
    };
    let (a, ra) = run();
    let (b, rb) = run();
    assert_eq!(a, b, "two runs differ");
    assert!(ra[30].teleported && !ra[29].teleported && !ra[31].teleported);
    assert!(
        ra[30].max_stretch < 0.01,
        "the teleport stretched it: {}",
        ra[30].max_stretch
    );
    assert_eq!(ra, rb);
}

#[test]
fn bad_cloth_is_refused() {
    let (rest, tris) = cape(3, 3);
    let m = ClothMaterial::default();
    assert!(Cloth::new(&rest, &[[0, 1, 99]], 0.0, [0.0, 0.1], m).is_err());
    assert!(Cloth::new(&[], &tris, 0.0, [0.0, 0.1], m).is_err());
    let bad = ClothMaterial { substeps: 0, ..m };
    assert!(Cloth::new(&rest, &tris, 0.0, [0.0, 0.1], bad).is_err());
    let mut c = Cloth::new(&rest, &tris, 0.0, [0.0, 0.1], m).unwrap();
    assert!(
        c.update(-1.0, &places(&rest, DMat4::IDENTITY), &[], DVec3::ZERO)
            .is_err()
    );
    assert!(c.update(0.1, &[], &[], DVec3::ZERO).is_err());
}
