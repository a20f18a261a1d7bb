//! The wgpu linear-head backend equals the CPU reference (`forward::pose`) within the derived GNM
//! bound (`mien_cpu::conformance::gnm`) on random packs and frames, with every output poisoned before
//! each frame; bases split by a small binding limit give the same bits as unsplit ones; the
//! hand-worked pack poses where the arithmetic says; bad packs and frames get typed errors.
//!
//! Without an adapter these tests print a notice and pass, unless `MIEN_REQUIRE_GPU=1`.

use mien_core::gnm::{GnmBackend, GnmHandle, GnmPack};
use mien_core::rig::PosedVertices;
use mien_core::testing::gnm::{GnmShape, random_gnm_pack};
use mien_cpu::conformance::POISON;
use mien_cpu::conformance::gnm::{
    GnmCase, GnmFrameInput, GnmHarness, GnmInputs, check_gnm, check_pack, gnm_cases,
    one_vertex_pack,
};
use mien_wgpu::{Error, WgpuContext, WgpuGnmBackend};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6d69_656e);
    Config {
        cases: std::env::var("MIEN_PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    }
}

/// The shared context, or `None` (with a notice) when there is no adapter and none is required.
fn context() -> Option<WgpuContext> {
    static CTX: std::sync::OnceLock<Option<WgpuContext>> = std::sync::OnceLock::new();
    CTX.get_or_init(|| match WgpuContext::new(&Default::default()) {
        Ok(c) => {
            eprintln!(
                "wgpu GNM tests on {} ({:?})",
                c.info().name,
                c.info().device_type
            );
            Some(c)
        }
        Err(e) if mien_wgpu::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => {
            eprintln!("notice: skipping wgpu GNM tests: {e}");
            None
        }
    })
    .clone()
}

/// One backend per run (optionally with a forced small binding limit); poisons before each frame;
/// records the chunk sizes of the last upload.
struct Wgpu {
    ctx: WgpuContext,
    binding_limit: Option<u64>,
    chunks: Vec<u32>,
}

impl Wgpu {
    fn new(ctx: WgpuContext, binding_limit: Option<u64>) -> Self {
        Wgpu {
            ctx,
            binding_limit,
            chunks: Vec::new(),
        }
    }
}

impl GnmHarness for Wgpu {
    fn run(
        &mut self,
        pack: &GnmPack,
        frames: &[GnmFrameInput],
    ) -> mien_core::Result<Vec<PosedVertices>> {
        let mut b = match self.binding_limit {
            Some(l) => WgpuGnmBackend::with_binding_limit(&self.ctx, l),
            None => WgpuGnmBackend::new(&self.ctx),
        };
        let h = b.upload_gnm(pack)?;
        self.chunks = b.chunk_sizes(h)?;
        let mut out = Vec::new();
        for f in frames {
            b.set_head_ext(h, &f.head_ext, &f.joint_world)?;
            b.poison_outputs(POISON);
            let mut enc = self
                .ctx
                .device()
                .create_command_encoder(&Default::default());
            b.encode(&mut enc)?;
            self.ctx.submit(enc);
            out.push(b.read_vertices(h)?);
        }
        Ok(out)
    }
}

fn bits(p: &[PosedVertices]) -> Vec<u32> {
    p.iter()
        .flat_map(|v| v.positions.iter().flatten().map(|x| x.to_bits()))
        .collect()
}

proptest! {
    #![proptest_config(config(16))]

    #[test]
    fn random_heads_equal_the_cpu_reference(case in gnm_cases(400, 200)) {
        let Some(ctx) = context() else { return Ok(()) };
        check_gnm(&mut Wgpu::new(ctx, None), &case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn split_bases_equal_the_reference_and_the_unsplit_bits(case in gnm_cases(300, 60), rows in 1u64..12, extra in 0u64..64) {
        let Some(ctx) = context() else { return Ok(()) };
        // A limit of about `rows` vertices' basis (never below one vertex's row and padding).
        let limit = (6 * u64::from(case.shape.coeffs) + 8) * rows + 4 * extra;
        let mut split = Wgpu::new(ctx.clone(), Some(limit));
        check_gnm(&mut split, &case).map_err(TestCaseError::fail)?;
        let expected_chunks = mien_shaders::data::gnm::plan_gnm_chunks(case.shape.vertices, case.shape.coeffs, limit.max(256)).unwrap();
        prop_assert_eq!(split.chunks.len(), expected_chunks.len());
        let inputs = GnmInputs::new(&case);
        let a = split.run(&inputs.pack, &inputs.frames).unwrap();
        let b = Wgpu::new(ctx, None).run(&inputs.pack, &inputs.frames).unwrap();
        prop_assert!(bits(&a) == bits(&b), "a split basis changed the result bits");
    }
}

#[test]
fn the_hand_worked_vertex_poses_where_the_arithmetic_says() {
    let Some(ctx) = context() else { return };
    let hand = one_vertex_pack();
    let frames = std::slice::from_ref(&hand.frame);
    check_pack(&mut Wgpu::new(ctx.clone(), None), &hand.pack, frames).unwrap();
    let got = Wgpu::new(ctx, None).run(&hand.pack, frames).unwrap();
    for a in 0..3 {
        assert!(
            (got[0].positions[0][a] - hand.expected[a]).abs() <= 1e-6,
            "axis {a}: {} vs {}",
            got[0].positions[0][a],
            hand.expected[a]
        );
    }
    assert_eq!(got[0].normals[0], [0.0; 3]);
}

#[test]
fn a_big_basis_is_split_into_many_chunks_and_still_equals_the_reference() {
    let Some(ctx) = context() else { return };
    // 383 coefficients (the seed's layout size, 64 lanes) × 700 vertices = 1.6 MB of basis under a
    // 64 KiB limit: 29 chunks, most starting at an odd half.
    let case = GnmCase {
        shape: GnmShape {
            vertices: 700,
            coeffs: 383,
            regions: 5,
            joints: 6,
            seam: true,
        },
        seed: 3,
        frames: 2,
    };
    let mut h = Wgpu::new(ctx, Some(64 << 10));
    let report = check_gnm(&mut h, &case).unwrap();
    assert!(h.chunks.len() > 20, "{:?}", h.chunks);
    eprintln!(
        "383 coefficients: max |diff| {:e} m, {:.3} of the bound",
        report.max_abs, report.max_ratio
    );
}

fn wgpu_error(e: &mien_core::Error) -> &Error {
    match e {
        mien_core::Error::Backend { source, .. } => {
            source.downcast_ref::<Error>().expect("a mien_wgpu::Error")
        }
        other => panic!("not a backend error: {other}"),
    }
}

#[test]
fn bad_packs_and_frames_get_typed_errors() {
    let Some(ctx) = context() else { return };
    // One vertex of 100 coefficients needs 600 bytes of basis; the limit is 512.
    let pack = random_gnm_pack(
        5,
        GnmShape {
            vertices: 4,
            coeffs: 100,
            regions: 2,
            joints: 2,
            seam: false,
        },
    );
    let mut b = WgpuGnmBackend::with_binding_limit(&ctx, 512);
    let e = b.upload_gnm(&pack).unwrap_err();
    match wgpu_error(&e) {
        Error::OverLimits {
            what,
            limit,
            needed,
            limit_name,
        } => {
            assert_eq!(
                (*limit, *needed, *limit_name),
                (512, 600, "max_storage_buffer_binding_size")
            );
            assert!(what.contains("vertex 0"), "{what}");
        }
        other => panic!("{other}"),
    }
    // A palette of 5 joints + bind = 768 bytes under 512.
    let pack = random_gnm_pack(
        5,
        GnmShape {
            vertices: 4,
            coeffs: 2,
            regions: 1,
            joints: 5,
            seam: false,
        },
    );
    let e = b.upload_gnm(&pack).unwrap_err();
    assert!(
        matches!(wgpu_error(&e), Error::OverLimits { needed: 768, .. }),
        "{e}"
    );

    let hand = one_vertex_pack();
    let mut b = WgpuGnmBackend::new(&ctx);
    let h = b.upload_gnm(&hand.pack).unwrap();
    assert_eq!(b.vertex_count(h), 1);
    assert!(b.bytes() >= 4 * hand.pack.basis.len() as u64);
    b.set_head_ext(h, &hand.frame.head_ext, &hand.frame.joint_world)
        .unwrap();
    let e = b
        .set_head_ext(h, &hand.frame.head_ext[..5], &hand.frame.joint_world)
        .unwrap_err();
    assert!(
        matches!(
            e,
            mien_core::Error::Mismatch {
                expected: 6,
                found: 5,
                ..
            }
        ),
        "{e}"
    );
    let mut nan = hand.frame.head_ext.clone();
    nan[0] = f32::NAN;
    assert!(b.set_head_ext(h, &nan, &hand.frame.joint_world).is_err());
    assert!(
        b.set_head_ext(GnmHandle(7), &hand.frame.head_ext, &hand.frame.joint_world)
            .is_err()
    );
    assert!(b.read_vertices(GnmHandle(7)).is_err());
    // The refused frames left the good one in place.
    let mut enc = ctx.device().create_command_encoder(&Default::default());
    b.encode(&mut enc).unwrap();
    ctx.submit(enc);
    let p = b.read_vertices(h).unwrap();
    assert!(
        (p.positions[0][1] - hand.expected[1]).abs() <= 1e-6,
        "{:?}",
        p.positions
    );
}
