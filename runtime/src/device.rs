//! Where the characters are posed: the CPU (the reference), a wgpu device or a Vulkan device —
//! chosen at build time by the `wgpu` / `vulkan` features and at run time by [`Backend`], or
//! handed in by a caller who owns the device (`Device::Wgpu` from
//! `mien_wgpu::WgpuContext::from_device`, `Device::Vulkan` from
//! `mien_vulkan::VulkanContext::from_raw`; features `wgpu`, `vulkan`).

use std::str::FromStr;

use crate::error::{Error, Result};

/// Which backend poses the characters (DESIGN "Workspace": swapped by feature at build time and by
/// value at run time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU backend: the reference math, rayon-parallel.
    Cpu,
    /// wgpu compute (feature `wgpu`).
    Wgpu,
    /// Raw Vulkan through ash (feature `vulkan`).
    Vulkan,
    /// A real GPU through wgpu when there is one, else the CPU: a software adapter (lavapipe) is
    /// slower than the CPU backend and is never picked.
    #[default]
    Auto,
}

impl Backend {
    /// `cpu`, `wgpu`, `vulkan` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Wgpu => "wgpu",
            Backend::Vulkan => "vulkan",
            Backend::Auto => "auto",
        }
    }
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "cpu" => Backend::Cpu,
            "wgpu" => Backend::Wgpu,
            "vulkan" => Backend::Vulkan,
            "auto" => Backend::Auto,
            _ => {
                return Err(Error::invalid(
                    format!("backend `{s}`"),
                    "expected one of cpu, wgpu, vulkan, auto",
                ));
            }
        })
    }
}

/// How [`Device::open`] opens a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Accept a software device (lavapipe) when [`Backend::Wgpu`] or [`Backend::Vulkan`] is asked
    /// for by name (default true: it is a real implementation, used by the tests).
    /// [`Backend::Auto`] never takes one.
    pub allow_software: bool,
    /// Vulkan only: enable the Khronos validation layer and fail a frame on any message
    /// ([`Error::Validation`]). Default false.
    pub vulkan_validation: bool,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            allow_software: true,
            vulkan_validation: false,
        }
    }
}

impl DeviceOptions {
    /// The defaults, with `vulkan_validation` on when the environment sets
    /// `MIEN_VK_VALIDATION=1` (what `mien animate` honours).
    pub fn from_env() -> Self {
        DeviceOptions {
            vulkan_validation: std::env::var("MIEN_VK_VALIDATION").is_ok_and(|v| v == "1"),
            ..Default::default()
        }
    }
}

/// An opened device. Cheap to clone: GPU contexts are shared handles, so one device can serve
/// several [`crate::Runtime`]s.
#[derive(Clone)]
pub enum Device {
    /// The CPU.
    Cpu,
    /// A wgpu device — mien's own ([`Device::open`]) or the caller's
    /// (`mien_wgpu::WgpuContext::from_device`).
    #[cfg(feature = "wgpu")]
    Wgpu(mien_wgpu::WgpuContext),
    /// A Vulkan device — mien's own or an engine's (`mien_vulkan::VulkanContext::from_raw`).
    #[cfg(feature = "vulkan")]
    Vulkan(mien_vulkan::VulkanContext),
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device::{}", self.name())?;
        if let Some(a) = self.adapter() {
            write!(f, "({a})")?;
        }
        Ok(())
    }
}

impl Device {
    /// Open the device `choice` names, with [`DeviceOptions::default`]; returns it and why it was
    /// chosen (for a report: `asked for`, `found the GPU …`, `no GPU: …`).
    ///
    /// # Errors
    /// As [`Device::open_with`].
    pub fn open(choice: Backend) -> Result<(Device, String)> {
        Self::open_with(choice, &DeviceOptions::default())
    }

