//! The built-in sample head: structure, geometry, the 52 ARKit targets (names, extent, left/right
//! mirror symmetry, what the key shapes do), all checked against quantities recomputed here from
//! the primitives (f64 references, landmark queries), plus a property test that mirroring the
//! weights mirrors the pose.

use std::collections::HashMap;
use std::sync::OnceLock;

use mien_core::anim::arkit::{ARKIT_52, ARKIT_COUNT, arkit_index};
use mien_core::rig::{Character, Primitive, RigData};
use mien_core::sample::{SampleLandmarks, SamplePart, sample_head, sample_landmarks, sample_name};
use proptest::prelude::*;

fn head() -> &'static Character {
    static HEAD: OnceLock<Character> = OnceLock::new();
    HEAD.get_or_init(sample_head)
}

fn landmarks() -> &'static SampleLandmarks {
    static LM: OnceLock<SampleLandmarks> = OnceLock::new();
    LM.get_or_init(sample_landmarks)
}

fn prims() -> &'static [Primitive] {
    &head().meshes[0].primitives
}

fn prim(part: SamplePart) -> &'static Primitive {
    &prims()[part.primitive()]
}

/// Posed positions and normals of every primitive for `weights` `(52,)`.
type Pose = Vec<(Vec<[f32; 3]>, Vec<[f32; 3]>)>;

fn pose(weights: &[f32]) -> Pose {
    prims()
        .iter()
        .map(|p| {
            let (pos, nrm, _) = p
                .morph
                .apply(weights, &p.positions, &p.normals, &[])
                .expect("apply");
            (pos, nrm)
        })
        .collect()
}

fn one_hot(name: &str, w: f32) -> Vec<f32> {
    let mut v = vec![0.0; ARKIT_COUNT];
    v[arkit_index(name).expect("ARKit name")] = w;
    v
}

fn d3(a: [f32; 3], b: [f32; 3]) -> f64 {
    let d: Vec<f64> = (0..3).map(|k| f64::from(a[k]) - f64::from(b[k])).collect();
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

fn mirror(p: [f32; 3]) -> [f32; 3] {
    [-p[0], p[1], p[2]]
}

/// For every vertex (primitive, index), the vertex nearest its mirror image through x = 0, found
/// through a 1 mm hash grid over all primitives' rest positions.
fn mirror_map() -> &'static Vec<Vec<(usize, usize)>> {
    static MAP: OnceLock<Vec<Vec<(usize, usize)>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let key = |p: [f32; 3]| p.map(|x| (x * 1000.0).floor() as i64);
        let mut grid: HashMap<[i64; 3], Vec<(usize, usize)>> = HashMap::new();
        for (pi, p) in prims().iter().enumerate() {
            for (v, &x) in p.positions.iter().enumerate() {
                grid.entry(key(x)).or_default().push((pi, v));
            }
        }
        prims()
            .iter()
            .map(|p| {
                p.positions
                    .iter()
                    .map(|&x| {
                        let m = mirror(x);
                        let k = key(m);
                        let mut best = ((usize::MAX, usize::MAX), f64::INFINITY);
                        for dx in -1..=1 {
                            for dy in -1..=1 {
                                for dz in -1..=1 {
                                    for &(pj, u) in grid
                                        .get(&[k[0] + dx, k[1] + dy, k[2] + dz])
                                        .map(Vec::as_slice)
                                        .unwrap_or(&[])
                                    {
                                        let d = d3(prims()[pj].positions[u], m);
                                        if d < best.1 {
                                            best = ((pj, u), d);
                                        }
                                    }
                                }
                            }
                        }
                        assert!(
                            best.1 < 1e-6,
                            "vertex at {x:?} has no mirror partner (nearest {} m)",
                            best.1
                        );
                        best.0
                    })
                    .collect()
            })
            .collect()
    })
}

