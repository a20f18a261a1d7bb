//! Decoded appearance (seed 000's appearance pass): a bundle's decoders turn each instance's
//! controls and the view into its branches' gaussians' colour, opacity and, optionally, offsets,
//! scales and rotations (docs/decoders.md). A decode runs only when its inputs changed — the
//! controls it takes, or the camera by more than [`CAMERA_EPSILON_M`] (seed 000
//! `Character.update(dt, camera)`); otherwise a frame decodes nothing and allocates nothing.
//!
//! Inputs per gaussian: `features` are the decoder's per-vertex table interpolated at the
//! gaussian's barycentrics; `view_dir = normalize(c − eye)` with `c` the gaussian's rest-pose
//! centre and `eye` the camera position, both in the character's space (the space the splats are
//! written in, which is each branch's frame). `controls` are the rig's (head_ext for a linear
//! head).
//!
//! Outputs become the instance's own bound records ([`mien_core::lift::BoundGaussian`]): colour
//! and opacity packed as the texture's were; `offset (t, b, n)` in units of the rest triangle scale
//! `k` — the tangent part becomes a barycentric shift solved on the rest triangle (exact for the
//! rigid motions and uniform scalings the frame follows), the normal part adds to the normal
//! offset; `log_scale` adds to the log standard deviations; `rotation` is composed after the
//! gaussian's own (`q_dec ⊗ q`). The records are rebuilt on the host and written to the backend
//! (on a GPU, a host → device copy of the branch's records: ONNX Runtime's outputs land in host
//! memory, the seed's own fallback).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mien_core::lift::{BoundGaussian, PackedBound, triangle_frame};
use mien_core::sink::SlotRange;
use mien_decoder::{DecodeInputs, Decoded};

use crate::bundle::Bundle;
use crate::error::{Error, Result};

/// Largest decoded offset component, in units of the triangle scale `k` (a gaussian a hundred
/// triangles off its surface is a broken decoder, not an appearance).
pub const MAX_DECODED_OFFSET: f32 = 100.0;
/// Largest decoded log-scale delta (e²⁰ ≈ 5·10⁸ times the gaussian's size).
pub const MAX_DECODED_LOG_SCALE: f32 = 20.0;

/// Camera travel that re-decodes a view-dependent decoder, metres (seed 000: 2 mm).
pub const CAMERA_EPSILON_M: f64 = 0.002;

/// A perspective camera in the character's space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position, metres.
    pub position: [f64; 3],
    /// Unit view direction.
    pub forward: [f64; 3],
    /// Vertical field of view, radians, in (0, π).
    pub fov_y: f64,
}

impl Camera {
    /// A camera at `eye` looking at `target`, vertical field of view `fov_y` radians.
    ///
    /// # Errors
    /// [`Error::Invalid`] for non-finite values, `eye == target`, or `fov_y` outside (0, π).
    pub fn look_at(eye: [f64; 3], target: [f64; 3], fov_y: f64) -> Result<Camera> {
        let d = [0, 1, 2].map(|k| target[k] - eye[k]);
        let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if l == 0.0 {
            return Err(Error::invalid(
                "camera",
                format!("the eye {eye:?} and the target are the same point: no direction to look"),
            ));
        }
        let c = Camera {
            position: eye,
            forward: d.map(|x| x / l),
            fov_y,
        };
        c.check()?;
        Ok(c)
    }

    /// # Errors
    /// As [`Camera::look_at`].
    pub fn check(&self) -> Result<()> {
        let fin = self
            .position
            .iter()
            .chain(&self.forward)
            .all(|x| x.is_finite());
        let n = self.forward.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !fin || (n - 1.0).abs() > 1e-6 {
            return Err(Error::invalid(
                "camera",
                "position and a unit forward direction, all finite",
            ));
        }
        if !(self.fov_y > 0.0 && self.fov_y < std::f64::consts::PI) {
            return Err(Error::invalid(
                "camera fov_y",
                format!("{} rad is not in (0, π)", self.fov_y),
            ));
        }
        Ok(())
    }

