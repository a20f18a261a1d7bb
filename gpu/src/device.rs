//! The device layer: what a GPU API must offer for mien's stages to run on it, and nothing more.
//!
//! Two implementations exist, each thin: `mien-wgpu` (`WgpuContext`) and `mien-vulkan`
//! (`VulkanContext`, over its raw + safe layers). Every stage (`crate::rig`, `crate::gnm`,
//! `crate::lift`, `crate::sink`) is written once against [`GpuDevice`]. The pattern is the one of
//! wgpu-hal and piet-gpu-hal: a small device trait under one implementation of the work.

use crate::kernel::Entry;
use crate::timing::{Stage, StageTimes};

/// How a kernel binds a buffer, and so how the buffer is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    /// A uniform block (a kernel's parameters).
    Uniform,
    /// A storage buffer kernels read or write, and copies read and write.
    Storage,
}

/// One binding of a bind group: `size` bytes of `buffer` from byte `offset` (`None`: to the end).
/// `offset` is a multiple of [`Caps::offset_alignment`].
#[derive(Debug)]
pub struct Bind<'a, B> {
    /// The buffer.
    pub buffer: &'a B,
    /// First byte.
    pub offset: u64,
    /// Bytes, or the rest of the buffer.
    pub size: Option<u64>,
}

impl<'a, B> Bind<'a, B> {
    /// The whole buffer.
    pub fn whole(buffer: &'a B) -> Self {
        Bind {
            buffer,
            offset: 0,
            size: None,
        }
    }
}

/// One dispatch of a pass: a kernel entry, its bind group and the workgroup grid `(x, y, z)`.
pub struct Dispatch<'a, G: GpuDevice> {
    /// The kernel entry point (the pipeline).
    pub entry: Entry,
    /// Its bindings (made by [`GpuDevice::bind`] for the same entry's layout).
    pub group: &'a G::BindGroup,
    /// Workgroups along x, y, z.
    pub groups: [u32; 3],
}

/// A device's limits and optional features, with the API's own names for the limits (error
/// messages name the limit a user can look up).
#[derive(Clone, Debug)]
pub struct Caps {
    /// The largest storage binding (and buffer) mien creates, bytes.
    pub binding_limit: u64,
    /// Its name in the API (`max_storage_buffer_binding_size`, `maxStorageBufferRange`).
    pub binding_limit_name: &'static str,
    /// The largest buffer, bytes.
    pub max_buffer: u64,
    /// Its name in the API.
    pub max_buffer_name: &'static str,
    /// Workgroups per dispatch along x and along y (the smaller of the two).
    pub max_groups_xy: u32,
    /// Their name in the API.
    pub max_groups_xy_name: &'static str,
    /// Workgroups per dispatch along z (the instances of a batch).
    pub max_groups_z: u32,
    /// Its name in the API.
    pub max_groups_z_name: &'static str,
    /// Storage-binding offsets are multiples of this, bytes (≥ 4).
    pub offset_alignment: u64,
    /// Whether passes write per-stage timestamps.
    pub timestamps: bool,
    /// Whether kernels may use 16-bit floats: the device was created with `shaderFloat16` (Vulkan)
    /// / `SHADER_F16` (wgpu). mien enables it whenever the device has it; on a device the caller
    /// created, only if the kernels required it.
    pub f16: bool,
    /// The subgroup size when kernels may use subgroup operations in compute (Vulkan: the
    /// device's `subgroupSize` when compute is among its supported stages; wgpu: the adapter's
    /// smallest subgroup size when `SUBGROUP` is enabled).
    pub subgroup_size: Option<u32>,
    /// Whether the device lists a cooperative-matrix extension (`VK_KHR_cooperative_matrix`,
    /// `VK_NV_cooperative_matrix2`; wgpu's experimental feature); a kernel queries the shapes
    /// before using it.
    pub cooperative_matrix: bool,
    /// Whether the linear head's tensor-core kernel ([`crate::Entry::GnmCoop`]) runs here: a
    /// 16×16×16 fp16 × fp16 → fp32 subgroup shape among the device's cooperative-matrix
    /// properties (queried at run time), subgroups of 32, fp16 arithmetic and 16-bit storage, all
    /// enabled when the device was created.
    pub coop_gnm: bool,
}

/// Frames in flight: per-frame data has this many copies (Vulkan's staging regions), and
/// [`GpuDevice::submit`] returns with at most `FRAMES_IN_FLIGHT − 1` submissions still running
/// (waiting for the oldest), so the host records frame k+2 while the GPU runs frames k and k+1: a
/// stream of frames costs max(host, GPU) rather than their sum, with a bounded latency.
pub const FRAMES_IN_FLIGHT: usize = 3;

