//! The thin unsafe layer: direct ash calls with their preconditions stated, nothing owned. The safe
//! layer (`device`, `buffer`, `pipelines`, `encoder`) wraps every handle made here in a type that frees
//! it in `Drop`.

use std::ffi::{CStr, c_void};

use ash::vk;

use crate::error::{Result, VkResultExt};

/// The Khronos validation layer's name.
pub const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Create an instance for API 1.1 with `layers` and `extensions`.
///
/// # Safety
/// `entry` must be a loaded Vulkan entry; every name must be an available layer / extension.
pub unsafe fn create_instance(
    entry: &ash::Entry,
    layers: &[&CStr],
    extensions: &[&CStr],
) -> Result<ash::Instance> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"mien")
        .engine_name(c"mien")
        .api_version(vk::API_VERSION_1_1);
    let layer_ptrs: Vec<*const i8> = layers.iter().map(|l| l.as_ptr()).collect();
    let ext_ptrs: Vec<*const i8> = extensions.iter().map(|e| e.as_ptr()).collect();
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layer_ptrs)
        .enabled_extension_names(&ext_ptrs);
    // SAFETY: the caller guarantees a loaded entry and available names; `info` borrows live data.
    unsafe { entry.create_instance(&info, None) }.vk("vkCreateInstance", "the Vulkan instance")
}