    /// Open the device `choice` names.
    ///
    /// # Errors
    /// [`Error::NotBuilt`] for a backend this build lacks; the backend's own error (no loader, no
    /// adapter, no device: `Error::Wgpu`, `Error::Vulkan`). [`Backend::Auto`] never
    /// fails: without a usable GPU it returns [`Device::Cpu`] and says why.
    pub fn open_with(choice: Backend, options: &DeviceOptions) -> Result<(Device, String)> {
        let _ = options;
        match choice {
            Backend::Cpu => Ok((Device::Cpu, "asked for".into())),
            #[cfg(feature = "wgpu")]
            Backend::Wgpu => {
                let ctx = mien_wgpu::WgpuContext::new(&mien_wgpu::ContextOptions {
                    allow_software: options.allow_software,
                    ..Default::default()
                })?;
                let w = Self::why(ctx.is_software());
                Ok((Device::Wgpu(ctx), w))
            }
            #[cfg(not(feature = "wgpu"))]
            Backend::Wgpu => Err(Error::NotBuilt {
                backend: "wgpu",
                feature: "wgpu",
            }),
            #[cfg(feature = "vulkan")]
            Backend::Vulkan => {
                let v = options.vulkan_validation;
                let ctx = mien_vulkan::VulkanContext::new(&mien_vulkan::ContextOptions {
                    validation: v,
                    require_validation: v,
                    allow_software: options.allow_software,
                })?;
                let w = Self::why(ctx.is_software());
                Ok((Device::Vulkan(ctx), w))
            }
            #[cfg(not(feature = "vulkan"))]
            Backend::Vulkan => Err(Error::NotBuilt {
                backend: "vulkan",
                feature: "vulkan",
            }),
            Backend::Auto => Ok(Self::auto()),
        }
    }

    /// Why a device asked for by name was used: a software one is slower than the CPU.
    #[cfg(any(feature = "wgpu", feature = "vulkan"))]
    fn why(software: bool) -> String {
        if software {
            "asked for; a software device: expect it to be slower than the cpu backend".into()
        } else {
            "asked for".into()
        }
    }

    #[cfg(feature = "wgpu")]
    fn auto() -> (Device, String) {
        match mien_wgpu::WgpuContext::new(&Default::default()) {
            Ok(ctx) if !ctx.is_software() => {
                let why = format!("found the GPU `{}`", ctx.info().name);
                (Device::Wgpu(ctx), why)
            }
            Ok(ctx) => (
                Device::Cpu,
                format!(
                    "the only adapter, `{}`, is a software rasteriser and slower than the CPU backend",
                    ctx.info().name
                ),
            ),
            Err(e) => (Device::Cpu, format!("no GPU: {e}")),
        }
    }

    #[cfg(not(feature = "wgpu"))]
    fn auto() -> (Device, String) {
        (Device::Cpu, "this build has no GPU backend".into())
    }

    /// `cpu`, `wgpu` or `vulkan`.
    pub fn name(&self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            #[cfg(feature = "wgpu")]
            Device::Wgpu(_) => "wgpu",
            #[cfg(feature = "vulkan")]
            Device::Vulkan(_) => "vulkan",
        }
    }

    /// The adapter in words, for a report (`None` on the CPU).
    pub fn adapter(&self) -> Option<String> {
        match self {
            Device::Cpu => None,
            #[cfg(feature = "wgpu")]
            Device::Wgpu(ctx) => {
                let i = ctx.info();
                Some(format!(
                    "{} ({:?}, {:?}, {} {})",
                    i.name, i.device_type, i.backend, i.driver, i.driver_info
                ))
            }
            #[cfg(feature = "vulkan")]
            Device::Vulkan(ctx) => {
                use mien_vulkan::ash::vk;
                let p = ctx.properties();
                Some(format!(
                    "{} ({:?}, Vulkan {}.{}.{}, driver {:#x})",
                    ctx.name(),
                    p.device_type,
                    vk::api_version_major(p.api_version),
                    vk::api_version_minor(p.api_version),
                    vk::api_version_patch(p.api_version),
                    p.driver_version
                ))
            }
        }
    }

    /// Whether the device is a software implementation (lavapipe); false on the CPU.
    pub fn is_software(&self) -> bool {
        match self {
            Device::Cpu => false,
            #[cfg(feature = "wgpu")]
            Device::Wgpu(ctx) => ctx.is_software(),
            #[cfg(feature = "vulkan")]
            Device::Vulkan(ctx) => ctx.is_software(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for b in [Backend::Cpu, Backend::Wgpu, Backend::Vulkan, Backend::Auto] {
            assert_eq!(b.name().parse::<Backend>().unwrap(), b);
        }
        let e = "gpu".parse::<Backend>().unwrap_err().to_string();
        assert!(
            e.contains("backend `gpu`") && e.contains("cpu, wgpu, vulkan, auto"),
            "{e}"
        );
    }

    #[test]
    fn cpu_and_auto_always_open() {
        let (d, why) = Device::open(Backend::Cpu).unwrap();
        assert_eq!((d.name(), why.as_str()), ("cpu", "asked for"));
        assert!(d.adapter().is_none() && !d.is_software());
        let (d, why) = Device::open(Backend::Auto).unwrap();
        assert!(!d.is_software(), "auto took a software device: {why}");
    }
}
