//! Binding a stream's channels to a character's morph targets by name, through the canonicaliser,
//! with the fan rules of [`super::SPLIT_CHANNELS`] and a report of everything that did not bind.
//!
//! Source: DESIGN.md "Expression spaces" (map by name, explicit fan-out, unmatched channels
//! reported, never silently dropped); seed 003 "Retargeting" (`RetargetReport`: mapped, unmapped
//! on each side, one-to-one unless a rule says otherwise).

use std::collections::HashMap;

use super::report::{
    Ambiguity, BindingReport, BindingSide, FanUse, IgnoredChannel, MatchedPair, NamedIndex,
    RouteRule, Shadowed, UnmatchedChannel,
};
use super::{Canon, FAN_OUT_GAIN, Side, Spelling, canonicalize, canonicalize_spelling};
use crate::anim::arkit::{ARKIT_52, ARKIT_COUNT};
use crate::error::{Error, Result};

/// One route of a [`Binding`]: `weights[target] += gain · frame[channel]`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Route {
    /// Stream channel index (into the stream's channels).
    pub channel: usize,
    /// Morph target index (into the character's targets).
    pub target: usize,
    /// Unitless gain (1 for direct and fan-out routes, 1/n for a fan-in of n halves).
    pub gain: f32,
}

/// Stream channels → morph targets by name: a fixed list of [`Route`]s and its [`BindingReport`].
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    routes: Vec<Route>,
    report: BindingReport,
}

/// One entry of a documented name table for [`Binding::with_table`]: the stream's ARKit channel
/// `arkit` drives the target named exactly `target` with `gain`, unless the character has a
/// target named in `unless` (a preferred alternative: first present wins, so one channel never
/// drives two alternatives).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TableRoute {
    /// The ARKit-52 channel (canonical spelling).
    pub arkit: &'static str,
    /// The target's exact name.
    pub target: &'static str,
    /// Unitless gain.
    pub gain: f32,
    /// Targets whose presence disables this entry (their own entries win).
    pub unless: &'static [&'static str],
}

impl TableRoute {
    /// An entry with no alternative.
    pub const fn new(arkit: &'static str, target: &'static str, gain: f32) -> Self {
        TableRoute {
            arkit,
            target,
            gain,
            unless: &[],
        }
    }

    /// This entry, used only when the character has none of the targets `unless`.
    pub const fn unless(self, unless: &'static [&'static str]) -> Self {
        TableRoute { unless, ..self }
    }
}

/// The channels (or targets) that canonicalise to one ARKit channel.
#[derive(Clone, Debug, Default)]
struct Slot {
    whole: Vec<usize>,
    left: Vec<usize>,
    right: Vec<usize>,
    /// Whole-channel names that are [`super::ALIASES`] entries.
    alias: Vec<usize>,
}

impl Slot {
    fn push(&mut self, c: Canon, spelling: Spelling, i: usize) {
        match c {
            Canon::Arkit(_) if spelling == Spelling::Alias => self.alias.push(i),
            Canon::Arkit(_) => self.whole.push(i),
            Canon::Half {
                side: Side::Left, ..
            } => self.left.push(i),
            Canon::Half {
                side: Side::Right, ..
            } => self.right.push(i),
            Canon::Ignored { .. } => {}
        }
    }
    fn all(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .whole
            .iter()
            .chain(&self.left)
            .chain(&self.right)
            .copied()
            .collect();
        v.sort_unstable();
        v
    }
    fn is_empty(&self) -> bool {
        self.whole.is_empty() && self.left.is_empty() && self.right.is_empty()
    }
    /// The exact name wins over an alias: with a canonical spelling present, the aliases leave
    /// the slot and are returned (shadowed); without one, they take the whole channel's place.
    fn resolve_aliases(&mut self) -> Vec<usize> {
        if self.alias.is_empty() {
            return Vec::new();
        }
        if self.is_empty() {
            self.whole = std::mem::take(&mut self.alias);
            Vec::new()
        } else {
            std::mem::take(&mut self.alias)
        }
    }
    /// Why this side of a slot is ambiguous, if it is.
    fn conflict(&self) -> Option<&'static str> {
        if self.whole.len() > 1 || self.left.len() > 1 || self.right.len() > 1 {
            Some("several names canonicalise to the same channel")
        } else if !self.whole.is_empty() && (!self.left.is_empty() || !self.right.is_empty()) {
            Some("the whole channel and a split half are both present")
        } else {
            None
        }
    }
}

