//! The CPU splat rasteriser and the preview camera, against values worked out here.

use glam::DVec3;
use mien_core::preview::{Camera, FRAMING_MARGIN, rasterize, splat_bounds};
use mien_core::sink::{SlotRange, SplatBuffers, pack4x8unorm};

const FOV: f64 = 30.0 * std::f64::consts::PI / 180.0;

/// A 101×101 camera at (0,0,1) looking at the origin.
fn front_camera(size: u32) -> Camera {
    Camera {
        eye: DVec3::new(0.0, 0.0, 1.0),
        target: DVec3::ZERO,
        up: DVec3::Y,
        fov_y: FOV,
        width: size,
        height: size,
        near: 0.01,
    }
}

fn put(b: &mut SplatBuffers, slot: usize, c: [f32; 3], sigma: f32, rgba: [f32; 4]) {
    let s2 = sigma * sigma;
    b.center[slot] = [c[0], c[1], c[2], 0.0];
    b.color[slot] = pack4x8unorm(rgba);
    b.cov_a[slot] = [s2, 0.0, 0.0, s2];
    b.cov_b[slot] = [0.0, s2, 0.0, 0.0];
}

fn all(n: u32) -> Vec<SlotRange> {
    vec![SlotRange {
        offset: 0,
        count: n,
    }]
}

#[test]
fn single_gaussian_peak_and_footprint() {
    let cam = front_camera(101);
    let sigma = 0.03f32;
    let mut b = SplatBuffers::new(1);
    put(&mut b, 0, [0.0; 3], sigma, [1.0, 1.0, 1.0, 0.5]);
    let out = rasterize(&cam, &b, &all(1), [0.0; 3]).unwrap();
    assert_eq!(out.stats.drawn, 1);

    // Focal length (H/2)/tan(fov/2) = 188.5 px; depth 1 m; projected σ = f·σ/d = 5.65 px.
    let focal = 50.5 / (FOV / 2.0).tan();
    let sigma_px = focal * f64::from(sigma) / 1.0;
    let o = 128.0 / 255.0; // 0.5 packs to byte 128

    // The peak is the centre pixel (50, 50), whose centre (50.5, 50.5) is the principal point.
    let (mut best, mut at) = (0u8, (0, 0));
    for (x, y, p) in out.image.enumerate_pixels() {
        if p[0] > best {
            (best, at) = (p[0], (x, y));
        }
    }
    assert_eq!(at, (50, 50));
    assert_eq!(best, 128);

    // Footprint: the pixels at or above e^{−1/2} of the peak cover ≈ π·σ'² with σ'² = σ_px² + 0.3.
    let level = 255.0 * o * (-0.5f64).exp();
    let area = out
        .image
        .pixels()
        .filter(|p| f64::from(p[0]) >= level)
        .count() as f64;
    let radius = (area / std::f64::consts::PI).sqrt();
    assert!(
        (radius - sigma_px).abs() < 1.0,
        "footprint radius {radius} vs projected σ {sigma_px}"
    );

    // Every pixel against the Gaussian profile (±1 for rounding and the 1/255 and 3σ cut-offs).
    let s2 = sigma_px * sigma_px + 0.3;
    for (x, y, p) in out.image.enumerate_pixels() {
        let (dx, dy) = (f64::from(x) + 0.5 - 50.5, f64::from(y) + 0.5 - 50.5);
        let want = 255.0 * o * (-0.5 * (dx * dx + dy * dy) / s2).exp();
        assert!(
            (f64::from(p[0]) - want).abs() <= 1.0,
            "pixel ({x},{y}) = {} vs {want}",
            p[0]
        );
        assert_eq!(p[0], p[1]);
        assert_eq!(p[1], p[2]);
    }
}

#[test]
fn off_axis_gaussian_lands_where_projected() {
    // A point 5 cm right and 2 cm up at depth 1 m projects to (50.5 + f·0.05, 50.5 − f·0.02).
    let cam = front_camera(101);
    let mut b = SplatBuffers::new(1);
    put(&mut b, 0, [0.05, 0.02, 0.0], 0.006, [1.0, 1.0, 1.0, 1.0]);
    let out = rasterize(&cam, &b, &all(1), [0.0; 3]).unwrap();
    let focal = 50.5 / (FOV / 2.0).tan();
    let (u, v) = (50.5 + focal * 0.05, 50.5 - focal * 0.02);
    // The pixel whose centre (i + ½, j + ½) is nearest.
    let (px, py) = ((u - 0.5).round() as u32, (v - 0.5).round() as u32);
    let peak = out.image.get_pixel(px, py)[0];
    assert!(
        out.image.pixels().all(|p| p[0] <= peak),
        "peak not at ({px},{py})"
    );
    assert!(peak > 200);
}

