//! Every kernel parses and validates with naga, declares the entry points the Rust side names, and
//! runs the invocations per workgroup it declares (`WORKGROUP_SIZE`; the GNM GEMM 192).

use mien_shaders::{ALL, WORKGROUP_SIZE, dispatch_size};

/// What a kernel may use beyond core: only `f16_in_f32` kernels get `unpack2x16float`.
fn capabilities(k: &mien_shaders::Kernel) -> naga::valid::Capabilities {
    if k.f16_in_f32 {
        naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32
    } else {
        naga::valid::Capabilities::empty()
    }
}

fn module(k: &mien_shaders::Kernel) -> (naga::Module, naga::valid::ModuleInfo) {
    let m = naga::front::wgsl::parse_str(k.source)
        .unwrap_or_else(|e| panic!("{}: {}", k.file, e.emit_to_string(k.source)));
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities(k))
        .validate(&m)
        .unwrap_or_else(|e| panic!("{}: {}", k.file, e.emit_to_string(k.source)));
    (m, info)
}

#[test]
fn every_kernel_parses_and_validates() {
    for k in &ALL {
        let (m, _) = module(k);
        let expected = if k.file == "gnm.wgsl" {
            mien_shaders::GNM_WORKGROUP_SIZE
        } else {
            WORKGROUP_SIZE
        };
        assert_eq!(k.workgroup_size, expected, "{}", k.file);
        let names: Vec<&str> = m.entry_points.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, k.entry_points, "{}: entry points", k.file);
        for e in &m.entry_points {
            assert_eq!(e.stage, naga::ShaderStage::Compute, "{} {}", k.file, e.name);
            assert_eq!(
                e.workgroup_size,
                [k.workgroup_size, 1, 1],
                "{} {}",
                k.file,
                e.name
            );
        }
    }
}

#[test]
fn only_kernels_flagged_f16_in_f32_need_the_capability() {
    for k in &ALL {
        let m = naga::front::wgsl::parse_str(k.source).unwrap();
        let plain = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&m);
        assert_eq!(plain.is_err(), k.f16_in_f32, "{}", k.file);
    }
}

#[test]
fn the_kernel_files_on_disk_are_the_ones_compiled_in() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    on_disk.sort();
    let mut known: Vec<String> = ALL
        .iter()
        .chain([&mien_shaders::GNM_COOP])
        .map(|k| k.file.to_string())
        .collect();
    known.sort();
    assert_eq!(
        on_disk, known,
        "every .wgsl in shaders/src is listed in mien_shaders::ALL (or is GNM_COOP)"
    );
}

/// The tensor-core GNM kernel validates with fp16 and cooperative matrices and not without them,
/// binds `gnm.wgsl`'s inputs then `skin.wgsl`'s (it skins too), and runs `blend` as one subgroup
/// of 32 per workgroup and `finish` in workgroups of 64.
#[test]
fn the_tensor_core_kernel_validates_only_with_its_capabilities() {
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    let k = &mien_shaders::GNM_COOP;
    let m = naga::front::wgsl::parse_str(k.source)
        .unwrap_or_else(|e| panic!("{}: {}", k.file, e.emit_to_string(k.source)));
    let caps = Capabilities::SHADER_FLOAT16 | Capabilities::COOPERATIVE_MATRIX;
    Validator::new(ValidationFlags::all(), caps)
        .validate(&m)
        .unwrap_or_else(|e| panic!("{}: {}", k.file, e.emit_to_string(k.source)));
    for without in [
        Capabilities::SHADER_FLOAT16,
        Capabilities::COOPERATIVE_MATRIX,
    ] {
        let v = Validator::new(ValidationFlags::all(), caps - without).validate(&m);
        assert!(v.is_err(), "{} validated without {without:?}", k.file);
    }
    assert_eq!(k.workgroup_size, mien_shaders::GNM_COOP_WORKGROUP_SIZE);
    let entries: Vec<(&str, [u32; 3])> = m
        .entry_points
        .iter()
        .map(|e| (e.name.as_str(), e.workgroup_size))
        .collect();
    assert_eq!(
        entries,
        [
            ("blend", [mien_shaders::GNM_COOP_WORKGROUP_SIZE, 1, 1]),
            ("blend_one", [mien_shaders::GNM_COOP_WORKGROUP_SIZE, 1, 1]),
            (
                "finish",
                [mien_shaders::GNM_COOP_FINISH_WORKGROUP_SIZE, 1, 1]
            )
        ]
    );
    assert_eq!(k.entry_points, ["blend", "blend_one", "finish"]);
    let bindings = |src: &str| -> Vec<(u32, String)> {
        let m = naga::front::wgsl::parse_str(src).unwrap();
        let mut b: Vec<(u32, String)> = m
            .global_variables
            .iter()
            .filter_map(|(_, v)| Some((v.binding.as_ref()?.binding, format!("{:?}", v.space))))
            .collect();
        b.sort();
        b
    };
    // gnm.wgsl's first five bindings, then skin.wgsl's joints, weights and palette, the
    // deltas, and skin.wgsl's output.
    let (coop, gnm, skin) = (
        bindings(k.source),
        bindings(mien_shaders::GNM.source),
        bindings(mien_shaders::SKIN.source),
    );
    assert_eq!(coop.len(), 10);
    assert_eq!(coop[..5], gnm[..5]);
    let spaces = |b: &[(u32, String)]| b.iter().map(|x| x.1.clone()).collect::<Vec<_>>();
    assert_eq!(spaces(&coop[5..8]), spaces(&skin[2..5]));
    assert_eq!(spaces(&coop[9..]), spaces(&skin[5..]));
}

#[test]
fn dispatch_size_covers_every_invocation() {
    // Hand-worked: 1000 vertices → 16 groups in one row of 1024 invocations.
    assert_eq!(dispatch_size(1000, 65535), Some((16, 1, 1024)));
    // 5 groups with at most 3 per dimension → 3 × 2; with at most 2 → 2 × 3 does not fit.
    assert_eq!(dispatch_size(5 * 64, 3), Some((3, 2, 192)));
    assert_eq!(dispatch_size(5 * 64, 2), None);
    assert_eq!(dispatch_size(0, 65535), Some((1, 1, 64)));
    assert_eq!(dispatch_size(u32::MAX, 2), None);
    for count in [1u32, 63, 64, 65, 4_194_240, 4_194_241, 300_000_000] {
        let (x, y, w) = dispatch_size(count, 65535).unwrap();
        assert!(u64::from(x) * u64::from(y) * 64 >= u64::from(count));
        assert!(
            u64::from(x) * u64::from(y - 1) * 64 < u64::from(count).max(1),
            "no wasted row"
        );
        assert_eq!(w, x * 64);
    }
}
