//! The device layer on wgpu: [`mien_gpu::GpuDevice`] for [`WgpuContext`]. Thin: each method is
//! the wgpu call that does it.

use std::borrow::Cow;
use std::num::NonZeroU64;
use std::sync::Arc;

use mien_gpu::{Bind, Caps, Dispatch, Entry, GpuDevice, Slot, Stage, StageTimes, Usage};
use wgpu::util::DeviceExt;

use crate::context::WgpuContext;
use crate::error::{Error, Result};
use crate::timing::Timestamps;

/// `entry`'s bind-group layout (from [`Entry::slots`]) and pipeline.
pub(crate) fn make_kernel(
    device: &wgpu::Device,
    entry: Entry,
) -> (wgpu::BindGroupLayout, wgpu::ComputePipeline) {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = entry
        .slots()
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match s {
                    Slot::Uniform => wgpu::BufferBindingType::Uniform,
                    Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Slot::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(entry.label()),
        entries: &entries,
    });
    let kernel = entry.kernel();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.file),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(kernel.source)),
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry.label()),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry.label()),
        layout: Some(&pl),
        module: &module,
        entry_point: Some(entry.name()),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    (layout, pipeline)
}

fn usage(u: Usage) -> wgpu::BufferUsages {
    match u {
        Usage::Uniform => wgpu::BufferUsages::UNIFORM,
        Usage::Storage => wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    }
}

/// Zero-sized bindings are invalid: an empty array becomes one zero word.
fn contents(data: &[u8]) -> &[u8] {
    if data.is_empty() { &[0; 4] } else { data }
}

impl GpuDevice for WgpuContext {
    type Buffer = wgpu::Buffer;
    type BindGroup = wgpu::BindGroup;
    type Encoder = wgpu::CommandEncoder;
    type Error = Error;

    const NAME: &'static str = "wgpu";

    fn caps(&self) -> &Caps {
        WgpuContext::caps(self)
    }

    fn over_limits(what: String, limit_name: &'static str, limit: u64, needed: u64) -> Error {
        Error::OverLimits {
            what,
            limit_name,
            limit,
            needed,
        }
    }

    fn range_error(what: &str, offset: u64, len: u64, size: u64) -> Error {
        Error::Range {
            what: what.into(),
            offset,
            len,
            size,
        }
    }

    fn supports(&self, entry: Entry) -> Result<()> {
        self.kernel(entry).map(|_| ())
    }

    fn size(buffer: &wgpu::Buffer) -> u64 {
        buffer.size()
    }

    fn upload(&self, what: &str, u: Usage, data: &[u8]) -> Result<wgpu::Buffer> {
        Ok(self
            .device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(what),
                contents: contents(data),
                usage: usage(u),
            }))
    }

    fn output(&self, what: &str, size: u64) -> Result<wgpu::Buffer> {
        Ok(self.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(what),
            size: size.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    fn frame_buffer(&self, what: &str, u: Usage, data: &[u8]) -> Result<wgpu::Buffer> {
        Ok(self
            .device()
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(what),
                contents: contents(data),
                usage: usage(u) | wgpu::BufferUsages::COPY_DST,
            }))
    }

    /// `queue.write_buffer`: lands before the next submission.
    fn write(&self, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) -> Result<()> {
        Self::check_range("a per-frame write", buffer, offset, data.len() as u64)?;
        if !buffer.usage().contains(wgpu::BufferUsages::COPY_DST) {
            return Err(Error::NotWritable {
                what: "a per-frame write".into(),
            });
        }
        self.queue().write_buffer(buffer, offset, data);
        Ok(())
    }

    fn fill(&self, parts: &[(&wgpu::Buffer, u64, u64)], word: u32) -> Result<()> {
        for &(b, offset, size) in parts {
            Self::check_range("a fill", b, offset, size)?;
        }
        let mut enc = self
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("mien fill"),
            });
        for &(b, offset, size) in parts.iter().filter(|p| p.2 > 0) {
            if word == 0 {
                enc.clear_buffer(b, offset, Some(size));
            } else {
                let words = vec![word; (size / 4) as usize];
                self.queue()
                    .write_buffer(b, offset, bytemuck::cast_slice(&words));
            }
        }
        self.submit(enc);
        self.check()
    }

    fn read(&self, what: &str, parts: &[(&wgpu::Buffer, u64, u64)]) -> Result<Vec<Vec<u8>>> {
        self.read_buffers(what, parts)
    }

    fn bind(&self, entry: Entry, binds: &[Bind<'_, wgpu::Buffer>]) -> Result<wgpu::BindGroup> {
        for b in binds {
            let len = b.size.unwrap_or(b.buffer.size().saturating_sub(b.offset));
            Self::check_range(entry.label(), b.buffer, b.offset, len)?;
        }
        let (layout, _) = self.kernel(entry)?;
        let entries: Vec<wgpu::BindGroupEntry<'_>> = binds
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: b.buffer,
                    offset: b.offset,
                    size: b.size.and_then(NonZeroU64::new),
                }),
            })
            .collect();
        Ok(self.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry.label()),
            layout,
            entries: &entries,
        }))
    }

    /// One compute pass (wgpu orders passes itself: no explicit barrier), with the stage's
    /// timestamp writes.
    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        stage: Stage,
        dispatches: &mut dyn Iterator<Item = Dispatch<'_, Self>>,
    ) -> Result<()> {
        let ts = self.timestamps().and_then(|t| t.begin_pass(encoder, stage));
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(match stage {
                Stage::Morph => "mien morph",
                Stage::Skin => "mien skin",
                Stage::Lift => "mien lift",
                Stage::Hair => "mien hair",
            }),
            timestamp_writes: ts.as_ref().map(|(set, i)| Timestamps::writes(set, *i)),
        });
        let mut bound = None;
        for d in dispatches {
            if bound != Some(d.entry) {
                pass.set_pipeline(&self.kernel(d.entry)?.1);
                bound = Some(d.entry);
            }
            pass.set_bind_group(0, d.group, &[]);
            let [x, y, z] = d.groups;
            pass.dispatch_workgroups(x, y, z);
        }
        Ok(())
    }

    fn copy(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
        dst: &wgpu::Buffer,
        size: u64,
    ) -> Result<()> {
        Self::check_range("a copy's source", src, 0, size)?;
        Self::check_range("a copy's destination", dst, 0, size)?;
        encoder.copy_buffer_to_buffer(src, 0, dst, 0, size);
        Ok(())
    }

    fn begin(&self) -> Result<wgpu::CommandEncoder> {
        self.check()?;
        let encoder = self
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("mien frame"),
            });
        if let Some(t) = self.timestamps() {
            t.new_frame(crate::timing::encoder_key(&encoder));
        }
        Ok(encoder)
    }

    fn end_frame(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some(t) = self.timestamps() {
            t.end_frame(encoder);
        }
    }

    fn submit(&self, encoder: wgpu::CommandEncoder) -> Result<()> {
        self.submit_frame(encoder)
    }

    fn wait(&self) -> Result<()> {
        WgpuContext::wait(self)
    }

    fn completed_times(&self) -> Result<Vec<StageTimes>> {
        WgpuContext::completed_times(self)
    }

    fn check(&self) -> Result<()> {
        WgpuContext::check(self)
    }

    fn scoped<T>(&self, what: &str, f: impl FnOnce() -> T) -> Result<T> {
        WgpuContext::scoped(self, what, f)
    }

    fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(self.shared(), other.shared())
    }
}
