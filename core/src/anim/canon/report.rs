//! The [`super::BindingReport`] of a binding: every route, and every channel and target that did not
//! bind, with the reason (serialisable for `report.json`).
//!
//! Source: DESIGN.md "Expression spaces" (unmatched channels are reported, never silently
//! dropped); seed 003 "Retargeting" (`RetargetReport`: mapped and unmapped on each side).
/// Which rule produced a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteRule {
    /// Same channel on both sides (whole → whole, or half → same half).
    Direct,
    /// A whole channel drives the character's split halves ([`super::SPLIT_CHANNELS`]).
    FanOut,
    /// The stream's halves drive one whole target: their mean ([`super::SPLIT_CHANNELS`]).
    FanIn,
    /// A documented name table (a VRM avatar's ARKit → expression table,
    /// [`crate::vrm::table::ARKIT_TO_VRM`]; VRoid's shapes, [`super::vroid::VROID_FCL`]), through
    /// [`super::Binding::with_table`].
    Table,
    /// A channel that is no ARKit name, bound to the target of exactly its own name (a stream
    /// column `happy` to a VRM's `happy` expression), through [`super::Binding::with_table`].
    ExactName,
}

/// Which side of a binding a name is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BindingSide {
    /// The stream's channels.
    Stream,
    /// The character's morph targets.
    Character,
}

/// A name and its index in the list it came from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NamedIndex {
    /// The name as given.
    pub name: String,
    /// Its index in the stream's channels or the character's targets.
    pub index: usize,
}

/// A route as the report shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MatchedPair {
    /// Stream channel name as given.
    pub channel: String,
    /// Stream channel index.
    pub channel_index: usize,
    /// Morph target name as given.
    pub target: String,
    /// Morph target index.
    pub target_index: usize,
    /// The canonical ARKit-52 channel they met on (empty for a [`RouteRule::ExactName`] route,
    /// whose name is no ARKit channel).
    pub arkit: &'static str,
    /// Gain of the route.
    pub gain: f32,
    /// The rule that made it.
    pub rule: RouteRule,
    /// The channel's name is an [`super::ALIASES`] entry, not a spelling of the ARKit name.
    pub channel_alias: bool,
    /// The target's name is an [`super::ALIASES`] entry (`Fcl_EYE_Close_L`), bound because the
    /// character has no ARKit spelling of that channel.
    pub target_alias: bool,
}

/// Names on one side that an ARKit spelling of the same channel shadows: the ARKit spelling binds,
/// the aliases ([`super::ALIASES`]) do not (a character with `eyeBlinkLeft` *and*
/// `Fcl_EYE_Close_L`). A shadowed target is also in [`BindingReport::undriven_targets`]; a
/// shadowed channel is in no other list.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Shadowed {
    /// The ARKit channel.
    pub arkit: &'static str,
    /// Stream or character.
    pub side: BindingSide,
    /// The ARKit spellings chosen (one, or two halves of a [`super::SPLIT_CHANNELS`] channel;
    /// several only when they are themselves ambiguous, see [`BindingReport::ambiguous`]).
    pub chosen: Vec<NamedIndex>,
    /// The aliases left unbound.
    pub shadowed: Vec<NamedIndex>,
}

/// A stream channel that drives nothing, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct UnmatchedChannel {
    /// Channel name as given.
    pub name: String,
    /// Channel index.
    pub index: usize,
    /// Why it matched nothing.
    pub reason: String,
    /// The character's target names nearest to it (up to [`super::NEAREST_LISTED`]; empty when
    /// the character has none), so a user sees why.
    pub nearest: Vec<String>,
}

/// A stream channel ignored on purpose ([`super::IGNORED_CHANNELS`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IgnoredChannel {
    /// Channel name as given.
    pub name: String,
    /// Channel index.
    pub index: usize,
    /// Why it is ignored.
    pub reason: &'static str,
}

/// Channels and/or targets that compete for one canonical channel (two spellings of one ARKit
/// channel, both ARKit or both aliases; a name that appears twice; a whole channel next to its
/// halves). None of them is bound: the ambiguity is reported, never resolved by order. An alias
/// next to an ARKit spelling is no ambiguity: the ARKit spelling wins ([`Shadowed`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Ambiguity {
    /// The ARKit channel they canonicalise to, or `None` for a repeated non-ARKit name.
    pub arkit: Option<&'static str>,
    /// Stream channels involved.
    pub channels: Vec<NamedIndex>,
    /// Morph targets involved.
    pub targets: Vec<NamedIndex>,
    /// What competes.
    pub reason: String,
}

/// One use of a fan rule, per ARKit channel.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FanUse {
    /// Fan-out or fan-in.
    pub rule: RouteRule,
    /// The ARKit channel.
    pub arkit: &'static str,
    /// Stream channels read.
    pub channels: Vec<String>,
    /// Morph targets written.
    pub targets: Vec<String>,
    /// Gain of each route.
    pub gain: f32,
}

/// What a [`super::Binding`] did with every channel and target. Every stream channel appears in exactly
/// one of `matched` (as a channel), `unmatched_channels`, `ignored_channels`, `ambiguous`,
/// `shadowed`; `undriven_targets` lists every target no route writes (including ambiguous and
/// shadowed ones).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BindingReport {
    /// Stream channels C.
    pub channel_count: usize,
    /// Morph targets T.
    pub target_count: usize,
    /// Every route, ordered by target then channel.
    pub matched: Vec<MatchedPair>,
    /// Channels that matched nothing (never dropped silently).
    pub unmatched_channels: Vec<UnmatchedChannel>,
    /// Targets no channel drives.
    pub undriven_targets: Vec<NamedIndex>,
    /// Channels ignored on purpose, with the reason.
    pub ignored_channels: Vec<IgnoredChannel>,
    /// Competing channels / targets, none of them bound.
    pub ambiguous: Vec<Ambiguity>,
    /// Fan-out / fan-in rules used.
    pub fan: Vec<FanUse>,
    /// Aliases left unbound because an ARKit spelling of their channel is present (which
    /// spelling was chosen, which were shadowed).
    pub shadowed: Vec<Shadowed>,
}
