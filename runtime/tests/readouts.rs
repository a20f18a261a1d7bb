//! One convention for read-outs and writers (issue 25, item 8): `splats(i)` is instance-local,
//! `sink_range(i)` is sink-global and indexes `splats_all()`; the three splat writers take the
//! same `(buffers, ranges)` and write the same bytes whichever view an instance is written from.
//! Checked on instance 1 of 3, each instance playing the stream at its own offset so a mix-up of
//! instances shows. And the default lift is the surface lift, as the CLI's.

use std::sync::Arc;

use mien_core::io::splat_file::{SplatFormat, encode_splats, write_splats};
use mien_runtime::{Asset, Device, LiftKind, Runtime, RuntimeOptions};

fn three_heads() -> Runtime {
    let options = RuntimeOptions {
        instances: 3,
        ..Default::default()
    };
    let mut rt = Runtime::new(Arc::new(Asset::builtin()), &Device::Cpu, &options).unwrap();
    for k in 0..3 {
        rt.instance_mut(k)
            .unwrap()
            .play_stream(mien_core::sample::sample_performance(60.0))
            .unwrap()
            .set_drive_timing(-0.4 * k as f64, true)
            .unwrap();
    }
    rt.update(0.5).unwrap();
    rt
}

#[test]
fn the_default_lift_is_the_surface_lift() {
    let rt = three_heads();
    let lift = rt.lift().expect("a lift by default");
    assert!(matches!(lift.kind, LiftKind::Surface(_)), "{:?}", lift.kind);
    // About 100,000 gaussians bound to the triangles, far more than one per vertex.
    assert!(lift.slots > 50_000, "{} slots", lift.slots);
    assert!(lift.slots > rt.asset().vertex_count());
}

#[test]
fn instance_1_of_3_reads_and_writes_the_same_through_either_view() {
    let mut rt = three_heads();
    let s = rt.lift().unwrap().slots;
    let one = rt.splats(1).unwrap();
    let all = rt.splats_all().unwrap();
    let r = rt.sink_range(1).unwrap();
    // By hand: instance 1's slots are S..2S of 3S.
    assert_eq!((r.offset, r.count), (s, s));
    assert_eq!(all.len(), 3 * s as usize);
    assert_eq!(one.len(), s as usize);
    assert_eq!(one.all().offset, 0);
    let (a, b) = (r.offset as usize, r.end() as usize);
    assert_eq!(one.center, all.center[a..b]);
    assert_eq!(one.color, all.color[a..b]);
    assert_eq!(one.cov_a, all.cov_a[a..b]);
    assert_eq!(one.cov_b, all.cov_b[a..b]);
    // The instances differ (their streams are offset), so a wrong range could not pass.
    let zero = rt.splats(0).unwrap();
    assert_ne!(zero.center, one.center);

    let dir = tempfile::tempdir().unwrap();
    for format in [SplatFormat::Ply, SplatFormat::Spz, SplatFormat::Glb] {
        let local = encode_splats(format, &one, &[one.all()]).unwrap();
        let global = encode_splats(format, &all, &[r]).unwrap();
        assert_eq!(
            local.0, global.0,
            "{format:?}: the same instance, the same bytes"
        );
        assert_eq!(local.1.written, u64::from(s), "{format:?}");
        let path = dir.path().join(format!("one.{}", format.extension()));
        write_splats(&path, &one, &[one.all()]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), local.0, "{format:?}");
        // A sink-global range on an instance-local read-out is refused, not misread.
        let e = encode_splats(format, &one, &[r]).unwrap_err().to_string();
        assert!(e.contains("outside"), "{e}");
    }
    // All three instances in one file.
    let every = encode_splats(SplatFormat::Spz, &all, &[all.all()]).unwrap();
    assert_eq!(every.1.written, 3 * u64::from(s));
    // No range, or ranges that share slots: refused, never an empty or doubled file.
    for ranges in [vec![], vec![r, r]] {
        let e = encode_splats(SplatFormat::Spz, &all, &ranges)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no slot range") || e.contains("share slots"),
            "{e}"
        );
    }
}

#[test]
fn splats_before_the_first_frame_are_refused() {
    let options = RuntimeOptions::default();
    let mut rt = Runtime::new(Arc::new(Asset::builtin()), &Device::Cpu, &options).unwrap();
    let e = rt.splats(0).unwrap_err().to_string();
    assert!(e.contains("no frame posed yet"), "{e}");
    rt.update(0.0).unwrap();
    assert!(rt.splats(0).is_ok());
}
