//! Contact sheets: layout, a camera shared by all frames, PNG output.

mod support;

use mien_core::preview::{ContactSheet, Frame, SheetOptions, render_sheet, write_png};
use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};

/// One white gaussian (σ = 1 cm) at `x`.
fn frame_at(x: f32) -> SplatBuffers {
    let mut b = SplatBuffers::new(1);
    b.center[0] = [x, 1.5, 0.0, 0.0];
    b.color[0] = pack4x8unorm([1.0; 4]);
    b.cov_a[0] = [1e-4, 0.0, 0.0, 1e-4];
    b.cov_b[0] = [0.0, 1e-4, 0.0, 0.0];
    b
}

/// Column of the brightest pixel of a cell.
fn peak_x(img: &image::RgbImage, x0: u32, y0: u32, w: u32, h: u32) -> u32 {
    let mut best = (0u8, 0u32);
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            let p = img.get_pixel(x, y)[0];
            if p > best.0 {
                best = (p, x - x0);
            }
        }
    }
    best.1
}

#[test]
fn shared_camera_shows_motion_and_layout_is_exact() {
    let frames: Vec<SplatBuffers> = [-0.1f32, 0.0, 0.1].iter().map(|&x| frame_at(x)).collect();
    let ranges = [SlotRange {
        offset: 0,
        count: 1,
    }];
    let list: Vec<Frame> = frames
        .iter()
        .map(|b| Frame {
            buffers: b,
            ranges: &ranges,
        })
        .collect();
    let opts = SheetOptions {
        cols: 2,
        cell_w: 64,
        cell_h: 48,
        gap: 3,
        background: [0.0; 3],
        gap_color: [0.2; 3],
        ..SheetOptions::default()
    };
    let (sheet, camera, stats) = render_sheet(&list, &opts).unwrap();
    assert_eq!(stats.drawn, 3);
    assert_eq!(sheet.len(), 3);
    // 2 columns, 2 rows: 2·64 + 3·3 = 137 by 2·48 + 3·3 = 105.
    assert_eq!(sheet.size().unwrap(), (137, 105));
    // The camera looks at the union's centre (x = 0, y = 1.5).
    assert!(camera.target.x.abs() < 1e-6 && (camera.target.y - 1.5).abs() < 1e-6);
    let img = sheet.compose().unwrap();
    let cells = [(3, 3), (70, 3), (3, 54)];
    let xs: Vec<u32> = cells
        .iter()
        .map(|&(x, y)| peak_x(&img, x, y, 64, 48))
        .collect();
    // The splat moves left → centre → right inside cells framed by one camera.
    assert!(xs[0] < xs[1] && xs[1] < xs[2], "{xs:?}");
    assert!((xs[1] as i32 - 31).abs() <= 1, "{xs:?}");
    // Gaps and the unused fourth cell hold the gap colour (0.2 → 51).
    for (x, y) in [(0, 0), (67, 20), (100, 80), (136, 104)] {
        assert_eq!(img.get_pixel(x, y).0, [51, 51, 51], "({x},{y})");
    }

    // The PNG decodes to the composed image.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sheet.png");
    sheet.write_png(&path).unwrap();
    let back = image::open(&path).unwrap().to_rgb8();
    assert_eq!(back, img);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn sheet_refuses_wrong_cells_and_sizes() {
    let mut sheet = ContactSheet::new(3, 10, 10).unwrap();
    assert!(matches!(
        sheet.push(image::RgbImage::new(10, 11)),
        Err(mien_core::Error::Mismatch { .. })
    ));
    assert!(sheet.is_empty());
    assert!(ContactSheet::new(0, 10, 10).is_err());
    assert!(ContactSheet::new(2, 0, 10).is_err());
    assert!(ContactSheet::new(2000, 10, 10).is_err());
    // An empty sheet is one row of gap colour.
    assert_eq!(sheet.size().unwrap(), (3 * 10 + 4 * 4, 10 + 2 * 4));
}

#[test]
fn all_empty_frames_render_background() {
    let b = SplatBuffers::new(2);
    let ranges = [SlotRange {
        offset: 0,
        count: 2,
    }];
    let opts = SheetOptions {
        cols: 1,
        cell_w: 8,
        cell_h: 8,
        gap: 0,
        background: [1.0, 0.0, 0.0],
        ..SheetOptions::default()
    };
    let (sheet, _, stats) = render_sheet(
        &[Frame {
            buffers: &b,
            ranges: &ranges,
        }],
        &opts,
    )
    .unwrap();
    assert_eq!(stats.transparent, 2);
    assert!(
        sheet
            .compose()
            .unwrap()
            .pixels()
            .all(|p| p.0 == [255, 0, 0])
    );
}

#[test]
fn write_png_into_missing_folder_fails_cleanly() {
    let err = write_png(
        std::path::Path::new("/nonexistent/mien/out.png"),
        &image::RgbImage::new(2, 2),
    )
    .unwrap_err();
    assert!(matches!(err, mien_core::Error::Io { .. }), "{err}");
}

mod box_framing {
    use super::support;
    use glam::DVec3;
    use mien_core::preview::{Aabb, Camera};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(support::proptest_config(256))]

        /// Every corner of the box projects inside the image, and at least one touches the 6 %
        /// margin on some side (the fit is tight, not merely safe).
        #[test]
        fn every_corner_lands_inside_with_a_tight_margin(
            lo in [-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0],
            size in [0.01f64..2.0, 0.01f64..2.0, 0.01f64..2.0],
            w in 32u32..800, h in 32u32..800, fov_deg in 10.0f64..90.0, yaw in -3.0f64..3.0,
        ) {
            let b = Aabb { min: DVec3::from(lo), max: DVec3::from(lo) + DVec3::from(size) };
            let cam = Camera::framing_box(b, w, h, fov_deg.to_radians(), yaw).unwrap();
            let mut slack = f64::INFINITY;
            for i in 0..8 {
                let c = DVec3::new(
                    if i & 1 == 0 { b.min.x } else { b.max.x },
                    if i & 2 == 0 { b.min.y } else { b.max.y },
                    if i & 4 == 0 { b.min.z } else { b.max.z },
                );
                let (x, y, _) = cam.project(c).expect("corner in front of the camera");
                let (mx, my) = (0.06 * f64::from(w), 0.06 * f64::from(h));
                prop_assert!(x >= mx - 1e-6 && x <= f64::from(w) - mx + 1e-6, "corner {i} x {x} of {w}");
                prop_assert!(y >= my - 1e-6 && y <= f64::from(h) - my + 1e-6, "corner {i} y {y} of {h}");
                slack = slack.min((x - mx) / f64::from(w)).min((f64::from(w) - mx - x) / f64::from(w));
                slack = slack.min((y - my) / f64::from(h)).min((f64::from(h) - my - y) / f64::from(h));
            }
            prop_assert!(slack < 0.01, "the tightest corner is {slack} of the image from the margin");
        }
    }
}

