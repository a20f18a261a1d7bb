//! What moves a character over media time: its rest pose, one of its own clips, or a weight stream
//! bound to its morph targets by name. One call per frame writes the pose; allocation-free after
//! the first frame.

use super::canon::{Binding, BindingReport};
use super::stream::WeightStream;
use crate::error::{Error, Result};
use crate::rig::{Character, ClipId, NodeId, Pose};

/// A weight stream bound to every drawn mesh node that has morph targets.
#[derive(Clone, Debug)]
pub struct StreamDrive {
    stream: WeightStream,
    bindings: Vec<(NodeId, Binding)>,
    scratch: Vec<f32>,
}

impl StreamDrive {
    /// Bind `stream`'s channels by name to the targets of each drawn mesh node of `character`:
    /// [`Binding::with_table`] with VRoid's table ([`super::canon::vroid::VROID_FCL`]: a face of
    /// `Fcl_*` shapes takes the ARKit channels no target takes by name; an ARKit-named face never
    /// reaches the table); a VRM avatar's meshes bind by name only ([`Binding::new`]: its
    /// expressions, and their overrides, are the way in) and its expression control node through
    /// [`crate::vrm::table::ARKIT_TO_VRM`] and by exact expression name (a column `happy`).
    ///
    /// # Errors
    /// [`WeightStream::validate`]'s errors; [`Error::Invalid`] when no channel binds to any morph
    /// target of the character (nothing would move — e.g. its targets are not ARKit names), naming
    /// the ambiguities when channels did match but ambiguously.
    pub fn new(stream: WeightStream, character: &Character) -> Result<Self> {
        stream.validate()?;
        let mut bindings = Vec::new();
        let control = character.vrm.as_ref().map(|v| v.control_node);
        // A DNA character's face meshes take their weights from RigLogic (which assigns every
        // channel after the drivers): the stream binds to its control node only.
        let rig_driven: Vec<crate::rig::NodeId> = character
            .rig_logic
            .as_ref()
            .map(|r| {
                r.channel_targets
                    .iter()
                    .flatten()
                    .map(|(n, _)| *n)
                    .collect()
            })
            .unwrap_or_default();
        for node in character.mesh_nodes() {
            let Some((_, mesh)) = character.node_mesh(node) else {
                continue;
            };
            if mesh.target_count() == 0 || Some(node) == control || rig_driven.contains(&node) {
                continue;
            }
            bindings.push((
                node,
                if control.is_some() {
                    Binding::new(&stream.channels, &mesh.target_names)
                } else {
                    Binding::with_table(
                        &stream.channels,
                        &mesh.target_names,
                        super::canon::vroid::VROID_FCL,
                        &[],
                    )
                },
            ));
        }
        // A VRM's expressions: by name (perfect-sync custom expressions), then the ARKit → VRM
        // table, for the channels no morph target takes by name.
        if let Some((node, mesh)) = control.and_then(|c| Some((c, character.node_mesh(c)?.1))) {
            let mut taken = vec![false; stream.channels.len()];
            for (_, b) in &bindings {
                for r in b.routes() {
                    taken[r.channel] = true;
                }
            }
            bindings.push((
                node,
                Binding::with_table(
                    &stream.channels,
                    &mesh.target_names,
                    crate::vrm::table::ARKIT_TO_VRM,
                    &taken,
                ),
            ));
        }
        // A VRM's meshes whose targets no channel names are driven through its expressions:
        // their empty bindings would only list every channel as unmatched.
        if let Some(c) = control
            && bindings
                .iter()
                .any(|(n, b)| *n == c && !b.routes().is_empty())
        {
            bindings.retain(|(n, b)| *n == c || !b.routes().is_empty());
        }
        if bindings.iter().all(|(_, b)| b.routes().is_empty()) {
            let targets: usize = bindings.iter().map(|(_, b)| b.target_count()).sum();
            // Channels that did match, but ambiguously (two spellings of one channel): say so
            // rather than "matches nothing".
            let mut ambiguous: Vec<String> = Vec::new();
            for (_, b) in &bindings {
                for a in &b.report().ambiguous {
                    let names: Vec<&str> = a
                        .channels
                        .iter()
                        .chain(&a.targets)
                        .map(|n| n.name.as_str())
                        .collect();
                    let text = format!("{}: {}", names.join(", "), a.reason);
                    if !ambiguous.contains(&text) {
                        ambiguous.push(text);
                    }
                }
            }
            return Err(Error::Invalid {
                what: format!("{} → {}", stream.source, character.source),
                reason: if targets == 0 {
                    "the character has no morph targets for the stream to drive".into()
                } else if !ambiguous.is_empty() {
                    format!(
                        "no channel of the stream's {} binds: every match is ambiguous, so none is bound ({})",
                        stream.channel_count(),
                        ambiguous.join("; ")
                    )
                } else {
                    let n = stream.channel_count();
                    format!(
                        "none of the stream's {n} channel{} matches any of the character's {targets} morph targets by name",
                        if n == 1 { "" } else { "s" }
                    )
                },
            });
        }
        let scratch = vec![0.0; stream.channel_count()];
        Ok(StreamDrive {
            stream,
            bindings,
            scratch,
        })
    }