/// Names of the instance layers and extensions available.
///
/// # Safety
/// `entry` must be a loaded Vulkan entry.
pub unsafe fn available(entry: &ash::Entry) -> (Vec<String>, Vec<String>) {
    let name = |c: &[i8]| {
        // SAFETY: Vulkan writes NUL-terminated names into these fixed arrays.
        unsafe { CStr::from_ptr(c.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: entry is loaded (caller).
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
    // SAFETY: as above.
    let exts = unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
    (
        layers.iter().map(|l| name(&l.layer_name)).collect(),
        exts.iter().map(|e| name(&e.extension_name)).collect(),
    )
}

/// Messages of severity warning or error, collected by [`debug_callback`].
pub type Messages = std::sync::Mutex<Vec<String>>;

/// The debug-utils callback: appends warnings and errors to the `Messages` behind `user`.
///
/// # Safety
/// Called by the Vulkan implementation with valid callback data; `user` is the `Messages` the
/// messenger was created with and outlives it.
pub unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: non-null and valid for the call (Vulkan); `user` points at live `Messages` (creator).
    let (data, messages) = unsafe { (&*data, &*(user as *const Messages)) };
    let text = if data.p_message.is_null() {
        "(no message)".to_string()
    } else {
        // SAFETY: Vulkan passes a NUL-terminated string.
        unsafe { CStr::from_ptr(data.p_message) }
            .to_string_lossy()
            .into_owned()
    };
    if let Ok(mut m) = messages.lock() {
        m.push(format!("{severity:?}: {text}"));
    }
    vk::FALSE
}

/// Create a debug-utils messenger reporting warnings and errors to `messages`.
///
/// # Safety
/// `du` belongs to a live instance created with `VK_EXT_debug_utils`; `messages` must outlive the
/// messenger.
pub unsafe fn create_messenger(
    du: &ash::ext::debug_utils::Instance,
    messages: &Messages,
) -> Result<vk::DebugUtilsMessengerEXT> {
    let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(messages as *const Messages as *mut c_void);
    // SAFETY: see the function's contract.
    unsafe { du.create_debug_utils_messenger(&info, None) }
        .vk("vkCreateDebugUtilsMessengerEXT", "the validation messenger")
}

/// A compute queue family of `pd`, if any.
///
/// # Safety
/// `pd` belongs to `instance`.
pub unsafe fn compute_family(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Option<u32> {
    // SAFETY: caller's contract.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    families
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .map(|i| i as u32)
}

/// Check that `pd` has `shaderFloat16` / `storageBuffer16BitAccess` when asked for.
///
/// # Safety
/// `pd` belongs to `instance`, which was created for API 1.1.
pub unsafe fn check_features(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    f16: bool,
    storage16: bool,
) -> Result<()> {
    if !f16 && !storage16 {
        return Ok(());
    }
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut f16f = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut s16)
        .push_next(&mut f16f);
    // SAFETY: caller's contract; the chain borrows live structs.
    unsafe { instance.get_physical_device_features2(pd, &mut features) };
    // SAFETY: as above.
    let name = unsafe {
        CStr::from_ptr(
            instance
                .get_physical_device_properties(pd)
                .device_name
                .as_ptr(),
        )
    }
    .to_string_lossy()
    .into_owned();
    if f16 && f16f.shader_float16 != vk::TRUE {
        return Err(crate::error::Error::MissingFeature {
            device: name,
            feature: "shaderFloat16",
        });
    }
    if storage16 && s16.storage_buffer16_bit_access != vk::TRUE {
        return Err(crate::error::Error::MissingFeature {
            device: name,
            feature: "storageBuffer16BitAccess",
        });
    }
    Ok(())
}

/// Whether the linear head's tensor-core kernel (`mien_shaders::GNM_COOP`) can run on `pd`:
/// `VK_KHR_cooperative_matrix` listed with its `cooperativeMatrix` feature, a 16×16×16 fp16 ×
/// fp16 → fp32 subgroup-scope shape among `vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`'s,
/// subgroups of 32 reaching compute, `shaderFloat16`, `storageBuffer16BitAccess` and
/// `uniformAndStorageBuffer16BitAccess` (Vulkan 1.2 or later).
///
/// # Safety
/// `pd` belongs to `instance`, created from `entry` for API 1.1 or later.
pub unsafe fn coop_gnm_support(
    entry: &ash::Entry,
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> bool {
    // SAFETY: caller's contract.
    let props = unsafe { instance.get_physical_device_properties(pd) };
    if props.api_version < vk::API_VERSION_1_2 {
        return false;
    }
    // SAFETY: caller's contract.
    let exts = unsafe { instance.enumerate_device_extension_properties(pd) }.unwrap_or_default();
    let listed = exts.iter().any(|e| {
        e.extension_name_as_c_str().unwrap_or_default() == ash::khr::cooperative_matrix::NAME
    });
    if !listed {
        return false;
    }
    let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut f16f = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut coop)
        .push_next(&mut s16)
        .push_next(&mut f16f);
    // SAFETY: caller's contract; the extension is listed, so its feature struct may be chained.
    unsafe { instance.get_physical_device_features2(pd, &mut features) };
    let featured = coop.cooperative_matrix == vk::TRUE
        && s16.storage_buffer16_bit_access == vk::TRUE
        && s16.uniform_and_storage_buffer16_bit_access == vk::TRUE
        && f16f.shader_float16 == vk::TRUE;
    // SAFETY: caller's contract.
    let (subgroup, _, _) = unsafe { optional_caps(instance, pd) };
    if !featured || subgroup != Some(32) {
        return false;
    }
    let ext = ash::khr::cooperative_matrix::Instance::new(entry, instance);
    // SAFETY: the extension is listed on pd.
    let shapes =
        unsafe { ext.get_physical_device_cooperative_matrix_properties(pd) }.unwrap_or_default();
    shapes.iter().any(|p| {
        p.m_size == 16
            && p.n_size == 16
            && p.k_size == 16
            && p.a_type == vk::ComponentTypeKHR::FLOAT16
            && p.b_type == vk::ComponentTypeKHR::FLOAT16
            && p.c_type == vk::ComponentTypeKHR::FLOAT32
            && p.result_type == vk::ComponentTypeKHR::FLOAT32
            && p.scope == vk::ScopeKHR::SUBGROUP
    })
}

/// Create a device with one queue of `family` and `features` (16-bit storage / f16 when asked;
/// with `coop`, everything [`coop_gnm_support`] checked).
///
/// # Safety
/// `pd` belongs to `instance`; `family` is one of its queue families; the features are supported.
pub unsafe fn create_device(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    family: u32,
    f16: bool,
    storage16: bool,
    coop: bool,
) -> Result<ash::Device> {
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&priorities)];
    let (f16, storage16) = (f16 || coop, storage16 || coop);
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default()
        .storage_buffer16_bit_access(storage16)
        .uniform_and_storage_buffer16_bit_access(coop);
    let mut f16f = vk::PhysicalDeviceShaderFloat16Int8Features::default().shader_float16(f16);
    let mut coopf =
        vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
    let ext_names = [ash::khr::cooperative_matrix::NAME.as_ptr()];
    let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
    if storage16 {
        info = info.push_next(&mut s16);
    }
    if f16 {
        info = info.push_next(&mut f16f);
    }
    if coop {
        info = info
            .push_next(&mut coopf)
            .enabled_extension_names(&ext_names);
    }
    // SAFETY: caller's contract; `info` borrows live data.
    unsafe { instance.create_device(pd, &info, None) }.vk("vkCreateDevice", "the Vulkan device")
}