/// The device layer. Cheap to clone (a shared handle). The methods record or run exactly one
/// thing each; ordering between them is the API's queue order, except where stated.
///
/// Per-frame data follows one rule: [`GpuDevice::write`] into a buffer made by
/// [`GpuDevice::frame_buffer`] lands before the next submission (the way `queue.write_buffer`
/// does), without waiting for the submissions in flight, which still read what was there before
/// (wgpu: `queue.write_buffer`; Vulkan: the bytes go to a staging ring of [`FRAMES_IN_FLIGHT`]
/// regions and a copy recorded in front of the next submission, or, for an engine's command
/// buffer, in front of mien's first pass recorded into it).
pub trait GpuDevice: Clone + Send + Sync + Sized + 'static {
    /// A buffer (cheap to clone on Vulkan, where submissions keep it alive).
    type Buffer: Send + Sync + 'static;
    /// A kernel's bindings.
    type BindGroup: Send + Sync + 'static;
    /// What a frame is recorded into (a command encoder / command buffer).
    type Encoder;
    /// The API's error type. In generic code `?` needs the conversion spelled out:
    /// `.map_err(Into::into)?` (a trait cannot make `mien_core::Error: From<Self::Error>` implied).
    type Error: std::error::Error + Send + Sync + 'static + Into<mien_core::Error>;

    /// The API's name (`wgpu`, `vulkan`).
    const NAME: &'static str;

    /// Limits and optional features.
    fn caps(&self) -> &Caps;
    /// The API's over-limit error for `what` needing `needed` of the limit `limit_name`.
    fn over_limits(what: String, limit_name: &'static str, limit: u64, needed: u64) -> Self::Error;
    /// The API's error for the byte range `offset .. offset + len` outside a buffer of `size`
    /// bytes, in `what`.
    fn range_error(what: &str, offset: u64, len: u64, size: u64) -> Self::Error;
    /// `offset .. offset + len` lies inside `buffer`, or [`GpuDevice::range_error`].
    ///
    /// # Errors
    /// The range error.
    fn check_range(
        what: &str,
        buffer: &Self::Buffer,
        offset: u64,
        len: u64,
    ) -> Result<(), Self::Error> {
        let size = Self::size(buffer);
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(()),
            _ => Err(Self::range_error(what, offset, len, size)),
        }
    }
    /// The kernel entry cannot run here (a missing capability), or `Ok`.
    ///
    /// # Errors
    /// The API's "unsupported" error naming the kernel and the capability.
    fn supports(&self, entry: Entry) -> Result<(), Self::Error>;

    /// Size of a buffer, bytes.
    fn size(buffer: &Self::Buffer) -> u64;
    /// A device-local buffer holding `data`, read by kernels (`usage`); an empty `data` makes one
    /// zero word (zero-sized bindings are invalid).
    ///
    /// # Errors
    /// Out of memory.
    fn upload(&self, what: &str, usage: Usage, data: &[u8]) -> Result<Self::Buffer, Self::Error>;
    /// A device-local storage buffer of `size` bytes (at least 4) that kernels write and copies
    /// read and write; its contents are undefined until written.
    ///
    /// # Errors
    /// Out of memory.
    fn output(&self, what: &str, size: u64) -> Result<Self::Buffer, Self::Error>;
    /// A buffer the host rewrites every frame ([`GpuDevice::write`]), holding `data` at first.
    ///
    /// # Errors
    /// Out of memory.
    fn frame_buffer(
        &self,
        what: &str,
        usage: Usage,
        data: &[u8],
    ) -> Result<Self::Buffer, Self::Error>;
    /// Write `data` at byte `offset` of a frame buffer (the rule above).
    ///
    /// # Errors
    /// A range outside the buffer, a buffer not made by [`GpuDevice::frame_buffer`] or made on
    /// another device; device loss or a wait that timed out.
    fn write(&self, buffer: &Self::Buffer, offset: u64, data: &[u8]) -> Result<(), Self::Error>;
    /// Fill `(buffer, offset, size)` byte ranges with `word`, before any later submission (tests
    /// poison outputs; sinks clear freed slots). Offsets and sizes are multiples of 4.
    ///
    /// # Errors
    /// A range outside its buffer, a buffer of another device; device errors.
    fn fill(&self, parts: &[(&Self::Buffer, u64, u64)], word: u32) -> Result<(), Self::Error>;
    /// Copy `(buffer, offset, size)` ranges to the host after every submitted command: one
    /// submission, one (bounded) wait.
    ///
    /// # Errors
    /// A range outside its buffer, a buffer of another device; read-back failures, device loss,
    /// a timeout.
    fn read(
        &self,
        what: &str,
        parts: &[(&Self::Buffer, u64, u64)],
    ) -> Result<Vec<Vec<u8>>, Self::Error>;

    /// Bind `binds` in binding order to `entry`'s layout ([`Entry::slots`]).
    ///
    /// # Errors
    /// A binding outside its buffer, a buffer of another device; out of memory.
    fn bind(
        &self,
        entry: Entry,
        binds: &[Bind<'_, Self::Buffer>],
    ) -> Result<Self::BindGroup, Self::Error>;
    /// Record one compute pass of `stage` into `encoder`: its dispatches in order (no barrier
    /// between them: they write disjoint data), the stage's timestamps around them, and a barrier
    /// after it so the next pass reads what it wrote.
    ///
    /// # Errors
    /// Device loss; an encoder or bind group of another device (Vulkan checks both; wgpu panics
    /// inside wgpu on objects of another device). After an error the encoder must not be
    /// submitted.
    fn record(
        &self,
        encoder: &mut Self::Encoder,
        stage: Stage,
        dispatches: &mut dyn Iterator<Item = Dispatch<'_, Self>>,
    ) -> Result<(), Self::Error>;

    /// Record a copy of `size` bytes from the start of `src` to the start of `dst` (both made by
    /// [`GpuDevice::output`]) into `encoder` (the benchmarks' copy baseline).
    ///
    /// # Errors
    /// `size` past either buffer; a buffer or encoder of another device.
    fn copy(
        &self,
        encoder: &mut Self::Encoder,
        src: &Self::Buffer,
        dst: &Self::Buffer,
        size: u64,
    ) -> Result<(), Self::Error>;
    /// A fresh encoder for one submission.
    ///
    /// # Errors
    /// Device loss, out of memory.
    fn begin(&self) -> Result<Self::Encoder, Self::Error>;
    /// Record what ends a frame into `encoder`, before [`GpuDevice::submit`]: wgpu resolves the
    /// timestamp queries here, so [`GpuDevice::stage_times`] sees a frame only when it was
    /// recorded (Vulkan needs nothing).
    fn end_frame(&self, encoder: &mut Self::Encoder);
    /// Submit `encoder`; what it uses stays alive until the submission completes. Returns with at
    /// most [`FRAMES_IN_FLIGHT`] − 1 submissions in flight (waiting for the oldest).
    ///
    /// # Errors
    /// Device loss, a timeout.
    fn submit(&self, encoder: Self::Encoder) -> Result<(), Self::Error>;
    /// Wait until every submission completed (Vulkan: at most `mien_vulkan::device::WAIT_LIMIT`,
    /// then a timeout error; wgpu: wgpu's own wait, which reports a lost device).
    ///
    /// # Errors
    /// Device loss, a timeout.
    fn wait(&self) -> Result<(), Self::Error>;
    /// Per-stage GPU times of the last frame ([`GpuDevice::end_frame`]) that completed (call it
    /// after [`GpuDevice::wait`]), when the device writes timestamps; `None` when no frame
    /// completed since the last call of this or [`GpuDevice::completed_times`].
    ///
    /// # Errors
    /// Read-back failures.
    fn stage_times(&self) -> Result<Option<StageTimes>, Self::Error> {
        Ok(self.completed_times()?.pop())
    }
    /// Per-stage GPU times of every frame ([`GpuDevice::end_frame`]) that completed since the
    /// last call, oldest first, without waiting (empty without timestamps). Each frame has its
    /// own queries ([`crate::PassTimes`]), so frames in flight do not overwrite each other's.
    ///
    /// # Errors
    /// Read-back failures.
    fn completed_times(&self) -> Result<Vec<StageTimes>, Self::Error>;
    /// Fail when the device was lost or reported an error nobody handled.
    ///
    /// # Errors
    /// Device loss, the API's own error.
    fn check(&self) -> Result<(), Self::Error>;
    /// Run `f` (buffer and bind-group creation) and turn the API's deferred errors (wgpu's error
    /// scopes) into `Err`; Vulkan's calls fail at once, so it just runs `f`.
    ///
    /// # Errors
    /// Out of memory or an unexpected API error naming `what`.
    fn scoped<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T, Self::Error>;
    /// Called when a stage is dropped: wait for the submissions that may still use its buffers
    /// where the API frees them at once (Vulkan; an error is ignored). wgpu keeps them alive
    /// itself, so the default does nothing.
    fn release(&self) {}
    /// Whether two handles are the same device.
    fn same(&self, other: &Self) -> bool;
}
