//! Every generated SPIR-V module passes `spirv-val` (Vulkan 1.1 target environment, which SPIR-V 1.3
//! belongs to), declares the entry point it is named for, and the build script compiled the kernel
//! list `ALL` names.
//!
//! `spirv-val` comes from the `spirv-tools` package (`.ci/run` installs it); without it the test
//! prints a notice and passes, unless `MIEN_REQUIRE_GPU=1`.

use std::process::Command;

use mien_shaders::{ALL, spirv_words};

fn spirv_val() -> Option<&'static str> {
    match Command::new("spirv-val").arg("--version").output() {
        Ok(o) if o.status.success() => Some("spirv-val"),
        _ if std::env::var("MIEN_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            panic!("MIEN_REQUIRE_GPU=1 but spirv-val is not installed")
        }
        _ => {
            eprintln!(
                "notice: spirv-val not found (install spirv-tools); skipping SPIR-V validation"
            );
            None
        }
    }
}

#[test]
fn every_module_passes_spirv_val() {
    let dir = tempfile::tempdir().unwrap();
    let Some(val) = spirv_val() else { return };
    for k in &ALL {
        assert_eq!(k.spirv.len(), k.entry_points.len(), "{}", k.file);
        for (entry, bytes) in k.entry_points.iter().zip(k.spirv) {
            assert_eq!(bytes.len() % 4, 0);
            let words = spirv_words(k, entry).unwrap();
            assert_eq!(words[0], 0x0723_0203, "{} {entry}: SPIR-V magic", k.file);
            assert_eq!(words[1], 0x0001_0300, "{} {entry}: SPIR-V 1.3", k.file);
            let path = dir.path().join(format!("{}.{entry}.spv", k.file));
            std::fs::write(&path, bytes).unwrap();
            let out = Command::new(val)
                .args(["--target-env", "vulkan1.1"])
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{} {entry}: spirv-val failed:\n{}{}",
                k.file,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            // The entry point's name is in the module (OpEntryPoint GLCompute … "<entry>").
            let text = String::from_utf8_lossy(bytes);
            assert!(text.contains(entry), "{} declares {entry}", k.file);
        }
    }
}

/// The tensor-core GNM kernel's SPIR-V: 1.3, declaring `CooperativeMatrixKHR` (capability 6022),
/// `SPV_KHR_cooperative_matrix`, fp16 and 16-bit storage; and `spirv-val` accepts it — unless the
/// installed `spirv-val` predates the extension (Debian 12's 2023.1 rejects capability 6022 as
/// unknown), which the test then reports instead of failing; the H200's driver compiling it is
/// the other check (docs/PERFORMANCE.md).
#[test]
fn the_tensor_core_module_declares_cooperative_matrices_and_passes_spirv_val() {
    let k = &mien_shaders::GNM_COOP;
    let words = spirv_words(k, "blend").unwrap();
    assert_eq!(words[0], 0x0723_0203);
    assert_eq!(words[1], 0x0001_0300, "SPIR-V 1.3");
    // OpCapability (opcode 17, 2 words) operands.
    let mut caps = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let (count, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        if count == 0 {
            break;
        }
        if op == 17 {
            caps.push(words[i + 1]);
        }
        i += count;
    }
    for (cap, name) in [
        (6022, "CooperativeMatrixKHR"),
        (9, "Float16"),
        (4433, "StorageBuffer16BitAccess"),
    ] {
        assert!(
            caps.contains(&cap),
            "{} lacks OpCapability {name}: {caps:?}",
            k.file
        );
    }
    let text = String::from_utf8_lossy(k.spirv[0]);
    assert!(text.contains("SPV_KHR_cooperative_matrix"));
    let Some(val) = spirv_val() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gnm_coop.blend.spv");
    std::fs::write(&path, k.spirv[0]).unwrap();
    let out = Command::new(val)
        .args(["--target-env", "vulkan1.3"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("Invalid capability operand: 6022") {
        eprintln!(
            "notice: this spirv-val predates SPV_KHR_cooperative_matrix (capability 6022); \
             the tensor-core module's structure was checked above"
        );
        return;
    }
    assert!(
        out.status.success(),
        "gnm_coop blend: spirv-val failed:\n{}{err}",
        String::from_utf8_lossy(&out.stdout)
    );
}
