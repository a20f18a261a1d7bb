//! Expression spaces (DESIGN "Expression spaces"): what a control vector means. A character
//! declares its own ([`Asset::space`]); an instance takes input in that space, or ARKit-52 through
//! the character's map, and a vector of another space is refused naming both.

use mien_core::anim::arkit::{ARKIT_52, ARKIT_COUNT};

use crate::asset::{Asset, Model};
use crate::error::{Error, Result};

/// A control vector's space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ExpressionSpace {
    /// The 52 ARKit blendshapes in canonical order ([`mien_core::anim::arkit::ARKIT_52`]:
    /// `eyeBlinkLeft` … `tongueOut`, as Live Link Face and Audio2Face stream them), weights 0–1: bound to a rig's morph targets by name, or
    /// to a linear head through its pack's ARKit table.
    Arkit52,
    /// A linear head's full head_ext vector `(E+4,)`: E coefficients, then `[pitch_L, yaw_L,
    /// pitch_R, yaw_R]` radians (seed 000; 383 + 4 = 387 in the seed's layout).
    Gnm,
    /// A linear head's reduced view `(R+4,)`: each region's first coefficients (64 in the seed's
    /// layout), then the 4 gaze angles, expanded per region with zeros (seed 000 `gnm68`).
    Gnm68,
    /// A VRM avatar's expressions `(X,)` in the file's order ([`mien_core::vrm::Vrm::expressions`]:
    /// presets under their VRM 1.0 names, custom ones under theirs), weights 0–1 before
    /// `isBinary` and the overrides ([`mien_core::vrm`]).
    Vrm,
    /// A MetaHuman DNA character's raw controls `(R,)` in the DNA's order (its own control space,
    /// seed 000 `setRig`; `CTRL_expressions_*` on a MetaHuman board), 0–1: they replace ARKit-52's
    /// mapping onto the board every following frame ([`mien_core::rig::riglogic`]).
    Rig,
}

impl ExpressionSpace {
    /// The name with its article, for messages: `an arkit52`, `a gnm`, `a gnm68`.
    pub fn article_name(self) -> &'static str {
        match self {
            ExpressionSpace::Arkit52 => "an arkit52",
            ExpressionSpace::Gnm => "a gnm",
            ExpressionSpace::Gnm68 => "a gnm68",
            ExpressionSpace::Vrm => "a vrm",
            ExpressionSpace::Rig => "a rig",
        }
    }

    /// `arkit52`, `gnm`, `gnm68`, `vrm`, `rig`.
    pub fn name(self) -> &'static str {
        match self {
            ExpressionSpace::Arkit52 => "arkit52",
            ExpressionSpace::Gnm => "gnm",
            ExpressionSpace::Gnm68 => "gnm68",
            ExpressionSpace::Vrm => "vrm",
            ExpressionSpace::Rig => "rig",
        }
    }

    /// Every space, in [`ExpressionSpace::name`] order.
    pub const ALL: [ExpressionSpace; 5] = [
        ExpressionSpace::Arkit52,
        ExpressionSpace::Gnm,
        ExpressionSpace::Gnm68,
        ExpressionSpace::Vrm,
        ExpressionSpace::Rig,
    ];

    /// The space [`ExpressionSpace::name`] calls `name`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] naming `name` and the five names.
    ///
    /// ```
    /// use mien_runtime::ExpressionSpace;
    /// for s in ExpressionSpace::ALL {
    ///     assert_eq!(ExpressionSpace::from_name(s.name()).unwrap(), s);
    /// }
    /// assert!(ExpressionSpace::from_name("blendshapes").is_err());
    /// ```
    pub fn from_name(name: &str) -> crate::Result<Self> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                crate::Error::invalid(
                    format!("space `{name}`"),
                    "one of arkit52, gnm, gnm68, vrm, rig",
                )
            })
    }
}

impl Asset {
    /// The character's own space: `gnm` for a linear head, `vrm` for a VRM avatar, `rig` for a
    /// DNA character, `arkit52` for another rig.
    pub fn space(&self) -> ExpressionSpace {
        match self.model() {
            Model::Head { .. } => ExpressionSpace::Gnm,
            Model::Rig(_) if self.character().vrm.is_some() => ExpressionSpace::Vrm,
            Model::Rig(_) if self.character().rig_logic.is_some() => ExpressionSpace::Rig,
            Model::Rig(_) => ExpressionSpace::Arkit52,
        }
    }

    /// The length a vector of `space` must have for this character, or why the character does not
    /// take it.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the character, the space it was given and the spaces it takes.
    pub fn space_len(&self, space: ExpressionSpace) -> Result<usize> {
        let takes = self.spaces_text();
        let refuse = |why: String| {
            Error::invalid(
                format!("{}: {} vector", self.source(), space.article_name()),
                format!("{why}; this character takes {takes}"),
            )
        };
        match (self.model(), space) {
            (_, ExpressionSpace::Arkit52) => {
                if let Model::Head { pack, .. } = self.model()
                    && pack.header.arkit.is_none()
                {
                    return Err(refuse("its pack has no ARKit table".into()));
                }
                Ok(ARKIT_COUNT)
            }
            (Model::Head { pack, .. }, ExpressionSpace::Gnm) => Ok(pack.header.head_ext.dim()),
            (Model::Head { pack, .. }, ExpressionSpace::Gnm68) => pack
                .header
                .head_ext
                .reduced_dim()
                .ok_or_else(|| refuse("its pack declares no reduced view".into())),
            (Model::Rig(_), ExpressionSpace::Vrm) => match &self.character().vrm {
                Some(v) => Ok(v.expressions.len()),
                None => Err(refuse("the character is not a VRM avatar".into())),
            },
            (Model::Rig(_), ExpressionSpace::Rig) => match &self.character().rig_logic {
                Some(r) => Ok(r.raw_names.len()),
                None => Err(refuse("the character has no DNA rig logic".into())),
            },
            (Model::Head { .. }, ExpressionSpace::Rig) => {
                Err(refuse("a linear head has no DNA raw controls".into()))
            }
            (Model::Head { .. }, ExpressionSpace::Vrm) => {
                Err(refuse("a linear head has no VRM expressions".into()))
            }
            (Model::Rig(_), _) => Err(refuse(
                "a head_ext vector drives a linear head (.aosrig), not morph targets".into(),
            )),
        }
    }

    fn spaces_text(&self) -> String {
        match self.model() {
            Model::Rig(_) => match &self.character().vrm {
                Some(v) => format!(
                    "vrm ({}), arkit52 (through the ARKit → VRM table)",
                    v.expressions.len()
                ),
                None => match &self.character().rig_logic {
                    Some(r) => format!(
                        "rig ({} raw controls), arkit52 (through the ARKit → face-board table)",
                        r.raw_names.len()
                    ),
                    None => "arkit52".into(),
                },
            },
            Model::Head { pack, .. } => {
                let h = &pack.header;
                let mut s = vec![format!("gnm ({})", h.head_ext.dim())];
                if let Some(r) = h.head_ext.reduced_dim() {
                    s.push(format!("gnm68 ({r})"));
                }
                if h.arkit.is_some() {
                    s.push("arkit52 (through its table)".into());
                }
                s.join(", ")
            }
        }
    }
}

/// The ARKit-52 channel names in canonical order, as a live stream's channels.
pub(crate) fn arkit_channels() -> Vec<String> {
    ARKIT_52.iter().map(|s| (*s).to_string()).collect()
}
