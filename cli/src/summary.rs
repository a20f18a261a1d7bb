//! The one-screen summary printed at the end of `mien animate`.

use crate::animate::Outcome;

fn mb(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KB", b as f64 / 1024.0)
    }
}

/// Print `o` to stdout.
pub fn print(o: &Outcome) {
    let r = &o.report;
    let c = &r.character;
    let out = o.out.display();
    println!("mien animate: done in {:.2} s", r.timings_ms.total / 1e3);
    println!(
        "  character  {}: {} mesh node(s), {} vertices, {} triangles, {} morph targets{}",
        c.source,
        c.mesh_instances,
        c.vertices,
        c.triangles,
        c.morph_targets,
        if c.skin_joints.is_empty() {
            String::new()
        } else {
            format!(", skin of {} joints", c.skin_joints.iter().sum::<usize>())
        }
    );
    if !c.notes.is_empty() {
        println!(
            "             {} import note(s) in report.json",
            c.notes.len()
        );
    }
    println!(
        "  animation  {} — {} ({:.3}–{:.3} s)",
        r.animation.kind, r.animation.name, r.animation.span_s[0], r.animation.span_s[1]
    );
    if let Some(serde_json::Value::Array(b)) = &r.animation.binding {
        for m in b {
            let rep = &m["report"];
            let matched = rep["matched"].as_array().map_or(0, Vec::len);
            let unmatched = rep["unmatched_channels"].as_array().map_or(0, Vec::len);
            println!(
                "             {}: {} of {} channels bound, {} unmatched{}",
                m["mesh_node"].as_str().unwrap_or("?"),
                matched,
                rep["channel_count"],
                unmatched,
                if unmatched > 0 {
                    " (listed in report.json)"
                } else {
                    ""
                }
            );
        }
    }
    for n in &r.animation.notes {
        println!("             note: {n}");
    }
    println!(
        "  frames     {} at {} fps, media time {:.3}–{:.3} s",
        r.frames.count, r.frames.fps, r.frames.span_s[0], r.frames.span_s[1]
    );
    println!(
        "  backend    {} ({}); {} CPU threads",
        r.backend.used, r.backend.reason, r.backend.threads
    );
    if let Some(a) = &r.backend.adapter {
        println!("             adapter {a}");
    }
    println!(
        "  morphs     active limit {} per mesh: {} dropped, {} clamped to ±2, {} non-finite",
        r.morphs.active_limit, r.morphs.dropped, r.morphs.clamped, r.morphs.non_finite
    );
    println!(
        "  time       rig {:.3} ms/frame, lift {:.3} ms/frame, .ply {:.0} ms, preview {:.0} ms",
        r.timings_ms.rig_per_frame,
        r.timings_ms.lift_per_frame,
        r.timings_ms.ply,
        r.timings_ms.preview
    );
    if let Some(g) = &r.timings_ms.gpu {
        let n = f64::from(r.frames.count.max(1));
        println!(
            "  GPU time   morph {:.3} ms/frame, skin {:.3} ms/frame, lift {:.3} ms/frame (timestamp queries)",
            g.morph / n,
            g.skin / n,
            g.lift / n
        );
    }
    println!(
        "  memory     {} splat slots; rig {}, sink {}",
        r.memory.character_slots,
        mb(r.memory.rig_bytes),
        mb(r.memory.sink_bytes)
    );
    if r.outputs.ply_files > 0 {
        println!(
            "  wrote      {out}/{} … {} ({} files, {} splats each, {}, {} layout)",
            r.outputs.ply_span[0],
            r.outputs.ply_span[1].trim_start_matches("frames/"),
            r.outputs.ply_files,
            r.outputs.splats_per_frame,
            mb(r.outputs.ply_bytes),
            r.outputs.ply_layout
        );
    }
    if let Some(p) = &r.outputs.preview {
        println!(
            "             {out}/{p} (contact sheet of {} frames)",
            r.outputs.preview_frames.len()
        );
    }
    println!("             {out}/report.json");
}
