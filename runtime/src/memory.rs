//! The host-memory check [`crate::Runtime::new`] makes before allocating: a runtime whose buffers
//! live in host memory (the CPU device, or a software adapter such as lavapipe) and would need
//! more than the system has available is refused, since an allocation that large aborts the
//! process or wakes the OOM killer.

use crate::asset::{Asset, Model};
use crate::device::Device;
use crate::error::{Error, Result};

/// Bytes of memory per instance and vertex a runtime holds where the device keeps its buffers in
/// host memory (the CPU, or a software adapter such as lavapipe): posed position and normal (24),
/// the splat sink's slot (centre 16, colour 4, covariance 32), and on a GPU device that keeps one
/// the intermediate copy (24: a linear head's head-local vertices, a tangent rig's morphed
/// vertices; a rig without tangents is morphed and skinned in one pass and keeps none); a rig that
/// carries tangents adds 16. [`crate::Runtime::new`] refuses a runtime whose total
/// exceeds the memory the system has available (Linux `MemAvailable`) before allocating.
pub const HOST_BYTES_PER_VERTEX: (u64, u64) = (24 + 52, 24 + 24 + 52);

/// Refuse `n` instances of `asset` on `device` when they need more host memory than is available
/// (only where the device's buffers are host memory; a GPU's own memory is its driver's to refuse).
///
/// # Errors
/// [`Error::Invalid`] naming the instance count, the estimate and what is available.
pub(crate) fn check_runtime(
    asset: &Asset,
    device: &Device,
    n: u32,
    lift: Option<&crate::lift::LiftOptions>,
) -> Result<()> {
    if !(device.is_software() || matches!(device, Device::Cpu)) {
        return Ok(());
    }
    let v = asset.vertex_count();
    // The lift's sink is known from its options before anything is built (the surface lift's
    // target, one slot per vertex for the debug lift, a capture's gaussians); the exact count —
    // the texel lift's, the cloth's and the hair's — is checked again once the lift is attached.
    let slots = match lift.map(|l| &l.kind) {
        Some(crate::lift::LiftKind::Surface(o)) => u64::from(o.target),
        Some(crate::lift::LiftKind::Debug) => u64::from(v),
        Some(crate::lift::LiftKind::Capture(c)) => c.lift.gaussians.len() as u64,
        _ => 0,
    };
    let need = rig_host_bytes(asset, device, n) + u64::from(n) * slots * SINK_BYTES_PER_SLOT;
    check_memory(n, v, "vertices", need, available_memory(), device.name())
}

/// Bytes of one splat slot of the sink in host memory: centre 16, colour 4, covariance 32.
pub const SINK_BYTES_PER_SLOT: u64 = 52;

/// Host bytes the posed vertices of `n` instances of `asset` hold on `device` where its buffers
/// are host memory ([`host_bytes`]); the lift's check adds its sink to this (the two live
/// together).
pub(crate) fn rig_host_bytes(asset: &Asset, device: &Device, n: u32) -> u64 {
    let tangents = matches!(asset.model(), Model::Rig(r) if !r.tangents.is_empty());
    let fused = matches!(asset.model(), Model::Rig(r) if r.tangents.is_empty());
    host_bytes(
        n,
        asset.vertex_count(),
        !matches!(device, Device::Cpu) && !fused,
        tangents,
    )
}

/// Host bytes `n` instances of `v` vertices hold ([`HOST_BYTES_PER_VERTEX`]; `copy`: a software
/// adapter's buffers with the intermediate copy).
pub(crate) fn host_bytes(n: u32, v: u32, copy: bool, tangents: bool) -> u64 {
    let per = if copy {
        HOST_BYTES_PER_VERTEX.1
    } else {
        HOST_BYTES_PER_VERTEX.0
    } + if tangents { 16 } else { 0 };
    u64::from(n) * u64::from(v) * per
}

/// The memory the system can still give (Linux: `MemAvailable` of `/proc/meminfo`), or `None`
/// where it cannot be read.
pub(crate) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Refuse a runtime whose host memory `need` exceeds `available` (when known), before anything
/// is allocated: an allocation that large would abort the process or wake the OOM killer.
pub(crate) fn check_memory(
    n: u32,
    v: u32,
    unit: &str,
    need: u64,
    available: Option<u64>,
    device: &str,
) -> Result<()> {
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    match available {
        Some(avail) if need > avail => Err(Error::invalid(
            format!("instances {n}"),
            format!(
                "{n} instances of {v} {unit} need about {:.1} GiB on the {device} device (host memory), and {:.1} GiB is available; use fewer instances per runtime",
                gib(need),
                gib(avail)
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn a_runtime_larger_than_the_available_memory_is_refused_before_allocating() {
        // facecap (4368 vertices) × 65535 on the CPU: 65535 · 4368 · 76 bytes ≈ 20.3 GiB.
        let need = host_bytes(65_535, 4368, false, false);
        assert_eq!(need, 65_535 * 4368 * 76);
        let e = check_memory(65_535, 4368, "vertices", need, Some(8 << 30), "cpu")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("instances 65535") && e.contains("20.3 GiB") && e.contains("8.0 GiB"),
            "{e}"
        );
        assert!(check_memory(65_535, 4368, "vertices", need, Some(need), "cpu").is_ok());
        assert!(check_memory(65_535, 4368, "vertices", need, None, "cpu").is_ok());
        // A software adapter holds the morphed copy too; tangents add 16 bytes.
        assert_eq!(host_bytes(2, 10, true, true), 2 * 10 * (100 + 16));
        assert!(available_memory().is_none_or(|m| m > 0));
    }
}
