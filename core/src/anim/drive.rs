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
    /// Bind `stream`'s channels by name ([`Binding::new`]) to the targets of each drawn mesh node of
    /// `character`.
    ///
    /// # Errors
    /// [`WeightStream::validate`]'s errors; [`Error::Invalid`] when no channel binds to any morph
    /// target of the character (nothing would move — e.g. its targets are not ARKit names).
    pub fn new(stream: WeightStream, character: &Character) -> Result<Self> {
        stream.validate()?;
        let mut bindings = Vec::new();
        for node in character.mesh_nodes() {
            let Some((_, mesh)) = character.node_mesh(node) else {
                continue;
            };
            if mesh.target_count() == 0 {
                continue;
            }
            bindings.push((node, Binding::new(&stream.channels, &mesh.target_names)));
        }
        if bindings.iter().all(|(_, b)| b.routes().is_empty()) {
            let targets: usize = bindings.iter().map(|(_, b)| b.target_count()).sum();
            return Err(Error::Invalid {
                what: format!("{} → {}", stream.source, character.source),
                reason: if targets == 0 {
                    "the character has no morph targets for the stream to drive".into()
                } else {
                    format!(
                        "none of the stream's {} channels matches any of the character's {targets} morph targets by name",
                        stream.channel_count()
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

    /// The stream.
    pub fn stream(&self) -> &WeightStream {
        &self.stream
    }

    /// Each bound mesh node and its binding report.
    pub fn reports(&self) -> impl Iterator<Item = (NodeId, &BindingReport)> {
        self.bindings.iter().map(|(n, b)| (*n, b.report()))
    }
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
