//! The safe layer's device: a Vulkan instance + device mien creates, or an engine's; its queue,
//! command pool, pipeline cache, pipelines and the submissions in flight. Every handle is destroyed in
//! `Drop`; resources a submission uses are kept alive until its fence signals.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ash::vk;

use crate::error::{Error, Result, VkResultExt};
use crate::frames::InFlight;
use crate::memory::{DedicatedAllocator, MemoryAllocator};
use crate::pipelines::Pipelines;
use crate::raw;
use crate::timing::Timestamps;

/// The longest mien waits for one submission before reporting [`Error::Timeout`] (never hangs).
pub const WAIT_LIMIT: Duration = Duration::from_secs(120);

/// How [`VulkanContext::new`] sets up.
#[derive(Clone, Copy, Debug)]
pub struct ContextOptions {
    /// Enable `VK_LAYER_KHRONOS_validation` when it is installed and collect its messages
    /// ([`VulkanContext::take_validation_messages`]).
    pub validation: bool,
    /// Fail with [`Error::NoDevice`] when validation is asked for but the layer is missing.
    pub require_validation: bool,
    /// Accept a software device (lavapipe): slower than the CPU backend, but a real Vulkan.
    pub allow_software: bool,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            validation: false,
            require_validation: false,
            allow_software: true,
        }
    }
}

/// What every buffer keeps alive: the device, the allocator, and (when mien created them) the
/// instance and loader, destroyed last.
pub(crate) struct DeviceShared {
    pub device: ash::Device,
    pub instance: ash::Instance,
    pub allocator: Arc<dyn MemoryAllocator>,
    owned: bool,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    pub messages: Box<raw::Messages>,
    _entry: Option<ash::Entry>,
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // SAFETY: mien created the device and instance; every buffer (which holds an Arc of this)
        // is gone, so nothing uses them; wait for the GPU before destroying.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

pub(crate) struct ContextInner {
    pub shared: Arc<DeviceShared>,
    pub physical: vk::PhysicalDevice,
    pub props: vk::PhysicalDeviceProperties,
    pub name: String,
    pub family: u32,
    pub(crate) queue: Mutex<vk::Queue>,
    /// Command pools not recording or in flight. An encoder takes one for itself (a pool is
    /// externally synchronised, so two threads never record from one) and its submission returns it
    /// reset once the fence signals; in steady state nothing is created per frame.
    /// Each with the one command buffer allocated from it, reused after the pool's reset (a reset
    /// returns it to the initial state; allocating one per frame leaked them).
    pub(crate) pools: Mutex<Vec<(vk::CommandPool, vk::CommandBuffer)>>,
    /// Unsignalled fences of retired submissions, reused: creating a fence costs ~270 µs on the
    /// H200's driver (measured per frame), more than a small frame's GPU work.
    pub(crate) fences: Mutex<Vec<vk::Fence>>,
    pub cache: vk::PipelineCache,
    pub pipelines: Pipelines,
    pub(crate) in_flight: Mutex<Vec<InFlight>>,
    /// Submission serials, in order.
    pub(crate) serial: std::sync::atomic::AtomicU64,
    /// Per-frame writes waiting for the next submission ([`crate::staging`]).
    pub(crate) staging: Mutex<crate::staging::Staging>,
    /// Staging chunks made so far (a diagnostic).
    pub(crate) staging_chunks: std::sync::atomic::AtomicU64,
    pub(crate) timestamps: Option<Timestamps>,
    pub(crate) lost: AtomicBool,
    pub software: bool,
    pub caps: mien_gpu::Caps,
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        let d = &self.shared.device;
        // SAFETY: this context created the pool, cache, fences and pipelines on `d`; waiting for the
        // device first means no pending work uses them.
        unsafe {
            let _ = d.device_wait_idle();
            if let Ok(mut f) = self.in_flight.lock() {
                for s in f.drain(..) {
                    d.destroy_fence(s.fence, None);
                    d.destroy_command_pool(s.pool, None);
                    if let Some((p, _)) = s.pre {
                        d.destroy_command_pool(p, None);
                    }
                }
            }
            self.pipelines.destroy(d);
            if let Some(t) = &self.timestamps {
                t.destroy(d);
            }
            d.destroy_pipeline_cache(self.cache, None);
            if let Ok(mut p) = self.pools.lock() {
                for (pool, _) in p.drain(..) {
                    d.destroy_command_pool(pool, None);
                }
            }
            if let Ok(mut f) = self.fences.lock() {
                for fence in f.drain(..) {
                    d.destroy_fence(fence, None);
                }
            }
        }
    }
}

