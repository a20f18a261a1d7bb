//! The head_ext control layout of a linear head: named expression regions tiled in order, then four
//! gaze angles; region slices; the reduced view and its per-region expansion.
//!
//! Source: seed 000 (`HeadExtLayout`: regions `left_eye 100, right_eye 100, lower_face 150, tongue 32,
//! pupils 1` → 383 coefficients + 4 gaze angles `[pitch_L, yaw_L, pitch_R, yaw_R]` = 387; the reduced
//! ML view of 64 + 4 = 68 floats, expanded per region by zero-padding; `regionSlices`; the 383/4
//! split; coefficient names `<region>_000`).

use crate::error::{Error, Result};

/// Gaze angles at the end of head_ext: `[pitch_L, yaw_L, pitch_R, yaw_R]`, radians (pitch > 0 looks
/// down, yaw > 0 toward character-left).
pub const GAZE_DIM: usize = 4;

/// The seed's GNM regions (sum 383).
pub const GNM_REGIONS: [(&str, usize); 5] = [
    ("left_eye", 100),
    ("right_eye", 100),
    ("lower_face", 150),
    ("tongue", 32),
    ("pupils", 1),
];

/// The seed's reduced ML view per region (sum 64).
pub const GNM_REDUCED: [(&str, usize); 5] = [
    ("left_eye", 16),
    ("right_eye", 16),
    ("lower_face", 24),
    ("tongue", 7),
    ("pupils", 1),
];

/// A head_ext layout: regions of expression coefficients in order, then the gaze angles.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadExtLayout {
    /// `(name, coefficient count)` in order; names unique, counts > 0.
    pub regions: Vec<(String, usize)>,
    /// The reduced view's per-region counts (each ≤ its region's), if the pack has one.
    #[serde(default)]
    pub reduced: Option<Vec<(String, usize)>>,
}

impl HeadExtLayout {
    /// The seed's 383 + 4 layout with its 64 + 4 reduced view.
    pub fn gnm() -> Self {
        let own = |r: &[(&str, usize)]| r.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect();
        HeadExtLayout {
            regions: own(&GNM_REGIONS),
            reduced: Some(own(&GNM_REDUCED)),
        }
    }

    /// Check names are unique and non-empty, counts positive, the reduced view names the same
    /// regions in order with counts no larger.
    ///
    /// # Errors
    /// [`Error::Format`] naming the region (`file` labels the message).
    pub fn validate(&self, file: &str) -> Result<()> {
        if self.regions.is_empty() {
            return Err(Error::format(file, "headExt.regions", "no regions"));
        }
        for (i, (n, c)) in self.regions.iter().enumerate() {
            if n.is_empty() || *c == 0 {
                return Err(Error::format_at(
                    file,
                    "headExt.regions",
                    i,
                    format!("`{n}` with {c} coefficients"),
                ));
            }
            if self.regions[..i].iter().any(|(m, _)| m == n) {
                return Err(Error::format_at(
                    file,
                    "headExt.regions",
                    i,
                    format!("region `{n}` appears twice"),
                ));
            }
        }
        if let Some(r) = &self.reduced {
            if r.len() != self.regions.len() {
                return Err(Error::format(
                    file,
                    "headExt.reduced",
                    format!("{} regions, the layout has {}", r.len(), self.regions.len()),
                ));
            }
            for (i, ((n, c), (m, full))) in r.iter().zip(&self.regions).enumerate() {
                if n != m || c > full {
                    return Err(Error::format_at(
                        file,
                        "headExt.reduced",
                        i,
                        format!("`{n}` {c} does not fit region `{m}` of {full}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Expression coefficients E (the sum of the regions).
    pub fn expr_dim(&self) -> usize {
        self.regions.iter().map(|r| r.1).sum()
    }

    /// The whole vector: E + 4.
    pub fn dim(&self) -> usize {
        self.expr_dim() + GAZE_DIM
    }

    /// The reduced view's length (its regions + 4), if the layout has one.
    pub fn reduced_dim(&self) -> Option<usize> {
        self.reduced
            .as_ref()
            .map(|r| r.iter().map(|x| x.1).sum::<usize>() + GAZE_DIM)
    }

    /// Each region's half-open coefficient range, tiled from 0 in declaration order (gaze not
    /// included).
    pub fn slices(&self) -> Vec<(String, std::ops::Range<usize>)> {
        let mut at = 0;
        self.regions
            .iter()
            .map(|(n, c)| {
                let r = at..at + c;
                at += c;
                (n.clone(), r)
            })
            .collect()
    }

    /// The range of region `name`.
    pub fn slice(&self, name: &str) -> Option<std::ops::Range<usize>> {
        self.slices()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r)
    }

    /// Names of every head_ext entry: `<region>_000` … per coefficient, then `gaze_pitch_L`,
    /// `gaze_yaw_L`, `gaze_pitch_R`, `gaze_yaw_R`.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.dim());
        for (n, c) in &self.regions {
            out.extend((0..*c).map(|i| format!("{n}_{i:03}")));
        }
        out.extend(["gaze_pitch_L", "gaze_yaw_L", "gaze_pitch_R", "gaze_yaw_R"].map(str::to_owned));
        out
    }

    /// Split a head_ext vector into its expression coefficients `(E,)` and gaze `(4,)`.
    ///
    /// # Errors
    /// [`Error::Mismatch`] when `v` is not `dim()` long.
    pub fn split<'a>(&self, v: &'a [f32]) -> Result<(&'a [f32], &'a [f32; 4])> {
        if v.len() != self.dim() {
            return Err(Error::Mismatch {
                what: "head_ext length".into(),
                expected: self.dim() as u64,
                found: v.len() as u64,
            });
        }
        let (e, g) = v.split_at(self.expr_dim());
        Ok((
            e,
            g.try_into().map_err(|_| Error::Mismatch {
                what: "gaze".into(),
                expected: 4,
                found: g.len() as u64,
            })?,
        ))
    }

    /// Expand a reduced vector (its regions' first coefficients, then gaze) to the full head_ext:
    /// each region's reduced coefficients go to the start of that region, the rest are 0.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the layout has no reduced view; [`Error::Mismatch`] for a wrong length.
    pub fn expand(&self, reduced: &[f32]) -> Result<Vec<f32>> {
        let r = self.reduced.as_ref().ok_or_else(|| Error::Invalid {
            what: "head_ext reduced view".into(),
            reason: "this layout declares none".into(),
        })?;
        let want = r.iter().map(|x| x.1).sum::<usize>() + GAZE_DIM;
        if reduced.len() != want {
            return Err(Error::Mismatch {
                what: "reduced head_ext length".into(),
                expected: want as u64,
                found: reduced.len() as u64,
            });
        }
        let mut out = vec![0.0; self.dim()];
        let (mut src, mut dst) = (0, 0);
        for ((_, c), (_, full)) in r.iter().zip(&self.regions) {
            out[dst..dst + c].copy_from_slice(&reduced[src..src + c]);
            src += c;
            dst += full;
        }
        out[dst..].copy_from_slice(&reduced[src..]);
        Ok(out)
    }
}
