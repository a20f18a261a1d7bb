//! A decoder session: a model loaded into ONNX Runtime, its contract checked
//! ([`crate::Contract::check`]), run on the inputs the contract names.

use std::path::Path;
use std::sync::Mutex;

use ort::session::Session;
use ort::value::{DynValue, TensorRef, ValueType};

use crate::contract::{Contract, Dim, Elem, Port};
use crate::error::{Error, Result};
use crate::ort_env::Ort;

/// Where a decoder runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Provider {
    /// ONNX Runtime's CPU execution provider.
    #[default]
    Cpu,
    /// The CUDA execution provider on device `device` (ONNX Runtime's GPU build,
    /// `pip install onnxruntime-gpu`); refused, not silently replaced by the CPU, when the library
    /// lacks it. Outputs come back to host memory.
    Cuda {
        /// CUDA device ordinal.
        device: i32,
    },
}

impl Provider {
    /// `cpu` or `cuda:N`.
    pub fn name(&self) -> String {
        match self {
            Provider::Cpu => "cpu".into(),
            Provider::Cuda { device } => format!("cuda:{device}"),
        }
    }
}

/// Most intra-op threads a session may ask for.
pub const MAX_THREADS: usize = 1024;

/// How a decoder session is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecoderOptions {
    /// Threads inside one run (ONNX Runtime's intra-op pool), 1 to [`MAX_THREADS`]; `None`: ONNX
    /// Runtime's default (one per core).
    pub threads: Option<usize>,
    /// The execution provider.
    pub provider: Provider,
}

/// The inputs of one decode. Inputs the model does not take are ignored; one it takes and that is
/// `None` here is an [`Error::Input`].
#[derive(Clone, Copy, Debug, Default)]
pub struct DecodeInputs<'a> {
    /// The gaussian count N.
    pub n: usize,
    /// `(N, F)` row-major features.
    pub features: Option<&'a [f32]>,
    /// `(C,)` the rig's controls.
    pub controls: Option<&'a [f32]>,
    /// `(N, 3)` unit directions camera → gaussian, in the branch's frame.
    pub view_dir: Option<&'a [[f32; 3]]>,
}

/// One decode's outputs, `(N, ·)`; the optional ones empty when the model lacks them. Reused across
/// decodes ([`Decoder::decode`] overwrites it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    /// `(N, 3)` display colour, clamped to 0–1.
    pub rgb: Vec<[f32; 3]>,
    /// `(N,)` opacity, clamped to 0–1.
    pub opacity: Vec<f32>,
    /// `(N, 3)` offsets in the texel frame, units of `k`.
    pub offset: Vec<[f32; 3]>,
    /// `(N, 3)` log-scale deltas.
    pub log_scale: Vec<[f32; 3]>,
    /// `(N, 4)` quaternions `(w, x, y, z)`, as the model gave them (not normalised here; the
    /// runtime normalises them and refuses a zero one, naming its row).
    pub rotation: Vec<[f32; 4]>,
    /// Colour and opacity values outside 0–1 that were clamped in this decode (the contract's one
    /// clamping rule; a non-finite value is refused instead).
    pub clamped: u64,
}

/// An appearance decoder: an ONNX model that fits the contract, in an ONNX Runtime session.
/// `Send + Sync` (runs are serialised: ONNX Runtime's `Run` on one session is not re-entrant
/// through `ort`).
#[derive(Debug)]
pub struct Decoder {
    file: String,
    session: Mutex<Session>,
    contract: Contract,
    bytes: u64,
    provider: Provider,
}

impl Decoder {
    /// Load the model at `path` and check it against the contract.
    ///
    /// # Errors
    /// [`Error::Model`] when ONNX Runtime cannot read it (the file named); [`Error::Contract`] with
    /// every problem of its inputs and outputs; [`Error::Ort`] when the provider is refused.
    pub fn load(ort: &Ort, path: &Path, options: &DecoderOptions) -> Result<Decoder> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::Model {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        Self::from_bytes(ort, &bytes, &file, options)
    }

