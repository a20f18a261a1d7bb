//! The device mien runs on: one it creates, or one the caller (an engine) owns.

use std::sync::{Arc, Mutex, OnceLock};

use mien_gpu::{Caps, Entry};

use crate::error::{Error, Result};
use crate::timing::Timestamps;

/// One entry point's bind-group layout and pipeline, or why the device refused it.
pub(crate) type Kernel =
    std::result::Result<(wgpu::BindGroupLayout, wgpu::ComputePipeline), String>;

/// How [`WgpuContext::new`] picks an adapter.
#[derive(Clone, Copy, Debug)]
pub struct ContextOptions {
    /// Prefer a discrete GPU.
    pub power_preference: wgpu::PowerPreference,
    /// Accept a software adapter (lavapipe, SwiftShader): slower than the CPU backend, but a real
    /// Vulkan implementation for tests.
    pub allow_software: bool,
    /// Ask for timestamp queries when the adapter has them (per-stage GPU times).
    pub timestamps: bool,
    /// Ask for wgpu's experimental cooperative matrices
    /// ([`wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX`]) when the adapter lists the shape the
    /// tensor-core GNM kernel (`gnm_coop.wgsl`) needs — 16×16×16, fp16 inputs, fp32 accumulator,
    /// subgroups of exactly 32 — so batches of `mien_gpu::COOP_MIN_BATCH` heads or more run on
    /// tensor cores as on the Vulkan backend. wgpu marks the feature experimental (its
    /// implementation may have bugs); the kernel's results are checked against the CPU reference
    /// within `coop_vertex_bounds` by the GPU tests. Default true.
    pub cooperative_matrix: bool,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            allow_software: true,
            timestamps: true,
            cooperative_matrix: true,
        }
    }
}

struct Inner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Option<String>>>,
    /// Per [`Entry`] (by [`Entry::index`]) its pipeline, created on first use.
    kernels: [OnceLock<Kernel>; Entry::ALL.len()],
    caps: Caps,
    /// The adapter's downlevel flags, when mien created the device.
    downlevel: Option<wgpu::DownlevelFlags>,
    timestamps: Option<Timestamps>,
    /// The submissions of frames in flight, oldest first (at most
    /// [`mien_gpu::FRAMES_IN_FLIGHT`]).
    pub(crate) recent: Mutex<std::collections::VecDeque<wgpu::SubmissionIndex>>,
}

/// `e` and its sources, joined with ": ".
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

/// A wgpu device and queue with what mien needs to know about them. Cheap to clone (shared).
#[derive(Clone)]
pub struct WgpuContext {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for WgpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuContext")
            .field("adapter", &self.inner.info.name)
            .field("backend", &self.inner.info.backend)
            .finish()
    }
}

/// Whether `adapter` can run `gnm_coop.wgsl`: wgpu's experimental cooperative matrices, f16,
/// subgroups of exactly 32 invocations (the kernel's workgroup is one subgroup), and a
/// 16×16×16 shape with fp16 A/B and an fp32 accumulator — the checks the Vulkan backend makes
/// with `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`.
fn coop_gnm_shape(adapter: &wgpu::Adapter, info: &wgpu::AdapterInfo) -> bool {
    let needed = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
        | wgpu::Features::SHADER_F16
        | wgpu::Features::SUBGROUP;
    adapter.features().contains(needed)
        && info.subgroup_min_size == 32
        && info.subgroup_max_size == 32
        && adapter.cooperative_matrix_properties().iter().any(|p| {
            p.m_size == 16
                && p.n_size == 16
                && p.k_size == 16
                && p.ab_type == wgpu::CooperativeScalarType::F16
                && p.cr_type == wgpu::CooperativeScalarType::F32
        })
}

