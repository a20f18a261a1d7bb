//! Cloth and hair from the library: the built-in body's character file (its generated 285-vertex
//! cape, its 320-guide, 11,200-strand groom, the ponytail hidden under it) on `n` instances,
//! each walking in its own side wind for two seconds; per instance the cape's largest stretch,
//! how far the hair tips blew downwind, the state hash, and the host time the simulations took;
//! instance 0's last frame written as a splat file every viewer opens.
//!
//! ```sh
//! cargo run --release --example cape_and_hair                       # 4 instances on the CPU
//! cargo run --release --example cape_and_hair -- 16 vulkan out.spz  # 16 on Vulkan, frame kept
//! ```

use std::sync::Arc;

use mien::character::CharacterDef;
use mien::glam::DVec3;
use mien::{Backend, Device, Runtime, RuntimeOptions};

/// What a run measured.
#[derive(Debug)]
pub struct Outcome {
    /// Per instance: the cape's largest relative stretch in the last frame.
    pub max_stretch: Vec<f64>,
    /// Per instance: the mean +X of the hair tips minus that of their roots, metres (downwind).
    pub tips_downwind_m: Vec<f64>,
    /// Per instance: the state hash after the last frame.
    pub hashes: Vec<u64>,
    /// Gaussians instance 0 writes per frame (body, cape, strands).
    pub splats: usize,
    /// Host time of the cloth and hair simulations over the run, seconds.
    pub dynamics_s: f64,
}

/// `n` built-in bodies on `backend` for `frames` frames at 30 fps; instance `k` walks at 1 m/s
/// in a `2 + k` m/s² side wind (+X). Writes instance 0's last frame to `keep` when given.
///
/// # Errors
/// A device that cannot be opened; any runtime error.
pub fn run(
    n: u32,
    backend: Backend,
    frames: u32,
    keep: Option<&std::path::Path>,
) -> mien::Result<Outcome> {
    let loaded = CharacterDef::builtin_body()?;
    let (device, _) = Device::open(backend)?;
    let mut rt = Runtime::new(
        Arc::new(loaded.asset.clone()),
        &device,
        &RuntimeOptions {
            instances: n,
            ..Default::default()
        },
    )?;
    for k in 0..n as usize {
        let mut inst = rt.instance_mut(k)?;
        loaded.apply(&mut inst)?;
        inst.set_speed(1.0)?;
        inst.set_wind(DVec3::new(2.0 + k as f64, 0.0, 0.0))?;
    }
    for f in 0..frames {
        rt.update(f64::from(f) / 30.0)?;
    }
    rt.finish()?;
    let segments = rt
        .asset()
        .dynamics()
        .hair
        .as_ref()
        .map_or(1, |h| h.groom.segments);
    let (mut max_stretch, mut tips, mut hashes) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..n as usize {
        let inst = rt.instance(k)?;
        max_stretch.push(
            inst.dynamics_report()
                .cloth
                .as_ref()
                .map_or(0.0, |c| c.max_stretch),
        );
        let g = inst.hair_guides();
        let s1 = segments + 1;
        let strands = g.len() / s1;
        let mean = |i: usize| {
            (0..strands)
                .map(|s| f64::from(g[s * s1 + i][0]))
                .sum::<f64>()
                / strands.max(1) as f64
        };
        tips.push(mean(segments) - mean(0));
        hashes.push(inst.state_hash());
    }
    let splats = rt.splats(0)?;
    if let Some(path) = keep {
        mien::write_splats(path, &splats, &[splats.all()])?;
    }
    Ok(Outcome {
        max_stretch,
        tips_downwind_m: tips,
        hashes,
        splats: splats.len(),
        dynamics_s: rt.times().dynamics.as_secs_f64(),
    })
}

fn main() -> mien::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(4);
    let backend: Backend = args.get(1).map_or(Ok(Backend::Cpu), |b| b.parse())?;
    let keep = args.get(2).map(std::path::PathBuf::from);
    let frames = 60;
    let o = run(n, backend, frames, keep.as_deref())?;
    for k in 0..n as usize {
        println!(
            "instance {k}: cape stretched {:.2} % at most, hair tips {:+.1} cm downwind, state {:016x}",
            o.max_stretch[k] * 100.0,
            o.tips_downwind_m[k] * 100.0,
            o.hashes[k]
        );
    }
    println!(
        "{} splats a frame each; cloth and hair {:.2} ms a frame for all {n}",
        o.splats,
        o.dynamics_s * 1e3 / f64::from(frames)
    );
    if let Some(k) = keep {
        println!("wrote {}", k.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two bodies in different winds: the capes stay within a few percent of their rest lengths,
    /// the stronger wind blows the hair farther downwind, the instances' states differ, and the
    /// same run repeats to the same hashes.
    #[test]
    fn two_bodies_walk_in_their_own_winds() {
        let o = run(2, Backend::Cpu, 30, None).unwrap();
        assert!(o.max_stretch.iter().all(|s| *s < 0.05), "{o:?}");
        assert!(
            o.tips_downwind_m[1] > o.tips_downwind_m[0],
            "{:?}",
            o.tips_downwind_m
        );
        assert_ne!(o.hashes[0], o.hashes[1]);
        assert!(o.splats > 134_400, "{o:?}");
        assert!(o.dynamics_s > 0.0);
        assert_eq!(run(2, Backend::Cpu, 30, None).unwrap().hashes, o.hashes);
    }
}
