//! Hair (issue 27, seed 003 "Hair"): grooms — guide strands grown on a scalp ([`groom`]) or read
//! from TressFX files ([`tfx`]) — and the child strands interpolated from them. Simulation and
//! the strands-to-splats kernel build on these.

pub mod groom;
pub mod sim;
pub mod splats;
pub mod tfx;

pub use groom::{Groom, GroomDef, GroomReport};
pub use sim::{HairCapsule, HairSim, HairSimOptions, HairSimReport};
pub use splats::{segment_gaussian, strand_splats};
pub use tfx::{TfxStrands, read_tfx};