impl WgpuContext {
    /// Create an instance, pick an adapter and create a device with the adapter's own limits
    /// (wgpu's defaults cap storage bindings at 128 MiB and 8 per stage) and, when available and
    /// asked for, timestamp queries. Blocks until done.
    ///
    /// # Errors
    /// [`Error::NoAdapter`] when no adapter exists (or only a software one and
    /// `allow_software` is false); [`Error::NoDevice`] when the adapter refuses.
    pub fn new(options: &ContextOptions) -> Result<Self> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: options.power_preference,
            force_fallback_adapter: false,
            ..Default::default()
        }))
        .map_err(|e| Error::NoAdapter {
            reason: e.to_string(),
        })?;
        let info = adapter.get_info();
        if !options.allow_software && info.device_type == wgpu::DeviceType::Cpu {
            return Err(Error::NoAdapter {
                reason: format!("only the software adapter `{}` was found", info.name),
            });
        }
        let mut features = wgpu::Features::empty();
        if options.timestamps && adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        // Optional kernel features, enabled whenever the adapter has them (`Caps` reports them).
        features |= adapter.features() & (wgpu::Features::SHADER_F16 | wgpu::Features::SUBGROUP);
        let coop = options.cooperative_matrix && coop_gnm_shape(&adapter, &info);
        let experimental = if coop {
            features |= wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
            // SAFETY: the token only lets the device be asked for EXPERIMENTAL_ features; the one
            // asked for is used by one kernel whose results the GPU tests check against the CPU
            // reference (`ContextOptions::cooperative_matrix` documents the risk).
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("mien"),
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: experimental,
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| Error::NoDevice {
            adapter: info.name.clone(),
            reason: e.to_string(),
        })?;
        let downlevel = adapter.get_downlevel_capabilities().flags;
        Ok(Self::build(device, queue, info, Some(downlevel), coop))
    }

    /// Use a device the caller owns (an engine's). mien creates its buffers and pipelines on it
    /// and records into the caller's encoders; it installs no error or device-lost handlers (those
    /// belong to the caller), so device loss is reported only through the caller's own handler.
    /// Timestamps are used when the device was created with [`wgpu::Features::TIMESTAMP_QUERY`].
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Self {
        // A caller's device is never assumed to have the tensor-core shape (no adapter to ask).
        Self::build(device, queue, info, None, false)
    }

    /// `downlevel` is `Some` (the adapter's flags) exactly when mien created the device;
    /// `coop_gnm` when `new` found the tensor-core shape and asked for it.
    fn build(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        downlevel: Option<wgpu::DownlevelFlags>,
        coop_gnm: bool,
    ) -> Self {
        let own = downlevel.is_some();
        let lost = Arc::new(Mutex::new(None));
        let uncaptured = Arc::new(Mutex::new(None));
        if own {
            let l = lost.clone();
            device.set_device_lost_callback(move |reason, message| {
                if let Ok(mut g) = l.lock() {
                    *g = Some(format!("{reason:?}: {message}"));
                }
            });
            let u = uncaptured.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                if let Ok(mut g) = u.lock() {
                    // The whole chain: wgpu's Display of a validation error is only
                    // "Validation Error", its cause is in the sources.
                    g.get_or_insert_with(|| error_chain(&e));
                }
            }));
        }
        let limits = device.limits();
        let features = device.features();
        let timestamps = features
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| Timestamps::new(&device, &queue));
        let groups = "max_compute_workgroups_per_dimension";
        let caps = Caps {
            binding_limit: limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size),
            binding_limit_name: "max_storage_buffer_binding_size",
            max_buffer: limits.max_buffer_size,
            max_buffer_name: "max_buffer_size",
            max_groups_xy: limits.max_compute_workgroups_per_dimension,
            max_groups_xy_name: groups,
            max_groups_z: limits.max_compute_workgroups_per_dimension,
            max_groups_z_name: groups,
            offset_alignment: u64::from(limits.min_storage_buffer_offset_alignment).max(4),
            timestamps: timestamps.is_some(),
            f16: features.contains(wgpu::Features::SHADER_F16),
            subgroup_size: features
                .contains(wgpu::Features::SUBGROUP)
                .then_some(info.subgroup_min_size),
            cooperative_matrix: features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
            // `new` checked the adapter's shapes ([`coop_gnm_shape`]) and asked for the feature.
            coop_gnm: coop_gnm
                && features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
        };
        WgpuContext {
            inner: Arc::new(Inner {
                device,
                queue,
                info,
                limits,
                lost,
                uncaptured,
                kernels: Default::default(),
                caps,
                recent: Mutex::new(std::collections::VecDeque::new()),
                downlevel,
                timestamps,
            }),
        }
    }

    pub(crate) fn shared(&self) -> &Arc<impl Sized> {
        &self.inner
    }

    /// Submit a frame: map its timestamps' read-back, and keep at most
    /// [`mien_gpu::FRAMES_IN_FLIGHT`] − 1 frames in flight (waiting for the oldest) while the
    /// host records the next.
    ///
    /// # Errors
    /// Device loss, a wait over 120 s.
    pub(crate) fn submit_frame(&self, encoder: wgpu::CommandEncoder) -> Result<()> {
        let key = crate::timing::encoder_key(&encoder);
        let index = self.submit(encoder);
        if let Some(t) = self.timestamps() {
            t.submitted(key);
        }
        let oldest = self.inner.recent.lock().ok().and_then(|mut r| {
            r.push_back(index);
            (r.len() >= mien_gpu::FRAMES_IN_FLIGHT)
                .then(|| r.pop_front())
                .flatten()
        });
        if let Some(i) = oldest {
            let wait = wgpu::PollType::Wait {
                submission_index: Some(i),
                timeout: Some(std::time::Duration::from_secs(120)),
            };
            self.inner
                .device
                .poll(wait)
                .map_err(|e| Error::DeviceLost {
                    reason: e.to_string(),
                })?;
        }
        self.check()
    }

    /// Stage times of the frames completed since the last call, oldest first (polls once, never
    /// waits).
    ///
    /// # Errors
    /// Device loss.
    pub fn completed_times(&self) -> Result<Vec<mien_gpu::StageTimes>> {
        let Some(t) = self.timestamps() else {
            return Ok(Vec::new());
        };
        self.inner
            .device
            .poll(wgpu::PollType::Poll)
            .map_err(|e| Error::DeviceLost {
                reason: e.to_string(),
            })?;
        Ok(t.completed())
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// The adapter's name, driver, type and backend.
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.inner.info
    }

    /// The device's limits.
    pub fn limits(&self) -> &wgpu::Limits {
        &self.inner.limits
    }

    /// True for a software adapter (lavapipe, SwiftShader, WARP).
    pub fn is_software(&self) -> bool {
        self.inner.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The largest storage binding (and buffer) mien may create: the smaller of
    /// `max_storage_buffer_binding_size` and `max_buffer_size`, bytes.
    pub fn binding_limit(&self) -> u64 {
        self.inner.caps.binding_limit
    }

    /// Limits and optional features as the device layer states them.
    pub fn caps(&self) -> &Caps {
        &self.inner.caps
    }

    /// Per-pass timestamps, when the device has them.
    pub fn timestamps(&self) -> Option<&Timestamps> {
        self.inner.timestamps.as_ref()
    }

    /// The pipeline of `entry`, created on first use under an error scope.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when the device lacks what the kernel needs (the GNM kernel's
    /// `unpack2x16float`: wgpu's downlevel `SHADER_F16_IN_F32`) or refuses the kernel.
    pub(crate) fn kernel(
        &self,
        entry: Entry,
    ) -> Result<&(wgpu::BindGroupLayout, wgpu::ComputePipeline)> {
        let unsupported = |reason: String| Error::Unsupported {
            what: format!("the kernel `{}` ({})", entry.name(), entry.kernel().file),
            reason,
        };
        if entry.needs_coop() && !self.inner.caps.coop_gnm {
            return Err(unsupported(
                "the device was not created with wgpu's cooperative matrices for a 16×16×16 \
                 fp16 → fp32 shape with subgroups of 32 (ContextOptions::cooperative_matrix, \
                 Adapter::cooperative_matrix_properties)"
                    .into(),
            ));
        }
        if entry == Entry::GnmForward
            && let Some(flags) = self.inner.downlevel
            && !flags.contains(wgpu::DownlevelFlags::SHADER_F16_IN_F32)
        {
            return Err(unsupported(
                "the adapter lacks the downlevel flag SHADER_F16_IN_F32 (llvmpipe without SHADER_F16)"
                    .into(),
            ));
        }
        let made = self.inner.kernels[entry.index()].get_or_init(|| {
            self.scoped(entry.label(), || {
                crate::device::make_kernel(&self.inner.device, entry)
            })
            .map_err(|e| e.to_string())
        });
        made.as_ref().map_err(|r| unsupported(r.clone()))
    }

    /// Fail when the device was lost or wgpu reported an error nobody captured.
    ///
    /// # Errors
    /// [`Error::DeviceLost`], [`Error::Internal`].
    pub fn check(&self) -> Result<()> {
        if let Some(reason) = self.inner.lost.lock().ok().and_then(|g| g.clone()) {
            return Err(Error::DeviceLost { reason });
        }
        if let Some(message) = self.inner.uncaptured.lock().ok().and_then(|mut g| g.take()) {
            if message.contains("lost") {
                return Err(Error::DeviceLost { reason: message });
            }
            return Err(Error::Internal {
                what: "a previous command".into(),
                message,
            });
        }
        Ok(())
    }

    /// Run `f` (buffer and bind-group creation) under out-of-memory and validation error scopes.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] or [`Error::Internal`] naming `what`.
    pub(crate) fn scoped<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T> {
        let d = &self.inner.device;
        let validation = d.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = d.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let out = f();
        let oom = pollster::block_on(oom.pop());
        let validation = pollster::block_on(validation.pop());
        if oom.is_some() {
            return Err(Error::OutOfMemory { what: what.into() });
        }
        if let Some(e) = validation {
            return Err(Error::Internal {
                what: what.into(),
                message: e.to_string(),
            });
        }
        self.check()?;
        Ok(out)
    }

    /// Submit one encoder's commands.
    pub fn submit(&self, encoder: wgpu::CommandEncoder) -> wgpu::SubmissionIndex {
        self.inner.queue.submit(std::iter::once(encoder.finish()))
    }

    /// Block until the queue is idle.
    ///
    /// # Errors
    /// [`Error::DeviceLost`] when waiting fails because the device is gone.
    pub fn wait(&self) -> Result<()> {
        self.inner
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::DeviceLost {
                reason: e.to_string(),
            })?;
        if let Ok(mut r) = self.inner.recent.lock() {
            r.clear();
        }
        self.check()
    }

    /// Copy `size` bytes of each `(buffer, offset)` into host memory: one submission, one wait.
    ///
    /// # Errors
    /// [`Error::Readback`] when mapping fails; device loss.
    pub fn read_buffers(
        &self,
        what: &str,
        parts: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Vec<Vec<u8>>> {
        for &(b, offset, size) in parts {
            <Self as mien_gpu::GpuDevice>::check_range(what, b, offset, size)?;
        }
        let d = &self.inner.device;
        let staging: Vec<wgpu::Buffer> = parts
            .iter()
            .map(|&(_, _, size)| {
                d.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("mien readback"),
                    size: size.max(4).next_multiple_of(4),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("mien readback"),
        });
        for ((src, offset, size), dst) in parts.iter().zip(&staging) {
            if *size > 0 {
                enc.copy_buffer_to_buffer(src, *offset, dst, 0, *size);
            }
        }
        let index = self.submit(enc);
        type MapResults = Arc<Mutex<Vec<Option<std::result::Result<(), wgpu::BufferAsyncError>>>>>;
        let results: MapResults = Arc::new(Mutex::new(vec![None; staging.len()]));
        for (i, s) in staging.iter().enumerate() {
            let r = results.clone();
            s.slice(..).map_async(wgpu::MapMode::Read, move |res| {
                if let Ok(mut g) = r.lock() {
                    g[i] = Some(res);
                }
            });
        }
        // Wait for the copy, then keep polling until every map callback has run: when another
        // thread polls the same device it may be the one that runs our callbacks, a moment after
        // our own wait returns.
        let start = std::time::Instant::now();
        let mut wait = wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: Some(std::time::Duration::from_secs(1)),
        };
        loop {
            match self.inner.device.poll(wait) {
                Ok(_) | Err(wgpu::PollError::Timeout) => {}
                Err(e) => {
                    return Err(Error::DeviceLost {
                        reason: e.to_string(),
                    });
                }
            }
            self.check()?;
            if results
                .lock()
                .map(|g| g.iter().all(Option::is_some))
                .unwrap_or(false)
            {
                break;
            }
            if start.elapsed() > std::time::Duration::from_secs(120) {
                return Err(Error::Readback {
                    what: what.into(),
                    reason: "the GPU did not finish within 120 s".into(),
                });
            }
            wait = wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(std::time::Duration::from_millis(10)),
            };
            std::thread::yield_now();
        }
        let mut out = Vec::with_capacity(staging.len());
        for (i, (s, (_, _, size))) in staging.iter().zip(parts).enumerate() {
            let status = results.lock().ok().and_then(|g| g[i].clone());
            match status {
                Some(Ok(())) => {}
                Some(Err(e)) => {
                    return Err(Error::Readback {
                        what: what.into(),
                        reason: e.to_string(),
                    });
                }
                None => {
                    return Err(Error::Readback {
                        what: what.into(),
                        reason: "the map never completed".into(),
                    });
                }
            }
            let view = s.get_mapped_range(..).map_err(|e| Error::Readback {
                what: what.into(),
                reason: e.to_string(),
            })?;
            out.push(view[..*size as usize].to_vec());
            drop(view);
            s.unmap();
        }
        Ok(out)
    }
}