#[test]
fn validates_and_flattens() {
    let c = head();
    c.validate().expect("character validates");
    assert_eq!(c.source, sample_name());
    assert_eq!(c.meshes.len(), 1);
    assert_eq!(prims().len(), SamplePart::ALL.len());
    let rig = RigData::from_character(c).expect("flattens");
    rig.validate().expect("rig validates");
    assert_eq!(rig.weight_count as usize, ARKIT_COUNT);
    let nv = rig.vertex_count();
    assert!((6_000..=16_000).contains(&nv), "{nv} vertices");
    for p in prims() {
        assert_eq!(p.colors.len(), p.positions.len());
        assert_eq!(p.normals.len(), p.positions.len());
        assert!(p.colors.iter().flatten().all(|c| (0.0..=1.0).contains(c)));
        assert!(p.influences.is_none());
    }
    // About 0.25 m tall with the neck, 0.17 m wide across the ears, centred near the origin.
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in &rig.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let size: Vec<f32> = (0..3).map(|k| hi[k] - lo[k]).collect();
    assert!(
        (0.2..0.28).contains(&size[1])
            && (0.14..0.19).contains(&size[0])
            && (0.18..0.26).contains(&size[2]),
        "{size:?}"
    );
    assert!((lo[0] + hi[0]).abs() < 1e-6, "symmetric in x");
}

#[test]
fn targets_are_the_52_arkit_names_and_move_at_most_3_cm() {
    let mesh = &head().meshes[0];
    assert_eq!(mesh.target_names, ARKIT_52.map(String::from).to_vec());
    assert!(
        mesh.default_weights.iter().all(|&w| w == 0.0) && mesh.default_weights.len() == ARKIT_COUNT
    );
    let rest = pose(&[0.0; ARKIT_COUNT]);
    for (t, name) in ARKIT_52.iter().enumerate() {
        let posed = pose(&one_hot(name, 1.0));
        let max = posed
            .iter()
            .zip(&rest)
            .flat_map(|(a, b)| a.0.iter().zip(&b.0).map(|(x, y)| d3(*x, *y)))
            .fold(0.0, f64::max);
        assert!(
            max > 1e-4 && max <= 0.03,
            "{name}: max displacement {max} m"
        );
        let entries: usize = prims()
            .iter()
            .map(|p| {
                p.morph
                    .entry_target()
                    .iter()
                    .filter(|&&e| e as usize == t)
                    .count()
            })
            .sum();
        assert!(entries > 0, "{name} is empty");
    }
}

#[test]
fn right_shapes_mirror_left_shapes() {
    let map = mirror_map();
    let rest = pose(&[0.0; ARKIT_COUNT]);
    for name in ARKIT_52.iter().filter(|n| n.ends_with("Left")) {
        let right = name.replace("Left", "Right");
        let (pl, pr) = (pose(&one_hot(name, 1.0)), pose(&one_hot(&right, 1.0)));
        for (pi, m) in map.iter().enumerate() {
            for (v, &(pj, u)) in m.iter().enumerate() {
                let dr: Vec<f64> = (0..3)
                    .map(|k| f64::from(pr[pi].0[v][k]) - f64::from(rest[pi].0[v][k]))
                    .collect();
                let dl: Vec<f64> = (0..3)
                    .map(|k| f64::from(pl[pj].0[u][k]) - f64::from(rest[pj].0[u][k]))
                    .collect();
                let err =
                    ((dr[0] + dl[0]).powi(2) + (dr[1] - dl[1]).powi(2) + (dr[2] - dl[2]).powi(2))
                        .sqrt();
                assert!(
                    err < 1e-6,
                    "{right} at primitive {pi} vertex {v}: {dr:?} vs mirrored {dl:?}"
                );
                let nl = mirror(pl[pj].1[u]);
                assert!(
                    d3(pr[pi].1[v], nl) < 1e-5,
                    "{right} normal at primitive {pi} vertex {v}"
                );
            }
        }
    }
}