    /// The camera `mien animate` uses when none is given: in front of the points `rest` `(V,3)`
    /// (+Z, the glTF front) at three times their height, looking at the centre of their box,
    /// vertical field of view `fov_y` radians.
    ///
    /// # Errors
    /// As [`Camera::look_at`] (no points gives a camera at +3 cm looking at the origin).
    ///
    /// ```
    /// use mien_runtime::Camera;
    /// // A box 0.25 m tall centred at (0, 0.125, 0): the camera 0.75 m in front of its centre.
    /// let c = Camera::in_front_of(&[[0.0, 0.0, 0.0], [0.0, 0.25, 0.0]], 0.6).unwrap();
    /// assert_eq!(c.position, [0.0, 0.125, 0.75]);
    /// assert_eq!(c.forward, [0.0, 0.0, -1.0]);
    /// ```
    pub fn in_front_of(rest: &[[f32; 3]], fov_y: f64) -> Result<Camera> {
        let (centre, height) = framing(rest);
        Camera::look_at(
            [centre[0], centre[1], centre[2] + 3.0 * height],
            centre,
            fov_y,
        )
    }

    /// A camera at `eye` looking at the centre of the box of the points `rest` `(V,3)` (what
    /// `mien animate --camera X,Y,Z` sets).
    ///
    /// # Errors
    /// As [`Camera::look_at`]; `eye` at that centre.
    pub fn toward(eye: [f64; 3], rest: &[[f32; 3]], fov_y: f64) -> Result<Camera> {
        Camera::look_at(eye, framing(rest).0, fov_y)
    }

    /// This camera seen through the affine `m` (its position as a point, its forward as a
    /// direction, renormalised).
    pub fn in_frame(&self, m: &glam::DMat4) -> Camera {
        let p = m.transform_point3(glam::DVec3::from(self.position));
        let f = m
            .transform_vector3(glam::DVec3::from(self.forward))
            .normalize_or(glam::DVec3::NEG_Z);
        Camera {
            position: p.to_array(),
            forward: f.to_array(),
            fov_y: self.fov_y,
        }
    }