#[test]
fn nearer_gaussian_wins() {
    let cam = front_camera(51);
    // Red nearer (z = 0.2, depth 0.8), blue farther (z = −0.2); try both slot orders.
    for swap in [false, true] {
        let mut b = SplatBuffers::new(2);
        let (near, far) = if swap { (1, 0) } else { (0, 1) };
        put(&mut b, near, [0.0, 0.0, 0.2], 0.02, [1.0, 0.0, 0.0, 1.0]);
        put(&mut b, far, [0.0, 0.0, -0.2], 0.02, [0.0, 0.0, 1.0, 1.0]);
        let out = rasterize(&cam, &b, &all(2), [0.0; 3]).unwrap();
        // Front to back: red·0.99 + blue·0.99·0.01 = (252.5, 0, 2.5).
        let p = out.image.get_pixel(25, 25);
        assert!(p[0] >= 250 && p[2] <= 3, "swap {swap}: {p:?}");
    }
}

#[test]
fn empty_input_and_skipped_gaussians_give_background() {
    let cam = front_camera(31);
    let bg = [0.2f32, 0.4, 0.6];
    let want = image::Rgb([51u8, 102, 153]);
    let b = SplatBuffers::new(3);
    let out = rasterize(&cam, &b, &[], bg).unwrap();
    assert!(out.image.pixels().all(|p| *p == want));
    // Three cleared slots (opacity 0).
    let out = rasterize(&cam, &b, &all(3), bg).unwrap();
    assert!(out.image.pixels().all(|p| *p == want));
    assert_eq!(out.stats.transparent, 3);
    // Behind the camera, NaN centre, far off screen.
    let mut b = SplatBuffers::new(3);
    put(&mut b, 0, [0.0, 0.0, 2.0], 0.01, [1.0; 4]);
    put(&mut b, 1, [f32::NAN, 0.0, 0.0], 0.01, [1.0; 4]);
    put(&mut b, 2, [5.0, 0.0, 0.0], 0.01, [1.0; 4]);
    let out = rasterize(&cam, &b, &all(3), bg).unwrap();
    assert!(out.image.pixels().all(|p| *p == want));
    assert_eq!(
        (
            out.stats.behind,
            out.stats.degenerate,
            out.stats.offscreen,
            out.stats.drawn
        ),
        (1, 1, 1, 0)
    );
}

#[test]
fn output_is_deterministic() {
    // 400 splats from a fixed SplitMix64 stream, many at equal depth (tie-break by slot).
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f32 / (1u64 << 53) as f32
    };
    let mut b = SplatBuffers::new(400);
    for i in 0..400 {
        let z = if i % 2 == 0 { 0.0 } else { next() * 0.2 - 0.1 };
        put(
            &mut b,
            i,
            [next() * 0.3 - 0.15, next() * 0.3 - 0.15, z],
            0.005 + 0.02 * next(),
            [next(), next(), next(), next()],
        );
    }
    let cam = front_camera(96);
    let a = rasterize(&cam, &b, &all(400), [0.1; 3]).unwrap();
    let c = rasterize(&cam, &b, &all(400), [0.1; 3]).unwrap();
    assert_eq!(a.image.as_raw(), c.image.as_raw());
    assert!(a.stats.drawn > 300);
}

