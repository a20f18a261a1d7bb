//! The compute pipelines, created once per context from the shared WGSL (`mien-shaders`), with
//! explicit bind-group layouts (the lift's `clear` entry point shares the lift's layout).

use std::borrow::Cow;

/// Binding kinds in a kernel's group 0, in binding order.
#[derive(Clone, Copy)]
enum Slot {
    Uniform,
    Read,
    ReadWrite,
}

fn layout(device: &wgpu::Device, label: &str, slots: &[Slot]) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match s {
                Slot::Uniform => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Slot::Read => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                Slot::ReadWrite => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

fn pipeline(
    device: &wgpu::Device,
    kernel: &mien_shaders::Kernel,
    entry: &str,
    bgl: &wgpu::BindGroupLayout,
) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.file),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(kernel.source)),
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(kernel.file),
        bind_group_layouts: &[Some(bgl)],
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pl),
        module: &module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    })
}

/// The pipelines and their bind-group layouts.
pub(crate) struct Pipelines {
    pub morph_layout: wgpu::BindGroupLayout,
    pub morph: wgpu::ComputePipeline,
    pub skin_layout: wgpu::BindGroupLayout,
    pub skin: wgpu::ComputePipeline,
    pub tangent_layout: wgpu::BindGroupLayout,
    pub tangent: wgpu::ComputePipeline,
    pub lift_layout: wgpu::BindGroupLayout,
    pub lift: wgpu::ComputePipeline,
    pub clear: wgpu::ComputePipeline,
}

/// The GNM forward kernel, created apart from [`Pipelines`] and only when a head is uploaded: it
/// uses `unpack2x16float`, which a device may lack (wgpu's `SHADER_F16_IN_F32`), and that must not
/// cost the morph path its pipelines.
pub(crate) struct GnmPipeline {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

impl GnmPipeline {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        use Slot::*;
        let layout = layout(
            device,
            "mien gnm",
            &[Uniform, Read, Read, Read, Read, ReadWrite],
        );
        GnmPipeline {
            pipeline: pipeline(device, &mien_shaders::GNM, "forward", &layout),
            layout,
        }
    }
}

impl Pipelines {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        use Slot::*;
        let morph_layout = layout(
            device,
            "mien morph",
            &[Uniform, Read, Read, Read, Read, Read, ReadWrite],
        );
        let skin_layout = layout(
            device,
            "mien skin",
            &[Uniform, Read, Read, Read, Read, ReadWrite],
        );
        // 8 storage buffers: wgpu's default per-stage limit, so a caller-made device runs it too.
        let tangent_layout = layout(
            device,
            "mien tangent",
            &[Uniform, Read, Read, Read, Read, Read, Read, Read, ReadWrite],
        );
        let lift_layout = layout(
            device,
            "mien lift",
            &[
                Uniform, Read, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite,
            ],
        );
        Pipelines {
            morph: pipeline(device, &mien_shaders::MORPH, "main", &morph_layout),
            skin: pipeline(device, &mien_shaders::SKIN, "main", &skin_layout),
            tangent: pipeline(device, &mien_shaders::TANGENT, "main", &tangent_layout),
            tangent_layout,
            lift: pipeline(device, &mien_shaders::LIFT_DEBUG, "lift", &lift_layout),
            clear: pipeline(device, &mien_shaders::LIFT_DEBUG, "clear", &lift_layout),
            morph_layout,
            skin_layout,
            lift_layout,
        }
    }
}

/// A bind group of whole buffers / buffer ranges in binding order.
pub(crate) fn bind_group(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    resources: &[wgpu::BindingResource<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: r.clone(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}