    /// Load a model from its bytes; `file` names it in messages.
    ///
    /// # Errors
    /// As [`Decoder::load`].
    pub fn from_bytes(
        ort: &Ort,
        bytes: &[u8],
        file: &str,
        options: &DecoderOptions,
    ) -> Result<Decoder> {
        let model = |e: ort::Error| Error::Model {
            file: file.to_owned(),
            reason: e.to_string(),
        };
        let mut b = Session::builder(ort.env()).map_err(|e| Error::Ort(e.to_string()))?;
        if let Some(t) = options.threads {
            if !(1..=MAX_THREADS).contains(&t) {
                return Err(Error::Ort(format!(
                    "{t} threads: a session runs on 1 to {MAX_THREADS}"
                )));
            }
            b = b
                .with_intra_threads(t)
                .map_err(|e| Error::Ort(e.to_string()))?;
        }
        if let Provider::Cuda { device } = options.provider {
            b = b
                .with_execution_providers([ort::ep::CUDA::default()
                    .with_device_id(device)
                    .build()
                    .error_on_failure()])
                .map_err(|e| {
                    Error::Ort(format!(
                        "the CUDA execution provider is not available in the ONNX Runtime at {} ({e}); its GPU build is `pip install onnxruntime-gpu`",
                        ort.path().display()
                    ))
                })?;
        }
        let session = b.commit_from_memory(bytes).map_err(model)?;
        let ports = |outlets: &[ort::value::Outlet]| -> Vec<Port> {
            outlets.iter().map(|o| port(o.name(), o.dtype())).collect()
        };
        let contract = Contract::check(&ports(session.inputs()), &ports(session.outputs()))
            .map_err(|problems| Error::Contract {
                file: file.to_owned(),
                problems,
            })?;
        Ok(Decoder {
            file: file.to_owned(),
            session: Mutex::new(session),
            contract,
            bytes: bytes.len() as u64,
            provider: options.provider,
        })
    }

    /// What the model takes and gives.
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The model's file (or name), for messages.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The model's size in bytes (what the bundle holds resident for it).
    pub fn byte_len(&self) -> u64 {
        self.bytes
    }

    /// The execution provider it runs on.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Run the model on `inputs`, writing every output into `out` (resized to N).
    ///
    /// # Errors
    /// [`Error::Input`] for an input the model takes that is missing or of the wrong size (named,
    /// with the sizes); [`Error::Run`] when ONNX Runtime fails; [`Error::Output`] for an output of
    /// the wrong shape or a non-finite value (its row named).
    pub fn decode(&self, inputs: &DecodeInputs<'_>, out: &mut Decoded) -> Result<()> {
        let c = &self.contract;
        let n = inputs.n;
        let bad = |input: &str, reason: String| Error::Input {
            file: self.file.clone(),
            input: input.into(),
            reason,
        };
        if let Some(f) = c.fixed_n
            && f != n
        {
            return Err(bad(
                "N",
                format!("the model is fixed to {f} gaussians and was given {n}"),
            ));
        }
        let half = |name: &str| c.half.iter().any(|h| h == name);
        // Half-precision copies live for the run.
        let mut f16_store: Vec<Vec<half::f16>> = Vec::new();
        let mut named: Vec<(&str, &[f32], [usize; 2])> = Vec::new();
        if let Some(w) = c.features {
            let f = inputs.features.ok_or_else(|| {
                bad(
                    "features",
                    "the model takes features and none were given".into(),
                )
            })?;
            if n.checked_mul(w) != Some(f.len()) {
                return Err(bad(
                    "features",
                    format!(
                        "{} values for {n} gaussians × {w} features ({})",
                        f.len(),
                        n.checked_mul(w)
                            .map_or_else(|| "more than memory holds".into(), |x| x.to_string())
                    ),
                ));
            }
            named.push(("features", f, [n, w]));
        }
        if let Some(w) = c.controls {
            let f = inputs.controls.ok_or_else(|| {
                bad(
                    "controls",
                    "the model takes the rig's controls and none were given".into(),
                )
            })?;
            if f.len() != w {
                return Err(bad(
                    "controls",
                    format!("{} controls given; the model takes {w}", f.len()),
                ));
            }
            named.push(("controls", f, [1, w]));
        }
        if c.view_dir {
            let f = inputs.view_dir.ok_or_else(|| {
                bad(
                    "view_dir",
                    "the model is view-dependent and no view was given".into(),
                )
            })?;
            if f.len() != n {
                return Err(bad(
                    "view_dir",
                    format!("{} directions for {n} gaussians", f.len()),
                ));
            }
            named.push(("view_dir", bytemuck_flat(f), [n, 3]));
        }
        for (name, data, _) in &named {
            if half(name) {
                f16_store.push(data.iter().map(|x| half::f16::from_f32(*x)).collect());
            }
        }
        let mut values: Vec<(String, ort::session::SessionInputValue<'_>)> = Vec::new();
        let mut hi = 0;
        for (name, data, shape) in &named {
            let v: ort::session::SessionInputValue<'_> = if half(name) {
                let d = &f16_store[hi];
                hi += 1;
                TensorRef::from_array_view((*shape, d.as_slice()))
                    .map_err(|e| bad(name, e.to_string()))?
                    .into()
            } else {
                TensorRef::from_array_view((*shape, *data))
                    .map_err(|e| bad(name, e.to_string()))?
                    .into()
            };
            values.push(((*name).to_owned(), v));
        }
        let mut session = self.session.lock().map_err(|_| Error::Run {
            file: self.file.clone(),
            reason: "the session's lock is poisoned (a thread panicked in a run)".into(),
        })?;
        let outputs = session.run(values).map_err(|e| Error::Run {
            file: self.file.clone(),
            reason: e.to_string(),
        })?;
        out.clamped = 0;
        let mut clamped = 0u64;
        let mut read = |name: &str, width: usize, clamp: bool| -> Result<Vec<f32>> {
            let v = outputs.get(name).ok_or_else(|| Error::Output {
                file: self.file.clone(),
                output: name.into(),
                index: None,
                reason: "missing from the run's outputs".into(),
            })?;
            let mut data = extract(v, half(name)).map_err(|reason| Error::Output {
                file: self.file.clone(),
                output: name.into(),
                index: None,
                reason,
            })?;
            if n.checked_mul(width) != Some(data.len()) {
                return Err(Error::Output {
                    file: self.file.clone(),
                    output: name.into(),
                    index: None,
                    reason: format!("{} values for {n} gaussians × {width}", data.len()),
                });
            }
            if let Some(i) = data.iter().position(|x| !x.is_finite()) {
                return Err(Error::Output {
                    file: self.file.clone(),
                    output: name.into(),
                    index: Some(i / width),
                    reason: format!("{} is not finite", data[i]),
                });
            }
            if clamp {
                for x in &mut data {
                    if *x < 0.0 || *x > 1.0 {
                        *x = x.clamp(0.0, 1.0);
                        clamped += 1;
                    }
                }
            }
            Ok(data)
        };
        let rgb = read("rgb", 3, true)?;
        let opacity = read("opacity", 1, true)?;
        let g = c.geometry;
        let offset = if g.offset {
            read("offset", 3, false)?
        } else {
            Vec::new()
        };
        let log_scale = if g.log_scale {
            read("log_scale", 3, false)?
        } else {
            Vec::new()
        };
        let rotation = if g.rotation {
            read("rotation", 4, false)?
        } else {
            Vec::new()
        };
        fill3(&mut out.rgb, &rgb);
        out.opacity.clear();
        out.opacity.extend_from_slice(&opacity);
        fill3(&mut out.offset, &offset);
        fill3(&mut out.log_scale, &log_scale);
        out.rotation.clear();
        out.rotation
            .extend(rotation.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]));
        out.clamped = clamped;
        Ok(())
    }
}

