//! `mien.Runtime`: N instances of one character on one device, their drivers, `update(t)` and
//! the read-outs, over [`mien_runtime::Runtime`].

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use mien_runtime::face::{Event, FaceDriver, FaceSources, Script, read_face};
use mien_runtime::{
    Backend, Device, ExpressionSpace, LiftKind, LiftOptions, RuntimeOptions, SpeechOptions,
};

use crate::array::Array;
use crate::errors::{invalid, to_py};
use crate::{Character, json_to_py, to_pyobj};

/// N instances of a character posed (and lifted into splats) together on one device.
///
/// Runtime(character, *, backend="cpu", instances=1, lift="surface"): `character` a Character or
/// a path to load; `backend` `cpu`, `wgpu`, `vulkan` or `auto` (a real GPU through wgpu when there
/// is one, else the CPU); `instances` 1 to 4,096, each with its own drivers; `lift` `surface`
/// (textured gaussians bound to the triangles, about 100,000 a character), `texel`, `debug` (one
/// per vertex) or None (pose only). Instance methods take the instance index `i` first. One
/// runtime serves one thread at a time (a call while another thread's call on the same runtime
/// runs raises RuntimeError "Already borrowed"); make one runtime per thread.
#[pyclass(module = "mien")]
pub struct Runtime {
    // A `Mutex` only to make the class `Sync` (the engine is `Send`, not `Sync`); every method
    // takes `&mut self` or locks it briefly, so it is never contended.
    rt: std::sync::Mutex<mien_runtime::Runtime>,
    character: Py<Character>,
}

fn space_of(name: &str) -> PyResult<ExpressionSpace> {
    // `arkit` as well as the library's `arkit52`.
    ExpressionSpace::from_name(if name == "arkit" { "arkit52" } else { name }).map_err(to_py)
}

fn lift_of(
    name: Option<&str>,
    parts: Option<&mien_runtime::character::LoadedCharacter>,
) -> PyResult<Option<LiftOptions>> {
    let bundle = parts.filter(|p| p.bundle.as_ref().is_some_and(|b| !b.branches.is_empty()));
    let kind = match name {
        None | Some("none") => return Ok(None),
        Some("auto") => match bundle {
            Some(p) => return Ok(Some(p.lift_options())),
            None => LiftKind::Surface(Default::default()),
        },
        Some("bundle") => match bundle {
            Some(p) => return Ok(Some(p.lift_options())),
            None => {
                return Err(invalid(
                    "lift",
                    "`bundle`: the character is not a bundle with branches".into(),
                ));
            }
        },
        Some("surface") => LiftKind::Surface(Default::default()),
        Some("texel") => LiftKind::Texel(Default::default()),
        Some("debug") => LiftKind::Debug,
        Some(other) => {
            return Err(invalid(
                "lift",
                format!("`{other}`: one of auto, bundle, surface, texel, debug, none"),
            ));
        }
    };
    Ok(Some(LiftOptions {
        kind,
        ..Default::default()
    }))
}

/// The speech options of the keyword arguments.
pub(crate) fn speech_options(
    sampler: &str,
    audio_offset: f64,
    min_hold: f64,
    speech_format: Option<&str>,
) -> PyResult<SpeechOptions> {
    let sampler = match sampler {
        "held" => mien_runtime::Sampler::Held,
        "envelope" => mien_runtime::Sampler::Envelope,
        other => {
            return Err(invalid(
                "sampler",
                format!("`{other}`: `held` or `envelope`"),
            ));
        }
    };
    let format = match speech_format {
        None => None,
        Some(f) => Some(
            mien_core::io::speech::SpeechFormat::from_name(f).ok_or_else(|| {
                invalid(
                    "speech_format",
                    format!(
                        "`{f}`: one of textgrid, gentle, rhubarb-tsv, rhubarb-json, polly, azure, mien"
                    ),
                )
            })?,
        ),
    };
    Ok(SpeechOptions {
        format,
        sampler,
        audio_offset,
        min_hold,
        ..Default::default()
    })
}

