//! Captured splats on a character: read a capture (3DGS `.ply`, SuperSplat compressed `.ply`,
//! SPZ), bind it to the character's rest pose ([`mien_core::lift::bind`]) and store the embedding
//! ([`mien_core::io::bound_ply`]); a runtime then plays it with [`crate::LiftKind::Capture`].

use std::path::Path;
use std::sync::Arc;

use mien_core::io::bound_ply::{BoundCapture, parse_bound_ply, write_bound_ply};
use mien_core::io::ply::SplatCloud;
use mien_core::lift::{BindOptions, BindReport, FarGaussians, JointAnchors, bind_splats};

use crate::error::{Context, Error, Result};
use crate::{Asset, Device, Runtime, RuntimeOptions};

/// Read a captured splat cloud by extension: `.ply` (INRIA or SuperSplat compressed) or `.spz`.
///
/// # Errors
/// Another extension; the readers' errors (bounded reads, typed refusals naming the field).
pub fn read_capture(path: &Path) -> Result<SplatCloud> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("ply") => Ok(mien_core::io::ply::read_splat_ply(path)?),
        Some("spz") => Ok(mien_core::io::spz::read_spz(path)?),
        _ => Err(Error::invalid(
            path.display().to_string(),
            "a capture is a 3DGS .ply (INRIA or SuperSplat compressed) or an .spz",
        )),
    }
}

/// A capture bound to an asset: the file bytes to store, the embedding, and what binding did.
#[derive(Debug)]
pub struct BoundFile {
    /// The bound-capture `.ply` ([`write_bound_ply`]).
    pub bytes: Vec<u8>,
    /// The embedding, ready for [`crate::LiftKind::Capture`].
    pub capture: Arc<BoundCapture>,
    /// Distances, far and dropped gaussians, SH bands not carried.
    pub report: BindReport,
}

/// Bind `cloud` to `asset`'s rest pose in world (posed once on the CPU). With
/// [`FarGaussians::Joint`] the rest pose includes the rig's joint anchors
/// ([`mien_core::rig::anchor`]) and the file records them, so a runtime playing it appends them
/// too ([`crate::LiftKind::Capture`]).
///
/// # Errors
/// A linear head (refused: a capture binds to a glTF/VRM character's triangles); the binding's
/// refusals (a capture with a non-finite gaussian, named by index).
pub fn bind_capture(
    asset: &Arc<Asset>,
    cloud: &SplatCloud,
    opts: &BindOptions,
) -> Result<BoundFile> {
    if asset.rig().is_none() {
        return Err(Error::invalid(
            asset.source(),
            "captured splats bind to a glTF/VRM character; a linear head pack is not supported",
        ));
    }
    let options = RuntimeOptions {
        instances: 1,
        lift: None,
    };
    let joint = opts.far == FarGaussians::Joint;
    let posing = if joint {
        Arc::new(asset.with_joint_anchors()?)
    } else {
        Arc::clone(asset)
    };
    let mut rt = Runtime::new(Arc::clone(&posing), &Device::Cpu, &options)?;
    let rest = rt.posed(0)?;
    let tris = posing.triangles();
    let dominant = asset
        .rig()
        .map(|r| r.dominant_palette())
        .unwrap_or_default();
    let anchors = joint.then(|| JointAnchors {
        first_triangle: asset.triangles().len() as u32,
        dominant: &dominant,
    });
    let (lift, report) = bind_splats(cloud, &rest.positions, &rest.normals, tris, anchors, opts)
        .with_context(|| format!("binding to {}", asset.source()))?;
    let anchor_count = (tris.len() - asset.triangles().len()) as u32;
    let bytes = write_bound_ply(
        cloud,
        &report.kept,
        &lift,
        asset.source(),
        asset.vertex_count(),
        anchor_count,
    )?;
    let capture = parse_bound_ply(&bytes, "the bound capture just written")?;
    Ok(BoundFile {
        bytes,
        capture: Arc::new(capture),
        report,
    })
}

/// Read a bound capture written by [`bind_capture`] (checked against a character when a runtime
/// attaches it).
///
/// # Errors
/// Not a regular file or over 2 GiB; [`parse_bound_ply`]'s refusals.
pub fn read_bound_capture(path: &Path) -> Result<Arc<BoundCapture>> {
    let bytes =
        mien_core::io::read::read_file_capped(path, mien_core::io::bound_ply::MAX_BOUND_BYTES)?;
    Ok(Arc::new(parse_bound_ply(
        &bytes,
        &path.display().to_string(),
    )?))
}
