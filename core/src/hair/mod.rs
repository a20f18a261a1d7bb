//! Hair (issue 27, seed 003 "Hair"): grooms — guide strands grown on a scalp ([`groom`]) or read
//! from TressFX files ([`tfx`]) — and the child strands interpolated from them. Simulation and
//! the strands-to-splats kernel build on these. docs/hair.md has the guide.
//!
//! ```no_run
//! use mien_core::hair::{GroomDef, HairSim, HairSimOptions, strand_splats};
//! let text = std::fs::read_to_string("docs/grooms/builtin_body.groom.json")?;
//! let groom = GroomDef::from_json(&text, "groom")?.build()?;
//! let mut sim = HairSim::new(&groom.guides, groom.segments, HairSimOptions::default())?;
//! let head = glam::DMat4::from_translation(glam::DVec3::new(0.0, 1.46, 0.0));
//! sim.update(1.0 / 60.0, head, &[])?;
//! let guides: Vec<[f32; 3]> = sim.points().iter().map(|p| p.as_vec3().to_array()).collect();
//! let mut sink =
//!     mien_core::sink::SplatBuffers::new((groom.child_count() * groom.segments) as u32);
//! strand_splats(&groom, &guides, &mut sink, 0)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod groom;
pub mod sdf;
pub mod sim;
pub mod splats;
pub mod tfx;

pub use groom::{Groom, GroomDef, GroomReport, HairColourDef, TfxGroomOptions};
pub use sdf::MeshSdf;
pub use sim::{HairCapsule, HairSim, HairSimDef, HairSimOptions, HairSimReport, MAX_ACCEL};
pub use splats::{segment_gaussian, splat_bounds, strand_splats};
pub use tfx::{TfxStrands, read_tfx};
