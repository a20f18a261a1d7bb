//! How [`Error::Many`] reads: one item per distinct problem (repeats folded into `(×N)`), nested
//! lists indented under their item, and [`Error::collect`] returning one error for one problem
//! reported several times.

use mien_core::Error;

fn f(field: &str, reason: &str) -> Error {
    Error::format("a.gltf", field, reason)
}

#[test]
fn nested_lists_are_indented_under_their_item() {
    let inner = Error::Many(vec![f("x", "one"), f("y", "two")]);
    let e = Error::Many(vec![f("a", "first"), inner, f("b", "last")]);
    assert_eq!(
        e.to_string(),
        "3 problems:\n\
         \x20 - a.gltf: a: first\n\
         \x20 - 2 problems:\n\
         \x20     - a.gltf: x: one\n\
         \x20     - a.gltf: y: two\n\
         \x20 - a.gltf: b: last"
    );
    // Two levels deep.
    let deep = Error::Many(vec![
        f("p", "top"),
        Error::Many(vec![
            f("q", "mid"),
            Error::Many(vec![f("r", "low"), f("s", "low2")]),
        ]),
    ]);
    assert_eq!(
        deep.to_string(),
        "2 problems:\n  - a.gltf: p: top\n  - 2 problems:\n      - a.gltf: q: mid\n      - 2 problems:\n          - a.gltf: r: low\n          - a.gltf: s: low2"
    );
}

#[test]
fn identical_problems_are_listed_once_with_a_count() {
    let e = Error::Many(vec![
        f("v", "broken"),
        f("w", "other"),
        f("v", "broken"),
        f("v", "broken"),
    ]);
    assert_eq!(
        e.to_string(),
        "2 problems:\n  - a.gltf: v: broken (×3)\n  - a.gltf: w: other"
    );
}

#[test]
fn collect_folds_one_problem_reported_many_times() {
    let r = Error::collect(vec![f("v", "broken"), f("v", "broken"), f("v", "broken")]);
    assert_eq!(r.unwrap_err().to_string(), "a.gltf: v: broken");
    let r = Error::collect(vec![f("v", "broken"), f("w", "other")]);
    assert!(matches!(r, Err(Error::Many(ref v)) if v.len() == 2));
    assert!(Error::collect(Vec::new()).is_ok());
}

/// Device limits in words: sizes and ranges in bytes with MiB/GiB, counts plain.
#[test]
fn limit_amounts_name_their_units() {
    use mien_core::error::limit_amount;
    assert_eq!(
        limit_amount("max_storage_buffer_binding_size", 134_217_728),
        "134217728 bytes (128.0 MiB)"
    );
    assert_eq!(
        limit_amount("maxStorageBufferRange", 3 << 30),
        "3221225472 bytes (3.0 GiB)"
    );
    assert_eq!(limit_amount("max_buffer_size", 1000), "1000 bytes");
    assert_eq!(limit_amount("maxComputeWorkGroupCount[2]", 65_535), "65535");
    assert_eq!(
        limit_amount("max_compute_workgroups_per_dimension", 70_000),
        "70000"
    );
}
