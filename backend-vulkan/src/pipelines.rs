//! The compute pipelines from the shared kernels' SPIR-V (`mien-shaders`, compiled from the WGSL by
//! naga in its build script), created once per context through its pipeline cache.

use std::ffi::CString;

use ash::vk;

use mien_gpu::Entry;

use crate::error::{Error, Result, VkResultExt};
use crate::raw;

/// One kernel layout: its descriptor-set layout and pipeline layout.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    pub set: vk::DescriptorSetLayout,
    pub pipeline: vk::PipelineLayout,
}

/// # Safety
/// `d` live.
unsafe fn layout(d: &ash::Device, storage: u32) -> Result<Layout> {
    // SAFETY: d live (caller).
    let set = unsafe { raw::create_set_layout(d, storage as usize) }?;
    let sets = [set];
    let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&sets);
    // SAFETY: d live; set belongs to it.
    let pipeline = unsafe { d.create_pipeline_layout(&info, None) }
        .vk("vkCreatePipelineLayout", "a kernel layout")?;
    Ok(Layout { set, pipeline })
}

/// # Safety
/// `d`, `cache`, `layout` live and of one device.
unsafe fn pipeline(
    d: &ash::Device,
    cache: vk::PipelineCache,
    layout: &Layout,
    kernel: &mien_shaders::Kernel,
    entry: &str,
) -> Result<vk::Pipeline> {
    let words = mien_shaders::spirv_words(kernel, entry).ok_or_else(|| Error::NoDevice {
        reason: format!("{} has no entry point {entry}", kernel.file),
    })?;
    // SAFETY: d live; the words are naga's validated SPIR-V (spirv-val checks them in a test).
    let module = unsafe { raw::create_shader_module(d, &words) }?;
    let name = CString::new(entry).map_err(|_| Error::NoDevice {
        reason: "entry point name with NUL".into(),
    })?;
    // SAFETY: all handles live.
    let p = unsafe { raw::create_compute_pipeline(d, cache, layout.pipeline, module, &name) };
    // SAFETY: the pipeline (if any) no longer needs the module.
    unsafe { d.destroy_shader_module(module, None) };
    p
}

/// Per kernel entry ([`mien_gpu::Entry::ALL`] order) its layout and pipeline, made from the one
/// table of entry points and binding slots both device layers use. Destroyed explicitly by the
/// context (it owns the device handle and runs after the GPU is idle).
pub(crate) struct Pipelines {
    pub entries: Vec<(Layout, vk::Pipeline)>,
}

impl Pipelines {
    /// Every entry's pipeline; [`Entry::GnmCoop`]'s only with `coop` (the device was created
    /// with what it needs), else null handles that `supports` refuses before any use.
    ///
    /// # Safety
    /// `d` and `cache` live.
    pub(crate) unsafe fn new(
        d: &ash::Device,
        cache: vk::PipelineCache,
        coop: bool,
    ) -> Result<Self> {
        let mut made = Pipelines {
            entries: Vec::with_capacity(Entry::ALL.len()),
        };
        for entry in Entry::ALL {
            if entry.needs_coop() && !coop {
                let null = Layout {
                    set: vk::DescriptorSetLayout::null(),
                    pipeline: vk::PipelineLayout::null(),
                };
                made.entries.push((null, vk::Pipeline::null()));
                continue;
            }
            // SAFETY: forwarded; a failure destroys what was made so far.
            let step = unsafe { layout(d, entry.slots().len() as u32 - 1) }.and_then(|l| {
                // SAFETY: forwarded; l belongs to d.
                match unsafe { pipeline(d, cache, &l, entry.kernel(), entry.name()) } {
                    Ok(p) => Ok((l, p)),
                    Err(e) => {
                        // SAFETY: unused.
                        unsafe {
                            d.destroy_pipeline_layout(l.pipeline, None);
                            d.destroy_descriptor_set_layout(l.set, None);
                        }
                        Err(e)
                    }
                }
            });
            match step {
                Ok(x) => made.entries.push(x),
                Err(e) => {
                    // SAFETY: nothing uses them yet.
                    unsafe { made.destroy(d) };
                    return Err(e);
                }
            }
        }
        Ok(made)
    }

    /// The layout and pipeline of `entry`.
    pub(crate) fn get(&self, entry: Entry) -> (Layout, vk::Pipeline) {
        self.entries[entry.index()]
    }

    /// # Safety
    /// No pending work uses the pipelines; called once.
    pub(crate) unsafe fn destroy(&self, d: &ash::Device) {
        // SAFETY: caller's contract.
        unsafe {
            for (l, p) in &self.entries {
                d.destroy_pipeline(*p, None);
                d.destroy_pipeline_layout(l.pipeline, None);
                d.destroy_descriptor_set_layout(l.set, None);
            }
        }
    }
}

/// A descriptor pool and its sets, destroyed in `Drop` (kept alive by submissions that use its sets).
pub(crate) struct DescriptorPool {
    device: ash::Device,
    _shared: std::sync::Arc<crate::device::DeviceShared>,
    pool: vk::DescriptorPool,
}

impl DescriptorPool {
    /// A pool for `sets` sets with `uniforms` uniform and `storage` storage descriptors in all.
    pub(crate) fn new(
        ctx: &crate::VulkanContext,
        sets: u32,
        uniforms: u32,
        storage: u32,
    ) -> Result<Self> {
        let sizes = [
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::UNIFORM_BUFFER,
                descriptor_count: uniforms.max(1),
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: storage.max(1),
            },
        ];
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(sets.max(1))
            .pool_sizes(&sizes);
        let device = ctx.device().clone();
        // SAFETY: device live.
        let pool = unsafe { device.create_descriptor_pool(&info, None) }
            .vk("vkCreateDescriptorPool", "descriptor sets")?;
        Ok(DescriptorPool {
            device,
            _shared: ctx.inner.shared.clone(),
            pool,
        })
    }

    /// Allocate one set of `layout`.
    pub(crate) fn allocate(&self, layout: vk::DescriptorSetLayout) -> Result<vk::DescriptorSet> {
        let layouts = [layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool)
            .set_layouts(&layouts);
        // SAFETY: pool and layout live, of one device.
        Ok(unsafe { self.device.allocate_descriptor_sets(&info) }
            .vk("vkAllocateDescriptorSets", "descriptor sets")?[0])
    }
}

impl Drop for DescriptorPool {
    fn drop(&mut self) {
        // SAFETY: the last reference is gone: no submission in flight uses its sets.
        unsafe { self.device.destroy_descriptor_pool(self.pool, None) };
    }
}
