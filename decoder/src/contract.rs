//! The decoder contract (docs/decoders.md): which inputs and outputs an appearance decoder may
//! declare, their element types and shapes, checked against the model's own declarations before
//! anything runs. Pure: [`Contract::check`] reads [`Port`]s, so it is tested without ONNX Runtime.
//!
//! Inputs, by name (at least one of them; nothing else):
//!
//! | name | shape | meaning |
//! |---|---|---|
//! | `features` | `(N, F)` | per-gaussian features (a per-vertex table interpolated to each gaussian) |
//! | `controls` | `(1, C)` | the rig's controls, in the bundle's own control space |
//! | `view_dir` | `(N, 3)` | unit direction camera → gaussian, in the branch's frame |
//!
//! Outputs, by name (`rgb` and `opacity` always; nothing else):
//!
//! | name | shape | meaning |
//! |---|---|---|
//! | `rgb` | `(N, 3)` | display (sRGB-encoded) colour, 0–1 |
//! | `opacity` | `(N, 1)` | opacity, 0–1 |
//! | `offset` | `(N, 3)` | centre offset in the texel frame `[t b n]`, units of the triangle scale `k` |
//! | `log_scale` | `(N, 3)` | added to the gaussian's log standard deviations (units of `k`) |
//! | `rotation` | `(N, 4)` | unit quaternion `(w, x, y, z)` in the texel frame, applied after the gaussian's own |
//!
//! Element types: f32, or f16 (an fp16 sibling with half-precision inputs and outputs); converted
//! at the boundary. `N` is the gaussian count: a symbolic dimension (any count) or a fixed one (the
//! branch must have exactly that many gaussians); every `N` of one model must agree.

/// One input or output as a model declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub elem: Elem,
    /// Its dimensions; `None` for a value that is not a tensor (a sequence, a map).
    pub dims: Option<Vec<Dim>>,
}

/// A tensor's element type as the contract sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elem {
    /// 32-bit float.
    F32,
    /// 16-bit float.
    F16,
    /// Anything else, by ONNX Runtime's name for it.
    Other(String),
}

/// One dimension as a model declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Fixed(u64),
    /// A dynamic size with a symbol (`"N"`), or none (`""`).
    Dynamic(String),
}

/// The three inputs the contract knows.
pub const INPUTS: [&str; 3] = ["features", "controls", "view_dir"];
/// The five outputs the contract knows, required ones first.
pub const OUTPUTS: [&str; 5] = ["rgb", "opacity", "offset", "log_scale", "rotation"];

/// Which optional geometry outputs a decoder writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GeometryOutputs {
    /// `offset (N,3)`.
    pub offset: bool,
    /// `log_scale (N,3)`.
    pub log_scale: bool,
    /// `rotation (N,4)`.
    pub rotation: bool,
}

impl GeometryOutputs {
    /// Any of the three.
    pub fn any(self) -> bool {
        self.offset || self.log_scale || self.rotation
    }
}

/// What a checked model takes and gives.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Contract {
    /// `features`' width F, when the model takes features.
    pub features: Option<usize>,
    /// `controls`' width C, when the model takes the rig's controls.
    pub controls: Option<usize>,
    /// The model takes `view_dir` (it is view-dependent: re-decoded when the camera moves).
    pub view_dir: bool,
    /// The gaussian count the model is fixed to, when it is.
    pub fixed_n: Option<usize>,
    /// The optional outputs it writes.
    pub geometry: GeometryOutputs,
    /// Inputs and outputs in half precision, by name.
    pub half: Vec<String>,
}