    /// Overwrite frame `frame`'s values `(C,)` in place (a live source pushing its latest frame
    /// into a one-frame stream): the bindings stay. Allocation-free.
    ///
    /// # Errors
    /// [`Error::Mismatch`] for another length; [`Error::Invalid`] for a frame the stream lacks or
    /// a non-finite value (naming its channel); the stream is unchanged then.
    pub fn set_frame_values(&mut self, frame: usize, values: &[f32]) -> Result<()> {
        let s = &mut self.stream;
        let frames = s.frame_count();
        overwrite_row(
            &s.source,
            "channel",
            &s.channels,
            &mut s.values,
            frames,
            frame,
            values,
        )
    }

    /// Overwrite frame `frame`'s auxiliary values `(A,)` in place (a live source's head and eye
    /// angles). Allocation-free.
    ///
    /// # Errors
    /// As [`StreamDrive::set_frame_values`], for the auxiliary channels.
    pub fn set_frame_aux(&mut self, frame: usize, values: &[f32]) -> Result<()> {
        let s = &mut self.stream;
        let frames = s.frame_count();
        overwrite_row(
            &s.source,
            "aux channel",
            &s.aux_channels,
            &mut s.aux_values,
            frames,
            frame,
            values,
        )
    }

    /// The stream.
    pub fn stream(&self) -> &WeightStream {
        &self.stream
    }

    /// Each bound mesh node and its binding report.
    pub fn reports(&self) -> impl Iterator<Item = (NodeId, &BindingReport)> {
        self.bindings.iter().map(|(n, b)| (*n, b.report()))
    }
}

/// Overwrite row `frame` of `table` `(F, names.len())` with `values`, checked first (length,
/// frame, finite values naming their `kind` and name); unchanged on refusal.
fn overwrite_row(
    source: &str,
    kind: &str,
    names: &[String],
    table: &mut [f32],
    frames: usize,
    frame: usize,
    values: &[f32],
) -> Result<()> {
    let c = names.len();
    if values.len() != c {
        return Err(Error::Mismatch {
            what: format!("{source}: frame {kind} values"),
            expected: c as u64,
            found: values.len() as u64,
        });
    }
    if frame >= frames {
        return Err(Error::Invalid {
            what: format!("{source}: frame {frame}"),
            reason: format!("the stream has {frames} frame(s)"),
        });
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(Error::Invalid {
            what: format!("{source}: {kind} {i} (`{}`)", names[i]),
            reason: format!("{} is not finite", values[i]),
        });
    }
    table[frame * c..(frame + 1) * c].copy_from_slice(values);
    Ok(())
}

/// The animation source of a run.
#[derive(Clone, Debug)]
pub enum Drive {
    /// The rest pose, unchanging.
    Rest,
    /// Some of the character's own clips, played together in this order (a later clip overrides an
    /// earlier one where both animate the same property).
    Clips(Vec<ClipId>),
    /// A bound weight stream (targets it does not drive keep their rest weights).
    Stream(StreamDrive),
}

impl Drive {
    /// The media-time span the source covers, seconds: `[0, 0]` for the rest pose, `[0, end]` for
    /// clips (the latest end) (the media clock starts at 0 even when the first key is later; before it the first key
    /// holds), `[0, duration]` for a stream.
    pub fn span(&self, character: &Character) -> (f64, f64) {
        match self {
            Drive::Rest => (0.0, 0.0),
            Drive::Clips(c) => (
                0.0,
                c.iter()
                    .map(|c| character.clips[c.index()].end())
                    .fold(0.0, f64::max),
            ),
            Drive::Stream(s) => (0.0, s.stream.duration()),
        }
    }