#[test]
fn framing_fits_the_sphere_and_yaw_swings_to_plus_x() {
    let centre = DVec3::new(0.0, 1.6, 0.05);
    let r = 0.12;
    let cam = Camera::framing(centre, r, 160, 90, FOV, 0.0).unwrap();
    // Wide image: the vertical fov limits; D = 1.1·r / sin(fov/2).
    let d = FRAMING_MARGIN * r / (FOV / 2.0).sin();
    assert!((cam.eye - (centre + DVec3::new(0.0, 0.0, d))).length() < 1e-12);
    let (u, v, depth) = cam.project(centre).unwrap();
    assert!((u - 80.0).abs() < 1e-9 && (v - 45.0).abs() < 1e-9 && (depth - d).abs() < 1e-12);
    // The sphere's top and bottom are inside the image with the margin left over.
    for dir in [DVec3::Y, -DVec3::Y, DVec3::X, -DVec3::X] {
        let (u, v, _) = cam.project(centre + r * dir).unwrap();
        assert!(
            (0.0..160.0).contains(&u) && (0.0..90.0).contains(&v),
            "{dir}: ({u}, {v})"
        );
    }
    let side = Camera::framing(centre, r, 64, 64, FOV, std::f64::consts::FRAC_PI_2).unwrap();
    assert!((side.eye.x - centre.x - FRAMING_MARGIN * r / (FOV / 2.0).sin()).abs() < 1e-9);
    assert!(Camera::framing(centre, 0.0, 64, 64, FOV, 0.0).is_err());
    assert!(Camera::framing(centre, r, 0, 64, FOV, 0.0).is_err());
    assert!(Camera::framing(centre, r, 64, 100_000, FOV, 0.0).is_err());
    assert!(Camera::framing(centre, r, 64, 64, 4.0, 0.0).is_err());
}

#[test]
fn bounds_cover_visible_splats_only() {
    let mut b = SplatBuffers::new(3);
    put(&mut b, 0, [1.0, 2.0, 3.0], 0.1, [1.0; 4]);
    put(&mut b, 1, [-1.0, 0.0, 0.0], 0.0, [1.0; 4]);
    put(&mut b, 2, [50.0, 50.0, 50.0], 0.1, [1.0, 1.0, 1.0, 0.0]); // transparent: ignored
    let bb = splat_bounds(&b, &all(3)).unwrap().unwrap();
    let eps = 1e-6;
    // min: slot 1 (a point); max: slot 0's centre + 3σ.
    assert!(
        (bb.min - DVec3::new(-1.0, 0.0, 0.0)).abs().max_element() < eps,
        "{bb:?}"
    );
    assert!(
        (bb.max - DVec3::new(1.3, 2.3, 3.3)).abs().max_element() < eps,
        "{bb:?}"
    );
    assert!(
        splat_bounds(
            &b,
            &[SlotRange {
                offset: 2,
                count: 1
            }]
        )
        .unwrap()
        .is_none()
    );
    assert!(
        splat_bounds(
            &b,
            &[SlotRange {
                offset: 2,
                count: 2
            }]
        )
        .is_err()
    );
}

#[test]
fn raster_work_counts_each_clipped_box_and_the_image() {
    use mien_core::preview::raster_work;
    let cam = front_camera(101);
    let mut b = SplatBuffers::new(3);
    // Slot 0: σ = 3 cm at the principal point, depth 1 m. Slot 1 transparent, slot 2 far off
    // screen: neither adds work.
    put(&mut b, 0, [0.0; 3], 0.03, [1.0; 4]);
    put(&mut b, 2, [5.0, 0.0, 0.0], 0.01, [1.0; 4]);
    // Worked by hand: f = 50.5 / tan 15° = 188.47 px, σ' = f·σ = 5.654 px; the screen covariance
    // is isotropic, a = c = σ'² + 0.3, det = a², so λ_max = a + √0.1 (3DGS's floor on the
    // discriminant); radius ⌈3·√λ_max⌉ = 18 px around (50.5, 50.5): columns and rows
    // ⌊32.5⌋ = 32 .. ⌈68.5⌉ = 69, a 37 × 37 box.
    let f = 50.5 / (FOV / 2.0).tan();
    let a = (f * 0.03f64).powi(2) + 0.3;
    let radius = (3.0 * (a + 0.1f64.sqrt()).sqrt()).ceil();
    assert_eq!(radius, 18.0);
    let side = ((50.5 + radius).ceil() - (50.5 - radius).floor()) as u64;
    assert_eq!(side, 37);
    assert_eq!(
        raster_work(&cam, &b, &all(3)).unwrap(),
        side * side + 101 * 101
    );
    // Nothing drawn: the resolve pass alone.
    assert_eq!(raster_work(&cam, &b, &[]).unwrap(), 101 * 101);
    // A box clipped by the image edge counts only its part inside: centred on pixel column 0.
    let mut c = SplatBuffers::new(1);
    let x = -50.5 / f + 0.5 / f; // projects to u = 0.5
    put(&mut c, 0, [x as f32, 0.0, 0.0], 0.03, [1.0; 4]);
    let w = raster_work(&cam, &c, &all(1)).unwrap() - 101 * 101;
    // Columns 0 .. ⌈0.5 + 18⌉ = 19 inside, 37 rows.
    assert_eq!(w, 19 * 37);
}
