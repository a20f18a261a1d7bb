//! `mien-benches`: the benchmark workloads of issue 8 (W1–W6, [`workloads`]), the bytes each must
//! move ([`bytes`]), one harness every backend runs them through ([`harness`]; [`cpu`], `wgpu`,
//! `vulkan`), and the export the peer scripts in `benches/peers/` read ([`export`], [`npy`]).
//! `mien bench` and the criterion benches in `benches/benches/` both use it.

pub mod bytes;
pub mod cpu;
pub mod export;
pub mod harness;
pub mod machine;
pub mod npy;
pub mod plot;
#[cfg(feature = "vulkan")]
pub mod vulkan;
#[cfg(feature = "wgpu")]
pub mod wgpu;
pub mod workloads;

use harness::Bench;

/// The backends this build can bench, in order.
pub const BACKENDS: [&str; 3] = ["cpu", "wgpu", "vulkan"];

/// Open backend `name` (`cpu`, `wgpu`, `vulkan`). GPU backends accept a software device only
/// with `allow_software` (lavapipe is slower than the CPU backend and is for tests).
///
/// # Errors
/// An unknown name, a backend this build lacks, or no device.
pub fn open(name: &str, allow_software: bool) -> anyhow::Result<Box<dyn Bench>> {
    let _ = allow_software;
    match name {
        "cpu" => Ok(Box::new(cpu::CpuBench)),
        #[cfg(feature = "wgpu")]
        "wgpu" => {
            let b = wgpu::WgpuBench::new(allow_software)?;
            anyhow::ensure!(
                allow_software || !b.context().is_software(),
                "only a software adapter ({}) is present (--allow-software accepts it, for trying the harness)",
                b.context().info().name
            );
            Ok(Box::new(b))
        }
        #[cfg(feature = "vulkan")]
        "vulkan" => Ok(Box::new(vulkan::VulkanBench::new(allow_software)?)),
        other if BACKENDS.contains(&other) => {
            anyhow::bail!("this build has no `{other}` backend (feature off)")
        }
        other => anyhow::bail!("unknown backend `{other}` (cpu, wgpu, vulkan)"),
    }
}