impl Contract {
    /// Check the model's declared `inputs` and `outputs` against the contract (module doc).
    ///
    /// # Errors
    /// Every problem found, each naming the input or output (`Vec` of messages; never empty on
    /// `Err`).
    pub fn check(inputs: &[Port], outputs: &[Port]) -> Result<Contract, Vec<String>> {
        let mut problems = Vec::new();
        let mut n: Option<(Dim, String)> = None;
        let mut fixed_n = None;
        let mut half = Vec::new();
        // A per-gaussian leading dimension: every one of the model must agree.
        let mut per_gaussian = |port: &Port, d: &Dim, problems: &mut Vec<String>| {
            match (&n, d) {
                (None, _) => n = Some((d.clone(), port.name.clone())),
                (Some((Dim::Fixed(a), _)), Dim::Fixed(b)) if a == b => {}
                (Some((Dim::Dynamic(a), _)), Dim::Dynamic(b))
                    if a == b || a.is_empty() || b.is_empty() => {}
                (Some((prev, by)), _) => problems.push(format!(
                    "`{}` has {} gaussians where `{by}` has {} (every N of a decoder must agree)",
                    port.name,
                    dim_text(d),
                    dim_text(prev)
                )),
            }
            if let Dim::Fixed(v) = d {
                fixed_n = Some(*v as usize);
            }
        };
        let (mut features, mut controls, mut view_dir) = (None, None, false);
        for p in inputs {
            let kind = match p.name.as_str() {
                "features" => 0,
                "controls" => 1,
                "view_dir" => 2,
                other => {
                    problems.push(format!(
                        "input `{other}` is not one the contract feeds (it knows {})",
                        INPUTS.join(", ")
                    ));
                    continue;
                }
            };
            let Some(dims) = elem_and_dims(p, "input", &mut half, &mut problems) else {
                continue;
            };
            if dims.len() != 2 {
                problems.push(format!(
                    "input `{}` has rank {} (the contract's inputs are 2-D: {})",
                    p.name,
                    dims.len(),
                    ["(N, F)", "(1, C)", "(N, 3)"][kind]
                ));
                continue;
            }
            match kind {
                0 => {
                    per_gaussian(p, &dims[0], &mut problems);
                    match &dims[1] {
                        Dim::Fixed(f) if *f > 0 => features = Some(*f as usize),
                        d => problems.push(format!(
                            "input `features` has a {} width (it must be fixed: F features per gaussian)",
                            dim_text(d)
                        )),
                    }
                }
                1 => {
                    match &dims[0] {
                        Dim::Fixed(1) | Dim::Dynamic(_) => {}
                        d => problems.push(format!(
                            "input `controls` has {} rows (one control vector per run: (1, C))",
                            dim_text(d)
                        )),
                    }
                    match &dims[1] {
                        Dim::Fixed(c) if *c > 0 => controls = Some(*c as usize),
                        d => problems.push(format!(
                            "input `controls` has a {} width (it must be fixed: the rig's C controls)",
                            dim_text(d)
                        )),
                    }
                }
                _ => {
                    per_gaussian(p, &dims[0], &mut problems);
                    if dims[1] != Dim::Fixed(3) {
                        problems.push(format!(
                            "input `view_dir` has width {} (it is (N, 3): a unit direction per gaussian)",
                            dim_text(&dims[1])
                        ));
                    }
                    view_dir = true;
                }
            }
        }
        if inputs.is_empty() {
            problems.push(format!(
                "the model takes no input (the contract feeds {})",
                INPUTS.join(", ")
            ));
        }
        let mut geometry = GeometryOutputs::default();
        let mut seen = [false; 5];
        for p in outputs {
            let Some(k) = OUTPUTS.iter().position(|o| *o == p.name) else {
                problems.push(format!(
                    "output `{}` is not one the contract reads (it knows {})",
                    p.name,
                    OUTPUTS.join(", ")
                ));
                continue;
            };
            seen[k] = true;
            let Some(dims) = elem_and_dims(p, "output", &mut half, &mut problems) else {
                continue;
            };
            let width = [3, 1, 3, 3, 4][k];
            if dims.len() != 2 || dims[1] != Dim::Fixed(width) {
                problems.push(format!(
                    "output `{}` is {} (the contract reads (N, {width}))",
                    p.name,
                    shape_text(dims)
                ));
                continue;
            }
            per_gaussian(p, &dims[0], &mut problems);
            match k {
                2 => geometry.offset = true,
                3 => geometry.log_scale = true,
                4 => geometry.rotation = true,
                _ => {}
            }
        }
        for (k, name) in OUTPUTS.iter().enumerate().take(2) {
            if !seen[k] {
                problems.push(format!(
                    "no output `{name}` (the contract needs rgb and opacity)"
                ));
            }
        }
        // Outputs are per gaussian: a model with neither features nor view_dir has no N to give.
        if features.is_none()
            && !view_dir
            && inputs.iter().any(|p| p.name == "controls")
            && let Some((Dim::Dynamic(_), _)) = &n
        {
            problems.push(
                    "the model takes only `controls`, so its outputs' N must be fixed (the gaussians it colours)".into(),
                );
        }
        if problems.is_empty() {
            Ok(Contract {
                features,
                controls,
                view_dir,
                fixed_n,
                geometry,
                half,
            })
        } else {
            Err(problems)
        }
    }
}

fn elem_and_dims<'p>(
    p: &'p Port,
    what: &str,
    half: &mut Vec<String>,
    problems: &mut Vec<String>,
) -> Option<&'p [Dim]> {
    match &p.elem {
        Elem::F32 => {}
        Elem::F16 => half.push(p.name.clone()),
        Elem::Other(t) => {
            problems.push(format!(
                "{what} `{}` holds {t} (the contract's tensors are float32 or float16)",
                p.name
            ));
            return None;
        }
    }
    match &p.dims {
        Some(d) => Some(d),
        None => {
            problems.push(format!("{what} `{}` is not a tensor", p.name));
            None
        }
    }
}

fn dim_text(d: &Dim) -> String {
    match d {
        Dim::Fixed(v) => v.to_string(),
        Dim::Dynamic(s) if s.is_empty() => "dynamic".into(),
        Dim::Dynamic(s) => format!("dynamic ({s})"),
    }
}

fn shape_text(d: &[Dim]) -> String {
    format!(
        "({})",
        d.iter()
            .map(|d| match d {
                Dim::Fixed(v) => v.to_string(),
                Dim::Dynamic(s) if s.is_empty() => "?".into(),
                Dim::Dynamic(s) => s.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}
