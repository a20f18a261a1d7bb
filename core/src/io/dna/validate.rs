//! [`Dna::validate`]: the cross-references a rig needs before it is evaluated, every problem
//! reported with its field and index.
//!
//! The reader decodes what is written; these rules are what RigLogic (and mien's evaluator)
//! assume. Source: OpenRigLogic `src/dna/DNA.h` (what each index addresses), RigLogic's evaluation
//! order (controls = raw, then PSD, then ML; joint matrix rows = joints × 9), and the checks of the
//! ICT rig's generator (its README, "Sanity checks done"): PSD rows in `[raw, raw + psd)` and
//! columns raw controls, joint-group LOD counts monotone, parents before children, skin joints in
//! range.

use super::Dna;
use super::definition::LodMapping;
use super::descriptor::{Direction, RotationUnit, TranslationUnit};
use crate::error::{Error, Result};

/// At most this many problems are listed per field; the rest are counted in one more line.
const PER_FIELD: usize = 8;

struct Problems<'a> {
    file: &'a str,
    list: Vec<Error>,
    field: String,
    in_field: usize,
}

impl<'a> Problems<'a> {
    fn new(file: &'a str) -> Self {
        Problems {
            file,
            list: Vec::new(),
            field: String::new(),
            in_field: 0,
        }
    }

    /// Start a field; closes the previous one (with its overflow count).
    fn field(&mut self, f: impl Into<String>) {
        self.close();
        self.field = f.into();
        self.in_field = 0;
    }

    fn close(&mut self) {
        if self.in_field > PER_FIELD {
            self.list.push(Error::format(
                self.file,
                self.field.clone(),
                format!("{} more problems like the above", self.in_field - PER_FIELD),
            ));
        }
        self.in_field = 0;
    }

    fn at(&mut self, index: usize, reason: impl FnOnce() -> String) {
        self.in_field += 1;
        if self.in_field <= PER_FIELD {
            self.list.push(Error::format_at(
                self.file,
                self.field.clone(),
                index,
                reason(),
            ));
        }
    }

    fn whole(&mut self, reason: impl Into<String>) {
        self.in_field += 1;
        if self.in_field <= PER_FIELD {
            self.list
                .push(Error::format(self.file, self.field.clone(), reason));
        }
    }

    /// Every element of `v` below `limit`.
    fn below<T: Copy + Into<u64>>(&mut self, v: &[T], limit: usize, what: &str) {
        for (i, &x) in v.iter().enumerate() {
            let x: u64 = x.into();
            if x >= limit as u64 {
                self.at(i, || format!("{what} {x} does not exist ({limit} of them)"));
            }
        }
    }

    /// Behaviour LOD row counts: one per LOD, non-increasing, within the rows.
    fn lod_counts(&mut self, lods: &[u16], lod_count: u16, rows: usize) {
        if lods.len() != usize::from(lod_count) {
            self.whole(format!("{} LOD counts for {lod_count} LODs", lods.len()));
        }
        for (l, w) in lods.windows(2).enumerate() {
            if w[1] > w[0] {
                self.at(l + 1, || {
                    format!(
                        "LOD {} has {} rows, more than LOD {l}'s {} (rows of lower LODs come first)",
                        l + 1,
                        w[1],
                        w[0]
                    )
                });
            }
        }
        if let Some(&first) = lods.first()
            && usize::from(first) > rows
        {
            self.whole(format!("LOD 0 uses {first} rows of {rows}"));
        }
    }

    fn mapping(&mut self, name: &str, m: &LodMapping, lod_count: u16, count: usize, what: &str) {
        self.field(format!("definition.{name}.lods"));
        if m.lods.len() != usize::from(lod_count) {
            self.whole(format!(
                "{} LODs mapped, the file has {lod_count}",
                m.lods.len()
            ));
        }
        self.below(&m.lods, m.indices.len(), "index list");
        for (k, list) in m.indices.iter().enumerate() {
            self.field(format!("definition.{name}.indices[{k}]"));
            self.below(list, count, what);
        }
    }
}

