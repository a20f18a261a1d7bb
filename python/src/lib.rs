//! `mien._mien`: the CPython extension behind the `mien` package (PyO3, abi3 for Python ≥ 3.11).
//!
//! A thin layer over `mien-runtime`: every call converts its arguments, releases the interpreter
//! lock around the work (`Python::detach`), and converts the result — arrays through the buffer
//! protocol ([`array::Array`], no copy into NumPy), reports as dicts (through JSON), errors as the
//! exception of their kind ([`errors`]). The Python package (`pysrc/mien`) re-exports it, adds
//! the Ray batch bake, and carries the type stubs (`_mien.pyi`, shapes and units).

#![allow(unsafe_op_in_unsafe_fn)]

mod array;
mod errors;
mod runtime;

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use mien_runtime::Asset;

use crate::errors::to_py;

/// A JSON value as the Python object `json.loads` would give.
pub(crate) fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| {
        pyo3::exceptions::PyValueError::new_err(format!("cannot serialise a report: {e}"))
    })?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// Anything serialisable as the Python object `json.loads` would give.
pub(crate) fn to_pyobj<T: serde::Serialize>(py: Python<'_>, v: &T) -> PyResult<Py<PyAny>> {
    let v = serde_json::to_value(v).map_err(|e| {
        pyo3::exceptions::PyValueError::new_err(format!("cannot serialise a report: {e}"))
    })?;
    json_to_py(py, &v)
}

/// A loaded character: a glTF/GLB or VRM model, an `.aosrig` linear head, a MetaHuman `.dna`, a
/// character file (`*.character.json`: the model with its face, body and dynamics parts), or the
/// built-ins (`builtin`, `builtin-body`). Immutable and shared: one `Character` feeds any number of
/// runtimes and bakes, in any thread.
#[pyclass(frozen, module = "mien")]
pub struct Character {
    pub(crate) asset: Arc<Asset>,
    /// A character file's parts, put on every instance of a runtime made from it.
    pub(crate) parts: Option<Arc<mien_runtime::character::LoadedCharacter>>,
    /// The bytes the character was loaded from (what a bake appends to), when it has a file.
    pub(crate) path: Option<PathBuf>,
}

#[pymethods]
impl Character {
    /// Load a character from `path` (the kind by extension), or `builtin` / `builtin-body`. For a
    /// character bundle: `prefer_fp16` (None: on the CUDA provider only), `pose_anchors` (None: as
    /// the file says, default off), `decoder_threads` (ONNX Runtime's intra-op threads, 1 to 1024;
    /// None: its default).
    #[staticmethod]
    #[pyo3(signature = (path, *, prefer_fp16=None, pose_anchors=None, decoder_threads=None))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        prefer_fp16: Option<bool>,
        pose_anchors: Option<bool>,
        decoder_threads: Option<usize>,
    ) -> PyResult<Character> {
        let options = mien_runtime::BundleOptions {
            prefer_fp16,
            pose_anchors,
            decoder: mien_runtime::decoder::DecoderOptions {
                threads: decoder_threads,
                ..Default::default()
            },
        };
        py.detach(|| load_character_with(&path, &options))
            .map_err(to_py)
    }

    /// The built-in sample head (ARKit-52 morph targets).
    #[staticmethod]
    fn builtin() -> Character {
        Character {
            asset: Arc::new(Asset::builtin()),
            parts: None,
            path: None,
        }
    }

    /// The file it was loaded from (`builtin` for the built-ins).
    #[getter]
    fn source(&self) -> String {
        self.asset.source().to_string()
    }

    /// Vertices V of its posed surface.
    #[getter]
    fn vertex_count(&self) -> u32 {
        self.asset.vertex_count()
    }

    /// `rig` (meshes, morph targets, skins) or `linear_head` (an `.aosrig` pack): what poses it.
    #[getter]
    fn model(&self) -> &'static str {
        match self.asset.model() {
            mien_runtime::Model::Rig(_) => "rig",
            mien_runtime::Model::Head { .. } => "linear_head",
        }
    }

    /// Triangles `(T,3)` uint32 (indices into the posed vertices), read-only, no copy.
    #[getter]
    fn triangles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        array::Array::u32x3(self.asset.triangles().to_vec()).into_numpy(py)
    }

    /// The character's clips: `index: name` each.
    #[getter]
    fn clips(&self) -> Vec<String> {
        let ch = self.asset.character();
        (0..ch.clips.len())
            .map(|i| mien_runtime::take::clip_label(ch, i))
            .collect()
    }

    /// Morph target names of every mesh node, `{node: [target, …]}`.
    #[getter]
    fn morph_targets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let ch = self.asset.character();
        let d = PyDict::new(py);
        for (i, node) in ch.nodes.iter().enumerate() {
            let Some(m) = node.mesh else { continue };
            let Some(mesh) = ch.meshes.get(m.index()) else {
                continue;
            };
            if mesh.target_names.is_empty() {
                continue;
            }
            d.set_item(mien_runtime::node_label(ch, i), mesh.target_names.clone())?;
        }
        Ok(d)
    }

    /// This character with a clip retargeted from `source` (any glTF/GLB/VRM/VRMA with clips and
    /// a humanoid skeleton; mapped by humanoid role) appended; the clip's index in the new
    /// character's `clips` is returned with it. `clip`: the source's clip by name or index (its
    /// first by default); `fps`: key rate of the retargeted clip, 1–240.
    #[pyo3(signature = (source, clip=None, fps=30.0))]
    fn with_retargeted_clip(
        &self,
        py: Python<'_>,
        source: PathBuf,
        clip: Option<String>,
        fps: f64,
    ) -> PyResult<(Character, usize)> {
        let asset = Arc::clone(&self.asset);
        let r = py
            .detach(|| -> mien_runtime::Result<_> {
                let src = mien_runtime::retarget::load_source(&source)?;
                let req = mien_runtime::retarget::RetargetRequest {
                    clip,
                    fps,
                    ..Default::default()
                };
                mien_runtime::retarget::retarget(&src, &asset, &req)
            })
            .map_err(to_py)?;
        Ok((
            Character {
                asset: Arc::new(r.asset),
                parts: self.parts.clone(),
                path: self.path.clone(),
            },
            r.clip.index(),
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "mien.Character({:?}, vertices={})",
            self.asset.source(),
            self.asset.vertex_count()
        )
    }
}