    /// Write the pose at media time `t` seconds into `pose`: `rest` (from
    /// [`Character::rest_pose`]) with the source applied. Allocation-free once `pose` has the rest
    /// pose's shape.
    pub fn pose_at(&mut self, character: &Character, rest: &Pose, t: f64, pose: &mut Pose) {
        pose.clone_from(rest);
        match self {
            Drive::Rest => {}
            Drive::Clips(c) => {
                for &c in c.iter() {
                    character.apply_clip(c, t, pose);
                }
            }
            Drive::Stream(s) => {
                s.stream.sample(t, &mut s.scratch);
                for (node, binding) in &s.bindings {
                    binding.apply(&s.scratch, &mut pose.weights[node.index()]);
                }
            }
        }
    }
}

/// Speech layered over a drive: visemes sampled on the media clock and written onto the mouth
/// targets of every drawn mesh the viseme map binds to (the speech owns those targets; the drive
/// keeps the rest).
pub struct SpeechLayer {
    sampler: Box<dyn crate::speech::SpeechSampler + Send + Sync>,
    bindings: Vec<(NodeId, crate::speech::BoundVisemes)>,
    scratch: [f32; crate::speech::VISEME_COUNT],
}

impl std::fmt::Debug for SpeechLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechLayer")
            .field("meshes", &self.bindings.len())
            .finish()
    }
}

impl SpeechLayer {
    /// Bind `sampler` to `character`: with `map`, every mesh with morph targets binds it (a face
    /// definition file must bind completely, see [`crate::speech::BoundVisemes::bind_strict`]);
    /// without, each mesh gets its built-in map ([`crate::speech::VisemeMap::for_character`]) and
    /// meshes no built-in fits are skipped — on a VRM avatar, only its expression control node
    /// (the mouth expressions `aa ih ou ee oh`, [`crate::speech::VisemeMap::vrm`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] when no mesh binds any viseme; a face file's missing targets.
    pub fn new(
        sampler: Box<dyn crate::speech::SpeechSampler + Send + Sync>,
        character: &Character,
        map: Option<(&crate::speech::VisemeMap, &str)>,
    ) -> Result<Self> {
        let mut bindings = Vec::new();
        let mut why = Vec::new();
        // A VRM speaks through its mouth expressions (aa ih ou ee oh) unless a map file is given,
        // so a mesh whose own vowel shapes those expressions bind is not driven twice.
        let control = character.vrm.as_ref().map(|v| v.control_node);
        for node in character.mesh_nodes() {
            let Some((_, mesh)) = character.node_mesh(node) else {
                continue;
            };
            if mesh.target_count() == 0 || (map.is_none() && control.is_some_and(|c| c != node)) {
                continue;
            }
            let mut bound = match map {
                Some((m, file)) => {
                    crate::speech::BoundVisemes::bind_strict(m, &mesh.target_names, file)?
                }
                None => match crate::speech::VisemeMap::for_character(&mesh.target_names) {
                    Ok(m) => crate::speech::BoundVisemes::bind(&m, &mesh.target_names),
                    Err(e) => {
                        why.push(e.to_string());
                        continue;
                    }
                },
            };
            // A VRM expression without a morph bind moves nothing: say so per viseme.
            if let Some(v) = character.vrm.as_ref().filter(|v| v.control_node == node) {
                bound.mark_inert(&mesh.target_names, |t| {
                    v.expressions
                        .get(t)
                        .is_some_and(|e| e.morph_binds.is_empty())
                });
            }
            bindings.push((node, bound));
        }
        if bindings.is_empty() {
            return Err(Error::Invalid {
                what: format!("speech → {}", character.source),
                reason: if why.is_empty() {
                    "the character has no morph targets".into()
                } else {
                    why.join("; ")
                },
            });
        }
        Ok(SpeechLayer {
            sampler,
            bindings,
            scratch: [0.0; crate::speech::VISEME_COUNT],
        })
    }

    /// The media-clock span of the speech, seconds.
    pub fn span(&self) -> (f64, f64) {
        self.sampler.span()
    }

    /// Each bound mesh node and what binding found.
    pub fn reports(
        &self,
    ) -> impl Iterator<Item = (NodeId, &crate::speech::face::VisemeBindingReport)> {
        self.bindings.iter().map(|(n, b)| (*n, b.report()))
    }

    /// Overwrite the owned mouth targets of `pose` with the speech at media time `t`.
    /// Allocation-free.
    pub fn apply(&mut self, t: f64, pose: &mut Pose) {
        self.sampler.weights_at(t, &mut self.scratch);
        for (node, b) in &self.bindings {
            b.apply(&self.scratch, &mut pose.weights[node.index()]);
        }
    }
}