fn same_len(p: &mut Problems<'_>, lens: &[(&str, usize)]) {
    if lens.windows(2).any(|w| w[0].1 != w[1].1) {
        let text: Vec<String> = lens.iter().map(|(n, l)| format!("{n} {l}")).collect();
        p.whole(format!("columns of different lengths: {}", text.join(", ")));
    }
}

impl Dna {
    /// Check every cross-reference of the loaded layers (see the module docs for the rules).
    ///
    /// # Errors
    /// [`Error::Many`] listing every problem, each an [`Error::Format`] naming the field
    /// (`behavior.psds.rows`) and the element index: unknown unit or axis codes; LOD mappings
    /// whose LOD count differs from the descriptor's or that name missing lists or elements;
    /// GUI → raw inputs ≥ GUI controls or outputs ≥ raw controls; PSD rows outside
    /// `[raw, raw + psd)` or columns that are not raw controls; joint-matrix rows ≠ joints × 9;
    /// joint-group outputs ≥ rows, inputs ≥ raw + PSD + ML controls, joints ≥ joints, values ≠
    /// rows × columns; blend-shape and animated-map inputs ≥ controls and outputs that are not
    /// (kept) channels or maps; behaviour LOD counts not one per LOD, increasing, or past their
    /// rows; parents after their children; a mesh count other than the definition's; layout,
    /// face, skin-joint and target-vertex indices out of range; targets of channels the mesh →
    /// channel mapping does not pair with the mesh; non-finite positions, normals, UVs or deltas;
    /// in the later layers, ML network and region indices, RBF pose and control indices (and
    /// value counts), joint-metadata and twist/swing joint counts, and ML operation dependencies
    /// that do not name an earlier set's operation.
    pub fn validate(&self) -> Result<()> {
        let mut p = Problems::new(&self.file);
        let de = &self.descriptor;
        let df = &self.definition;
        let b = &self.behavior;
        let lc = de.lod_count;
        p.field("descriptor.translationUnit");
        if let TranslationUnit::Code(c) = de.translation_unit {
            p.whole(format!("unknown unit code {c}"));
        }
        p.field("descriptor.rotationUnit");
        if let RotationUnit::Code(c) = de.rotation_unit {
            p.whole(format!("unknown unit code {c}"));
        }
        p.field("descriptor.coordinateSystem");
        let cs = de.coordinate_system;
        for (axis, d) in [("x", cs.x), ("y", cs.y), ("z", cs.z)] {
            if let Direction::Code(c) = d {
                p.whole(format!("{axis}: unknown direction code {c}"));
            }
        }
        let (g, r, psd) = (
            df.gui_control_names.len(),
            df.raw_control_names.len(),
            usize::from(b.psd_count),
        );
        let ml = self.extensions.machine_learned.ml_control_names.len();
        let controls = r + psd + ml;
        let j = df.joint_names.len();
        let ch = df.blend_shape_channel_names.len();
        let am = df.animated_map_names.len();
        let meshes = df.mesh_names.len();
        let definition = self.load.layers != super::DnaLayers::Descriptor;
        if definition {
            p.mapping("lodJointMapping", &df.lod_joints, lc, j, "joint");
            p.mapping(
                "lodBlendShapeMapping",
                &df.lod_blend_shape_channels,
                lc,
                ch,
                "blend-shape channel",
            );
            p.mapping(
                "lodAnimatedMapMapping",
                &df.lod_animated_maps,
                lc,
                am,
                "animated map",
            );
            p.mapping("lodMeshMapping", &df.lod_meshes, lc, meshes, "mesh");
            p.field("definition.jointHierarchy");
            if df.joint_parents.len() != j {
                p.whole(format!("{} parents for {j} joints", df.joint_parents.len()));
            }
            for (i, &pa) in df.joint_parents.iter().enumerate() {
                if usize::from(pa) > i {
                    p.at(i, || format!("parent {pa} comes after joint {i} (parents come first; a root is its own parent)"));
                }
            }
            p.field("definition.neutralJointTranslations");
            if df.neutral_joint_translations.len() != j {
                p.whole(format!(
                    "{} for {j} joints",
                    df.neutral_joint_translations.len()
                ));
            }
            p.field("definition.neutralJointRotations");
            if df.neutral_joint_rotations.len() != j {
                p.whole(format!(
                    "{} for {j} joints",
                    df.neutral_joint_rotations.len()
                ));
            }
            p.field("definition.meshBlendShapeChannelMapping");
            for (i, m) in df.mesh_blend_shape_channels.iter().enumerate() {
                if usize::from(m.mesh) >= meshes || usize::from(m.channel) >= ch {
                    p.at(i, || {
                        format!(
                            "mesh {} / channel {} does not exist ({meshes} meshes, {ch} channels)",
                            m.mesh, m.channel
                        )
                    });
                }
            }
        }
        if matches!(
            self.load.layers,
            super::DnaLayers::Behavior | super::DnaLayers::RbfBehavior | super::DnaLayers::All
        ) {
            self.validate_behavior(&mut p, [g, r, psd, controls, j, ch, am]);
        }
        self.validate_geometry(&mut p, j, ch);
        p.close();
        for (field, index, reason) in super::validate_ext::check(self, controls, j, meshes, r) {
            p.list.push(Error::Format {
                file: self.file.clone(),
                field,
                index,
                reason,
            });
        }
        if p.list.is_empty() {
            Ok(())
        } else {
            Err(Error::Many(p.list))
        }
    }