/// A shader module from SPIR-V words.
///
/// # Safety
/// `device` is live; `words` is valid SPIR-V.
pub unsafe fn create_shader_module(
    device: &ash::Device,
    words: &[u32],
) -> Result<vk::ShaderModule> {
    let info = vk::ShaderModuleCreateInfo::default().code(words);
    // SAFETY: caller's contract.
    unsafe { device.create_shader_module(&info, None) }.vk("vkCreateShaderModule", "a kernel")
}

/// A descriptor-set layout of `storage.len() + 1` bindings: binding 0 a uniform buffer, then storage
/// buffers (`true` = writable; all are storage buffers to Vulkan).
///
/// # Safety
/// `device` is live.
pub unsafe fn create_set_layout(
    device: &ash::Device,
    storage: usize,
) -> Result<vk::DescriptorSetLayout> {
    let bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = (0..=storage)
        .map(|i| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i as u32)
                .descriptor_type(if i == 0 {
                    vk::DescriptorType::UNIFORM_BUFFER
                } else {
                    vk::DescriptorType::STORAGE_BUFFER
                })
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
    // SAFETY: caller's contract.
    unsafe { device.create_descriptor_set_layout(&info, None) }
        .vk("vkCreateDescriptorSetLayout", "a kernel layout")
}

/// A compute pipeline for `entry` of `module` with `layout`, through `cache`.
///
/// # Safety
/// Every handle is live and belongs to `device`.
pub unsafe fn create_compute_pipeline(
    device: &ash::Device,
    cache: vk::PipelineCache,
    layout: vk::PipelineLayout,
    module: vk::ShaderModule,
    entry: &CStr,
) -> Result<vk::Pipeline> {
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(entry);
    let info = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout)];
    // SAFETY: caller's contract.
    let pipelines = unsafe { device.create_compute_pipelines(cache, &info, None) }
        .map_err(|(_, r)| r)
        .vk("vkCreateComputePipelines", "a kernel")?;
    Ok(pipelines[0])
}

/// Point `set`'s bindings at `buffers` (binding i = `buffers[i]`: buffer, offset, range).
///
/// # Safety
/// Every handle is live, the set's layout has `buffers.len()` bindings (0 uniform, rest storage),
/// and the set is not in use by a pending command buffer.
pub unsafe fn write_set(
    device: &ash::Device,
    set: vk::DescriptorSet,
    buffers: &[(vk::Buffer, u64, u64)],
) {
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
        .iter()
        .map(|&(b, offset, range)| {
            [vk::DescriptorBufferInfo {
                buffer: b,
                offset,
                range,
            }]
        })
        .collect();
    let writes: Vec<vk::WriteDescriptorSet<'_>> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(if i == 0 {
                    vk::DescriptorType::UNIFORM_BUFFER
                } else {
                    vk::DescriptorType::STORAGE_BUFFER
                })
                .buffer_info(info)
        })
        .collect();
    // SAFETY: caller's contract.
    unsafe { device.update_descriptor_sets(&writes, &[]) };
}

/// A compute → compute (and → transfer, → host) memory barrier: every shader write before it is
/// visible to every shader read, copy or host read after it.
///
/// # Safety
/// `cmd` is in the recording state.
pub unsafe fn compute_barrier(device: &ash::Device, cmd: vk::CommandBuffer) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(
            vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::TRANSFER_READ
                | vk::AccessFlags::HOST_READ,
        )];
    // SAFETY: caller's contract.
    unsafe {
        device.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::COMPUTE_SHADER
                | vk::PipelineStageFlags::TRANSFER
                | vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}