/// [`Character::load`] without the interpreter.
pub(crate) fn load_character(path: &std::path::Path) -> mien_runtime::Result<Character> {
    load_character_with(path, &mien_runtime::BundleOptions::default())
}

/// [`load_character`] with a bundle's options.
pub(crate) fn load_character_with(
    path: &std::path::Path,
    options: &mien_runtime::BundleOptions,
) -> mien_runtime::Result<Character> {
    use mien_runtime::character::{BUILTIN_BODY, BUILTIN_HEAD, CharacterDef};
    let name = path.to_string_lossy().to_ascii_lowercase();
    if path == std::path::Path::new(BUILTIN_HEAD) {
        return Ok(Character {
            asset: Arc::new(Asset::builtin()),
            parts: None,
            path: None,
        });
    }
    if path == std::path::Path::new(BUILTIN_BODY) || name.ends_with(".character.json") {
        let loaded = if path == std::path::Path::new(BUILTIN_BODY) {
            CharacterDef::builtin_body()?
        } else {
            CharacterDef::load_with(path, options)?
        };
        return Ok(Character {
            asset: Arc::new(loaded.asset.clone()),
            path: (path != std::path::Path::new(BUILTIN_BODY))
                .then(|| std::path::PathBuf::from(loaded.asset.source())),
            parts: Some(Arc::new(loaded)),
        });
    }
    Ok(Character {
        asset: Arc::new(Asset::load(path)?),
        parts: None,
        path: Some(path.to_path_buf()),
    })
}

/// What the file at `path` holds, as a dict (`mien inspect --json`): a character, a stream, a
/// speech timing file, a splat file or a groom.
#[pyfunction]
fn inspect(py: Python<'_>, path: PathBuf) -> PyResult<Py<PyAny>> {
    let v = py
        .detach(|| mien_runtime::inspect::inspect(&path))
        .map_err(to_py)?;
    json_to_py(py, &v)
}