#[test]
fn normals_are_unit_and_outward() {
    for p in prims() {
        for n in &p.normals {
            let l = d3(*n, [0.0; 3]);
            assert!((l - 1.0).abs() < 1e-5, "normal length {l}");
        }
    }
    // Skin: outward from the centre of its bounding box, but for the lip and lid edges that roll in.
    let skin = prim(SamplePart::Skin);
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in &skin.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let c: Vec<f32> = (0..3).map(|k| 0.5 * (lo[k] + hi[k])).collect();
    let outward = skin
        .positions
        .iter()
        .zip(&skin.normals)
        .filter(|(p, n)| (0..3).map(|k| (p[k] - c[k]) * n[k]).sum::<f32>() > 0.0)
        .count();
    let frac = outward as f64 / skin.positions.len() as f64;
    assert!(frac > 0.98, "only {frac} of skin normals point outward");
    // Eyeballs: every normal points away from the eye centre.
    let lm = landmarks();
    for (part, e) in [
        (SamplePart::EyeLeft, lm.eye_centres[0]),
        (SamplePart::EyeRight, lm.eye_centres[1]),
    ] {
        let p = prim(part);
        for (x, n) in p.positions.iter().zip(&p.normals) {
            assert!(
                (0..3).map(|k| (x[k] - e[k]) * n[k]).sum::<f32>() > 0.0,
                "{part:?} normal at {x:?}"
            );
        }
    }
}

#[test]
fn triangles_are_in_range_and_not_degenerate() {
    for (pi, p) in prims().iter().enumerate() {
        assert_eq!(p.indices.len() % 3, 0);
        for t in p.indices.chunks_exact(3) {
            assert!(
                t.iter().all(|&i| (i as usize) < p.positions.len()),
                "primitive {pi}: {t:?}"
            );
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| p.positions[i as usize].map(f64::from));
            let (u, v) = (
                [b[0] - a[0], b[1] - a[1], b[2] - a[2]],
                [c[0] - a[0], c[1] - a[1], c[2] - a[2]],
            );
            let n = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            let area = 0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!(
                area > 1e-10,
                "primitive {pi}: degenerate triangle {t:?} (area {area} m²)"
            );
        }
    }
}

/// The skin vertex nearest `q` at rest.
fn nearest_skin(q: [f32; 3]) -> usize {
    let skin = prim(SamplePart::Skin);
    (0..skin.positions.len())
        .min_by(|&a, &b| d3(skin.positions[a], q).total_cmp(&d3(skin.positions[b], q)))
        .expect("skin has vertices")
}

#[test]
fn jaw_open_parts_the_lips_by_more_than_a_centimetre() {
    let lm = landmarks();
    let (up, lo) = (nearest_skin(lm.upper_lip), nearest_skin(lm.lower_lip));
    assert_ne!(up, lo);
    let rest = &prim(SamplePart::Skin).positions;
    assert!(rest[up][1] > rest[lo][1], "upper lip above lower lip");
    let open = pose(&one_hot("jawOpen", 1.0));
    let skin = &open[SamplePart::Skin.primitive()].0;
    let gap = d3(skin[up], skin[lo]) - d3(rest[up], rest[lo]);
    assert!(gap > 0.01, "lips part by {gap} m");
    // mouthClose with the jaw open brings them back within 3 mm.
    let mut w = one_hot("jawOpen", 1.0);
    w[arkit_index("mouthClose").expect("name")] = 1.0;
    let closed = pose(&w);
    let s = &closed[SamplePart::Skin.primitive()].0;
    assert!(
        d3(s[up], s[lo]) < 0.003,
        "mouthClose leaves {} m",
        d3(s[up], s[lo])
    );
    // The lower teeth follow the jaw; the upper teeth do not move.
    let lower_teeth_drop = open[SamplePart::TeethLower.primitive()].0[0][1]
        - prim(SamplePart::TeethLower).positions[0][1];
    assert!(lower_teeth_drop < -0.005, "{lower_teeth_drop}");
    assert_eq!(
        open[SamplePart::TeethUpper.primitive()].0,
        prim(SamplePart::TeethUpper).positions
    );
}

