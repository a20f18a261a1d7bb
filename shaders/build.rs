//! Compile every WGSL kernel to SPIR-V with naga (the way wgpu-hal does), one module per entry
//! point, into `OUT_DIR/<file stem>.<entry>.spv`. Options (verified for ash 0.38 on lavapipe and
//! NVIDIA): SPIR-V 1.3, `BoundsCheckPolicy::Restrict` for indices and buffers,
//! `use_storage_input_output_16 = false`, `fake_missing_bindings` left at its default.

use std::path::PathBuf;

/// (file, entry points, uses `unpack2x16float`) — the same list as `mien_shaders::ALL` (the flag is
/// `Kernel::f16_in_f32`); `gnm_coop.wgsl` (fp16 storage and cooperative matrices) is compiled apart.
const KERNELS: [(&str, &[&str], bool); 7] = [
    ("morph.wgsl", &["main", "skinned"], false),
    ("skin.wgsl", &["main"], false),
    ("tangent.wgsl", &["main"], false),
    ("lift_debug.wgsl", &["lift", "clear"], false),
    ("lift_bound.wgsl", &["main"], false),
    ("gnm.wgsl", &["forward"], true),
    ("hair.wgsl", &["main"], false),
];

fn main() {
    let src =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("src");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let plain = KERNELS.iter().map(|&(f, e, x)| {
        (
            f,
            e,
            if x {
                naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32
            } else {
                naga::valid::Capabilities::empty()
            },
        )
    });
    let coop = std::iter::once((
        "gnm_coop.wgsl",
        &["blend", "blend_one", "finish"][..],
        naga::valid::Capabilities::SHADER_FLOAT16 | naga::valid::Capabilities::COOPERATIVE_MATRIX,
    ));
    for (file, entries, caps) in plain.chain(coop) {
        let path = src.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let module = naga::front::wgsl::parse_str(&text)
            .unwrap_or_else(|e| panic!("{file}: {}", e.emit_to_string(&text)));
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&module)
            .unwrap_or_else(|e| panic!("{file}: {}", e.emit_to_string(&text)));
        let restrict = naga::proc::BoundsCheckPolicy::Restrict;
        let options = naga::back::spv::Options {
            lang_version: (1, 3),
            flags: naga::back::spv::WriterFlags::empty(),
            bounds_check_policies: naga::proc::BoundsCheckPolicies {
                index: restrict,
                buffer: restrict,
                image_load: restrict,
                binding_array: restrict,
            },
            use_storage_input_output_16: false,
            ..Default::default()
        };
        for entry in entries {
            let pipeline = naga::back::spv::PipelineOptions {
                shader_stage: naga::ShaderStage::Compute,
                entry_point: (*entry).to_string(),
            };
            let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
                .unwrap_or_else(|e| panic!("{file} {entry}: {e}"));
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let stem = file.trim_end_matches(".wgsl");
            std::fs::write(out.join(format!("{stem}.{entry}.spv")), bytes)
                .unwrap_or_else(|e| panic!("writing {stem}.{entry}.spv: {e}"));
        }
    }
}
