//! Helpers shared by the glTF import tests.
//!
//! The shared data folder stores files from nested upstream folders flat, with `/` spelled `__`
//! (`base/data/animation_data/x.gltf` → `base__data__animation_data__x.gltf`). A `.gltf` keeps its
//! original buffer URIs (`x.bin`), so [`stage`] rebuilds the original layout in a temporary folder
//! (never in the repository) when a referenced buffer is only present under its flattened name.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/data` from the crate.
pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

/// A path to import `path` from: `path` itself when its external buffers sit beside it, else a copy
/// in a temporary folder (returned to keep it alive) with each buffer under its original URI.
pub fn stage(path: &Path) -> (Option<tempfile::TempDir>, PathBuf) {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(path).unwrap())
    else {
        return (None, path.to_path_buf());
    };
    let dir = path.parent().unwrap();
    let uris: Vec<String> = json["buffers"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(|b| b["uri"].as_str())
                .filter(|u| !u.starts_with("data:"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if uris.iter().all(|u| dir.join(u).exists()) {
        return (None, path.to_path_buf());
    }
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let prefix = name.rfind("__").map_or("", |i| &name[..i + 2]);
    let tmp = tempfile::tempdir().unwrap();
    for u in &uris {
        let flat = dir.join(format!("{prefix}{u}"));
        assert!(
            flat.exists(),
            "{name}: buffer `{u}` is neither beside it nor at {}",
            flat.display()
        );
        std::fs::copy(&flat, tmp.path().join(u)).unwrap();
    }
    let staged = tmp.path().join(&name);
    std::fs::copy(path, &staged).unwrap();
    (Some(tmp), staged)
}
