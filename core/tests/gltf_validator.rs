//! The glTF importer against the official glTF-Validator's expected reports
//! (`../shared/data/gltf-validator/*.report.json`, Apache-2.0, KhronosGroup/glTF-Validator) and
//! against broken copies of facecap.glb (`../shared/data/corrupt/`).
//!
//! For every validator file: `numErrors > 0` ⇒ the import fails and its message contains the first
//! error's JSON pointer converted to mien's field syntax (`/meshes/0/weights` → `meshes[0].weights`);
//! `numErrors == 0` ⇒ the import succeeds. Nothing may panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use mien_core::io::gltf::{import_gltf, import_gltf_bytes};
use mien_core::rig::Character;

mod gltf_common;
use gltf_common::{data, stage};

/// `/meshes/0/primitives/1/targets` → `meshes[0].primitives[1].targets` (RFC 6901 unescaping).
fn pointer_to_field(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg.chars().all(|c| c.is_ascii_digit()) && !seg.is_empty() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// Import without letting a panic escape: `Err(message)` for a panic.
fn guarded(path: &Path) -> Result<mien_core::Result<Character>, String> {
    catch_unwind(AssertUnwindSafe(|| import_gltf(path))).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn pointer_conversion() {
    assert_eq!(pointer_to_field("/meshes/0/weights"), "meshes[0].weights");
    assert_eq!(
        pointer_to_field("/meshes/0/primitives/0/attributes/JOINTS_1"),
        "meshes[0].primitives[0].attributes.JOINTS_1"
    );
    assert_eq!(
        pointer_to_field("/accessors/0/extensions/KHR_mesh_quantization"),
        "accessors[0].extensions.KHR_mesh_quantization"
    );
    assert_eq!(pointer_to_field("/extensionsUsed/0"), "extensionsUsed[0]");
}

#[test]
fn every_validator_file_agrees_with_its_report() {
    let dir = data().join("gltf-validator");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gltf" || e == "glb"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        19,
        "the data set has 19 validator glTF files (DATA.md says 20)"
    );
    let mut failures = Vec::new();
    let (mut ok, mut err) = (0, 0);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let report: serde_json::Value = serde_json::from_slice(
            &std::fs::read(format!("{}.report.json", path.display())).unwrap(),
        )
        .unwrap();
        let num_errors = report["issues"]["numErrors"].as_u64().unwrap();
        let first_error = report["issues"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["severity"].as_u64() == Some(0))
            .map(|m| {
                (
                    m["code"].as_str().unwrap().to_string(),
                    pointer_to_field(m["pointer"].as_str().unwrap()),
                )
            });
        let (_keep, path) = stage(path);
        let path = &path;
        match (guarded(path), num_errors) {
            (Err(panic), _) => failures.push(format!("{name}: PANIC {panic}")),
            (Ok(Ok(c)), 0) => {
                ok += 1;
                assert_eq!(c.source, path.display().to_string());
            }
            (Ok(Ok(_)), n) => failures.push(format!(
                "{name}: imported, but the report has {n} errors, first {first_error:?}"
            )),
            (Ok(Err(e)), 0) => failures.push(format!(
                "{name}: refused ({e}), but the report has no errors"
            )),
            (Ok(Err(e)), _) => {
                err += 1;
                let (code, field) = first_error.clone().unwrap();
                let msg = e.to_string();
                if !msg.contains(&field) {
                    failures.push(format!(
                        "{name}: error does not name `{field}` ({code}): {msg}"
                    ));
                }
                if !msg.contains(&path.display().to_string()) {
                    failures.push(format!("{name}: error does not name the file: {msg}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!((ok, err), (3, 16), "3 valid and 16 invalid files");
}

#[test]
fn validator_valid_files_import_what_they_hold() {
    let dir = data().join("gltf-validator");
    // node_weights_override: node 0 overrides mesh 0's default weight, node 1 uses mesh 1's.
    let c = import_gltf(&dir.join("base__data__node__node_weights_override.gltf")).unwrap();
    assert_eq!(c.nodes[0].weights.as_deref(), Some(&[0.5f32][..]));
    assert_eq!(c.meshes[0].default_weights, vec![0.1]);
    assert_eq!(c.rest_pose().weights, vec![vec![0.5], vec![0.2]]);
    // Accessors without a bufferView are zeros: both meshes are 3 vertices at the origin, one
    // target of zero deltas (stored sparse: no entries).
    assert_eq!(c.meshes[1].primitives[0].positions, vec![[0.0; 3]; 3]);
    assert_eq!(c.meshes[1].primitives[0].morph.entry_count(), 0);
    assert_eq!(c.meshes[1].target_names, vec!["target_0"]);
    // KHR_mesh_quantization valid: u8 normalized POSITION (zeros), no indices → one triangle.
    let c =
        import_gltf(&dir.join("ext__KHR_mesh_quantization__data__primitive__valid.gltf")).unwrap();
    assert_eq!(c.meshes[0].primitives[0].indices, vec![0, 1, 2]);
    assert_eq!(c.required_extensions, vec!["KHR_mesh_quantization"]);
    assert!(
        c.notes
            .iter()
            .any(|n| n.field == "meshes[0].primitives[0].attributes.NORMAL"),
        "{:?}",
        c.notes
    );
}

#[test]
fn every_corrupt_file_is_refused_by_name() {
    let dir = data().join("corrupt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4);
    for path in &files {
        let name = path.display().to_string();
        let e = match guarded(path) {
            Err(p) => panic!("{name}: panicked: {p}"),
            Ok(Ok(_)) => panic!("{name}: imported a corrupt file"),
            Ok(Err(e)) => e.to_string(),
        };
        assert!(e.contains(&name), "{name}: {e}");
        // The same bytes from memory name the label instead.
        let bytes = std::fs::read(path).unwrap();
        let e2 = import_gltf_bytes(&bytes, path.parent(), "label.glb")
            .unwrap_err()
            .to_string();
        assert!(e2.contains("label.glb"), "{e2}");
    }
    let msg = |f: &str| import_gltf(&dir.join(f)).unwrap_err().to_string();
    assert!(msg("html_saved_as.glb").contains("HTML"));
    let m = msg("crlf_stripped.glb");
    assert!(
        m.contains("332808") && m.contains("332778") && m.contains("shorter"),
        "{m}"
    );
    let m = msg("utf8_mangled.glb");
    assert!(
        m.contains("332808") && m.contains("464401") && m.contains("longer"),
        "{m}"
    );
    let m = msg("truncated.glb");
    assert!(m.contains("332808") && m.contains("30014"), "{m}");
}