mod budget {
    use super::support;
    use mien_core::preview::{
        Frame, MAX_SHEET_WORK, SheetOptions, plan_sheet, render_planned, render_sheet,
    };
    use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};
    use proptest::prelude::*;

    /// `n` gaussians of σ = `sigma` m spread along x.
    fn cloud(n: usize, sigma: f32, spread: f32) -> SplatBuffers {
        let mut b = SplatBuffers::new(n as u32);
        let s2 = sigma * sigma;
        for i in 0..n {
            let x = spread * (i as f32 / n.max(1) as f32 - 0.5);
            b.center[i] = [x, 0.0, 0.0, 0.0];
            b.color[i] = pack4x8unorm([0.8, 0.5, 0.2, 0.7]);
            b.cov_a[i] = [s2, 0.0, 0.0, s2];
            b.cov_b[i] = [0.0, s2, 0.0, 0.0];
        }
        b
    }

    #[test]
    fn a_sheet_over_the_work_budget_is_refused_before_drawing() {
        // 300 gaussians stacked in one place: the camera frames their 3σ box with a margin, so
        // each covers about half of a 4096-pixel cell (≈ 8.6·10⁶ pixel visits): ≈ 2.6·10⁹ in all.
        let b = cloud(300, 0.5, 0.0);
        let ranges = [SlotRange {
            offset: 0,
            count: 300,
        }];
        let frames = [Frame {
            buffers: &b,
            ranges: &ranges,
        }];
        let opts = SheetOptions {
            cols: 1,
            cell_w: 4096,
            cell_h: 4096,
            ..SheetOptions::default()
        };
        let plan = plan_sheet(&frames, &opts).unwrap();
        let found = plan.total_work();
        assert!(found > MAX_SHEET_WORK, "{found}");
        assert!(found <= 301 * 4096 * 4096, "{found}");
        let t = std::time::Instant::now();
        match render_sheet(&frames, &opts) {
            Err(mien_core::Error::Limit {
                limit, found: f, ..
            }) => {
                assert_eq!((limit, f), (MAX_SHEET_WORK, found));
            }
            other => panic!("expected a Limit error, got {:?}", other.map(|_| ())),
        }
        let mut called = false;
        let r = render_planned(&frames, &opts, &plan, &mut |_| {
            called = true;
            true
        });
        assert!(matches!(r, Err(mien_core::Error::Limit { .. })));
        assert!(!called, "no cell is drawn");
        assert!(t.elapsed().as_secs_f64() < 5.0, "refused without drawing");
    }

    #[test]
    fn drawing_stops_when_asked() {
        let frames_b: Vec<SplatBuffers> = (0..3).map(|_| cloud(4, 0.01, 0.2)).collect();
        let ranges = [SlotRange {
            offset: 0,
            count: 4,
        }];
        let frames: Vec<Frame> = frames_b
            .iter()
            .map(|b| Frame {
                buffers: b,
                ranges: &ranges,
            })
            .collect();
        let opts = SheetOptions {
            cols: 2,
            cell_w: 32,
            cell_h: 32,
            ..SheetOptions::default()
        };
        let plan = plan_sheet(&frames, &opts).unwrap();
        let mut seen = Vec::new();
        let r = render_planned(&frames, &opts, &plan, &mut |k| {
            seen.push(k);
            k < 1
        })
        .unwrap();
        assert!(r.is_none());
        assert_eq!(seen, [0, 1]);
    }

    proptest! {
        #![proptest_config(support::proptest_config(24))]

        /// Drawing a planned sheet cell by cell into the sheet gives the image, camera and
        /// statistics of `render_sheet`, and the plan's work is the sum of its cells'.
        #[test]
        fn planned_sheet_equals_render_sheet(
            n in 1usize..40, k in 1usize..6, cols in 1u32..4, cell in 16u32..64,
            sigma in 0.002f32..0.2, spread in 0.0f32..1.0, gap in 0u32..5,
        ) {
            let bufs: Vec<SplatBuffers> =
                (0..k).map(|j| cloud(n, sigma * (1.0 + j as f32 * 0.1), spread)).collect();
            let ranges = [SlotRange { offset: 0, count: n as u32 }];
            let frames: Vec<Frame> =
                bufs.iter().map(|b| Frame { buffers: b, ranges: &ranges }).collect();
            let opts = SheetOptions {
                cols, cell_w: cell, cell_h: cell + 3, gap, ..SheetOptions::default()
            };
            let (sheet, camera, stats) = render_sheet(&frames, &opts).unwrap();
            let plan = plan_sheet(&frames, &opts).unwrap();
            prop_assert_eq!(plan.camera, camera);
            prop_assert_eq!(plan.work.len(), k);
            prop_assert_eq!(plan.total_work(), plan.work.iter().sum::<u64>());
            let (image, stats2) =
                render_planned(&frames, &opts, &plan, &mut |_| true).unwrap().unwrap();
            prop_assert_eq!(stats2, stats);
            prop_assert!(image == sheet.compose().unwrap());
        }
    }
}
