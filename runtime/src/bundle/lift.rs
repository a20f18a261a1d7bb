//! A bundle's branches as one bound lift: each branch's texel or surface lift over its own mesh,
//! its gaussians in a contiguous run of the instance's slots (manifest order), coloured flat until
//! a decoder colours them.

use mien_core::lift::{
    BoundGaussian, BoundReport, SurfaceColors, surface_lift_weighted, texel_lift,
};
use mien_core::sink::SlotRange;

use super::{Branch, BranchLift, Bundle};
use crate::error::{Context, Result};

/// What [`bundle_lift`] builds.
pub(crate) type BranchesLift = (
    Vec<BoundGaussian>,
    Vec<[u32; 3]>,
    BoundReport,
    Vec<SlotRange>,
);

/// The branches' gaussians `(G,)` (triangle indices into the returned triangles), the triangles
/// `(T,3)` in rig-vertex indices, the merged report and each branch's slot range.
pub(crate) fn bundle_lift(
    b: &Bundle,
    rest_pos: &[[f32; 3]],
    rest_nrm: &[[f32; 3]],
) -> Result<BranchesLift> {
    let mut gaussians = Vec::new();
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    let mut ranges = Vec::new();
    let mut report = BoundReport {
        lift: "bundle".into(),
        ..Default::default()
    };
    for br in &b.branches {
        let t0 = triangles.len() as u32;
        let mut lift = branch_lift(br, rest_pos, rest_nrm)
            .with_context(|| format!("{}: building branch `{}`'s lift", b.file, br.name))?;
        let c = br.color.map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u32);
        let color = c[0] | (c[1] << 8) | (c[2] << 16) | (255 << 24);
        for g in &mut lift.gaussians {
            g.triangle += t0;
            g.color = color;
        }
        ranges.push(SlotRange {
            offset: gaussians.len() as u32,
            count: lift.gaussians.len() as u32,
        });
        report.gaussians += lift.report.gaussians;
        report.triangles += lift.report.triangles;
        report.fallback_frames += lift.report.fallback_frames;
        report.stretched_capped += lift.report.stretched_capped;
        gaussians.extend(lift.gaussians);
        triangles.extend_from_slice(&br.triangles);
    }
    Ok((gaussians, triangles, report, ranges))
}

/// One branch's lift; triangle indices are the branch's own (0 ..).
fn branch_lift(
    br: &Branch,
    rest_pos: &[[f32; 3]],
    rest_nrm: &[[f32; 3]],
) -> Result<mien_core::lift::BoundLift> {
    match (&br.lift, &br.corner_uv) {
        (BranchLift::Texel(o), Some(uv)) => {
            // One vertex per corner, so texture seams keep their own coordinates.
            let n = br.triangles.len();
            let mut pos = Vec::with_capacity(3 * n);
            let mut nrm = Vec::with_capacity(3 * n);
            let mut uvs = Vec::with_capacity(3 * n);
            let mut tris = Vec::with_capacity(n);
            for (f, t) in br.triangles.iter().enumerate() {
                for k in 0..3 {
                    pos.push(rest_pos[t[k] as usize]);
                    nrm.push(rest_nrm[t[k] as usize]);
                    uvs.push(uv[f][k]);
                }
                let b = 3 * f as u32;
                tris.push([b, b + 1, b + 2]);
            }
            let colors = SurfaceColors::untextured(&tris, &nrm, None);
            Ok(texel_lift(&pos, &nrm, &tris, &uvs, &colors, o)?)
        }
        (BranchLift::Texel(_), None) => Err(crate::error::Error::invalid(
            format!("branch `{}`", br.name),
            "the texel lift needs texture coordinates",
        )),
        (BranchLift::Surface(o), _) => {
            let colors = SurfaceColors::untextured(&br.triangles, rest_nrm, None);
            let local: Vec<[u32; 3]> = br.triangles.clone();
            Ok(surface_lift_weighted(
                rest_pos,
                rest_nrm,
                &local,
                &colors,
                &[],
                o,
            )?)
        }
    }
}

/// Each branch's slot range among `gaussians` (as [`bundle_lift`] built them: in branch order,
/// each on its branch's triangles).
pub(crate) fn ranges(b: &Bundle, gaussians: &[BoundGaussian]) -> Vec<SlotRange> {
    let mut out = Vec::with_capacity(b.branches.len());
    let (mut t_end, mut at) = (0u32, 0usize);
    for br in &b.branches {
        t_end += br.triangles.len() as u32;
        let start = at;
        while at < gaussians.len() && gaussians[at].triangle < t_end {
            at += 1;
        }
        out.push(SlotRange {
            offset: start as u32,
            count: (at - start) as u32,
        });
    }
    out
}