impl Runtime {
    /// The runtime (no lock needed with `&mut self`).
    fn rt(&mut self) -> &mut mien_runtime::Runtime {
        self.rt.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// The runtime, locked (for `&self` methods).
    fn locked(&self) -> std::sync::MutexGuard<'_, mien_runtime::Runtime> {
        self.rt.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `i` as an instance index, or `InvalidError` naming it.
    fn check(&self, i: i64) -> PyResult<usize> {
        let n = self.locked().len();
        match usize::try_from(i) {
            Ok(k) if k < n => Ok(k),
            _ => Err(invalid(
                &format!("instance {i}"),
                format!(
                    "the runtime has {n} instance(s), 0 to {}",
                    n.saturating_sub(1)
                ),
            )),
        }
    }
}

#[pymethods]
impl Runtime {
    /// `instances` instances of `character` on `backend` (`cpu`, `wgpu`, `vulkan`, or `auto`: a
    /// real GPU through wgpu when there is one, else the CPU), lifted by `lift` (`auto`, the
    /// default: a bundle's branches with their decoders, else `surface`; `bundle`; `surface`;
    /// `texel`; `debug`; `None` to pose only).
    #[new]
    #[pyo3(signature = (character, *, backend="cpu", instances=1, lift=Some("auto")),
        text_signature = "(character, *, backend='cpu', instances=1, lift='auto')")]
    fn new(
        py: Python<'_>,
        character: &Bound<'_, PyAny>,
        backend: &str,
        instances: i64,
        lift: Option<&str>,
    ) -> PyResult<Runtime> {
        let instances = u32::try_from(instances).map_err(|_| {
            invalid(
                &format!("instances {instances}"),
                format!("must be 1 to {}", mien_runtime::MAX_INSTANCES),
            )
        })?;
        let backend: Backend = backend.parse().map_err(|e: mien_runtime::Error| to_py(e))?;
        let character: Py<Character> = match character.cast::<Character>() {
            Ok(c) => c.clone().unbind(),
            Err(_) => {
                let path: PathBuf = character.extract()?;
                let c = py.detach(|| crate::load_character(&path)).map_err(to_py)?;
                Py::new(py, c)?
            }
        };
        let c = character.get();
        let lift = lift_of(lift, c.parts.as_deref())?;
        let asset = Arc::clone(&c.asset);
        let parts = c.parts.clone();
        let rt = py
            .detach(|| -> mien_runtime::Result<mien_runtime::Runtime> {
                let (device, _why) = Device::open(backend)?;
                let mut rt = mien_runtime::Runtime::new(
                    asset,
                    &device,
                    &RuntimeOptions { instances, lift },
                )?;
                if let Some(p) = &parts {
                    for i in 0..rt.len() {
                        p.apply(&mut rt.instance_mut(i)?)?;
                    }
                }
                Ok(rt)
            })
            .map_err(to_py)?;
        Ok(Runtime {
            rt: std::sync::Mutex::new(rt),
            character,
        })
    }

    /// The device the runtime poses on (`cpu`, or the adapter's name).
    #[getter]
    fn device(&self) -> String {
        self.locked().device().name().to_string()
    }

    /// The character.
    #[getter]
    fn character(&self, py: Python<'_>) -> Py<Character> {
        self.character.clone_ref(py)
    }

    fn __len__(&self) -> usize {
        self.locked().len()
    }

    /// Pose (and lift) every instance at media time `t` (seconds): drive → speech → face → one
    /// submission. Returns the frame's report (`frame`, `time_s`, per instance: clamped,
    /// non-finite and dropped weights, the face's state and state hash).
    fn update(&mut self, py: Python<'_>, t: f64) -> PyResult<Py<PyAny>> {
        let rt = self.rt();
        let rep = py
            .detach(|| -> mien_runtime::Result<serde_json::Value> {
                let r = rt.update(t)?;
                Ok(serde_json::json!({
                    "frame": r.frame,
                    "time_s": r.time_s,
                    "instances": r.instances.iter().map(|f| serde_json::json!({
                        "clamped": f.controls.clamped,
                        "non_finite": f.controls.non_finite,
                        "dropped": f.controls.dropped.len(),
                        "peak_nonzero": f.peak_nonzero,
                        "head_clamped": f.head_clamped,
                        "state": f.state,
                        "state_hash": f.state_hash.map(|h| format!("{h:016x}")),
                    })).collect::<Vec<_>>(),
                }))
            })
            .map_err(to_py)?;
        json_to_py(py, &rep)
    }

    /// Instance `i`'s posed world positions `(V,3)` float32, metres — read back from the device
    /// (one copy into host memory), handed to NumPy without another.
    #[pyo3(signature = (i=0))]
    fn posed<'py>(&mut self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyAny>> {
        let i = self.check(i)?;
        let rt = self.rt();
        let p = py.detach(|| rt.posed(i)).map_err(to_py)?;
        Array::f32x3(p.positions).into_numpy(py)
    }

    /// Instance `i`'s posed world unit normals `(V,3)` float32 (zero for a linear head).
    #[pyo3(signature = (i=0))]
    fn normals<'py>(&mut self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyAny>> {
        let i = self.check(i)?;
        let rt = self.rt();
        let p = py.detach(|| rt.posed(i)).map_err(to_py)?;
        Array::f32x3(p.normals).into_numpy(py)
    }

    /// Instance `i`'s gaussians as a dict of NumPy arrays over G slots: `center` `(G,3)` metres
    /// (a view of the stored `(G,4)`), `color` `(G,4)` uint8 RGBA (sRGB colour, linear opacity),
    /// `cov_a` `(G,4)` (c00, c01, c02, c11) and `cov_b` `(G,4)` (c12, c22, 0, 0), m², and
    /// `covariance` `(G,3,3)` m² (built here: a copy). One copy from the sink into host memory;
    /// `center`, `color`, `cov_a` and `cov_b` are views of it.
    #[pyo3(signature = (i=0))]
    fn splats<'py>(&mut self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyDict>> {
        let i = self.check(i)?;
        if self.rt().lift().is_none() {
            return Err(invalid(
                "splats",
                "the runtime was made with lift=None: it poses only".into(),
            ));
        }
        let rt = self.rt();
        let s = py.detach(|| rt.splats(i)).map_err(to_py)?;
        splat_dict(py, s)
    }

    /// Write the splats of instance `i` (every instance when `None`) to `path`, the format by
    /// extension: `.ply` (3DGS), `.spz` (SPZ v3) or `.glb` (`KHR_gaussian_splatting`); atomically.
    #[pyo3(signature = (path, i=None))]
    fn write_splats(&mut self, py: Python<'_>, path: PathBuf, i: Option<i64>) -> PyResult<()> {
        let i = match i {
            Some(i) => Some(self.check(i)?),
            None => None,
        };
        if self.rt().lift().is_none() {
            return Err(invalid(
                "write_splats",
                "the runtime was made with lift=None: it poses only".into(),
            ));
        }
        let rt = self.rt();
        py.detach(|| -> mien_runtime::Result<()> {
            let (buffers, ranges) = match i {
                Some(i) => {
                    let s = rt.splats(i)?;
                    let n = s.len() as u32;
                    (
                        s,
                        vec![mien_core::sink::SlotRange {
                            offset: 0,
                            count: n,
                        }],
                    )
                }
                None => {
                    let s = rt.splats_all()?;
                    let ranges = (0..rt.len())
                        .map(|k| rt.sink_range(k))
                        .collect::<mien_runtime::Result<Vec<_>>>()?;
                    (s, ranges)
                }
            };
            mien_core::io::splat_file::write_splats(&path, &buffers, &ranges)?;
            Ok(())
        })
        .map_err(to_py)
    }

    /// Drive instance `i` with an ARKit-52 frame `(52,)` in canonical order (`eyeBlinkLeft` …
    /// `tongueOut`), weights 0–1, held until the next call (live input).
    fn set_arkit(&mut self, i: i64, weights: Vec<f32>) -> PyResult<()> {
        self.set_controls(i, "arkit52", weights)
    }

    /// Drive instance `i` with live values in `space`: `arkit52` `(52,)`, `gnm` `(E+4,)`,
    /// `gnm68` `(R+4,)`, `vrm` `(X,)` (the VRM's expressions), `rig` (a DNA board's raw controls).
    fn set_controls(&mut self, i: i64, space: &str, values: Vec<f32>) -> PyResult<()> {
        let i = self.check(i)?;
        let sp = space_of(space)?;
        self.rt()
            .instance_mut(i)
            .and_then(|mut m| m.set_controls(sp, &values).map(|_| ()))
            .map_err(to_py)
    }

    /// Play an ARKit-52 stream file on instance `i` (Live Link Face `.csv`, Audio2Face or
    /// MediaPipe `.json`, MediaPipe `.pbtxt`); returns the reader's notes.
    fn play_stream_file(&mut self, py: Python<'_>, i: i64, path: PathBuf) -> PyResult<Vec<String>> {
        let i = self.check(i)?;
        let rt = self.rt();
        py.detach(|| rt.instance_mut(i)?.play_stream_file(&path))
            .map_err(to_py)
    }

    /// Play one of the character's clips (name or index) on instance `i`.
    fn play_clip(&mut self, i: i64, clip: &str) -> PyResult<()> {
        let i = self.check(i)?;
        self.rt()
            .instance_mut(i)
            .and_then(|mut m| m.play_clip(clip).map(|_| ()))
            .map_err(to_py)
    }

    /// Play several of the character's clips together (indices) on instance `i`.
    fn play_clips(&mut self, i: i64, clips: Vec<i64>) -> PyResult<()> {
        let i = self.check(i)?;
        let ids = clips
            .iter()
            .map(|&c| {
                u32::try_from(c)
                    .map(mien_core::rig::ClipId)
                    .map_err(|_| invalid(&format!("clip {c}"), "not a clip index".into()))
            })
            .collect::<PyResult<Vec<_>>>()?;
        self.rt()
            .instance_mut(i)
            .and_then(|mut m| m.play_clips(&ids).map(|_| ()))
            .map_err(to_py)
    }

    /// Put instance `i` in its rest pose (no drive).
    fn rest(&mut self, i: i64) -> PyResult<()> {
        let i = self.check(i)?;
        self.rt()
            .instance_mut(i)
            .map(|mut m| {
                m.rest();
            })
            .map_err(to_py)
    }

    /// Where the drive's time 0 lies on the media clock (`offset`, seconds) and whether it loops.
    fn set_drive_timing(&mut self, i: i64, offset: f64, looping: bool) -> PyResult<()> {
        let i = self.check(i)?;
        self.rt()
            .instance_mut(i)
            .and_then(|mut m| m.set_drive_timing(offset, looping).map(|_| ()))
            .map_err(to_py)
    }

    /// Turn the head, neck and eyes by the stream's angle channels (on by default for streams
    /// that carry them).
    fn set_head_motion(&mut self, i: i64, on: bool) -> PyResult<()> {
        let i = self.check(i)?;
        self.rt()
            .instance_mut(i)
            .map(|mut m| {
                m.set_head_motion(on);
            })
            .map_err(to_py)
    }

    /// Lip-sync instance `i` from a speech timing file (TextGrid, Gentle, Rhubarb, Polly, Azure,
    /// mien JSON), on the media-clock transport from `audio_offset` seconds; `None` removes it.
    /// `sampler`: `held` (each viseme over its interval) or `envelope` (attack/release, with
    /// `min_hold` seconds, 0–1).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (i, path, *, sampler="held", audio_offset=0.0, min_hold=0.0, speech_format=None))]
    fn set_speech(
        &mut self,
        py: Python<'_>,
        i: i64,
        path: Option<PathBuf>,
        sampler: &str,
        audio_offset: f64,
        min_hold: f64,
        speech_format: Option<&str>,
    ) -> PyResult<()> {
        let i = self.check(i)?;
        let o = speech_options(sampler, audio_offset, min_hold, speech_format)?;
        let rt = self.rt();
        py.detach(|| -> mien_runtime::Result<()> {
            let sp = match &path {
                Some(p) => Some(mien_runtime::Speech::from_file(
                    p,
                    &o,
                    rt.asset().character(),
                )?),
                None => None,
            };
            rt.instance_mut(i)?.set_speech(sp)?;
            Ok(())
        })
        .map_err(to_py)
    }

    /// The speech transport of instance `i`: `pause`, `resume` or `seek` at `position` (seconds
    /// into the utterance).
    fn speech_transport(&mut self, i: i64, action: &str, position: f64) -> PyResult<()> {
        let i = self.check(i)?;
        let mut m = self.rt().instance_mut(i).map_err(to_py)?;
        let Some(sp) = m.speech() else {
            return Err(invalid(
                &format!("instance {i}"),
                "has no speech: set_speech first".into(),
            ));
        };
        match action {
            "pause" => sp.pause(position),
            "resume" => sp.resume(position),
            "seek" => sp.seek(position),
            other => {
                return Err(invalid(
                    "action",
                    format!("`{other}`: pause, resume or seek"),
                ));
            }
        }
        .map_err(to_py)
    }

    /// Attach the face driver (expressions, blink, look-at, avatar states) to instance `i` from
    /// media time `t0`: `face` a face definition file (default: the character's own — ARKit or
    /// VRM presets), `script` a state-script file (default: none), `look_at` a first point to look
    /// at (world metres).
    #[pyo3(signature = (i, *, face=None, script=None, look_at=None, t0=0.0))]
    fn set_face(
        &mut self,
        i: i64,
        face: Option<PathBuf>,
        script: Option<PathBuf>,
        look_at: Option<[f32; 3]>,
        t0: f64,
    ) -> PyResult<()> {
        let i = self.check(i)?;
        let asset = std::sync::Arc::clone(self.rt().asset());
        let ch = asset.character();
        let def = match &face {
            Some(p) => read_face(p, ch).map_err(to_py)?,
            None => mien_core::face::FaceDef::for_character(ch),
        };
        let sc = match &script {
            Some(p) => Script::read(p).map_err(to_py)?,
            None => Script::default(),
        };
        let sources = FaceSources {
            face: face.as_ref().map(|p| p.display().to_string()),
            script: script.as_ref().map(|p| p.display().to_string()),
            builtin_script: false,
        };
        let fd = FaceDriver::new(ch, def, sc, look_at, t0, &sources).map_err(to_py)?;
        self.rt()
            .instance_mut(i)
            .and_then(|mut m| m.set_face(Some(fd)).map(|_| ()))
            .map_err(to_py)
    }

    /// Fade instance `i`'s expression `name` to `weight` (0–1) from media time `t` (needs the face
    /// driver: `set_face`).
    fn set_expression(&mut self, i: i64, name: String, weight: f32, t: f64) -> PyResult<()> {
        self.push(i, t, Event::Expression(name, weight))
    }

    /// Look at `point` (world metres), or release the gaze with `None`, from media time `t`.
    fn look_at(&mut self, i: i64, point: Option<[f32; 3]>, t: f64) -> PyResult<()> {
        self.push(i, t, Event::LookAt(point))
    }

    /// Blink at media time `t`.
    fn blink(&mut self, i: i64, t: f64) -> PyResult<()> {
        self.push(i, t, Event::Blink)
    }

    /// Send the avatar-state signal `signal` (`listening_started`, `listening_stopped`,
    /// `response_requested`, `talking_started`, `talking_stopped`, `idle_timeout`, …) at `t`.
    fn signal(&mut self, i: i64, signal: &str, t: f64) -> PyResult<()> {
        let s = serde_json::from_value(serde_json::Value::from(signal))
            .map_err(|e| invalid("signal", format!("`{signal}`: {e}")))?;
        self.push(i, t, Event::Signal(s))
    }

    /// Instance `i`'s state hash (pose, weights, placement, spring tails), hex.
    fn state_hash(&self, i: i64) -> PyResult<String> {
        let i = self.check(i)?;
        let rt = self.locked();
        let inst = rt.instance(i).map_err(to_py)?;
        Ok(format!("{:016x}", inst.state_hash()))
    }

    /// The camera a bundle's view-dependent decoders see: the eye `(3,)` metres, looking at
    /// `target` `(3,)`, vertical field of view `fov_y` radians. From the next `update`, a branch
    /// re-decodes only when the camera moved more than 2 mm (plus the turn/fov term) or its
    /// controls changed.
    #[pyo3(signature = (eye, target, fov_y=0.6))]
    fn set_camera(&self, eye: [f64; 3], target: [f64; 3], fov_y: f64) -> PyResult<()> {
        let c = mien_runtime::Camera::look_at(eye, target, fov_y).map_err(to_py)?;
        self.locked().set_camera(c).map_err(to_py)
    }

    /// Whether a bundle decoder needs a camera (`set_camera`) before `update`.
    #[getter]
    fn needs_camera(&self) -> bool {
        self.locked().needs_camera()
    }

    /// What a bundle's decoders did (`None` without decoders): `decodes`, `skipped` (branch
    /// updates with nothing to decode), `clamped`, `degenerate_offsets`, `decode_s`, `record_s`,
    /// `record_bytes`.
    fn appearance_stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.locked().appearance_stats() {
            None => Ok(py.None()),
            Some(s) => json_to_py(
                py,
                &serde_json::json!({
                    "decodes": s.decodes, "skipped": s.skipped, "clamped": s.clamped,
                    "degenerate_offsets": s.degenerate_offsets,
                    "decode_s": s.decode_time.as_secs_f64(), "record_s": s.record_time.as_secs_f64(),
                    "record_bytes": s.record_bytes,
                }),
            ),
        }
    }

    /// A bundle's memory (`None` without a bundle lift): `branches` (each `name`, `slots`,
    /// `bytes`), `slots`, `bytes`, `on_gpu`, `files` (resident bytes by file), `resident_bytes`.
    fn bundle_memory(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.locked().bundle_memory() {
            None => Ok(py.None()),
            Some(m) => json_to_py(
                py,
                &serde_json::to_value(&m).map_err(|e| invalid("bundle memory", e.to_string()))?,
            ),
        }
    }

    /// Each branch's slot range within an instance's slots: `{name: (offset, count)}` (empty
    /// without a bundle lift).
    #[getter]
    fn branches(&self) -> Vec<(String, (u32, u32))> {
        self.locked()
            .lift()
            .map(|l| {
                l.branches
                    .iter()
                    .map(|(n, r)| (n.clone(), (r.offset, r.count)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Bytes the runtime holds: `rig_bytes`, `sink_bytes`, `sink_slots`, `vertices`, `instances`.
    fn memory(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let m = self.locked().memory();
        json_to_py(
            py,
            &serde_json::json!({
                "rig_bytes": m.rig_bytes, "sink_bytes": m.sink_bytes, "sink_slots": m.sink_slots,
                "vertices": m.vertices, "instances": m.instances,
            }),
        )
    }

    /// Time spent so far: `rig_s`, `lift_s`, `dynamics_s` on the host, `gpu_ms` per stage
    /// (morph, skin, lift) when the device times them.
    fn times(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let t = self.locked().times();
        to_pyobj(
            py,
            &serde_json::json!({
                "rig_s": t.rig.as_secs_f64(), "lift_s": t.lift.as_secs_f64(),
                "dynamics_s": t.dynamics.as_secs_f64(), "gpu_ms": t.gpu_ms,
            }),
        )
    }

    /// Wait for every frame in flight.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let rt = self.rt();
        py.detach(|| rt.finish()).map_err(to_py)
    }
}

impl Runtime {
    fn push(&mut self, i: i64, t: f64, ev: Event) -> PyResult<()> {
        let i = self.check(i)?;
        let mut m = self.rt().instance_mut(i).map_err(to_py)?;
        let Some(face) = m.face() else {
            return Err(invalid(
                &format!("instance {i}"),
                "has no face driver: set_face first".into(),
            ));
        };
        face.push(t, ev).map_err(to_py)
    }
}

/// The splat dict of [`Runtime::splats`].
fn splat_dict(py: Python<'_>, s: mien_core::sink::SplatBuffers) -> PyResult<Bound<'_, PyDict>> {
    let g = s.len();
    let mut cov = Vec::with_capacity(g * 9);
    for (a, b) in s.cov_a.iter().zip(&s.cov_b) {
        cov.extend_from_slice(&[a[0], a[1], a[2], a[1], a[3], b[0], a[2], b[0], b[1]]);
    }
    let d = PyDict::new(py);
    let center = Array::f32x4(s.center).into_numpy(py)?;
    let slice = py.eval(c"(slice(None), slice(0, 3))", None, None)?;
    d.set_item("center", center.get_item(slice)?)?;
    let color = Array::u32(s.color, &[g]).into_numpy(py)?;
    // pack4x8unorm: r in the low byte, so the little-endian bytes are r, g, b, a.
    let color = color
        .call_method1("view", ("<u1",))?
        .call_method1("reshape", ((g, 4),))?;
    d.set_item("color", color)?;
    d.set_item("cov_a", Array::f32x4(s.cov_a).into_numpy(py)?)?;
    d.set_item("cov_b", Array::f32x4(s.cov_b).into_numpy(py)?)?;
    d.set_item("covariance", Array::f32(cov, &[g, 3, 3]).into_numpy(py)?)?;
    Ok(d)
}
