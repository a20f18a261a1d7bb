//! How the face controller writes one mesh's weights: seed 004's add / override layers
//! ([`super::layers`]) folded onto the base the drive and speech wrote, in this order — one add
//! layer per expression (weight = its current fade, values = its target weights), blink (override
//! toward the closed lids, weight = the blink amount), gaze (override of the `eyeLook*` targets in
//! morph mode), the caller's per-target overrides (override, weight 1) — then the per-channel
//! clamp (`[0, 1]` where the definition says, none elsewhere). The layers are built once; a frame
//! only rewrites their weights and values, so composing allocates nothing.

use super::layers::{ClampRule, ClampRules, Frame, Layer, LayerMode, fold};
use crate::error::Result;
use crate::rig::NodeId;

/// One mesh node's bound targets and the layers they fold as.
#[derive(Clone, Debug)]
pub(super) struct MeshFace {
    pub(super) node: NodeId,
    /// The expression each of the first layers adds (`layers[k]` ← expression `expr_layers[k]`).
    expr_layers: Vec<u32>,
    /// The blink layer, if the mesh has blink targets.
    blink_layer: Option<usize>,
    /// The gaze layer.
    gaze_layer: usize,
    /// The caller's overrides: the last layer.
    override_layer: usize,
    /// Expressions, blink, gaze, overrides, in folding order.
    layers: Vec<Layer>,
    /// Per eye (left, right) the targets of up, down, in, out (`u32::MAX` when absent).
    pub(super) look: [[u32; 4]; 2],
    /// `[0, 1]` on the targets the definition clamps, none elsewhere.
    clamp: ClampRules,
    /// Target names `(C,)`, for overrides.
    pub(super) names: Vec<String>,
}

impl MeshFace {
    /// The layers of a mesh with target `names` `(C,)`: `expressions` `(expression, target,
    /// weight)` of `expression_count` expressions, `blink` `(target, closed weight)`, the `look`
    /// targets and the clamped targets.
    ///
    /// # Errors
    /// A weight beyond the layers' bound (`layers::MAX_CHANNEL_MAGNITUDE`); over `MAX_CHANNELS`.
    pub(super) fn new(
        node: NodeId,
        names: Vec<String>,
        expressions: &[(u32, u32, f32)],
        expression_count: usize,
        blink: &[(u32, f32)],
        look: [[u32; 4]; 2],
        clamp: &[u32],
    ) -> Result<Self> {
        let c = names.len();
        let mut layers = Vec::new();
        let mut expr_layers = Vec::new();
        for ei in 0..expression_count as u32 {
            // A target an expression lists twice adds both weights.
            let mut pairs: Vec<(usize, f32)> = Vec::new();
            for &(_, t, k) in expressions.iter().filter(|x| x.0 == ei) {
                match pairs.iter_mut().find(|p| p.0 == t as usize) {
                    Some(p) => p.1 += k,
                    None => pairs.push((t as usize, k)),
                }
            }
            if !pairs.is_empty() {
                let frame = Frame::from_pairs(c, &pairs)?;
                layers.push(Layer::new(LayerMode::Add, 0.0, frame)?);
                expr_layers.push(ei);
            }
        }
        let blink_layer = (!blink.is_empty()).then_some(layers.len());
        if blink_layer.is_some() {
            let pairs: Vec<(usize, f32)> = blink.iter().map(|&(t, v)| (t as usize, v)).collect();
            let frame = Frame::from_pairs(c, &pairs)?;
            layers.push(Layer::new(LayerMode::Override, 0.0, frame)?);
        }
        let gaze_layer = layers.len();
        layers.push(Layer::new(LayerMode::Override, 1.0, Frame::empty(c)?)?);
        let override_layer = layers.len();
        layers.push(Layer::new(LayerMode::Override, 1.0, Frame::empty(c)?)?);
        let mut rules = ClampRules::uniform(ClampRule::None, c)?;
        for &t in clamp {
            rules.set(t as usize, ClampRule::Unit)?;
        }
        Ok(MeshFace {
            node,
            expr_layers,
            blink_layer,
            gaze_layer,
            override_layer,
            layers,
            look,
            clamp: rules,
            names,
        })
    }

    /// Fold this frame's layers onto `weights` `(C,)`: `current` `(expressions,)` fades, `blink`
    /// amount `[0, 1]`, `gaze` the up / down / in / out weights of each eye in morph mode (`None`
    /// in joint mode: the `eyeLook*` targets keep what the drive wrote), and the caller's
    /// `overrides` by target name (exact, or through the name canonicaliser). A weights slice of
    /// another length is left as it is.
    pub(super) fn compose(
        &mut self,
        weights: &mut [f32],
        current: &[f32],
        blink: f32,
        gaze: Option<[[f32; 4]; 2]>,
        overrides: &[(String, f32)],
    ) {
        for (l, &e) in self.expr_layers.iter().enumerate() {
            self.layers[l].put_weight(current[e as usize]);
        }
        if let Some(b) = self.blink_layer {
            self.layers[b].put_weight(blink);
        }
        let g = self.layers[self.gaze_layer].frame_mut();
        g.clear();
        if let Some(lw) = gaze {
            for (targets, w) in self.look.iter().zip(lw) {
                for (&t, v) in targets.iter().zip(w) {
                    if t != u32::MAX {
                        g.put(t as usize, v);
                    }
                }
            }
        }
        let o = self.layers[self.override_layer].frame_mut();
        o.clear();
        for (name, v) in overrides {
            if let Some(i) = self.names.iter().position(|n| {
                n == name
                    || crate::anim::canon::canonical_name(n)
                        .is_some_and(|c| Some(c) == crate::anim::canon::canonical_name(name))
            }) {
                o.put(i, *v);
            }
        }
        if weights.len() == self.names.len() {
            fold(weights, &self.layers, &self.clamp);
        }
    }
}