/// Bake one take into the character's GLB and write `out` (.glb, or .vrm for a VRM) atomically,
/// as `mien bake` does; returns the report (name, keys, channels, bytes, span_s, drive, speech,
/// notes).
///
/// character: a Character, or a path to load. The take: `arkit` (an ARKit-52 stream file) or
/// `clip` (one of the character's clips by name or index, `all` or `rest`), with an optional
/// `speech` timing file over it (TextGrid, Gentle, Rhubarb, Polly, Azure, mien JSON); nothing at
/// all bakes the character's first clip. `name`: the animation's name (default `mien: <take>`).
/// `fps` 1–1000 keys per second from `start` seconds; `frames` keys (default: the take's span).
/// `tolerance` (weight, degrees): drop keys LINEAR interpolation reproduces within them. `lod`: a
/// game-face LOD of this many triangles. `sampler` (`held` | `envelope`), `audio_offset` (s),
/// `min_hold` (s, envelope only), `speech_format`: the speech options. `record`: a JSON-able
/// dict kept in the file's record (under take.caller). Deterministic: the same inputs write the
/// same bytes. Raises InvalidError, FormatError, IoError, LimitError.
#[pyfunction]
#[pyo3(signature = (character, out, *, arkit=None, speech=None, clip=None, name=None, fps=30.0,
    start=0.0, frames=None, tolerance=None, lod=None, sampler="held", audio_offset=0.0,
    min_hold=0.0, speech_format=None, record=None))]
#[allow(clippy::too_many_arguments)]
fn bake(
    py: Python<'_>,
    character: &Bound<'_, PyAny>,
    out: PathBuf,
    arkit: Option<PathBuf>,
    speech: Option<PathBuf>,
    clip: Option<String>,
    name: Option<String>,
    fps: f64,
    start: f64,
    frames: Option<i64>,
    tolerance: Option<(f64, f64)>,
    lod: Option<i64>,
    sampler: &str,
    audio_offset: f64,
    min_hold: f64,
    speech_format: Option<String>,
    record: Option<Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let frames = match frames {
        None => None,
        Some(f) => Some(u32::try_from(f).map_err(|_| {
            errors::invalid(&format!("frames {f}"), "must be 1 or more keys".into())
        })?),
    };
    let lod = match lod {
        None => None,
        Some(n) => Some(u64::try_from(n).map_err(|_| {
            errors::invalid(&format!("lod {n}"), "a triangle budget, 128 or more".into())
        })?),
    };
    if let Some((w, d)) = tolerance {
        if !(w.is_finite()
            && (0.0..=1.0).contains(&w)
            && d.is_finite()
            && (0.0..=45.0).contains(&d))
        {
            return Err(errors::invalid(
                &format!("tolerance ({w}, {d})"),
                "a weight from 0 to 1 and an angle from 0 to 45 degrees".into(),
            ));
        }
    }
    let caller = match record {
        None => None,
        Some(r) => {
            let text: String = py
                .import("json")?
                .call_method1("dumps", (r,))
                .and_then(|t| t.extract())
                .map_err(|e| errors::invalid("record", format!("not JSON-able: {e}")))?;
            Some(
                serde_json::from_str(&text)
                    .map_err(|e| errors::invalid("record", e.to_string()))?,
            )
        }
    };
    let (asset, path) = character_of(py, character)?;
    let take = mien_runtime::take::Take {
        arkit,
        speech,
        speech_options: runtime::speech_options(
            sampler,
            audio_offset,
            min_hold,
            speech_format.as_deref(),
        )?,
        clip,
    };
    let opts = mien_runtime::take::TakeOptions {
        name,
        fps,
        start_s: start,
        frames,
        tolerance: tolerance.map(|(w, d)| mien_runtime::bake::Tolerance {
            value: w as f32,
            angle_rad: d.to_radians() as f32,
        }),
        lod,
        curves: false,
        caller,
    };
    let report = py
        .detach(|| bake_to(&asset, path.as_deref(), &out, &take, &opts))
        .map_err(to_py)?;
    json_to_py(py, &report)
}

/// The character argument of a bake: a `Character`, or a path loaded here.
fn character_of(
    py: Python<'_>,
    character: &Bound<'_, PyAny>,
) -> PyResult<(Arc<Asset>, Option<PathBuf>)> {
    if let Ok(c) = character.cast::<Character>() {
        let c = c.get();
        return Ok((Arc::clone(&c.asset), c.path.clone()));
    }
    let path: PathBuf = character.extract()?;
    let c = py.detach(|| load_character(&path)).map_err(to_py)?;
    Ok((c.asset, c.path))
}