/// A Vulkan device mien runs on. Cheap to clone (shared).
#[derive(Clone)]
pub struct VulkanContext {
    pub(crate) inner: Arc<ContextInner>,
}

impl std::fmt::Debug for VulkanContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanContext")
            .field("device", &self.inner.name)
            .finish()
    }
}

fn device_name(props: &vk::PhysicalDeviceProperties) -> String {
    // SAFETY: Vulkan NUL-terminates device_name.
    unsafe { CStr::from_ptr(props.device_name.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

impl VulkanContext {
    /// Load the Vulkan loader, create an instance (with validation when asked and available), pick
    /// the best device with a compute queue (discrete > integrated > virtual > software) that supports
    /// Vulkan 1.1, and create a device with the features the kernels need.
    ///
    /// # Errors
    /// [`Error::NoLoader`], [`Error::NoDevice`], [`Error::MissingFeature`], out of memory.
    pub fn new(options: &ContextOptions) -> Result<Self> {
        // SAFETY: loading the system loader; ash checks the library's symbols.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::NoLoader {
            reason: e.to_string(),
        })?;
        // SAFETY: entry is loaded.
        let (layers, exts) = unsafe { raw::available(&entry) };
        let has_validation = layers
            .iter()
            .any(|l| l.as_str() == raw::VALIDATION_LAYER.to_str().unwrap_or_default());
        if options.validation && options.require_validation && !has_validation {
            return Err(Error::NoDevice { reason: "validation was required but VK_LAYER_KHRONOS_validation is not installed (apt-get install vulkan-validationlayers)".into() });
        }
        let validation = options.validation && has_validation;
        let debug_utils = exts.iter().any(|e| e.as_str() == "VK_EXT_debug_utils");
        let mut enabled_layers: Vec<&CStr> = Vec::new();
        if validation {
            enabled_layers.push(raw::VALIDATION_LAYER);
        }
        let mut enabled_exts: Vec<&CStr> = Vec::new();
        if debug_utils {
            enabled_exts.push(ash::ext::debug_utils::NAME);
        }
        // SAFETY: names checked against what the loader reports.
        let instance = unsafe { raw::create_instance(&entry, &enabled_layers, &enabled_exts) }?;
        let messages: Box<raw::Messages> = Box::default();
        let debug = if debug_utils {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: instance has the extension; `messages` is boxed and lives in DeviceShared,
            // which destroys the messenger before dropping it.
            match unsafe { raw::create_messenger(&du, &messages) } {
                Ok(m) => Some((du, m)),
                Err(_) => None,
            }
        } else {
            None
        };
        let picked = Self::pick(&instance, options.allow_software);
        let (pd, family) = match picked {
            Ok(x) => x,
            Err(e) => {
                // SAFETY: nothing else was created from the instance but the messenger.
                unsafe {
                    if let Some((du, m)) = &debug {
                        du.destroy_debug_utils_messenger(*m, None);
                    }
                    instance.destroy_instance(None);
                }
                return Err(e);
            }
        };
        let need = mien_shaders::REQUIRED_FEATURES;
        // shaderFloat16 is enabled whenever the device has it, so kernels may use f16 where
        // `Caps::f16` says so; the kernels of today need neither it nor 16-bit storage.
        // SAFETY: pd belongs to instance.
        let f16 = need.shader_f16 || unsafe { raw::has_shader_f16(&instance, pd) };
        // SAFETY: pd belongs to instance, made from entry.
        let coop = unsafe { raw::coop_gnm_support(&entry, &instance, pd) };
        // SAFETY: pd belongs to instance.
        let device = match unsafe {
            raw::check_features(&instance, pd, need.shader_f16, need.storage_16bit)
        }
        // SAFETY: pd belongs to instance; family is its compute family; features checked.
        .and_then(|()| unsafe {
            raw::create_device(&instance, pd, family, f16, need.storage_16bit, coop)
        }) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: as above.
                unsafe {
                    if let Some((du, m)) = &debug {
                        du.destroy_debug_utils_messenger(*m, None);
                    }
                    instance.destroy_instance(None);
                }
                return Err(e);
            }
        };
        // SAFETY: pd belongs to instance.
        let mem = unsafe { instance.get_physical_device_memory_properties(pd) };
        let shared = Arc::new(DeviceShared {
            device,
            instance,
            allocator: Arc::new(DedicatedAllocator::new(mem)),
            owned: true,
            debug,
            messages,
            _entry: Some(entry),
        });
        Self::finish(shared, pd, family, f16, coop)
    }

    /// Use an engine's device: `instance` and `device` are the engine's (ash) handles, `family` a
    /// queue family with compute, `queue` a queue of it mien may submit its own uploads and
    /// readbacks to, and `allocator` the engine's memory allocator (or
    /// [`DedicatedAllocator`]). mien never destroys the engine's device or instance.
    ///
    /// # Safety
    /// The handles are live, belong together, and outlive the context and everything made from
    /// it; `queue` is externally synchronised with the engine's use of it (mien locks its own use).
    ///
    /// # Errors
    /// Pipeline creation failures.
    pub unsafe fn from_raw(
        instance: ash::Instance,
        physical: vk::PhysicalDevice,
        device: ash::Device,
        family: u32,
        allocator: Arc<dyn MemoryAllocator>,
    ) -> Result<Self> {
        let shared = Arc::new(DeviceShared {
            device,
            instance,
            allocator,
            owned: false,
            debug: None,
            messages: Box::default(),
            _entry: None,
        });
        // What the engine enabled is its own: only what the kernels require is assumed.
        // The engine's device: the tensor-core kernel needs features mien cannot know it enabled.
        Self::finish(
            shared,
            physical,
            family,
            mien_shaders::REQUIRED_FEATURES.shader_f16,
            false,
        )
    }

    fn pick(instance: &ash::Instance, allow_software: bool) -> Result<(vk::PhysicalDevice, u32)> {
        // SAFETY: instance is live.
        let devices = unsafe { instance.enumerate_physical_devices() }
            .vk("vkEnumeratePhysicalDevices", "device selection")?;
        let mut seen = Vec::new();
        let mut best: Option<(u32, vk::PhysicalDevice, u32)> = None;
        for pd in devices {
            // SAFETY: pd belongs to instance.
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = device_name(&props);
            let rank = match props.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => 4,
                vk::PhysicalDeviceType::INTEGRATED_GPU => 3,
                vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
                vk::PhysicalDeviceType::CPU if allow_software => 1,
                _ => {
                    seen.push(format!("{name} (software, not allowed)"));
                    continue;
                }
            };
            if props.api_version < vk::API_VERSION_1_1 {
                seen.push(format!(
                    "{name} (Vulkan {}.{} < 1.1)",
                    vk::api_version_major(props.api_version),
                    vk::api_version_minor(props.api_version)
                ));
                continue;
            }
            // SAFETY: pd belongs to instance.
            let Some(family) = (unsafe { raw::compute_family(instance, pd) }) else {
                seen.push(format!("{name} (no compute queue)"));
                continue;
            };
            seen.push(name);
            if best.is_none_or(|b| rank > b.0) {
                best = Some((rank, pd, family));
            }
        }
        best.map(|(_, pd, f)| (pd, f))
            .ok_or_else(|| Error::NoDevice {
                reason: if seen.is_empty() {
                    "the loader found no Vulkan device (is a driver installed?)".into()
                } else {
                    format!("found only {}", seen.join(", "))
                },
            })
    }

    /// `f16`: whether the device was created with `shaderFloat16`; `coop`: with what the
    /// tensor-core GNM kernel needs (`raw::coop_gnm_support`).
    fn finish(
        shared: Arc<DeviceShared>,
        physical: vk::PhysicalDevice,
        family: u32,
        f16: bool,
        coop: bool,
    ) -> Result<Self> {
        let d = &shared.device;
        // SAFETY: physical belongs to the instance.
        let props = unsafe { shared.instance.get_physical_device_properties(physical) };
        // SAFETY: family is a queue family of this device with one queue created.
        let queue = unsafe { d.get_device_queue(family, 0) };
        // SAFETY: d is live.
        let cache =
            unsafe { d.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) }
                .vk("vkCreatePipelineCache", "the pipeline cache")?;
        // SAFETY: d, cache live.
        let pipelines = match unsafe { Pipelines::new(d, cache, coop) } {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: created above, unused.
                unsafe { d.destroy_pipeline_cache(cache, None) };
                return Err(e);
            }
        };
        // SAFETY: physical belongs to the instance.
        let families = unsafe {
            shared
                .instance
                .get_physical_device_queue_family_properties(physical)
        };
        let ts_bits = families
            .get(family as usize)
            .map_or(0, |f| f.timestamp_valid_bits);
        let timestamps = (ts_bits > 0 && props.limits.timestamp_compute_and_graphics == vk::TRUE)
            .then(|| Timestamps::new(props.limits.timestamp_period));
        let name = device_name(&props);
        let software = props.device_type == vk::PhysicalDeviceType::CPU;
        // SAFETY: physical belongs to the instance (created for API 1.1).
        let (subgroup_size, max_allocation, cooperative_matrix) =
            unsafe { raw::optional_caps(&shared.instance, physical) };
        let l = &props.limits;
        let counts = l.max_compute_work_group_count;
        let caps = mien_gpu::Caps {
            binding_limit: u64::from(l.max_storage_buffer_range),
            binding_limit_name: "maxStorageBufferRange",
            // Each buffer has its own allocation (maxBufferSize itself is Vulkan 1.3).
            max_buffer: max_allocation,
            max_buffer_name: "maxMemoryAllocationSize",
            max_groups_xy: counts[0].min(counts[1]),
            max_groups_xy_name: "maxComputeWorkGroupCount",
            max_groups_z: counts[2],
            max_groups_z_name: "maxComputeWorkGroupCount[2]",
            offset_alignment: l.min_storage_buffer_offset_alignment.max(4),
            timestamps: timestamps.is_some(),
            f16,
            subgroup_size,
            cooperative_matrix,
            coop_gnm: coop,
        };
        Ok(VulkanContext {
            inner: Arc::new(ContextInner {
                shared,
                physical,
                props,
                name,
                family,
                queue: Mutex::new(queue),
                pools: Mutex::new(Vec::new()),
                fences: Mutex::new(Vec::new()),
                cache,
                pipelines,
                in_flight: Mutex::new(Vec::new()),
                serial: std::sync::atomic::AtomicU64::new(0),
                staging: Mutex::new(crate::staging::Staging::default()),
                staging_chunks: std::sync::atomic::AtomicU64::new(0),
                timestamps,
                lost: AtomicBool::new(false),
                software,
                caps,
            }),
        })
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The device's properties (type, driver version, limits).
    pub fn properties(&self) -> &vk::PhysicalDeviceProperties {
        &self.inner.props
    }

    /// True for a software device (lavapipe).
    pub fn is_software(&self) -> bool {
        self.inner.software
    }

    /// The ash device (for engines recording around mien).
    pub fn device(&self) -> &ash::Device {
        &self.inner.shared.device
    }

    /// The physical device.
    pub fn physical_device(&self) -> vk::PhysicalDevice {
        self.inner.physical
    }

    /// The queue family mien's commands need.
    pub fn queue_family(&self) -> u32 {
        self.inner.family
    }

    /// The largest storage binding / buffer mien creates, bytes (`maxStorageBufferRange`).
    pub fn binding_limit(&self) -> u64 {
        u64::from(self.inner.props.limits.max_storage_buffer_range)
    }

    /// Command pools kept for the next encoder (a diagnostic: frames reuse their pool and its one
    /// command buffer, so this stays at the number of frames ever in flight at once).
    pub fn idle_command_pools(&self) -> usize {
        self.inner.pools.lock().map_or(0, |p| p.len())
    }

    /// Staging chunks made so far for per-frame writes (a diagnostic: a steady stream of frames
    /// makes none after its first rounds).
    pub fn staging_chunks_made(&self) -> u64 {
        self.inner
            .staging_chunks
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether per-stage timestamps are recorded.
    pub fn has_timestamps(&self) -> bool {
        self.inner.timestamps.is_some()
    }

    /// The per-stage GPU times of the last frame that completed (call it after
    /// [`VulkanContext::wait`]), when the device has timestamps; `None` when no frame completed
    /// since the last call of this or [`VulkanContext::completed_times`]. Each frame has its own
    /// queries, so frames in flight do not overwrite each other's times.
    pub fn stage_times(&self) -> Option<mien_gpu::StageTimes> {
        self.completed_times().ok().and_then(|mut t| t.pop())
    }

    /// Messages the validation layer reported since the last call (warnings and errors), drained.
    pub fn take_validation_messages(&self) -> Vec<String> {
        self.inner
            .shared
            .messages
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default()
    }

    /// The pipeline cache's data, to save and seed a later context (a caller's choice).
    ///
    /// # Errors
    /// The driver's error.
    pub fn pipeline_cache_data(&self) -> Result<Vec<u8>> {
        // SAFETY: cache is live.
        unsafe { self.device().get_pipeline_cache_data(self.inner.cache) }
            .vk("vkGetPipelineCacheData", "the pipeline cache")
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.inner.lost.load(Ordering::Relaxed) {
            return Err(Error::DeviceLost {
                what: "an earlier submission".into(),
            });
        }
        Ok(())
    }
}