    /// Whether this camera has moved from `last` enough to re-decode (seed 000's epsilon: 2 mm of
    /// travel, plus a turn/fov term — the turn angle and the change of half the field of view,
    /// each times the distance to `subject`, the arc they sweep there, together over 2 mm).
    pub fn moved_from(&self, last: &Camera, subject: [f64; 3]) -> bool {
        let dp = (0..3)
            .map(|k| (self.position[k] - last.position[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        let dist = (0..3)
            .map(|k| (subject[k] - self.position[k]).powi(2))
            .sum::<f64>()
            .sqrt();
        let cos = (0..3)
            .map(|k| self.forward[k] * last.forward[k])
            .sum::<f64>()
            .clamp(-1.0, 1.0);
        let turn = cos.acos();
        let zoom = 0.5 * (self.fov_y - last.fov_y).abs();
        dp > CAMERA_EPSILON_M || dist * (turn + zoom) > CAMERA_EPSILON_M
    }
}

/// The centre of the box of `points` and its height (at least 1 cm); the origin for none.
fn framing(points: &[[f32; 3]]) -> ([f64; 3], f64) {
    if points.is_empty() {
        return ([0.0; 3], 0.01);
    }
    let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    (
        [0, 1, 2].map(|k| 0.5 * (lo[k] + hi[k])),
        (hi[1] - lo[1]).max(0.01),
    )
}

/// What the decoders did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AppearanceStats {
    /// Decoder runs (one decoder, one branch, one instance).
    pub decodes: u64,
    /// Frames × instances × branches whose decoders had nothing to do.
    pub skipped: u64,
    /// Colour and opacity values outside 0–1 clamped (the contract's one clamp).
    pub clamped: u64,
    /// Tangent offsets dropped on degenerate rest triangles.
    pub degenerate_offsets: u64,
    /// Wall time in decoder runs.
    pub decode_time: Duration,
    /// Wall time rebuilding and writing records.
    pub record_time: Duration,
    /// Record bytes written to the backend.
    pub record_bytes: u64,
}

/// Per gaussian, from the rest pose.
#[derive(Clone, Copy, Debug)]
struct Rest {
    centre: [f32; 3],
    /// `k·A⁻¹` mapping a tangent offset `(o_t, o_b)` to `(Δβ1, Δβ2)`; `None` when degenerate.
    to_bary: Option<[f32; 4]>,
}

/// One branch's decoded state for one instance.
#[derive(Debug, Default)]
struct BranchState {
    /// Each decoder's last outputs.
    out: Vec<Decoded>,
    /// Decoded at least once.
    done: bool,
    camera: Option<Camera>,
    controls: Vec<f32>,
}

/// The appearance of every instance of a runtime whose lift is a bundle with decoders.
#[derive(Debug)]
pub(crate) struct Appearance {
    bundle: Arc<Bundle>,
    base: Arc<Vec<BoundGaussian>>,
    packed: Vec<PackedBound>,
    ranges: Vec<SlotRange>,
    rest: Vec<Rest>,
    /// Per branch, per decoder: features interpolated per gaussian `(N_b, F)`.
    features: Vec<Vec<Vec<f32>>>,
    subject: [f64; 3],
    /// Per branch: the joint that carries it (a linear head's dominant skin joint over its
    /// vertices) and that joint's rest world inverse — the branch's frame moves with it.
    frames: Vec<Option<(usize, glam::DMat4)>>,
    /// `[instance][branch]`.
    state: Vec<Vec<BranchState>>,
    view: Vec<[f32; 3]>,
    records: Vec<PackedBound>,
    pub(crate) stats: AppearanceStats,
}

impl Appearance {
    /// The state for `instances` instances of `bundle`, lifted as `base` `(G,)` over `triangles`
    /// with branch `ranges`, on the rest positions `rest_pos` `(V,3)` and normals `rest_nrm`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        bundle: Arc<Bundle>,
        base: Arc<Vec<BoundGaussian>>,
        triangles: &[[u32; 3]],
        ranges: Vec<SlotRange>,
        rest_pos: &[[f32; 3]],
        rest_nrm: &[[f32; 3]],
        frames: Vec<Option<(usize, glam::DMat4)>>,
        instances: usize,
    ) -> Result<Appearance> {
        let packed = base
            .iter()
            .map(BoundGaussian::pack)
            .collect::<mien_core::Result<Vec<_>>>()?;
        let mut rest = Vec::with_capacity(base.len());
        for g in base.iter() {
            let t = triangles[g.triangle as usize];
            let p = t.map(|v| rest_pos[v as usize]);
            let n = t.map(|v| rest_nrm[v as usize]);
            let f = triangle_frame(p, n);
            let [tt, bb, nn] = f.axes;
            let b0 = 1.0 - g.bary[0] - g.bary[1];
            let off = g.offset * f.k;
            let centre = [0, 1, 2]
                .map(|i| b0 * p[0][i] + g.bary[0] * p[1][i] + g.bary[1] * p[2][i] + off * nn[i]);
            let e1 = [0, 1, 2].map(|i| p[1][i] - p[0][i]);
            let e2 = [0, 1, 2].map(|i| p[2][i] - p[0][i]);
            let d = |a: [f32; 3], b: [f32; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
            let (a, b, c, dd) = (d(e1, tt), d(e2, tt), d(e1, bb), d(e2, bb));
            let det = a * dd - b * c;
            let to_bary = (det.abs() > 1e-12 * f.k * f.k && !f.fallback).then(|| {
                let s = f.k / det;
                [dd * s, -b * s, -c * s, a * s]
            });
            rest.push(Rest { centre, to_bary });
        }
        let mut features = Vec::new();
        for (br, r) in bundle.branches.iter().zip(&ranges) {
            let mut per = Vec::new();
            for d in &br.decoders {
                let Some((tab, w)) = d.features.as_ref().zip(d.decoder.contract().features) else {
                    per.push(Vec::new());
                    continue;
                };
                let mut f = Vec::with_capacity(r.count as usize * w);
                for g in &base[r.offset as usize..(r.offset + r.count) as usize] {
                    let t = triangles[g.triangle as usize];
                    let bw = [1.0 - g.bary[0] - g.bary[1], g.bary[0], g.bary[1]];
                    for k in 0..w {
                        f.push(
                            (0..3)
                                .map(|c| bw[c] * tab[(t[c] - br.vertices[0]) as usize * w + k])
                                .sum(),
                        );
                    }
                }
                per.push(f);
            }
            features.push(per);
        }
        let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
        for r in &rest {
            for k in 0..3 {
                lo[k] = lo[k].min(f64::from(r.centre[k]));
                hi[k] = hi[k].max(f64::from(r.centre[k]));
            }
        }
        let subject = [0, 1, 2].map(|k| {
            if lo[k] <= hi[k] {
                0.5 * (lo[k] + hi[k])
            } else {
                0.0
            }
        });
        let state = (0..instances)
            .map(|_| {
                bundle
                    .branches
                    .iter()
                    .map(|b| BranchState {
                        out: vec![Decoded::default(); b.decoders.len()],
                        ..Default::default()
                    })
                    .collect()
            })
            .collect();
        Ok(Appearance {
            bundle,
            base,
            packed,
            ranges,
            rest,
            features,
            subject,
            frames,
            state,
            view: Vec::new(),
            records: Vec::new(),
            stats: AppearanceStats::default(),
        })
    }

    /// Whether some decoder needs a camera.
    pub(crate) fn view_dependent(&self) -> bool {
        self.bundle.view_dependent()
    }

    /// Decode what changed for instance `i` (controls `(C,)`, the camera in the character's space;
    /// `joints` the instance's joint worlds, `placement` character → world) and hand the rebuilt
    /// records to `write(first_slot, records)`.
    pub(crate) fn update(
        &mut self,
        i: usize,
        controls: &[f32],
        camera: Option<&Camera>,
        joints: &[glam::Mat4],
        placement: glam::DMat4,
        write: &mut dyn FnMut(u32, &[PackedBound]) -> Result<()>,
    ) -> Result<()> {
        let bundle = Arc::clone(&self.bundle);
        for (bi, br) in bundle.branches.iter().enumerate() {
            if br.decoders.is_empty() {
                continue;
            }
            let st = &self.state[i][bi];
            let takes_controls = br
                .decoders
                .iter()
                .any(|d| d.decoder.contract().controls.is_some());
            let takes_view = br.decoders.iter().any(|d| d.decoder.contract().view_dir);
            let camera = match (takes_view, camera) {
                (true, None) => {
                    return Err(Error::invalid(
                        format!("{}: branch `{}`", bundle.file, br.name),
                        "its decoder is view-dependent and the runtime has no camera (Runtime::set_camera)",
                    ));
                }
                // The camera in the branch's frame: what the branch's rest centres are in.
                (_, c) => c.map(|c| {
                    let m = match self.frames[bi] {
                        Some((j, rest_inv)) if j < joints.len() => {
                            placement * joints[j].as_dmat4() * rest_inv
                        }
                        _ => placement,
                    };
                    c.in_frame(&m.inverse())
                }),
            };
            let due = !st.done
                || (takes_controls && st.controls.as_slice() != controls)
                || (takes_view
                    && match (&st.camera, &camera) {
                        (Some(last), Some(c)) => c.moved_from(last, self.subject),
                        _ => true,
                    });
            if !due {
                self.stats.skipped += 1;
                continue;
            }
            let r = self.ranges[bi];
            let n = r.count as usize;
            if takes_view {
                let eye = camera.map_or([0.0; 3], |c| c.position);
                self.view.clear();
                self.view.extend(
                    self.rest[r.offset as usize..r.offset as usize + n]
                        .iter()
                        .map(|g| {
                            let d = [0, 1, 2].map(|k| f64::from(g.centre[k]) - eye[k]);
                            let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                            if l > 0.0 {
                                d.map(|x| (x / l) as f32)
                            } else {
                                [0.0, 0.0, 1.0]
                            }
                        }),
                );
            }
            let t = Instant::now();
            for (di, d) in br.decoders.iter().enumerate() {
                let c = d.decoder.contract();
                let inputs = DecodeInputs {
                    n,
                    features: c.features.map(|_| self.features[bi][di].as_slice()),
                    controls: c.controls.map(|_| controls),
                    view_dir: c.view_dir.then_some(self.view.as_slice()),
                };
                let out = &mut self.state[i][bi].out[di];
                d.decoder.decode(&inputs, out).map_err(|e| {
                    Error::invalid(
                        format!("{}: branch `{}`", bundle.file, br.name),
                        e.to_string(),
                    )
                })?;
                self.stats.decodes += 1;
                self.stats.clamped += out.clamped;
            }
            self.stats.decode_time += t.elapsed();
            let t = Instant::now();
            self.rebuild(i, bi)?;
            write(r.offset, &self.records)?;
            self.stats.record_bytes += (self.records.len() * 48) as u64;
            self.stats.record_time += t.elapsed();
            let st = &mut self.state[i][bi];
            st.done = true;
            st.camera = camera;
            st.controls.clear();
            st.controls.extend_from_slice(controls);
        }
        Ok(())
    }

    /// Records of branch `bi` for instance `i` from the base and every decoder's last outputs.
    fn rebuild(&mut self, i: usize, bi: usize) -> Result<()> {
        let r = self.ranges[bi];
        let (o, n) = (r.offset as usize, r.count as usize);
        let outs = &self.state[i][bi].out;
        let geometry = outs
            .iter()
            .any(|d| !d.offset.is_empty() || !d.log_scale.is_empty() || !d.rotation.is_empty());
        self.records.clear();
        self.records.extend_from_slice(&self.packed[o..o + n]);
        let pick = |f: &dyn Fn(&Decoded) -> bool| outs.iter().find(|d| f(d));
        let rgb = pick(&|d| !d.rgb.is_empty());
        let op = pick(&|d| !d.opacity.is_empty());
        let off = pick(&|d| !d.offset.is_empty());
        let ls = pick(&|d| !d.log_scale.is_empty());
        let rot = pick(&|d| !d.rotation.is_empty());
        for j in 0..n {
            let mut g = self.base[o + j];
            let old = g.color.to_le_bytes();
            let c = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
            let rgbv = rgb.map_or([old[0], old[1], old[2]], |d| d.rgb[j].map(c));
            let a = op.map_or(old[3], |d| c(d.opacity[j]));
            g.color = u32::from_le_bytes([rgbv[0], rgbv[1], rgbv[2], a]);
            if !geometry {
                self.records[j].c[2] = f32::from_bits(g.color);
                continue;
            }
            let bad = |what: &str, v: &[f32], limit: f32| {
                Error::invalid(
                    format!(
                        "{}: branch `{}` output `{what}` row {j}",
                        self.bundle.file, self.bundle.branches[bi].name
                    ),
                    format!("{v:?} is beyond ±{limit} (docs/decoders.md)"),
                )
            };
            if let Some(d) = off {
                if d.offset[j].iter().any(|x| x.abs() > MAX_DECODED_OFFSET) {
                    return Err(bad("offset", &d.offset[j], MAX_DECODED_OFFSET));
                }
                let [ot, ob, on] = d.offset[j];
                match self.rest[o + j].to_bary {
                    Some(m) => {
                        g.bary[0] += m[0] * ot + m[1] * ob;
                        g.bary[1] += m[2] * ot + m[3] * ob;
                    }
                    None if ot != 0.0 || ob != 0.0 => self.stats.degenerate_offsets += 1,
                    None => {}
                }
                g.offset += on;
            }
            if let Some(d) = ls {
                if d.log_scale[j]
                    .iter()
                    .any(|x| x.abs() > MAX_DECODED_LOG_SCALE)
                {
                    return Err(bad("log_scale", &d.log_scale[j], MAX_DECODED_LOG_SCALE));
                }
                for k in 0..3 {
                    g.log_scale[k] += d.log_scale[j][k];
                }
            }
            if let Some(d) = rot {
                let q = d.rotation[j];
                let l = q.iter().map(|x| x * x).sum::<f32>().sqrt();
                // Also refuses a NaN length (decoders' outputs are finite, but never assume it).
                if l.is_nan() || l <= 1e-12 {
                    return Err(Error::invalid(
                        format!(
                            "{}: branch `{}` output `rotation` row {j}",
                            self.bundle.file, self.bundle.branches[bi].name
                        ),
                        "a zero quaternion",
                    ));
                }
                g.rotation = qmul(q.map(|x| x / l), g.rotation);
            }
            self.records[j] = g.pack().map_err(|e| {
                Error::invalid(
                    format!(
                        "{}: branch `{}` gaussian {j}",
                        self.bundle.file, self.bundle.branches[bi].name
                    ),
                    e.to_string(),
                )
            })?;
        }
        Ok(())
    }
}

/// The joint carrying rig vertices `[first, end)` of a linear head (the largest summed skin
/// weight) and its rest world inverse.
pub(crate) fn dominant_joint(
    pack: &mien_core::gnm::GnmPack,
    [first, end]: [u32; 2],
) -> Option<(usize, glam::DMat4)> {
    let mut sum = vec![0f64; pack.rest_world.len()];
    for v in first as usize..(end as usize).min(pack.skin_index.len()) {
        for k in 0..4 {
            let j = pack.skin_index[v][k] as usize;
            if j < sum.len() {
                sum[j] += f64::from(pack.skin_weight[v][k]);
            }
        }
    }
    let (j, w) = sum.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
    if *w <= 0.0 {
        return None;
    }
    let rest = mien_core::gnm::forward::from_row_major(&pack.rest_world[j]).as_dmat4();
    Some((j, rest.inverse()))
}

/// Hamilton product `a ⊗ b`, `(w, x, y, z)`.
fn qmul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// A bundle lift with decoders gets its appearance state (after the lift is attached on the rest
/// pose `rest_pos` `(V,3)`), for `n` instances.
pub(crate) fn attach(
    rt: &mut crate::Runtime,
    options: &crate::RuntimeOptions,
    rest_pos: &[[f32; 3]],
    n: u32,
) -> Result<()> {
    let (
        Some(info),
        Some(crate::LiftOptions {
            kind: crate::LiftKind::Bundle(b),
            ..
        }),
    ) = (&rt.lift, &options.lift)
    else {
        return Ok(());
    };
    let (Some(base), Some(setup), true) = (&info.base, &info.setup, b.has_decoders()) else {
        return Ok(());
    };
    let asset = &rt.asset;
    let normals = mien_core::lift::color::vertex_normals(rest_pos, asset.triangles());
    let frames = match asset.model() {
        crate::asset::Model::Head { pack, .. } => b
            .branches
            .iter()
            .map(|br| dominant_joint(pack, br.vertices))
            .collect(),
        crate::asset::Model::Rig(_) => vec![None; b.branches.len()],
    };
    // A decoder fixed to a gaussian count must meet a branch of exactly that many.
    for (bi, (br, (_, r))) in b.branches.iter().zip(&info.branches).enumerate() {
        for (di, d) in br.decoders.iter().enumerate() {
            if let Some(f) = d.decoder.contract().fixed_n
                && f != r.count as usize
            {
                return Err(Error::invalid(
                    format!("{}: /branches/{bi}/decoders/{di}", b.file),
                    format!(
                        "`{}` is fixed to {f} gaussians but branch `{}`'s lift made {}",
                        d.name, br.name, r.count
                    ),
                ));
            }
        }
    }
    let app = Appearance::new(
        Arc::clone(b),
        Arc::clone(base),
        &setup.triangles,
        info.branches.iter().map(|(_, r)| *r).collect(),
        rest_pos,
        &normals,
        frames,
        n as usize,
    )?;
    rt.appearance = Some(app);
    Ok(())
}

/// The runtime's bundle surface: the camera, the decode pass, what the decoders did, the memory
/// per branch.
impl crate::Runtime {
    /// Run the bundle's decoders where their inputs changed, writing each instance's records.
    pub(crate) fn decode_appearance(&mut self, t: f64) -> Result<()> {
        let Some(app) = self.appearance.as_mut() else {
            return Ok(());
        };
        let engine = &mut self.engine;
        for i in 0..self.instances.len() {
            let (controls, joints): (&[f32], &[glam::Mat4]) = match self.asset.model() {
                crate::asset::Model::Head { .. } if !self.anchored.is_empty() => {
                    (&self.head_ext[i], &self.anchored[i])
                }
                crate::asset::Model::Head { .. } => (&self.head_ext[i], &self.joints[i]),
                crate::asset::Model::Rig(_) => (self.instances[i].raw_controls(), &[]),
            };
            let placement = self.instances[i].placement();
            let frame = self.frame;
            app.update(
                i,
                controls,
                self.camera.as_ref(),
                joints,
                placement,
                &mut |first, recs| engine.set_bound_records(i, first, recs),
            )
            .map_err(|e| match e {
                Error::Invalid { what, reason } => Error::invalid(
                    format!(
                        "{what} (instance {i}, frame {frame}, media time {} s)",
                        crate::text::secs(t)
                    ),
                    reason,
                ),
                other => other,
            })?;
        }
        Ok(())
    }

    /// Set the camera view-dependent decoders see (seed 000 `update(dt, camera)`): from the next
    /// [`Runtime::update`], a branch whose decoder takes the view re-decodes only when the camera
    /// has moved past [`crate::appearance::CAMERA_EPSILON_M`] (or its controls changed).
    ///
    /// # Errors
    /// A camera that is not finite, a forward direction that is not unit, a field of view outside
    /// (0, π).
    pub fn set_camera(&mut self, camera: crate::appearance::Camera) -> Result<()> {
        camera.check()?;
        self.camera = Some(camera);
        Ok(())
    }

    /// The camera last set.
    pub fn camera(&self) -> Option<&crate::appearance::Camera> {
        self.camera.as_ref()
    }

    /// What the bundle's decoders did (`None` without decoders).
    pub fn appearance_stats(&self) -> Option<crate::appearance::AppearanceStats> {
        self.appearance.as_ref().map(|a| a.stats)
    }

    /// Whether a bundle decoder needs a camera ([`Runtime::set_camera`]).
    pub fn needs_camera(&self) -> bool {
        self.appearance.as_ref().is_some_and(|a| a.view_dependent())
    }

    /// Where a bundle character's memory went (seed 000 `memoryReport`): per branch its slots and
    /// GPU bytes over every instance, the resident bundle bytes; `None` without a bundle lift.
    pub fn bundle_memory(&self) -> Option<crate::bundle::BundleMemory> {
        let info = self.lift.as_ref()?;
        let crate::LiftKind::Bundle(b) = &info.kind else {
            return None;
        };
        Some(crate::bundle::BundleMemory::of(
            b,
            &info.branches,
            self.instances.len() as u64,
            !matches!(self.device, crate::Device::Cpu),
        ))
    }
}
