//! Baking small folders of blendshape OBJs written here: the documented bake (units, regions,
//! names, scales, topology, texture coordinates) and every refusal, each naming the file, line and
//! field: a different vertex count or topology, a non-numeric or non-finite coordinate, a bad face
//! index, an empty folder, no or two neutrals, nothing to bake, duplicate shape names in any
//! spelling, undetectable units, a bad eyeball range. The real ICT-FaceKit head: `gnm_bake_ict.rs`.

use std::path::Path;

use mien_core::Error;
use mien_core::gnm::bake::{BakeOptions, EyeSource, Units, bake_obj_folder};

/// A folder with a 4-vertex neutral (a quad, in cm) and the given extra files.
fn folder(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("head_neutral.obj"), "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 2/2 3/3 4/4\n").unwrap();
    for (name, text) in extra {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

fn bake_err(dir: &Path) -> Error {
    bake_obj_folder(dir, &BakeOptions::default(), &mut |_, _, _| {}).unwrap_err()
}

#[test]
fn a_small_folder_bakes_as_documented() {
    let d = folder(&[
        (
            "jawOpen.obj",
            "v 0 -1 0\nv 10 -1 0\nv 10 10 0\nv 0 10 0.5\n",
        ),
        ("smirk.obj", "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0\n"),
        ("notes.txt", "x"),
    ]);
    let b = bake_obj_folder(d.path(), &BakeOptions::default(), &mut |_, _, _| {}).unwrap();
    let p = &b.pack;
    // Largest extent 10 → centimetres.
    assert_eq!(b.report.units.input, "cm");
    assert_eq!(p.neutral[2], [0.1, 0.1, 0.0]);
    assert_eq!(
        p.header.head_ext.regions,
        [("lower_face".to_owned(), 1), ("other".to_owned(), 1)]
    );
    assert_eq!(p.header.names, ["jawOpen", "smirk"]);
    assert_eq!(
        b.report.fallback,
        [(
            "smirk".to_owned(),
            "no region rule matches the name".to_owned()
        )]
    );
    assert_eq!(b.report.empty, ["smirk"]);
    assert_eq!(p.basis_scale, [0.01, 0.0]);
    assert_eq!(
        [
            p.basis_at(0, 0, 1),
            p.basis_at(3, 0, 2),
            p.basis_at(3, 0, 1)
        ],
        [-1.0, 0.5, 0.0]
    );
    assert_eq!(p.quads, Some(vec![[0, 1, 2, 3]]));
    assert_eq!(p.faces, [[0, 1, 2], [0, 2, 3]]);
    assert_eq!(p.uv.as_ref().map(|u| u[2]), Some([1.0, 1.0]));
    assert_eq!(p.eye_weights, vec![0.0; 8]);
    assert_eq!(b.report.unmapped, ["smirk"]);
}

#[test]
fn bad_folders_are_refused_naming_file_line_and_field() {
    // A shape with a different vertex count.
    let d = folder(&[("jawOpen.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\n")]);
    let e = bake_err(d.path());
    assert!(
        matches!(&e, Error::Format { file, field, .. } if file.ends_with("jawOpen.obj") && field == "v"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("3 vertices, the neutral head_neutral.obj has 4"),
        "{e}"
    );
    // A non-numeric coordinate: file and line named.
    let d = folder(&[(
        "jawOpen.obj",
        "# shape\nv 0 0 0\nv 1 0 0\nv 1 1,5 0\nv 0 1 0\n",
    )]);
    let e = bake_err(d.path()).to_string();
    assert!(
        e.contains("jawOpen.obj: line 4: v.y: `1,5` is not a number"),
        "{e}"
    );
    // A face index out of range in the neutral.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("neutral.obj"),
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 4\n",
    )
    .unwrap();
    let e = bake_err(d.path()).to_string();
    assert!(
        e.contains("neutral.obj: line 4: f corner 3: vertex index 4 is outside the 3 defined"),
        "{e}"
    );
    // An empty folder; a folder without a neutral; two neutral candidates.
    let d = tempfile::tempdir().unwrap();
    let e = bake_err(d.path());
    assert!(
        matches!(&e, Error::Invalid { reason, .. } if reason.contains("no .obj files")),
        "{e}"
    );
    std::fs::write(d.path().join("jawOpen.obj"), "v 0 0 0\n").unwrap();
    let e = bake_err(d.path());
    assert!(
        matches!(&e, Error::Invalid { reason, .. } if reason.contains("neutral") && reason.contains("--neutral")),
        "{e}"
    );
    let d = folder(&[("neutral2.obj", "v 0 0 0\n")]);
    let e = bake_err(d.path()).to_string();
    assert!(e.contains("head_neutral.obj, neutral2.obj"), "{e}");
    // A neutral only: nothing to bake.
    let d = folder(&[]);
    assert!(bake_err(d.path()).to_string().contains("no shapes"));
    // Units: a 2 km neutral is neither metres nor centimetres.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("neutral.obj"), "v 0 0 0\nv 2000 0 0\n").unwrap();
    std::fs::write(d.path().join("a.obj"), "v 0 0 0\nv 2000 0 1\n").unwrap();
    assert!(bake_err(d.path()).to_string().contains("--units"));
    let ok = bake_obj_folder(
        d.path(),
        &BakeOptions {
            units: Units::Metres,
            ..Default::default()
        },
        &mut |_, _, _| {},
    )
    .unwrap();
    assert_eq!(ok.pack.neutral[1], [2000.0, 0.0, 0.0]);
    // An eyeball range outside the vertices.
    let e = bake_obj_folder(
        d.path(),
        &BakeOptions {
            units: Units::Metres,
            eyes: EyeSource::Range { first: 0, last: 5 },
            ..Default::default()
        },
        &mut |_, _, _| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("eyeballs 0-5"), "{e}");
}

/// The quad of [`folder`]'s neutral, vertex 3 moved 0.5 cm in z.
const MOVED: &str = "v 0 0 0\nv 10 0 0\nv 10 10 0\nv 0 10 0.5\n";

#[test]
fn shapes_must_share_the_neutrals_topology() {
    // The same four vertices in another order: the file, the polygon and both lists are named.
    let d = folder(&[("jawOpen.obj", &format!("{MOVED}f 1 2 4 3\n"))]);
    let e = bake_err(d.path());
    assert!(
        matches!(&e, Error::Format { file, field, index: Some(0), .. } if file.ends_with("jawOpen.obj") && field == "f"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("polygon 1 is `f 1 2 4 3`, the neutral head_neutral.obj has `f 1 2 3 4`"),
        "{e}"
    );
    // The quad split into two triangles: the first differs already.
    let d = folder(&[("jawOpen.obj", &format!("{MOVED}f 1 2 3\nf 1 3 4\n"))]);
    assert!(
        bake_err(d.path())
            .to_string()
            .contains("polygon 1 is `f 1 2 3`")
    );
    // The neutral's polygon and one more.
    let d = folder(&[("jawOpen.obj", &format!("{MOVED}f 1 2 3 4\nf 1 2 3\n"))]);
    let e = bake_err(d.path());
    assert!(matches!(&e, Error::Format { index: Some(1), .. }), "{e}");
    assert!(
        e.to_string()
            .contains("2 polygons, the neutral head_neutral.obj has 1"),
        "{e}"
    );
    // The same polygon with other texture coordinates, or no faces at all (noted), is accepted.
    let d = folder(&[
        (
            "jawOpen.obj",
            &format!("{MOVED}vt 0 0\nf 1/1 2/1 3/1 4/1\n"),
        ),
        ("mouthClose.obj", MOVED),
    ]);
    let b = bake_obj_folder(d.path(), &BakeOptions::default(), &mut |_, _, _| {}).unwrap();
    assert_eq!(b.pack.coeff_count(), 2);
    assert_eq!(
        b.report.notes,
        ["mouthClose.obj: no faces; its topology was not compared"]
    );
}

#[test]
fn non_finite_coordinates_and_duplicate_names_are_refused() {
    for (text, what) in [
        ("inf", "`inf` is not finite"),
        ("1e999", "`1e999` is not finite"),
        ("NaN", "`NaN` is not finite"),
        ("1e30", "1e30 is beyond ±1e6"),
    ] {
        let d = folder(&[(
            "jawOpen.obj",
            &format!("v 0 0 0\nv 10 {text} 0\nv 10 10 0\nv 0 10 0\n"),
        )]);
        let e = bake_err(d.path());
        assert!(
            e.to_string()
                .contains(&format!("jawOpen.obj: line 2: v.y: {what}")),
            "{e}"
        );
    }
    // One name twice (the extension's case differs), and two spellings of one ARKit channel, of
    // one half of a split channel, and of one custom name.
    for (a, b, why) in [
        (
            "jawOpen.obj",
            "jawOpen.OBJ",
            "two shapes are named `jawOpen`",
        ),
        (
            "eyeBlink_L.obj",
            "EyeBlinkLeft.obj",
            "`EyeBlinkLeft` and `eyeBlink_L` are the same shape (ARKit eyeBlinkLeft)",
        ),
        (
            "browInnerUp_L.obj",
            "BrowInnerUp_L.obj",
            "the Left half of ARKit browInnerUp",
        ),
        (
            "smirk_L.obj",
            "SMIRK_L.obj",
            "`SMIRK_L` and `smirk_L` are the same shape",
        ),
    ] {
        let d = folder(&[(a, MOVED), (b, MOVED)]);
        let e = bake_err(d.path());
        assert!(
            matches!(&e, Error::Invalid { reason, .. } if reason.contains(why)),
            "{e}"
        );
    }
}

/// A `.obj` entry that cannot be read as a shape (a dangling link, a folder) is refused by name,
/// never skipped: the pack would silently lack a shape the user meant to bake.
#[test]
fn an_obj_entry_that_is_not_a_regular_file_is_refused() {
    let d = folder(&[("jawOpen.obj", MOVED)]);
    std::os::unix::fs::symlink(
        d.path().join("gone.obj.txt"),
        d.path().join("mouthSmile_L.obj"),
    )
    .unwrap();
    let e = bake_err(d.path());
    assert!(
        matches!(&e, Error::Invalid { reason, .. } if reason.contains("mouthSmile_L.obj is not a readable regular file")),
        "{e}"
    );
    let d = folder(&[("jawOpen.obj", MOVED)]);
    std::fs::create_dir(d.path().join("mouthSmile_R.obj")).unwrap();
    let e = bake_err(d.path());
    assert!(
        e.to_string()
            .contains("mouthSmile_R.obj is not a readable regular file"),
        "{e}"
    );
}

/// `(units, neutral extent in file units) →` the unit read and its factor: an explicit unit wins;
/// `auto` reads metres below 5, centimetres from 5 to 100, and refuses above.
#[test]
fn the_unit_rule() {
    for (units, extent, want, factor) in [
        (Units::Auto, 0.3, "m", 1.0),
        (Units::Auto, 4.99, "m", 1.0),
        (Units::Auto, 5.0, "cm", 0.01),
        (Units::Auto, 100.0, "cm", 0.01),
        (Units::Metres, 250.0, "m", 1.0),
        (Units::Centimetres, 0.3, "cm", 0.01),
        (Units::Millimetres, 250.0, "mm", 0.001),
    ] {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("neutral.obj"),
            format!("v 0 0 0\nv {extent} 0 0\n"),
        )
        .unwrap();
        std::fs::write(
            d.path().join("jawOpen.obj"),
            format!("v 0 0 0\nv {extent} 2 0\n"),
        )
        .unwrap();
        let options = BakeOptions {
            units,
            ..Default::default()
        };
        let b = bake_obj_folder(d.path(), &options, &mut |_, _, _| {}).unwrap();
        let p = &b.pack;
        assert_eq!(
            (b.report.units.input.as_str(), b.report.units.to_metres),
            (want, factor),
            "{units:?} {extent}"
        );
        assert_eq!(p.neutral[1], [(extent * factor) as f32, 0.0, 0.0]);
        // A move of 2 file units is 2·factor metres: the scale, with the basis at 1.
        assert_eq!(
            (p.basis_scale[0], p.basis_at(1, 0, 1)),
            ((2.0 * factor) as f32, 1.0)
        );
        assert_eq!(p.header.units, "m");
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("neutral.obj"), "v 0 0 0\nv 100.5 0 0\n").unwrap();
    std::fs::write(d.path().join("jawOpen.obj"), "v 0 0 0\nv 100.5 2 0\n").unwrap();
    let e = bake_err(d.path());
    assert!(
        matches!(&e, Error::Invalid { what, reason } if what == "units" && reason.contains("100.5") && reason.contains("--units m, cm or mm")),
        "{e}"
    );
}