fn fill3(dst: &mut Vec<[f32; 3]>, src: &[f32]) {
    dst.clear();
    dst.extend(src.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
}

fn bytemuck_flat(v: &[[f32; 3]]) -> &[f32] {
    v.as_flattened()
}

/// A value's data as f32, from f32 or (when `half`) f16.
fn extract(v: &DynValue, half: bool) -> std::result::Result<Vec<f32>, String> {
    if half {
        let (_, d) = v
            .try_extract_tensor::<half::f16>()
            .map_err(|e| e.to_string())?;
        Ok(d.iter().map(|x| x.to_f32()).collect())
    } else {
        let (_, d) = v.try_extract_tensor::<f32>().map_err(|e| e.to_string())?;
        Ok(d.to_vec())
    }
}

/// An outlet as the contract sees it.
fn port(name: &str, t: &ValueType) -> Port {
    match t {
        ValueType::Tensor {
            ty,
            shape,
            dimension_symbols,
        } => Port {
            name: name.to_owned(),
            elem: match ty {
                ort::value::TensorElementType::Float32 => Elem::F32,
                ort::value::TensorElementType::Float16 => Elem::F16,
                other => Elem::Other(format!("{other:?}").to_lowercase()),
            },
            dims: Some(
                shape
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        if *d >= 0 {
                            Dim::Fixed(*d as u64)
                        } else {
                            Dim::Dynamic(dimension_symbols.get(i).cloned().unwrap_or_default())
                        }
                    })
                    .collect(),
            ),
        },
        other => Port {
            name: name.to_owned(),
            elem: Elem::Other(format!("{other:?}")),
            dims: None,
        },
    }
}
