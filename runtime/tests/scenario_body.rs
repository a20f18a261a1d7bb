//! Scenarios through the library (issue 26 item 5): an embedder runs the shipped body scenarios
//! with `mien_runtime::scenario` exactly as `mien scenario run` does; the body steps (walk,
//! transform, ground, wind) and assertions (`bone_y`, `foot_slide`, `chain_tip`) are checked
//! before anything runs, and each assertion can fail.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mien_runtime::scenario::{self, Problem, Report};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// Write `body` as a scenario in the repository's `scenarios/` folder (so the shipped relative
/// paths resolve) under a unique name; removed on drop.
struct Temp(PathBuf);
impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
fn temp(name: &str, body: &serde_json::Value) -> Temp {
    let p = repo(&format!(
        "scenarios/.test-{name}-{}.scenario.json",
        std::process::id()
    ));
    std::fs::write(&p, serde_json::to_vec_pretty(body).unwrap()).unwrap();
    Temp(p)
}

fn run(path: &Path) -> Report {
    let mut plan =
        scenario::prepare(path, false).unwrap_or_else(|p| panic!("{}: {p:#?}", path.display()));
    let (report, images) = scenario::run_twice(&mut plan, vec![], Duration::ZERO, &|| false)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(images.is_empty(), "no captures without rendering");
    report
}

fn problems(path: &Path) -> Vec<Problem> {
    match scenario::prepare(path, false) {
        Ok(_) => panic!("{} was accepted", path.display()),
        Err(p) => p,
    }
}

fn outcome<'a>(r: &'a Report, kind: &str) -> Vec<&'a scenario::exec::Outcome> {
    r.assertions.iter().filter(|o| o.kind == kind).collect()
}

#[test]
fn the_walker_keeps_its_feet_planted_over_a_step_and_a_slope() {
    let r = run(&repo("scenarios/rpm_walk.scenario.json"));
    assert!(r.passed, "{:#?}", r.failures);
    assert!(r.repeat_matched);
    // Every foot-slide window had planted frames and slid under a millimetre horizontally.
    let slides = outcome(&r, "foot_slide");
    assert_eq!(slides.len(), 6);
    for o in slides {
        let frames = o.actual["planted_frames"].as_u64().unwrap();
        let slide = o.actual["slide_m"].as_f64().unwrap();
        assert!(
            frames >= 5,
            "{} at {}: {frames} planted frames",
            o.what,
            o.t
        );
        assert!(slide < 1e-3, "{} at {}: {slide} m", o.what, o.t);
    }
    // The goldens of the step and the slope were compared.
    assert_eq!(outcome(&r, "golden").len(), 2);
    // Hashes of different moments differ.
    let mut h: Vec<&str> = r.hashes.iter().map(|h| h.hash.as_str()).collect();
    h.truncate(3);
    h.dedup();
    assert_eq!(h.len(), 3, "{:?}", r.hashes);
}

#[test]
fn the_built_in_body_walks_over_a_step_and_a_slope_and_talks() {
    let r = run(&repo("scenarios/builtin_body.scenario.json"));
    assert!(r.passed, "{:#?}", r.failures);
    assert!(r.repeat_matched);
    for o in outcome(&r, "foot_slide") {
        assert!(o.actual["planted_frames"].as_u64().unwrap() >= 20, "{o:?}");
    }
    assert_eq!(outcome(&r, "golden").len(), 2);
    assert_eq!(outcome(&r, "chain_tip").len(), 2);
}

#[test]
fn godette_walks_over_a_step_and_a_slope_with_her_retargeted_walk() {
    let r = run(&repo("scenarios/godette_walk.scenario.json"));
    assert!(r.passed, "{:#?}", r.failures);
    assert!(r.repeat_matched);
    for o in outcome(&r, "foot_slide") {
        assert!(o.actual["planted_frames"].as_u64().unwrap() >= 10, "{o:?}");
    }
    assert_eq!(outcome(&r, "golden").len(), 2);
}

#[test]
fn godettes_spring_bones_blow_in_the_wind_and_follow_a_teleport_without_a_whip() {
    let r = run(&repo("scenarios/godette_springs.scenario.json"));
    assert!(r.passed, "{:#?}", r.failures);
    assert!(r.repeat_matched);
    let tips = outcome(&r, "chain_tip");
    let x = |i: usize| tips[i].actual.as_f64().unwrap();
    // x of the two groups' tips: settled (0, 1), blown toward +X by the wind (3, 4), back (5, 6),
    // teleported 10 m (7, 8).
    assert!(x(3) - x(0) > 0.08 && x(4) - x(1) > 0.08, "{tips:#?}");
    assert!((x(7) - x(5) - 10.0).abs() < 1e-3, "{} → {}", x(5), x(7));
    assert!((x(8) - x(6) - 10.0).abs() < 1e-3, "{} → {}", x(6), x(8));
}

