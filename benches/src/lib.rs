//! `mien-benches`: the benchmark workloads of issue 8 (W1–W6, [`workloads`]), the bytes each must
//! move ([`bytes`]), one harness every backend runs them through ([`harness`]; [`cpu`], and `gpu`
//! over the device layer for wgpu and Vulkan), and the export the peer scripts in `benches/peers/` read ([`export`], [`npy`]).
//! `mien bench` and the criterion benches in `benches/benches/` both use it.

pub mod bytes;
pub mod cpu;
pub mod dynamics;
pub mod export;
#[cfg(any(feature = "wgpu", feature = "vulkan"))]
pub mod gpu;
pub mod harness;
pub mod machine;
pub mod npy;
pub mod plot;
pub mod workloads;

use harness::Bench;

/// The backends this build can bench, in order.
pub const BACKENDS: [&str; 4] = ["cpu", "cpu-fast", "wgpu", "vulkan"];

/// Open backend `name` (`cpu` — the exact CPU reference, `cpu-fast` — its fused multiply-add path
/// ([`mien_cpu::Precision::Fast`]), `wgpu`, `vulkan`). GPU backends accept a software device only
/// with `allow_software` (lavapipe is slower than the CPU backend and is for tests).
///
/// # Errors
/// An unknown name, a backend this build lacks, or no device.
pub fn open(name: &str, allow_software: bool) -> anyhow::Result<Box<dyn Bench>> {
    let _ = allow_software;
    match name {
        "cpu" => Ok(Box::new(cpu::CpuBench::EXACT)),
        "cpu-fast" => Ok(Box::new(cpu::CpuBench::FAST)),
        #[cfg(feature = "wgpu")]
        "wgpu" => Ok(Box::new(gpu::WgpuBench::new(allow_software)?)),
        #[cfg(feature = "vulkan")]
        "vulkan" => Ok(Box::new(gpu::VulkanBench::new(allow_software)?)),
        other if BACKENDS.contains(&other) => {
            anyhow::bail!("this build has no `{other}` backend (feature off)")
        }
        other => anyhow::bail!("unknown backend `{other}` (cpu, cpu-fast, wgpu, vulkan)"),
    }
}