/// Bake and write atomically; the report.
fn bake_to(
    asset: &Arc<Asset>,
    path: Option<&std::path::Path>,
    out: &std::path::Path,
    take: &mien_runtime::take::Take,
    opts: &mien_runtime::take::TakeOptions,
) -> mien_runtime::Result<serde_json::Value> {
    use mien_runtime::error::Context as _;
    let ok_ext = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("vrm"));
    if !ok_ext {
        return Err(mien_runtime::Error::invalid(
            format!("out {}", out.display()),
            "a baked take is a .glb file (or .vrm, baking a VRM avatar)",
        ));
    }
    // A linear head or a DNA character is exported as a GLB first: its file's bytes are unused.
    let source = match path {
        Some(p) if asset.pack().is_none() && asset.character().rig_logic.is_none() => {
            mien_core::io::read::read_file_capped(p, 1 << 31)
                .context(format!("cannot read {}", p.display()))?
        }
        _ => Vec::new(),
    };
    let baked =
        mien_runtime::take::bake_take(asset, &source, &out.display().to_string(), take, opts)?;
    mien_core::io::atomic::write_atomic_bytes(out, &baked.bytes)
        .context(format!("cannot write {}", out.display()))?;
    Ok(serde_json::json!({
        "out": out.display().to_string(),
        "name": baked.name,
        "label": baked.label,
        "keys": baked.report.keys,
        "keys_written": baked.report.keys_written,
        "weight_channels": baked.report.weight_channels,
        "transform_channels": baked.report.transform_channels,
        "bytes": baked.bytes.len(),
        "frames": baked.frames,
        "fps": opts.fps,
        "span_s": baked.span_s,
        "drive": baked.drive,
        "speech": baked.speech,
        "lod": baked.lod.map(|r| serde_json::json!({"budget": r.budget, "facial": r.facial, "total": r.total})),
        "notes": baked.notes,
    }))
}

/// Check a baked file (`mien bake --verify`): its records intact, every facial part unchanged,
/// the glTF-Validator's animation rules met. Returns `{"takes": [...], "parts": n,
/// "alignments": {take: timing record}}`.
#[pyfunction]
fn verify(py: Python<'_>, path: PathBuf) -> PyResult<Py<PyAny>> {
    let v = py
        .detach(|| -> mien_runtime::Result<serde_json::Value> {
            use mien_runtime::error::Context as _;
            let bytes = mien_core::io::read::read_file_capped(&path, 1 << 31)
                .context(format!("cannot read {}", path.display()))?;
            let file = path.display().to_string();
            let r = mien_runtime::bake::verify(&bytes, &file)?;
            let mut alignments = serde_json::Map::new();
            for take in &r.takes {
                if let Some(t) = mien_runtime::bake::alignment(&bytes, &file, take)? {
                    alignments.insert(
                        take.clone(),
                        serde_json::json!({
                            "label": t.label, "file": t.file, "origin_s": t.origin_s,
                            "duration_s": t.duration_s, "intervals": t.intervals.len(),
                            "sampler": t.sampler, "min_hold_s": t.min_hold_s,
                            "mapping_revision": t.mapping_revision,
                            "timing_revision": t.timing_revision,
                        }),
                    );
                }
            }
            Ok(serde_json::json!({"takes": r.takes, "parts": r.parts, "alignments": alignments}))
        })
        .map_err(to_py)?;
    json_to_py(py, &v)
}

/// Run a scenario file twice from scratch (`mien scenario run`): its steps, checks, captures and
/// goldens; returns the report as a dict (`passed`, failures, hashes, captures). An invalid
/// scenario raises `ScenarioError` with every problem in `.problems` (`[(pointer, message)]`).
#[pyfunction]
fn run_scenario(py: Python<'_>, path: PathBuf) -> PyResult<Py<PyAny>> {
    use mien_runtime::scenario::{check, report};
    let t0 = std::time::Instant::now();
    let rep = py.detach(|| {
        let mut plan = check::prepare(&path, false).map_err(Err)?;
        let validated = t0.elapsed();
        report::run_twice(
            &mut plan,
            vec!["python".into(), path.display().to_string()],
            validated,
            &|| false,
        )
        .map(|(rep, _images)| rep)
        .map_err(Ok)
    });
    match rep {
        Ok(r) => to_pyobj(py, &r),
        Err(Ok(e)) => Err(to_py(e)),
        Err(Err(problems)) => Err(errors::scenario_invalid(py, &path, &problems)),
    }
}

/// Which GPU backends this build of the extension carries (`cpu` always).
#[pyfunction]
fn backends() -> Vec<&'static str> {
    let mut b = vec!["cpu"];
    if cfg!(feature = "wgpu") {
        b.push("wgpu");
    }
    if cfg!(feature = "vulkan") {
        b.push("vulkan");
    }
    b
}

/// The module.
#[pymodule]
fn _mien(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "ARKIT_52",
        mien_core::anim::arkit::ARKIT_52
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
    )?;
    m.add_class::<Character>()?;
    m.add_class::<runtime::Runtime>()?;
    m.add_class::<array::Array>()?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(bake, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    errors::register(m)?;
    Ok(())
}
