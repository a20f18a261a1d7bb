//! The devices the conformance suite runs on — wgpu's and Vulkan's (with the Khronos validation
//! layer on: any message fails the test) — and the suite's shared pieces. Every test is written
//! once, generic over [`TestDevice`], and run on each device with [`on_devices!`].
//!
//! Without a device a test prints a notice and passes, unless `MIEN_REQUIRE_GPU=1` (then the
//! validation layer is required too).

#![allow(dead_code)]

use mien_gpu::GpuDevice;
use mien_vulkan::{ContextOptions, VulkanContext};
use mien_wgpu::WgpuContext;
use proptest::test_runner::{Config, RngSeed};

/// A device under test: the device layer, plus what a test checks after using it.
pub trait TestDevice: GpuDevice {
    /// `(limit_name, limit, needed)` when `e` is this device's typed over-limits error.
    fn limit_error(e: &mien_core::Error) -> Option<(&'static str, u64, u64)>;

    /// Fail when the device reported a problem nobody saw (Vulkan: validation messages). wgpu
    /// panics on an uncaptured validation error itself.
    fn after(&self) -> Result<(), String> {
        Ok(())
    }
}

fn backend_source(
    e: &mien_core::Error,
) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
    match e {
        mien_core::Error::Backend { source, .. } => Some(source.as_ref()),
        _ => None,
    }
}

impl TestDevice for WgpuContext {
    fn limit_error(e: &mien_core::Error) -> Option<(&'static str, u64, u64)> {
        match backend_source(e)?.downcast_ref::<mien_wgpu::Error>()? {
            mien_wgpu::Error::OverLimits {
                limit_name,
                limit,
                needed,
                ..
            } => Some((limit_name, *limit, *needed)),
            _ => None,
        }
    }
}

impl TestDevice for VulkanContext {
    fn limit_error(e: &mien_core::Error) -> Option<(&'static str, u64, u64)> {
        match backend_source(e)?.downcast_ref::<mien_vulkan::Error>()? {
            mien_vulkan::Error::OverLimits {
                limit_name,
                limit,
                needed,
                ..
            } => Some((limit_name, *limit, *needed)),
            _ => None,
        }
    }

    fn after(&self) -> Result<(), String> {
        let messages = self.take_validation_messages();
        if messages.is_empty() {
            Ok(())
        } else {
            Err(format!("validation layer: {}", messages.join("\n")))
        }
    }
}

/// The shared wgpu context, or `None` (with a notice) when there is no adapter and none is
/// required.
pub fn wgpu() -> Option<WgpuContext> {
    static CTX: std::sync::OnceLock<Option<WgpuContext>> = std::sync::OnceLock::new();
    CTX.get_or_init(|| match WgpuContext::new(&Default::default()) {
        Ok(c) => {
            eprintln!(
                "wgpu tests on {} ({:?}, {})",
                c.info().name,
                c.info().device_type,
                c.info().driver_info
            );
            Some(c)
        }
        Err(e) if mien_gpu::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
        Err(e) => {
            eprintln!("notice: skipping the wgpu runs: {e}");
            None
        }
    })
    .clone()
}

/// The shared Vulkan context with validation, or `None` (with a notice) when there is no device
/// and none is required.
pub fn vulkan() -> Option<VulkanContext> {
    static CTX: std::sync::OnceLock<Option<VulkanContext>> = std::sync::OnceLock::new();
    CTX.get_or_init(|| {
        let options = ContextOptions {
            validation: true,
            require_validation: mien_gpu::gpu_required(),
            allow_software: true,
        };
        match VulkanContext::new(&options) {
            Ok(c) => {
                eprintln!("vulkan tests on {}", c.name());
                Some(c)
            }
            Err(e) if mien_gpu::gpu_required() => panic!("MIEN_REQUIRE_GPU=1 but {e}"),
            Err(e) => {
                eprintln!("notice: skipping the Vulkan runs: {e}");
                None
            }
        }
    })
    .clone()
}

/// Run the generic test function `$f(&device, args…)` on every device present, then check the
/// device's own report ([`TestDevice::after`]); `$f` returns `Result<(), E>` with `E: Display`.
#[macro_export]
macro_rules! on_devices {
    ($f:ident $(, $arg:expr)* $(,)?) => {{
        if let Some(g) = $crate::common::wgpu() {
            let r = $f(&g $(, $arg)*);
            let after = $crate::common::TestDevice::after(&g);
            $crate::common::both("wgpu", r, after)?;
        }
        if let Some(g) = $crate::common::vulkan() {
            let r = $f(&g $(, $arg)*);
            let after = $crate::common::TestDevice::after(&g);
            $crate::common::both("vulkan", r, after)?;
        }
    }};
}

/// A test's result and the device's report after it, as one (naming the device).
pub fn both<E: std::fmt::Display>(
    device: &str,
    r: Result<(), E>,
    after: Result<(), String>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    if let Err(e) = r {
        return Err(proptest::test_runner::TestCaseError::fail(format!(
            "on {device}: {e}"
        )));
    }
    after.map_err(|m| proptest::test_runner::TestCaseError::fail(format!("on {device}: {m}")))
}

/// Proptest's configuration: a fixed seed (`$PROPTEST_RNG_SEED` to change it), `cases` or
/// `$MIEN_PROPTEST_CASES`.
pub fn config(cases: u32) -> Config {
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

/// The limit an over-limits error names when a backend was made `with_binding_limit` below the
/// device's.
pub const OVERRIDE: &str = "the binding size given to with_binding_limit";

/// The error type of a plain test: any message.
pub type TestResult = Result<(), String>;

/// Turn any error into the suite's message.
pub fn msg<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}