/// Record the staging ring's copies into frame buffers (`(barrier in front, src, dst,
/// regions)`): a barrier after the earlier passes and copies that read or write them, the
/// copies (a transfer → transfer barrier in front of one ordered after an overlapping earlier
/// copy), and a barrier that makes them visible to the passes and copies that follow.
///
/// # Safety
/// `cmd` recording outside a render pass on `device`; every buffer live, with TRANSFER_SRC
/// (sources) / TRANSFER_DST (destinations) usage, every region inside both buffers.
pub unsafe fn staging_copies(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    batches: &[(bool, vk::Buffer, vk::Buffer, Vec<vk::BufferCopy>)],
) {
    let barrier = |src_stage, src_access, dst_stage, dst_access| {
        let b = [vk::MemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(dst_access)];
        // SAFETY: caller's contract.
        unsafe {
            device.cmd_pipeline_barrier(
                cmd,
                src_stage,
                dst_stage,
                vk::DependencyFlags::empty(),
                &b,
                &[],
                &[],
            )
        };
    };
    let all = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
    let t = vk::PipelineStageFlags::TRANSFER;
    barrier(
        all,
        vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
        t,
        vk::AccessFlags::TRANSFER_WRITE,
    );
    for (after, src, dst, regions) in batches {
        if *after {
            barrier(
                t,
                vk::AccessFlags::TRANSFER_WRITE,
                t,
                vk::AccessFlags::TRANSFER_WRITE,
            );
        }
        // SAFETY: caller's contract.
        unsafe { device.cmd_copy_buffer(cmd, *src, *dst, regions) };
    }
    barrier(
        t,
        vk::AccessFlags::TRANSFER_WRITE,
        all,
        vk::AccessFlags::SHADER_READ
            | vk::AccessFlags::UNIFORM_READ
            | vk::AccessFlags::TRANSFER_READ
            | vk::AccessFlags::TRANSFER_WRITE,
    );
}

/// The device's compute subgroup size (when subgroups reach compute shaders), its largest single
/// allocation (`maxMemoryAllocationSize`, Vulkan 1.1) and whether it lists a cooperative-matrix
/// extension (`VK_KHR_cooperative_matrix` or `VK_NV_cooperative_matrix2`; the shapes are queried
/// where a kernel uses them).
///
/// # Safety
/// `pd` belongs to `instance`, which was created for API 1.1.
pub unsafe fn optional_caps(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> (Option<u32>, u64, bool) {
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let mut m3 = vk::PhysicalDeviceMaintenance3Properties::default();
    let mut props = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut sub)
        .push_next(&mut m3);
    // SAFETY: caller's contract; the chain borrows live structs (both core in 1.1).
    unsafe { instance.get_physical_device_properties2(pd, &mut props) };
    let subgroup = sub
        .supported_stages
        .contains(vk::ShaderStageFlags::COMPUTE)
        .then_some(sub.subgroup_size);
    // SAFETY: caller's contract.
    let exts = unsafe { instance.enumerate_device_extension_properties(pd) }.unwrap_or_default();
    let coop = exts.iter().any(|e| {
        let name = e.extension_name_as_c_str().unwrap_or_default();
        name == c"VK_KHR_cooperative_matrix" || name == c"VK_NV_cooperative_matrix2"
    });
    (subgroup, m3.max_memory_allocation_size, coop)
}

/// Whether the device has `shaderFloat16` (queried only on Vulkan 1.2 and later, where the feature
/// struct is core; an older device reports `false`).
///
/// # Safety
/// `pd` belongs to `instance`, which was created for API 1.1.
pub unsafe fn has_shader_f16(instance: &ash::Instance, pd: vk::PhysicalDevice) -> bool {
    // SAFETY: caller's contract.
    let api = unsafe { instance.get_physical_device_properties(pd) }.api_version;
    if api < vk::API_VERSION_1_2 {
        return false;
    }
    let mut f16f = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut f16f);
    // SAFETY: caller's contract; the chain borrows a live struct valid on 1.2.
    unsafe { instance.get_physical_device_features2(pd, &mut features) };
    f16f.shader_float16 == vk::TRUE
}
