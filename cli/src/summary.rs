//! The one-screen summary printed at the end of `mien animate`.

use std::fmt::Write as _;

use serde_json::Value;

use crate::animate::Outcome;
use crate::text::{count, metres, num, plural, secs};

/// A byte count in binary units (MiB, KiB: the divisors are 2²⁰ and 2¹⁰).
fn mb(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.0} KiB", b as f64 / 1024.0)
    }
}

/// Up to `n` names, then `…`.
fn names(list: &[String], n: usize) -> String {
    let mut s = list
        .iter()
        .take(n)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > n {
        s.push_str(", …");
    }
    s
}

/// One line per mesh node a stream is bound to: channels bound, ambiguous, unmatched, and
/// targets left undriven.
fn binding_line(m: &Value) -> String {
    let rep = &m["report"];
    let list = |k: &str| rep[k].as_array().cloned().unwrap_or_default();
    let mut bound: Vec<u64> = list("matched")
        .iter()
        .filter_map(|p| p["channel_index"].as_u64())
        .collect();
    bound.sort_unstable();
    bound.dedup();
    let ambiguous: Vec<String> = list("ambiguous")
        .iter()
        .flat_map(|a| a["channels"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    let unmatched = list("unmatched_channels").len();
    let undriven = list("undriven_targets").len();
    let channels = rep["channel_count"].as_u64().unwrap_or(0);
    let mut line = format!(
        "{}: {} of {} bound",
        m["mesh_node"].as_str().unwrap_or("?"),
        bound.len(),
        count(channels, "channel")
    );
    if !ambiguous.is_empty() {
        let _ = write!(
            line,
            ", {} ambiguous ({})",
            ambiguous.len(),
            names(&ambiguous, 4)
        );
    }
    let _ = write!(line, ", {unmatched} unmatched");
    if undriven > 0 {
        let _ = write!(line, "; {} undriven", count(undriven as u64, "target"));
    }
    if !ambiguous.is_empty() || unmatched > 0 || undriven > 0 {
        line.push_str(" (listed in report.json)");
    }
    line
}

/// Print `o` to stdout.
pub fn print(o: &Outcome) {
    let r = &o.report;
    let c = &r.character;
    let out = o.out.display();
    println!("mien animate: done in {:.2} s", r.timings_ms.total / 1e3);
    println!(
        "  character  {}: {}, {}, {}, {}{}",
        c.source,
        count(c.mesh_instances as u64, "mesh node"),
        plural(c.vertices as u64, "vertex", "vertices"),
        count(c.triangles as u64, "triangle"),
        if c.linear_head.is_some() {
            "a linear head (no morph targets)".to_string()
        } else {
            count(c.morph_targets as u64, "morph target")
        },
        if c.skin_joints.is_empty() {
            String::new()
        } else {
            format!(
                ", skin of {}",
                count(c.skin_joints.iter().sum::<usize>() as u64, "joint")
            )
        }
    );
    if let Some(v) = &c.vrm {
        println!("             {v}");
    }
    if !c.notes.is_empty() {
        println!(
            "             {} in report.json",
            count(c.notes.len() as u64, "import note")
        );
    }
    println!(
        "  animation  {} — {} ({}–{} s)",
        r.animation.kind,
        r.animation.name,
        secs(r.animation.span_s[0]),
        secs(r.animation.span_s[1])
    );
    if let Some(b) = &r.body {
        // The body step: what was retargeted, where the feet stand, what sways.
        let mut parts = Vec::new();
        if let Some(rt) = b.get("retarget") {
            parts.push(format!(
                "retargeted ({} bones mapped, scale {:.3})",
                rt["mapped"].as_array().map_or(0, Vec::len),
                rt["scale"].as_f64().unwrap_or(1.0)
            ));
        }
        if let Some(c) = b.get("character_file") {
            parts.push(format!(
                "character file ({} clips{})",
                c["clips"].as_array().map_or(0, Vec::len),
                if c["locomotion"] == Value::Bool(true) {
                    ", locomotion"
                } else {
                    ""
                }
            ));
        }
        if let Some(g) = b.get("ground") {
            parts.push(format!(
                "feet placed on {} ground",
                g["kind"].as_str().unwrap_or("the")
            ));
        } else if b.get("foot_ik").is_some() {
            parts.push("feet placed on flat ground".into());
        }
        if let Some(sb) = b.get("spring_bones") {
            parts.push(format!(
                "{} in {}",
                count(sb["joints"].as_u64().unwrap_or(0), "spring bone"),
                count(sb["springs"].as_u64().unwrap_or(0), "chain")
            ));
        }
        if let Some(c) = b.get("cloth") {
            parts.push(format!(
                "cloth `{}` ({} vertices, {} substeps a frame)",
                c["mesh"].as_str().unwrap_or("?"),
                c["vertices"],
                c["substeps_per_frame"]
            ));
        }
        if let Some(h) = b.get("hair") {
            parts.push(format!(
                "hair: {} guides → {} strands × {} segments ({} splats)",
                h["guides"], h["strands"], h["segments"], h["splats"]
            ));
        }
        if let Some(h) = b.get("hidden") {
            let names = |k: &str| -> Vec<String> {
                h[k].as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|n| n.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let what: Vec<String> = [("meshes", names("meshes")), ("joints", names("joints"))]
                .into_iter()
                .filter(|(_, n)| !n.is_empty())
                .map(|(k, n)| format!("{k} {}", n.join(", ")))
                .collect();
            parts.push(format!(
                "hidden: {} vertices ({})",
                h["vertices"],
                what.join("; ")
            ));
        }
        if b.get("cloth").is_some() || b.get("hair").is_some() {
            let of = match (b.get("cloth").is_some(), b.get("hair").is_some()) {
                (true, true) => "the body's lift, the cloth's and the strands",
                (true, false) => "the body's lift and the cloth's",
                _ => "the body's lift and the strands",
            };
            parts.push(format!(
                "{} splats a frame in all ({of})",
                r.splats.gaussians
            ));
        }
        if !parts.is_empty() {
            println!("  body       {}", parts.join("; "));
        }
        if let Some(p) = b["final_placement"]["position_m"].as_array() {
            let c: Vec<f64> = p.iter().filter_map(Value::as_f64).collect();
            if c.len() == 3 && c.iter().any(|x| x.abs() > 1e-9) {
                println!(
                    "             walked to ({:.2}, {:.2}, {:.2}) m; the frames are in the character's own space (report.json body.final_placement)",
                    c[0], c[1], c[2]
                );
            }
        }
    }
    if let Some(Value::Array(b)) = &r.animation.binding {
        // Meshes no channel binds (a body or clothing with a couple of targets) next to ones that
        // do: one line for all of them rather than 52 unmatched channels each.
        let binds = |m: &Value| {
            m["report"]["matched"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        };
        let any = b.iter().any(binds);
        let mut idle = Vec::new();
        for m in b {
            if any && !binds(m) {
                idle.push(m["mesh_node"].as_str().unwrap_or("?").to_string());
            } else {
                println!("             {}", binding_line(m));
            }
        }
        if !idle.is_empty() {
            println!(
                "             {} bound no channel: {} (their targets are not ARKit names; listed in report.json)",
                count(idle.len() as u64, "other mesh node"),
                names(&idle, 4)
            );
        }
    }
    if let Some(ranges) = &r.animation.channel_ranges {
        let outside: Vec<_> = ranges.iter().filter(|c| c.outside_unit() > 0).collect();
        let clamped: u64 = ranges.iter().map(|c| c.beyond_clamp).sum();
        let non_finite: u64 = ranges.iter().map(|c| c.non_finite).sum();
        if outside.is_empty() && non_finite == 0 {
            println!("             every stream value within [0, 1]");
        } else {
            let worst: Vec<String> = outside
                .iter()
                .take(4)
                .map(|c| {
                    format!(
                        "{} {}–{}",
                        c.name,
                        c.min.map_or("?".into(), |x| x.to_string()),
                        c.max.map_or("?".into(), |x| x.to_string())
                    )
                })
                .collect();
            println!(
                "             values outside [0, 1] in {} ({}), {} beyond ±2 (clamped when bound), {} non-finite (listed in report.json)",
                count(outside.len() as u64, "channel"),
                worst.join(", "),
                count(clamped, "value"),
                non_finite
            );
        }
    }
    if let Some(sp) = &r.animation.speech {
        println!(
            "  speech     {} ({}): {}, {} sampler, audio offset {} s",
            sp["file"].as_str().unwrap_or("?"),
            sp["format"].as_str().unwrap_or("?"),
            count(sp["segments"].as_u64().unwrap_or(0), "segment"),
            sp["sampler"].as_str().unwrap_or("?"),
            num(sp["audio_offset_s"].as_f64().unwrap_or(f64::NAN))
        );
        for b in sp["bindings"].as_array().into_iter().flatten() {
            let v = &b["visemes"];
            let missing = v["missing"].as_array().map_or(0, Vec::len);
            let silent = v["silent_visemes"].as_array().map_or(0, Vec::len);
            let inert: Vec<&str> = v["inert_targets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str())
                .collect();
            println!(
                "             {}: {} visemes, {} owned targets, {} missing target{}, {} viseme{} without targets{}",
                b["mesh_node"].as_str().unwrap_or("?"),
                viseme_kind(v["kind"].as_str().unwrap_or("?")),
                v["owned_targets"].as_array().map_or(0, Vec::len),
                missing,
                if missing == 1 { "" } else { "s" },
                silent,
                if silent == 1 { "" } else { "s" },
                if missing + silent > 0 {
                    " (listed in report.json)"
                } else {
                    ""
                }
            );
            for m in v["missing"].as_array().into_iter().flatten().take(5) {
                let near: Vec<&str> = m["nearest"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n.as_str())
                    .collect();
                println!(
                    "               viseme {}: no target `{}` (nearest: {})",
                    m["viseme"].as_str().unwrap_or("?"),
                    m["target"].as_str().unwrap_or("?"),
                    if near.is_empty() {
                        "none".to_string()
                    } else {
                        near.join(", ")
                    }
                );
            }
            if !inert.is_empty() {
                let silent: Vec<&str> = v["silent_visemes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n.as_str())
                    .collect();
                println!(
                    "               warning: {} move{} nothing (VRM expressions without a morph bind): visemes {} stay at rest",
                    inert.join(", "),
                    if inert.len() == 1 { "s" } else { "" },
                    silent.join(" ")
                );
            }
        }
    }
    if let Some(a) = &r.animation.animator {
        let states: Vec<&str> = a["states"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["state"].as_str())
            .collect();
        println!(
            "  animator   {}, script {} ({}); blinks and gaze generated; states {}; state hash {}",
            a["face"].as_str().unwrap_or("?"),
            a["script"].as_str().unwrap_or("?"),
            count(a["events"].as_u64().unwrap_or(0), "event"),
            states.join(" → "),
            a["last_state_hash"].as_str().unwrap_or("?")
        );
    }
    for n in &r.animation.notes {
        println!("             note: {n}");
    }
    println!(
        "  frames     {} at {} fps, media time {}–{} s",
        r.frames.count,
        num(r.frames.fps),
        secs(r.frames.span_s[0]),
        secs(r.frames.span_s[1])
    );
    match &r.splats.surface {
        Some(b) if r.splats.lift == "capture" => println!(
            "  splats     captured splats bound to the mesh: {} gaussians over {}{}",
            r.splats.gaussians,
            count(b.triangles, "triangle"),
            match &r.splats.capture {
                Some(c) if c.joint_anchors > 0 => format!(
                    " (far ones rigid to joints: {} anchors); from {}",
                    c.joint_anchors, c.file
                ),
                Some(c) => format!("; from {}", c.file),
                None => String::new(),
            }
        ),
        Some(b) => {
            let c = &b.colors;
            let tex: Vec<String> = c
                .textures
                .iter()
                .map(|(label, format, w, h)| format!("{label} {format} {w}×{h}"))
                .collect();
            if r.splats.lift == "bundle" {
                println!(
                    "  splats     bundle lift: {} gaussians over {} in its branches; colour from the decoders (flat where a branch has none)",
                    b.gaussians,
                    count(b.triangles, "triangle"),
                );
            } else {
                println!(
                    "  splats     {} lift: {} gaussians over {}; colour: {} textured, {} plain, {} by normal",
                    r.splats.lift,
                    b.gaussians,
                    count(b.triangles, "triangle"),
                    c.textured_triangles,
                    c.plain_triangles,
                    c.normal_triangles
                );
            }
            if !tex.is_empty() {
                println!("             textures {}", tex.join(", "));
            }
            for f in &c.failed {
                println!("             texture not decoded (its triangles use the factor): {f}");
            }
        }
        None => println!(
            "  splats     debug lift: σ {} ({}), shading {}{}",
            metres(r.splats.sigma_m.unwrap_or(0.0)),
            r.splats.sigma_rule.as_deref().unwrap_or(""),
            r.splats.shading.as_deref().unwrap_or(""),
            if r.splats.shading_requested.as_deref() == Some("auto") {
                " (auto)"
            } else {
                ""
            }
        ),
    }
    if let Some(a) = &r.appearance {
        let frames = f64::from(r.frames.count.max(1));
        println!(
            "  decoders   {} ({} skipped: inputs unchanged; {} colour or opacity values clamped to 0–1), {:.3} ms/frame decoding, {:.3} ms/frame rebuilding records; camera at {:.3},{:.3},{:.3} m",
            count(a.decodes, "decode"),
            a.skipped,
            a.clamped,
            a.decode_ms / frames,
            a.record_ms / frames,
            a.camera_eye[0],
            a.camera_eye[1],
            a.camera_eye[2]
        );
        if let Some(m) = &a.memory {
            let b: Vec<String> = m
                .branches
                .iter()
                .map(|b| format!("{} {} slots {}", b.name, b.slots, mb(b.bytes)))
                .collect();
            println!(
                "             branches: {}; bundle files resident {}",
                b.join(", "),
                mb(m.resident_bytes)
            );
        }
    }
    println!(
        "  backend    {} ({}); {}",
        r.backend.used,
        r.backend.reason,
        count(r.backend.threads as u64, "CPU thread")
    );
    if let Some(a) = &r.backend.adapter {
        println!("             adapter {a}");
    }
    if let Some(h) = &c.linear_head {
        print_linear_head(h, &r.memory);
    } else {
        println!(
            "  morphs     active limit {} per mesh: {} dropped, {} clamped to ±2, {} non-finite",
            r.morphs.active_limit, r.morphs.dropped, r.morphs.clamped, r.morphs.non_finite
        );
        if r.morphs.dropped > 0 {
            println!(
                "             (over all frames: a mesh with more than {} non-zero weights in a frame keeps the {} largest; report.json morphs.dropped_targets names the rest)",
                r.morphs.active_limit, r.morphs.active_limit
            );
        }
    }
    let dynamics = if r.timings_ms.dynamics > 0.0 {
        format!(
            ", cloth and hair {:.3} ms/frame",
            r.timings_ms.dynamics / f64::from(r.frames.count.max(1))
        )
    } else {
        String::new()
    };
    println!(
        "  time       rig {:.3} ms/frame, lift {:.3} ms/frame{dynamics}, frame files {:.0} ms, preview {:.0} ms",
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
        "  memory     {}; rig {}, sink {}{}",
        count(u64::from(r.memory.character_slots), "splat slot"),
        mb(r.memory.rig_bytes),
        mb(r.memory.sink_bytes),
        if r.memory.preview_bytes > 0 {
            format!(", preview frames {}", mb(r.memory.preview_bytes))
        } else {
            String::new()
        }
    );
    if r.outputs.ply_files > 0 {
        let names = if r.outputs.ply_files == 1 {
            r.outputs.ply_span[0].clone()
        } else {
            format!(
                "{} … {}",
                r.outputs.ply_span[0],
                r.outputs.ply_span[1].trim_start_matches("frames/")
            )
        };
        println!(
            "  wrote      {out}/{names} ({}, {} each, {}, {})",
            count(r.outputs.ply_files, "file"),
            count(r.outputs.splats_per_frame, "splat"),
            mb(r.outputs.ply_bytes),
            if r.outputs.frame_format == "spz" {
                "SPZ version 3".to_string()
            } else if r.outputs.frame_format == "glb" {
                "glTF KHR_gaussian_splatting".to_string()
            } else {
                format!("{} layout", r.outputs.ply_layout)
            }
        );
    } else {
        println!("  wrote      no frame files (--ply none)");
    }
    if let Some(p) = &r.outputs.preview {
        println!(
            "             {out}/{p} (contact sheet of {})",
            count(r.outputs.preview_frames.len() as u64, "frame")
        );
    }
    if let Some(n) = &r.outputs.preview_note {
        println!("             note: {n}");
    }
    println!("             {out}/report.json");
    for n in &r.outputs.notes {
        println!("  note       {n}");
    }
    for w in &o.warnings {
        println!("  warning    {w}");
    }
}

/// The linear-head lines: layout, ARKit map, clamps, and what a pose reads.
fn print_linear_head(h: &crate::subject::LinearHeadReport, m: &crate::report::MemoryReport) {
    let regions: Vec<String> = h.regions.iter().map(|(n, k)| format!("{n} {k}")).collect();
    println!(
        "  head       {} coefficients + 4 gaze angles ({}); normals none (normal shading faces away from the centroid)",
        h.coefficients,
        regions.join(", ")
    );
    match h.clamp {
        Some(clamp) => println!(
            "             ARKit map: {}, {} dropped at build; {} clamped to ±{clamp}",
            count(h.arkit_terms as u64, "term"),
            h.arkit_dropped.len(),
            count(h.clamped, "coefficient")
        ),
        None => println!("             no ARKit map in the pack: posed at rest"),
    }
    if let Some(p) = &m.linear_head {
        println!(
            "             pack {} on disk; fp16 basis {} read per pose",
            mb(p.file_bytes),
            mb(p.basis_bytes)
        );
    }
}

/// A viseme map's kind as people spell it (`Arkit` in report.json is `ARKit`).
fn viseme_kind(kind: &str) -> &str {
    match kind {
        "Arkit" => "ARKit",
        "Vroid" => "VRoid",
        "Vrm" => "VRM mouth-expression",
        other => other,
    }
}