#[test]
fn blink_left_closes_the_left_lid_and_leaves_the_right_eye_alone() {
    let lm = landmarks();
    let (e, r) = (lm.eye_centres[0], lm.eye_radius);
    let skin = prim(SamplePart::Skin);
    // The upper lid margin above the eye's centre: the lowest skin vertex above the centre, in front.
    let margin = (0..skin.positions.len())
        .filter(|&v| {
            let p = skin.positions[v];
            (p[0] - e[0]).abs() < 0.0025 && p[1] > e[1] && p[2] > e[2] + 0.5 * r
        })
        .min_by(|&a, &b| skin.positions[a][1].total_cmp(&skin.positions[b][1]))
        .expect("an upper lid");
    let rest = skin.positions[margin];
    assert!(
        rest[1] > e[1] + 0.003,
        "the eye is open at rest: margin {} m above the centre",
        rest[1] - e[1]
    );
    let blink = pose(&one_hot("eyeBlinkLeft", 1.0));
    let p = blink[SamplePart::Skin.primitive()].0[margin];
    assert!(
        p[1] < e[1],
        "lid margin at {} m relative to the eye centre",
        p[1] - e[1]
    );
    assert!(d3(p, e) > f64::from(r), "lid inside the eyeball");
    assert!(p[2] > e[2] + 0.9 * r, "lid in front of the eye");
    // Everything within 25 mm of the right eye is bit-identical to the rest pose.
    let rest_pose = pose(&[0.0; ARKIT_COUNT]);
    let right = lm.eye_centres[1];
    let mut checked = 0;
    for (pi, p) in prims().iter().enumerate() {
        for v in 0..p.positions.len() {
            if d3(p.positions[v], right) < 0.025 {
                assert_eq!(
                    blink[pi].0[v], rest_pose[pi].0[v],
                    "primitive {pi} vertex {v} moved"
                );
                assert_eq!(
                    blink[pi].1[v], rest_pose[pi].1[v],
                    "primitive {pi} vertex {v} normal changed"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// The front-most vertex of an eyeball (its pupil centre) at rest, and its angle from +Z after
/// `weights`, with the sign of its x motion.
fn pupil_turn(part: SamplePart, centre: [f32; 3], weights: &[f32]) -> (f64, f32) {
    let p = prim(part);
    let front = (0..p.positions.len())
        .max_by(|&a, &b| p.positions[a][2].total_cmp(&p.positions[b][2]))
        .expect("vertices");
    let q = pose(weights)[part.primitive()].0[front];
    let d: Vec<f64> = (0..3)
        .map(|k| f64::from(q[k]) - f64::from(centre[k]))
        .collect();
    let angle = (d[2] / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()).acos();
    (angle, q[0] - p.positions[front][0])
}

#[test]
fn gaze_shapes_turn_each_eye_toward_its_own_side() {
    let lm = landmarks();
    let [l, r] = lm.eye_centres;
    // Looking to the character's left (+X): the left eye looks out, the right eye looks in.
    for (part, centre, name) in [
        (SamplePart::EyeLeft, l, "eyeLookOutLeft"),
        (SamplePart::EyeRight, r, "eyeLookInRight"),
    ] {
        let (angle, dx) = pupil_turn(part, centre, &one_hot(name, 1.0));
        assert!(
            (0.35..0.55).contains(&angle) && dx > 0.0,
            "{name}: {angle} rad, dx {dx}"
        );
    }
    for (part, centre, name) in [
        (SamplePart::EyeLeft, l, "eyeLookInLeft"),
        (SamplePart::EyeRight, r, "eyeLookOutRight"),
    ] {
        let (angle, dx) = pupil_turn(part, centre, &one_hot(name, 1.0));
        assert!(
            (0.35..0.55).contains(&angle) && dx < 0.0,
            "{name}: {angle} rad, dx {dx}"
        );
    }
    // Up and down move the pupil in y; the other eye stays.
    let up = pose(&one_hot("eyeLookUpLeft", 1.0));
    let eye = prim(SamplePart::EyeLeft);
    let front = (0..eye.positions.len())
        .max_by(|&a, &b| eye.positions[a][2].total_cmp(&eye.positions[b][2]))
        .expect("vertices");
    assert!(up[SamplePart::EyeLeft.primitive()].0[front][1] > eye.positions[front][1] + 0.003);
    assert_eq!(
        up[SamplePart::EyeRight.primitive()].0,
        prim(SamplePart::EyeRight).positions
    );
}

#[test]
fn tongue_out_pushes_the_tongue_forward_and_the_mouth_interior_sits_behind_the_lips() {
    let lm = landmarks();
    let tongue = prim(SamplePart::Tongue);
    let tip = (0..tongue.positions.len())
        .max_by(|&a, &b| tongue.positions[a][2].total_cmp(&tongue.positions[b][2]))
        .expect("vertices");
    let out = pose(&one_hot("tongueOut", 1.0));
    let forward = out[SamplePart::Tongue.primitive()].0[tip][2] - tongue.positions[tip][2];
    assert!(forward > 0.02, "tongue tip moves {forward} m forward");
    for part in [
        SamplePart::MouthCavity,
        SamplePart::TeethUpper,
        SamplePart::TeethLower,
        SamplePart::Tongue,
    ] {
        for p in &prim(part).positions {
            assert!(
                p[2] < lm.upper_lip[2] && p[2] < lm.lower_lip[2],
                "{part:?} vertex {p:?} in front of the lips"
            );
        }
    }
}

#[test]
fn landmarks_agree_with_the_mesh() {
    let lm = landmarks();
    assert!(lm.eye_centres[0][0] > 0.0 && lm.eye_centres[1][0] == -lm.eye_centres[0][0]);
    assert!(lm.mouth_corners[0][0] > 0.015 && lm.mouth_corners[1][0] == -lm.mouth_corners[0][0]);
    assert!(lm.upper_lip[0] == 0.0 && lm.lower_lip[0] == 0.0);
    assert!(lm.nose_tip[2] > lm.upper_lip[2] && lm.nose_tip[1] > lm.upper_lip[1]);
    assert!(lm.jaw_hinge[2] < lm.eye_centres[0][2] && lm.jaw_hinge[1] < lm.eye_centres[0][1]);
    // The eyeball primitive's vertices lie within 1.5 mm of the eye sphere.
    for p in &prim(SamplePart::EyeLeft).positions {
        let d = d3(*p, lm.eye_centres[0]) - f64::from(lm.eye_radius);
        assert!(d.abs() < 0.0015, "{d}");
    }
}

/// The weights with every `…Left` and `…Right` pair swapped.
fn swap_sides(w: &[f32]) -> Vec<f32> {
    ARKIT_52
        .iter()
        .map(|n| {
            let other = if let Some(s) = n.strip_suffix("Left") {
                format!("{s}Right")
            } else if let Some(s) = n.strip_suffix("Right") {
                format!("{s}Left")
            } else {
                n.to_string()
            };
            w[arkit_index(&other).expect("paired name")]
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any weight vector with the sides swapped poses the mirror image of the original pose.
    #[test]
    fn swapping_sides_mirrors_the_pose(w in proptest::collection::vec(prop_oneof![Just(0.0f32), 0.0f32..1.0], ARKIT_COUNT)) {
        let map = mirror_map();
        let (a, b) = (pose(&w), pose(&swap_sides(&w)));
        for (pi, m) in map.iter().enumerate() {
            for (v, &(pj, u)) in m.iter().enumerate() {
                let x = a[pi].0[v];
                prop_assert!(x.iter().all(|c| c.is_finite()));
                prop_assert!(d3(x, mirror(b[pj].0[u])) < 2e-6, "primitive {} vertex {}", pi, v);
            }
        }
    }
}