#[test]
fn a_walk_without_stance_locking_fails_the_foot_slide_assertion() {
    // The same walk with stance locking switched off (`stance: null`): no foot is ever planted, and the
    // assertion says so instead of passing on nothing.
    let dir = tempfile::tempdir().unwrap();
    let mut def = serde_json::json!({
        "format": "mien-foot-ik", "version": 1, "pelvis": "Hips",
        "legs": [
            {"hip": "LeftUpLeg", "knee": "LeftLeg", "ankle": "LeftFoot"},
            {"hip": "RightUpLeg", "knee": "RightLeg", "ankle": "RightFoot"}
        ],
        "stance": null
    });
    let foot = dir.path().join("no-plant.foot-ik.json");
    std::fs::write(&foot, def.to_string()).unwrap();
    let s = temp(
        "noplant",
        &serde_json::json!({
            "format": "mien-scenario", "version": 1,
            "character": "../docs/characters/rpm_walker.character.json",
            "body": {"foot_ik": foot.display().to_string()},
            "steps": [
                {"walk": {"speed": 1.2}},
                {"step": {"frames": 60, "dt": 0.03333333333333333}},
                {"assert": {"kind": "foot_slide", "foot": "LeftFoot", "max": 0.01}}
            ]
        }),
    );
    let r = run(&s.0);
    assert!(!r.passed);
    let o = &outcome(&r, "foot_slide")[0];
    assert!(!o.passed);
    assert_eq!(o.actual["planted_frames"], 0, "{o:?}");
    // With the default stance it passes (the same file, stance left out).
    def.as_object_mut().unwrap().remove("stance");
    std::fs::write(&foot, def.to_string()).unwrap();
    assert!(run(&s.0).passed);
}

#[test]
fn a_short_move_whips_the_chains_and_a_teleport_does_not() {
    // 1 m in one frame is under the 3 m teleport distance: the tips lag behind (inertia);
    // 10 m resets them onto the character.
    let lag = |dx: f64| {
        let s = temp(
            &format!("move{dx}"),
            &serde_json::json!({
                "format": "mien-scenario", "version": 1,
                "character": "../../shared/data/vrm/Godette_vrm_v4.vrm",
                "steps": [
                    {"step": {"frames": 60, "dt": 0.03333333333333333}},
                    {"assert": {"kind": "chain_tip", "spring": "boneGroups[1] #0", "axis": "x", "min": -1}},
                    {"transform": {"position": [dx, 0, 0]}},
                    {"step": {"frames": 1, "dt": 0.03333333333333333}},
                    {"assert": {"kind": "chain_tip", "spring": "boneGroups[1] #0", "axis": "x", "min": -1}}
                ]
            }),
        );
        let r = run(&s.0);
        let tips = outcome(&r, "chain_tip");
        dx - (tips[1].actual.as_f64().unwrap() - tips[0].actual.as_f64().unwrap())
    };
    let (short, far) = (lag(1.0), lag(10.0));
    assert!(
        short > 0.01,
        "a 1 m move should leave the tip behind: lag {short} m"
    );
    assert!(
        far.abs() < 1e-3,
        "a 10 m teleport should carry the tip: lag {far} m"
    );
}

#[test]
fn body_steps_and_assertions_the_character_cannot_have_are_refused_at_once() {
    let s = temp(
        "bad",
        &serde_json::json!({
            "format": "mien-scenario", "version": 1,
            "character": "../../shared/data/vrm/Godette_vrm_v4.vrm",
            "body": {"springs": "off"},
            "steps": [
                {"ground": "slope:10"},
                {"wind": [1, 0, 0]},
                {"assert": {"kind": "foot_slide", "foot": "LeftFoot", "max": 0.01}},
                {"assert": {"kind": "chain_tip", "spring": "hair", "axis": "y", "min": 0}},
                {"assert": {"kind": "bone_y", "node": "Hipz", "min": 0}}
            ]
        }),
    );
    let p = problems(&s.0);
    let at: Vec<&str> = p.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(
        at,
        [
            "/steps/0/ground",
            "/steps/1/wind",
            "/steps/2/assert/foot",
            "/steps/3/assert/spring",
            "/steps/4/assert/node"
        ],
        "{p:#?}"
    );
    assert!(p[0].message.contains("foot placement"), "{}", p[0].message);
    assert!(p[1].message.contains("spring bones"), "{}", p[1].message);
    // With springs on, an unknown spring is named with the ones there are.
    let s = temp(
        "badspring",
        &serde_json::json!({
            "format": "mien-scenario", "version": 1,
            "character": "../../shared/data/vrm/Godette_vrm_v4.vrm",
            "body": {"springs": "on", "foot_ik": "auto"},
            "steps": [
                {"assert": {"kind": "chain_tip", "spring": "hair", "axis": "y", "min": 0}},
                {"assert": {"kind": "foot_slide", "foot": "Hips", "max": 0.01}}
            ]
        }),
    );
    let p = problems(&s.0);
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p[0].message.contains("boneGroups[1] #0"),
        "{}",
        p[0].message
    );
    assert!(
        p[1].message.contains("is not the ankle"),
        "{}",
        p[1].message
    );
    // Walking past 10⁶ m from the origin is refused at the step that would do it.
    let s = temp(
        "far",
        &serde_json::json!({
            "format": "mien-scenario", "version": 1, "character": "builtin-body",
            "steps": [
                {"walk": {"speed": 100}},
                {"step": {"frames": 100000, "dt": 1}},
                {"step": {"frames": 1, "dt": 1}}
            ]
        }),
    );
    let p = problems(&s.0);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert_eq!(p[0].pointer, "/steps/1/step/frames");
    assert!(p[0].to_string().contains("past 1 000 000 m"), "{}", p[0]);
}