    fn validate_behavior(&self, p: &mut Problems<'_>, counts: [usize; 7]) {
        let [g, r, psd, controls, j, ch, am] = counts;
        let b = &self.behavior;
        let lc = self.descriptor.lod_count;
        let t = &b.gui_to_raw;
        p.field("behavior.controls.conditionals");
        same_len(
            p,
            &[
                ("inputIndices", t.input_indices.len()),
                ("outputIndices", t.output_indices.len()),
                ("fromValues", t.from_values.len()),
                ("toValues", t.to_values.len()),
                ("slopeValues", t.slope_values.len()),
                ("cutValues", t.cut_values.len()),
            ],
        );
        p.field("behavior.controls.conditionals.inputIndices");
        p.below(&t.input_indices, g, "GUI control");
        p.field("behavior.controls.conditionals.outputIndices");
        p.below(&t.output_indices, r, "raw control");
        let ps = &b.psds;
        p.field("behavior.controls.psds");
        same_len(
            p,
            &[
                ("rows", ps.rows.len()),
                ("columns", ps.columns.len()),
                ("values", ps.values.len()),
            ],
        );
        p.field("behavior.controls.psds.rows");
        for (i, &row) in ps.rows.iter().enumerate() {
            let row = usize::from(row);
            if row < r || row >= r + psd {
                p.at(i, || {
                    format!(
                        "PSD row {row} overlaps the raw controls or lies past the PSDs (PSD controls are {r}..{})",
                        r + psd
                    )
                });
            }
        }
        p.field("behavior.controls.psds.columns");
        p.below(&ps.columns, r, "PSD input (a raw control)");
        let jt = &b.joints;
        p.field("behavior.joints.rowCount");
        if usize::from(jt.row_count) != j * 9 {
            p.whole(format!(
                "{} rows for {j} joints × 9 attributes",
                jt.row_count
            ));
        }
        let rows = usize::from(jt.row_count);
        for (k, grp) in jt.groups.iter().enumerate() {
            let f = |leaf: &str| format!("behavior.joints.jointGroups[{k}].{leaf}");
            p.field(f("lods"));
            p.lod_counts(&grp.lods, lc, grp.output_indices.len());
            p.field(f("values"));
            let want = grp.output_indices.len() * grp.input_indices.len();
            if grp.values.len() != want {
                p.whole(format!(
                    "{} values for {} rows × {} columns",
                    grp.values.len(),
                    grp.output_indices.len(),
                    grp.input_indices.len()
                ));
            }
            p.field(f("outputIndices"));
            p.below(&grp.output_indices, rows, "joint-matrix row");
            for (i, &o) in grp.output_indices.iter().enumerate() {
                if usize::from(o) < rows && !grp.joint_indices.contains(&(o / 9)) {
                    p.at(i, || {
                        format!(
                            "row {o} drives joint {}, which jointIndices does not list",
                            o / 9
                        )
                    });
                }
            }
            p.field(f("inputIndices"));
            p.below(&grp.input_indices, controls, "control");
            p.field(f("jointIndices"));
            p.below(&grp.joint_indices, j, "joint");
        }
        let bs = &b.blend_shapes;
        p.field("behavior.blendShapeChannels");
        same_len(
            p,
            &[
                ("inputIndices", bs.input_indices.len()),
                ("outputIndices", bs.output_indices.len()),
            ],
        );
        p.field("behavior.blendShapeChannels.lods");
        p.lod_counts(&bs.lods, lc, bs.input_indices.len());
        p.field("behavior.blendShapeChannels.inputIndices");
        p.below(&bs.input_indices, controls, "control");
        p.field("behavior.blendShapeChannels.outputIndices");
        let kept = self.lod_filter.as_ref();
        outputs(
            p,
            &bs.output_indices,
            ch,
            kept.map(|f| &f.blend_shape_channels[..]),
            "channel",
        );
        let a = &b.animated_maps;
        let c = &a.conditionals;
        p.field("behavior.animatedMaps.conditionals");
        same_len(
            p,
            &[
                ("inputIndices", c.input_indices.len()),
                ("outputIndices", c.output_indices.len()),
                ("fromValues", c.from_values.len()),
                ("toValues", c.to_values.len()),
                ("slopeValues", c.slope_values.len()),
                ("cutValues", c.cut_values.len()),
            ],
        );
        p.field("behavior.animatedMaps.lods");
        p.lod_counts(&a.lods, lc, c.input_indices.len());
        p.field("behavior.animatedMaps.conditionals.inputIndices");
        p.below(&c.input_indices, controls, "control");
        p.field("behavior.animatedMaps.conditionals.outputIndices");
        outputs(
            p,
            &c.output_indices,
            am,
            kept.map(|f| &f.animated_maps[..]),
            "animated map",
        );
    }

