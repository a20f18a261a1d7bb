//! The compute pipelines from the shared kernels' SPIR-V (`mien-shaders`, compiled from the WGSL by
//! naga in its build script), created once per context through its pipeline cache.

use std::ffi::CString;

use ash::vk;

use crate::error::{Error, Result, VkResultExt};
use crate::raw;

/// One kernel layout: its descriptor-set layout and pipeline layout.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    pub set: vk::DescriptorSetLayout,
    pub pipeline: vk::PipelineLayout,
}

/// Layouts and pipelines of every kernel. Destroyed explicitly by the context (it owns the device
/// handle and runs after the GPU is idle).
pub(crate) struct Pipelines {
    pub morph_layout: Layout,
    pub morph: vk::Pipeline,
    pub skin_layout: Layout,
    pub skin: vk::Pipeline,
    pub tangent_layout: Layout,
    pub tangent: vk::Pipeline,
    pub lift_layout: Layout,
    pub lift: vk::Pipeline,
    pub clear: vk::Pipeline,
    pub gnm_layout: Layout,
    pub gnm: vk::Pipeline,
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

impl Pipelines {
    /// # Safety
    /// `d` and `cache` live.
    pub(crate) unsafe fn new(d: &ash::Device, cache: vk::PipelineCache) -> Result<Self> {
        // SAFETY: forwarded.
        unsafe {
            let morph_layout = layout(d, 6)?;
            let skin_layout = layout(d, 5)?;
            let tangent_layout = layout(d, 8)?;
            let lift_layout = layout(d, 6)?;
            let gnm_layout = layout(d, 5)?;
            Ok(Pipelines {
                gnm: pipeline(d, cache, &gnm_layout, &mien_shaders::GNM, "forward")?,
                gnm_layout,
                morph: pipeline(d, cache, &morph_layout, &mien_shaders::MORPH, "main")?,
                skin: pipeline(d, cache, &skin_layout, &mien_shaders::SKIN, "main")?,
                tangent: pipeline(d, cache, &tangent_layout, &mien_shaders::TANGENT, "main")?,
                tangent_layout,
                lift: pipeline(d, cache, &lift_layout, &mien_shaders::LIFT_DEBUG, "lift")?,
                clear: pipeline(d, cache, &lift_layout, &mien_shaders::LIFT_DEBUG, "clear")?,
                morph_layout,
                skin_layout,
                lift_layout,
            })
        }
    }

    /// # Safety
    /// No pending work uses the pipelines; called once.
    pub(crate) unsafe fn destroy(&self, d: &ash::Device) {
        // SAFETY: caller's contract.
        unsafe {
            for p in [
                self.morph,
                self.skin,
                self.tangent,
                self.lift,
                self.clear,
                self.gnm,
            ] {
                d.destroy_pipeline(p, None);
            }
            for l in [
                self.morph_layout,
                self.skin_layout,
                self.tangent_layout,
                self.lift_layout,
                self.gnm_layout,
            ] {
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
