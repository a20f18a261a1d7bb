//! Every struct shared between Rust and WGSL has the same size and field offsets on both sides,
//! read from naga's layout of the parsed shader (Bevy documents each padding field; brush reflects
//! structs from the shader).

use std::mem::{offset_of, size_of};

use mien_shaders::{DispatchParams, JointMatrices, LIFT_DEBUG, LiftParams, MORPH, SKIN, TANGENT};

/// `(member name, offset)` pairs and the span of WGSL struct `name` in `source`.
fn wgsl_struct(source: &str, name: &str) -> (Vec<(String, u32)>, u32) {
    let m = naga::front::wgsl::parse_str(source).unwrap();
    // Validation computes the layouts naga uses for offsets (`unpack2x16float` needs its capability).
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32,
    )
    .validate(&m)
    .unwrap();
    for (_, ty) in m.types.iter() {
        if ty.name.as_deref() == Some(name)
            && let naga::TypeInner::Struct { members, span } = &ty.inner
        {
            return (
                members
                    .iter()
                    .map(|mm| (mm.name.clone().unwrap(), mm.offset))
                    .collect(),
                *span,
            );
        }
    }
    panic!("struct {name} not found");
}

fn check(source: &str, name: &str, rust_size: usize, rust: &[(&str, usize)]) {
    let (members, span) = wgsl_struct(source, name);
    assert_eq!(
        span as usize, rust_size,
        "{name}: WGSL size {span} vs Rust {rust_size}"
    );
    let wgsl: Vec<(String, usize)> = members
        .into_iter()
        .filter(|(n, _)| !n.starts_with("_pad"))
        .map(|(n, o)| (n, o as usize))
        .collect();
    let rust: Vec<(String, usize)> = rust.iter().map(|(n, o)| (n.to_string(), *o)).collect();
    assert_eq!(wgsl, rust, "{name}: field names and offsets");
}

#[test]
fn dispatch_params_match_in_morph_skin_and_tangent() {
    let rust = [
        ("count", offset_of!(DispatchParams, count)),
        ("row_width", offset_of!(DispatchParams, row_width)),
    ];
    for k in [MORPH, SKIN, TANGENT] {
        check(
            k.source,
            "DispatchParams",
            size_of::<DispatchParams>(),
            &rust,
        );
    }
}

#[test]
fn joint_matrices_match() {
    check(
        TANGENT.source,
        "Joint",
        size_of::<JointMatrices>(),
        &[
            ("m", offset_of!(JointMatrices, m)),
            ("n", offset_of!(JointMatrices, n)),
        ],
    );
    check(
        SKIN.source,
        "Joint",
        size_of::<JointMatrices>(),
        &[
            ("m", offset_of!(JointMatrices, m)),
            ("n", offset_of!(JointMatrices, n)),
        ],
    );
}

#[test]
fn lift_params_match() {
    check(
        LIFT_DEBUG.source,
        "LiftParams",
        size_of::<LiftParams>(),
        &[
            ("row0", offset_of!(LiftParams, row0)),
            ("row1", offset_of!(LiftParams, row1)),
            ("row2", offset_of!(LiftParams, row2)),
            ("cov_a", offset_of!(LiftParams, cov_a)),
            ("cov_b", offset_of!(LiftParams, cov_b)),
            ("flat_color", offset_of!(LiftParams, flat_color)),
            ("centroid", offset_of!(LiftParams, centroid)),
            ("count", offset_of!(LiftParams, count)),
            ("row_width", offset_of!(LiftParams, row_width)),
            ("slot_base_vec4", offset_of!(LiftParams, slot_base_vec4)),
            ("slot_base_color", offset_of!(LiftParams, slot_base_color)),
            ("shading", offset_of!(LiftParams, shading)),
            ("posed_base", offset_of!(LiftParams, posed_base)),
            ("slot_stride", offset_of!(LiftParams, slot_stride)),
            ("posed_stride", offset_of!(LiftParams, posed_stride)),
        ],
    );
}

#[test]
fn gnm_params_match() {
    use mien_shaders::{GNM, GnmParams};
    check(
        GNM.source,
        "GnmParams",
        size_of::<GnmParams>(),
        &[
            ("count", offset_of!(GnmParams, count)),
            ("coeffs", offset_of!(GnmParams, coeffs)),
            ("instances", offset_of!(GnmParams, instances)),
        ],
    );
}

#[test]
fn gnm_frame_header_matches() {
    use mien_shaders::{GNM, GnmFrameHeader};
    check(
        GNM.source,
        "GnmFrameHeader",
        size_of::<GnmFrameHeader>(),
        &[
            ("eye_rot_l", offset_of!(GnmFrameHeader, eye_rot_l)),
            ("eye_rot_r", offset_of!(GnmFrameHeader, eye_rot_r)),
            ("eye_centre_l", offset_of!(GnmFrameHeader, eye_centre_l)),
            ("eye_centre_r", offset_of!(GnmFrameHeader, eye_centre_r)),
        ],
    );
    assert_eq!(size_of::<GnmFrameHeader>(), 128);
}

#[test]
fn hair_params_and_children_match() {
    use mien_shaders::{HAIR, HairChild, HairParams};
    check(
        HAIR.source,
        "HairParams",
        size_of::<HairParams>(),
        &[
            ("colour_root", offset_of!(HairParams, colour_root)),
            ("colour_tip", offset_of!(HairParams, colour_tip)),
            ("count", offset_of!(HairParams, count)),
            ("row_width", offset_of!(HairParams, row_width)),
            ("segments", offset_of!(HairParams, segments)),
            ("slot_base_vec4", offset_of!(HairParams, slot_base_vec4)),
            ("slot_base_color", offset_of!(HairParams, slot_base_color)),
            ("slot_stride", offset_of!(HairParams, slot_stride)),
            ("guide_stride", offset_of!(HairParams, guide_stride)),
            ("clump", offset_of!(HairParams, clump)),
            ("thickness_root", offset_of!(HairParams, thickness_root)),
            ("thickness_tip", offset_of!(HairParams, thickness_tip)),
        ],
    );
    check(
        HAIR.source,
        "Child",
        size_of::<HairChild>(),
        &[
            ("guides", offset_of!(HairChild, guides)),
            ("weights", offset_of!(HairChild, weights)),
        ],
    );
    assert_eq!(size_of::<HairParams>(), 80);
}