fn slot_of(c: Canon) -> Option<usize> {
    match c {
        Canon::Arkit(i) | Canon::Half { arkit: i, .. } => Some(i),
        Canon::Ignored { .. } => None,
    }
}

fn named<S: AsRef<str>>(names: &[S], idx: &[usize]) -> Vec<NamedIndex> {
    idx.iter()
        .map(|&i| NamedIndex {
            name: names[i].as_ref().to_owned(),
            index: i,
        })
        .collect()
}

impl Binding {
    /// Bind `channels` `(C,)` (a stream's channel names) to `targets` `(T,)` (a character's morph
    /// target names) by canonical ARKit-52 name.
    ///
    /// Rules per ARKit channel: whole → whole and half → same half are direct (gain 1); whole →
    /// halves is a fan-out (gain [`FAN_OUT_GAIN`] to each half present); halves → whole is a fan-in
    /// (the mean of the halves present: gain 1/n). On each side the exact name wins over an alias
    /// ([`super::ALIASES`]): an alias next to an ARKit spelling of its channel is left unbound and
    /// reported in [`BindingReport::shadowed`] with the spelling chosen; an alias alone stands for
    /// its channel ([`MatchedPair::target_alias`]). A channel or target that otherwise competes
    /// with another for the same canonical channel, or a name repeated on one side, is reported in
    /// [`BindingReport::ambiguous`] and not bound. Targets that are not ARKit names are never
    /// driven; a character without ARKit targets gets an empty binding (see
    /// [`Binding::require_routes`]). Never fails: everything is in the report.
    pub fn new<S: AsRef<str>, T: AsRef<str>>(channels: &[S], targets: &[T]) -> Binding {
        let c_spell: Vec<Option<(Canon, Spelling)>> = channels
            .iter()
            .map(|n| canonicalize_spelling(n.as_ref()))
            .collect();
        let t_spell: Vec<Option<(Canon, Spelling)>> = targets
            .iter()
            .map(|n| canonicalize_spelling(n.as_ref()))
            .collect();
        let c_canon: Vec<Option<Canon>> = c_spell.iter().map(|c| c.map(|x| x.0)).collect();
        let t_canon: Vec<Option<Canon>> = t_spell.iter().map(|c| c.map(|x| x.0)).collect();
        let is_alias =
            |v: &[Option<(Canon, Spelling)>], i: usize| matches!(v[i], Some((_, Spelling::Alias)));
        let mut report = BindingReport {
            channel_count: channels.len(),
            target_count: targets.len(),
            ..BindingReport::default()
        };
        let mut src = vec![Slot::default(); ARKIT_COUNT];
        let mut dst = vec![Slot::default(); ARKIT_COUNT];
        for (i, c) in c_spell.iter().enumerate() {
            if let Some((c, sp)) = *c
                && let Some(s) = slot_of(c)
            {
                src[s].push(c, sp, i);
            }
        }
        for (i, c) in t_spell.iter().enumerate() {
            if let Some((c, sp)) = *c
                && let Some(s) = slot_of(c)
            {
                dst[s].push(c, sp, i);
            }
        }
        // The exact name wins over an alias, on each side; the shadowed aliases are reported.
        let mut shadowed_channel = vec![false; channels.len()];
        for k in 0..ARKIT_COUNT {
            let shadowed = src[k].resolve_aliases();
            if !shadowed.is_empty() {
                shadowed.iter().for_each(|&i| shadowed_channel[i] = true);
                report.shadowed.push(Shadowed {
                    arkit: ARKIT_52[k],
                    side: BindingSide::Stream,
                    chosen: named(channels, &src[k].all()),
                    shadowed: named(channels, &shadowed),
                });
            }
            let shadowed = dst[k].resolve_aliases();
            if !shadowed.is_empty() {
                report.shadowed.push(Shadowed {
                    arkit: ARKIT_52[k],
                    side: BindingSide::Character,
                    chosen: named(targets, &dst[k].all()),
                    shadowed: named(targets, &shadowed),
                });
            }
        }
        // Repeated names that no ARKit slot will catch.
        let mut ambiguous_channel = vec![false; channels.len()];
        for (name, idx) in repeated(channels, &c_canon) {
            idx.iter().for_each(|&i| ambiguous_channel[i] = true);
            let reason = format!("the channel name `{name}` appears {} times", idx.len());
            report.ambiguous.push(Ambiguity {
                arkit: None,
                channels: named(channels, &idx),
                targets: vec![],
                reason,
            });
        }
        for (name, idx) in repeated(targets, &t_canon) {
            let reason = format!("the target name `{name}` appears {} times", idx.len());
            report.ambiguous.push(Ambiguity {
                arkit: None,
                channels: vec![],
                targets: named(targets, &idx),
                reason,
            });
        }
        let mut routes: Vec<(Route, RouteRule, usize)> = Vec::new();
        let mut unmatched_reason: Vec<Option<String>> = vec![None; channels.len()];
        for k in 0..ARKIT_COUNT {
            let (s, d) = (&src[k], &dst[k]);
            if s.is_empty() && d.is_empty() {
                continue;
            }
            let conflicts: Vec<String> = [
                s.conflict().map(|r| format!("stream: {r}")),
                d.conflict().map(|r| format!("character: {r}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !conflicts.is_empty() {
                let reason = conflicts.join("; ");
                s.all().iter().for_each(|&i| ambiguous_channel[i] = true);
                report.ambiguous.push(Ambiguity {
                    arkit: Some(ARKIT_52[k]),
                    channels: named(channels, &s.all()),
                    targets: named(targets, &d.all()),
                    reason,
                });
                continue;
            }
            let mut add = |channel: usize, target: usize, gain: f32, rule: RouteRule| {
                routes.push((
                    Route {
                        channel,
                        target,
                        gain,
                    },
                    rule,
                    k,
                ));
            };
            match (s.whole.first(), d.whole.first()) {
                (Some(&c), Some(&t)) => add(c, t, 1.0, RouteRule::Direct),
                (Some(&c), None) => {
                    let halves: Vec<usize> = d.left.iter().chain(&d.right).copied().collect();
                    halves
                        .iter()
                        .for_each(|&t| add(c, t, FAN_OUT_GAIN, RouteRule::FanOut));
                    if !halves.is_empty() {
                        report.fan.push(FanUse {
                            rule: RouteRule::FanOut,
                            arkit: ARKIT_52[k],
                            channels: vec![channels[c].as_ref().to_owned()],
                            targets: halves
                                .iter()
                                .map(|&t| targets[t].as_ref().to_owned())
                                .collect(),
                            gain: FAN_OUT_GAIN,
                        });
                    }
                }
                (None, Some(&t)) => {
                    let halves: Vec<usize> = s.left.iter().chain(&s.right).copied().collect();
                    let gain = 1.0 / halves.len().max(1) as f32;
                    halves
                        .iter()
                        .for_each(|&c| add(c, t, gain, RouteRule::FanIn));
                    if !halves.is_empty() {
                        report.fan.push(FanUse {
                            rule: RouteRule::FanIn,
                            arkit: ARKIT_52[k],
                            channels: halves
                                .iter()
                                .map(|&c| channels[c].as_ref().to_owned())
                                .collect(),
                            targets: vec![targets[t].as_ref().to_owned()],
                            gain,
                        });
                    }
                }
                (None, None) => {
                    for (sc, dt) in [(&s.left, &d.left), (&s.right, &d.right)] {
                        if let (Some(&c), Some(&t)) = (sc.first(), dt.first()) {
                            add(c, t, 1.0, RouteRule::Direct);
                        }
                    }
                }
            }
            for c in s.all() {
                if !routes.iter().any(|(r, _, _)| r.channel == c) {
                    let half = match c_canon[c] {
                        Some(Canon::Half {
                            side: Side::Left, ..
                        }) => " (left half)",
                        Some(Canon::Half {
                            side: Side::Right, ..
                        }) => " (right half)",
                        _ => "",
                    };
                    unmatched_reason[c] = Some(format!(
                        "the character has no target for ARKit `{}`{half}",
                        ARKIT_52[k]
                    ));
                }
            }
        }
        routes.sort_by_key(|(r, _, _)| (r.target, r.channel));
        let mut driven = vec![false; targets.len()];
        for (r, rule, k) in &routes {
            driven[r.target] = true;
            report.matched.push(MatchedPair {
                channel: channels[r.channel].as_ref().to_owned(),
                channel_index: r.channel,
                target: targets[r.target].as_ref().to_owned(),
                target_index: r.target,
                arkit: ARKIT_52[*k],
                gain: r.gain,
                rule: *rule,
                channel_alias: is_alias(&c_spell, r.channel),
                target_alias: is_alias(&t_spell, r.target),
            });
        }
        for (i, c) in c_canon.iter().enumerate() {
            if ambiguous_channel[i] || shadowed_channel[i] {
                continue;
            }
            match c {
                Some(Canon::Ignored { reason }) => report.ignored_channels.push(IgnoredChannel {
                    name: channels[i].as_ref().to_owned(),
                    index: i,
                    reason,
                }),
                None => report.unmatched_channels.push(UnmatchedChannel {
                    name: channels[i].as_ref().to_owned(),
                    index: i,
                    reason: "not an ARKit-52 channel name (after canonicalisation)".to_owned(),
                    nearest: super::nearest_names(channels[i].as_ref(), targets),
                }),
                Some(_) => {
                    if let Some(reason) = unmatched_reason[i].take() {
                        report.unmatched_channels.push(UnmatchedChannel {
                            name: channels[i].as_ref().to_owned(),
                            index: i,
                            reason,
                            nearest: super::nearest_names(channels[i].as_ref(), targets),
                        });
                    }
                }
            }
        }
        report.undriven_targets = (0..targets.len())
            .filter(|&t| !driven[t])
            .map(|t| NamedIndex {
                name: targets[t].as_ref().to_owned(),
                index: t,
            })
            .collect();
        Binding {
            routes: routes.into_iter().map(|(r, _, _)| r).collect(),
            report,
        }
    }

    /// The routes, ordered by target then channel.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// What was bound, what was not, and why.
    pub fn report(&self) -> &BindingReport {
        &self.report
    }

    /// Stream channels C the binding expects per frame.
    pub fn channel_count(&self) -> usize {
        self.report.channel_count
    }

    /// Morph targets T the binding writes into.
    pub fn target_count(&self) -> usize {
        self.report.target_count
    }

    /// Write one frame into the character's weights: every driven target `t` becomes
    /// `Σ gain · frame[channel]` over its routes; targets no route drives keep their value (so a
    /// caller can layer other signals). Allocation-free (the per-frame path).
    ///
    /// `frame` is `(C,)` unitless weights, `weights` is `(T,)`.
    ///
    /// # Panics
    /// When `frame.len() != C` or `weights.len() != T` (a caller bug, not bad input).
    pub fn apply(&self, frame: &[f32], weights: &mut [f32]) {
        assert_eq!(
            frame.len(),
            self.report.channel_count,
            "binding: frame width"
        );
        assert_eq!(
            weights.len(),
            self.report.target_count,
            "binding: weights width"
        );
        let mut current = usize::MAX;
        for r in &self.routes {
            if r.target != current {
                current = r.target;
                weights[current] = 0.0;
            }
            weights[current] += r.gain * frame[r.channel];
        }
    }

    /// [`Binding::new`], then two more kinds of route for the channels it left unbound:
    ///
    /// 1. **Exact name** ([`RouteRule::ExactName`], gain 1): a channel that is not an ARKit name
    ///    (unknown to the canonicaliser, or an ignored name) drives the target of exactly its own
    ///    name, when that name appears once on each side (a stream column `happy`, `aa` or
    ///    `blink` → the VRM expression of that name).
    /// 2. **Table** ([`RouteRule::Table`]): an entry `(arkit, target, gain, unless)` of `table`
    ///    is added when the stream has the whole ARKit channel (by canonical name), the target
    ///    exists by exact name, the character has none of the targets in `unless` (alternatives:
    ///    first present wins), and no by-name or exact-name route already drives that target
    ///    (a column `aa` and `jawOpen` → `aa` never add up).
    ///
    /// A channel with `taken[channel]` true (a channel another mesh's targets take by name, so
    /// it is not applied twice) gets no route here; `taken` `(C,)` (shorter: the rest false)
    /// also removes this binding's own by-name routes of those channels, and a taken channel
    /// appears in no list of this binding's report (it is reported where it binds).
    pub fn with_table<S: AsRef<str>, T: AsRef<str>>(
        channels: &[S],
        targets: &[T],
        table: &[TableRoute],
        taken: &[bool],
    ) -> Binding {
        let mut b = Binding::new(channels, targets);
        let is_taken = |c: usize| taken.get(c).copied().unwrap_or(false);
        b.routes.retain(|r| !is_taken(r.channel));
        b.report.matched.retain(|m| !is_taken(m.channel_index));
        let by_name: Vec<usize> = b.routes.iter().map(|r| r.target).collect();
        let has_target = |n: &str| targets.iter().any(|x| x.as_ref() == n);
        let count = |list: &[&str], n: &str| list.iter().filter(|x| **x == n).count();
        let c_names: Vec<&str> = channels.iter().map(AsRef::as_ref).collect();
        let t_names: Vec<&str> = targets.iter().map(AsRef::as_ref).collect();
        let mut added: Vec<(Route, RouteRule, &'static str)> = Vec::new();
        let open =
            |c: usize, routes: &[Route]| !is_taken(c) && !routes.iter().any(|r| r.channel == c);
        // 1. Exact names first: a target a column names exactly is never also a table route's.
        for (c, name) in c_names.iter().enumerate() {
            if !open(c, &b.routes)
                || !matches!(canonicalize(name), None | Some(Canon::Ignored { .. }))
                || count(&c_names, name) != 1
                || count(&t_names, name) != 1
            {
                continue;
            }
            let Some(t) = t_names.iter().position(|x| x == name) else {
                continue;
            };
            if !by_name.contains(&t) {
                let route = Route {
                    channel: c,
                    target: t,
                    gain: 1.0,
                };
                added.push((route, RouteRule::ExactName, ""));
            }
        }
        let exact: Vec<usize> = added.iter().map(|(r, _, _)| r.target).collect();
        // 2. The table, for the whole ARKit channels still unbound.
        for (c, name) in c_names.iter().enumerate() {
            let Some(Canon::Arkit(k)) = canonicalize(name) else {
                continue;
            };
            if !open(c, &b.routes) {
                continue;
            }
            for e in table {
                if e.arkit != ARKIT_52[k] || e.unless.iter().any(|u| has_target(u)) {
                    continue;
                }
                let Some(t) = t_names.iter().position(|x| *x == e.target) else {
                    continue;
                };
                if by_name.contains(&t) || exact.contains(&t) {
                    continue;
                }
                let route = Route {
                    channel: c,
                    target: t,
                    gain: e.gain,
                };
                added.push((route, RouteRule::Table, ARKIT_52[k]));
            }
        }
        for (r, rule, arkit) in &added {
            b.report.matched.push(MatchedPair {
                channel: c_names[r.channel].to_owned(),
                channel_index: r.channel,
                target: t_names[r.target].to_owned(),
                target_index: r.target,
                arkit,
                gain: r.gain,
                rule: *rule,
                channel_alias: false,
                target_alias: false,
            });
        }
        b.routes.extend(added.into_iter().map(|(r, _, _)| r));
        b.routes.sort_by_key(|r| (r.target, r.channel));
        b.report
            .matched
            .sort_by_key(|m| (m.target_index, m.channel_index));
        let routed = |c: usize| b.routes.iter().any(|r| r.channel == c);
        b.report.unmatched_channels.retain(|u| !routed(u.index));
        b.report.ignored_channels.retain(|u| !routed(u.index));
        for u in &mut b.report.unmatched_channels {
            if let Some(Canon::Arkit(k)) = canonicalize(&u.name) {
                let entries: Vec<&str> = table
                    .iter()
                    .filter(|e| e.arkit == ARKIT_52[k])
                    .map(|e| e.target)
                    .collect();
                if !entries.is_empty() {
                    u.reason = format!(
                        "{} (nor any of its name-table targets: {})",
                        u.reason,
                        entries.join(", ")
                    );
                }
            }
        }
        b.report.unmatched_channels.sort_by_key(|u| u.index);
        let driven: Vec<usize> = b.routes.iter().map(|r| r.target).collect();
        b.report
            .undriven_targets
            .retain(|t| !driven.contains(&t.index));
        b
    }

    /// Refuse a binding that drives nothing (a character whose targets are not ARKit names).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `what` when there is no route.
    pub fn require_routes(&self, what: &str) -> Result<()> {
        if self.routes.is_empty() {
            return Err(Error::Invalid {
                what: what.to_owned(),
                reason: format!(
                    "no stream channel binds to any of the {} morph targets (none of them is an ARKit-52 name)",
                    self.report.target_count
                ),
            });
        }
        Ok(())
    }

    /// Refuse a binding that leaves a stream channel unmatched or has an ambiguity (ignored
    /// channels are fine).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `what` and listing the unmatched channels and ambiguities.
    pub fn require_complete(&self, what: &str) -> Result<()> {
        let mut problems: Vec<String> = self
            .report
            .unmatched_channels
            .iter()
            .map(|u| format!("channel `{}` [{}]: {}", u.name, u.index, u.reason))
            .collect();
        for a in &self.report.ambiguous {
            let names: Vec<&str> = a
                .channels
                .iter()
                .chain(&a.targets)
                .map(|n| n.name.as_str())
                .collect();
            problems.push(format!("ambiguous {}: {}", names.join(", "), a.reason));
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::Invalid {
            what: what.to_owned(),
            reason: problems.join("; "),
        })
    }
}

/// Names that appear more than once and that no ARKit slot covers (non-ARKit, ignored or unknown),
/// in order of first appearance.
fn repeated<S: AsRef<str>>(names: &[S], canon: &[Option<Canon>]) -> Vec<(String, Vec<usize>)> {
    let mut seen: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut order = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if canon[i].and_then(slot_of).is_some() {
            continue;
        }
        let e = seen.entry(n.as_ref()).or_default();
        if e.is_empty() {
            order.push(n.as_ref());
        }
        e.push(i);
    }
    order
        .into_iter()
        .filter_map(|n| {
            seen.get(n)
                .filter(|v| v.len() > 1)
                .map(|v| (n.to_owned(), v.clone()))
        })
        .collect()
}