    fn validate_geometry(&self, p: &mut Problems<'_>, joints: usize, channels: usize) {
        use super::DnaLayers as L;
        if !matches!(
            self.load.layers,
            L::All | L::Geometry | L::GeometryWithoutBlendShapes
        ) {
            return;
        }
        let df = &self.definition;
        p.field("geometry.meshes");
        if self.meshes.len() != df.mesh_names.len() {
            p.whole(format!(
                "{} meshes, the definition names {}",
                self.meshes.len(),
                df.mesh_names.len()
            ));
        }
        for (mi, m) in self.meshes.iter().enumerate() {
            let f = |leaf: &str| format!("geometry.meshes[{mi}].{leaf}");
            let (np, nu, nn, nl) = (
                m.positions.len(),
                m.uvs.len(),
                m.normals.len(),
                m.layouts.len(),
            );
            for (name, bad) in [
                (
                    "positions",
                    m.positions
                        .iter()
                        .position(|v| !v.iter().all(|x| x.is_finite())),
                ),
                (
                    "normals",
                    m.normals
                        .iter()
                        .position(|v| !v.iter().all(|x| x.is_finite())),
                ),
                (
                    "textureCoordinates",
                    m.uvs.iter().position(|v| !v.iter().all(|x| x.is_finite())),
                ),
            ] {
                p.field(f(name));
                if let Some(i) = bad {
                    p.at(i, || "not finite".into());
                }
            }
            p.field(f("layouts"));
            for (i, l) in m.layouts.iter().enumerate() {
                if l.position as usize >= np || l.uv as usize >= nu || l.normal as usize >= nn {
                    p.at(i, || {
                        format!(
                            "position {} / UV {} / normal {} out of range ({np} / {nu} / {nn})",
                            l.position, l.uv, l.normal
                        )
                    });
                }
            }
            p.field(f("faces"));
            for fi in 0..m.faces.len() {
                let face = m.faces.face(fi);
                if face.len() < 3 {
                    p.at(fi, || format!("a face of {} corners", face.len()));
                }
                if let Some(&bad) = face.iter().find(|&&x| x as usize >= nl) {
                    p.at(fi, || format!("layout {bad} does not exist ({nl} layouts)"));
                }
            }
            p.field(f("skinWeights"));
            if !m.skin.is_empty() && m.skin.len() != np {
                p.whole(format!(
                    "{} skinned vertices for {np} positions",
                    m.skin.len()
                ));
            }
            for v in 0..m.skin.len() {
                let (w, js) = m.skin.vertex(v);
                if let Some(&bad) = js.iter().find(|&&x| usize::from(x) >= joints) {
                    p.at(v, || {
                        format!("joint {bad} does not exist ({joints} joints)")
                    });
                }
                if w.iter().any(|x| !x.is_finite()) {
                    p.at(v, || "a weight is not finite".into());
                }
                if js.len() > usize::from(m.max_influences) {
                    p.at(v, || {
                        format!(
                            "{} influences, the mesh declares at most {}",
                            js.len(),
                            m.max_influences
                        )
                    });
                }
            }
            for (ti, t) in m.blend_shape_targets.iter().enumerate() {
                p.field(f(&format!("blendShapeTargets[{ti}]")));
                if t.vertex_indices.len() != t.deltas.len() {
                    p.whole(format!(
                        "{} vertex indices for {} deltas",
                        t.vertex_indices.len(),
                        t.deltas.len()
                    ));
                }
                let ok_channel = match &self.lod_filter {
                    Some(k) => k.blend_shape_channels.contains(&t.channel),
                    None => usize::from(t.channel) < channels,
                };
                if !ok_channel {
                    p.whole(format!("channel {} does not exist", t.channel));
                } else if self.lod_filter.is_none()
                    && !df
                        .mesh_blend_shape_channels
                        .iter()
                        .any(|mc| usize::from(mc.mesh) == mi && mc.channel == t.channel)
                {
                    p.whole(format!(
                        "channel {} is not paired with mesh {mi} in the mesh → channel mapping",
                        t.channel
                    ));
                }
                p.field(f(&format!("blendShapeTargets[{ti}].vertexIndices")));
                p.below(&t.vertex_indices, np, "position");
                p.field(f(&format!("blendShapeTargets[{ti}].deltas")));
                if let Some(i) = t
                    .deltas
                    .iter()
                    .position(|d| !d.iter().all(|x| x.is_finite()))
                {
                    p.at(i, || "not finite".into());
                }
            }
        }
    }
}

/// Outputs of a LOD-unfiltered load index `count` elements; after a LOD-filtered load they keep
/// the file's numbering and must name a kept element.
fn outputs(p: &mut Problems<'_>, v: &[u16], count: usize, kept: Option<&[u16]>, what: &str) {
    match kept {
        None => p.below(v, count, what),
        Some(k) => {
            for (i, &x) in v.iter().enumerate() {
                if !k.contains(&x) {
                    p.at(i, || {
                        format!("{what} {x} (file numbering) is not kept by the LOD selection")
                    });
                }
            }
        }
    }
}
