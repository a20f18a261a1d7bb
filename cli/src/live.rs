//! `mien live`: a Live Link Face UDP session driving one instance of a runtime
//! ([`mien_runtime::live`]), with an optional loopback replay of a recording, the take saved as
//! Live Link CSV, and latency percentiles (packet arrival → posed splats).

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mien_runtime::live::{LiveOptions, LiveReceiver, decode, read_recording};
use mien_runtime::{Device, DeviceOptions, LiftOptions, Runtime, RuntimeOptions};

use crate::args::LiveArgs;

/// Percentile `p` (0–100) of sorted `v` (nearest rank), or 0 for none.
fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Send `datagrams` to `to` at their frame times ÷ `speed` (a malformed one goes with the
/// previous time). Returns when all are sent.
fn replay(datagrams: Vec<Vec<u8>>, to: SocketAddr, speed: f64) -> std::io::Result<()> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    let start = Instant::now();
    let mut t0 = None;
    let mut last = 0.0;
    for d in datagrams {
        if let Ok(p) = decode(&d) {
            let t = p.time.seconds();
            let first = *t0.get_or_insert(t);
            last = (t - first).max(last);
        }
        let at = Duration::from_secs_f64(last / speed);
        if let Some(wait) = at.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        socket.send_to(&d, to)?;
    }
    Ok(())
}

/// Whether a file can be written at `path`: its folder exists and takes a file (a probe is
/// created there and removed), and `path` is not a folder.
fn writable(path: &std::path::Path) -> Result<()> {
    if path.is_dir() {
        bail!("is a folder");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        bail!("the folder {} does not exist", dir.display());
    }
    tempfile::NamedTempFile::new_in(dir)
        .map(drop)
        .with_context(|| format!("cannot write in {}", dir.display()))
}

/// Run a session; returns the summary text.
///
/// # Errors
/// Refused flags, an unloadable character or recording, a port in use, a failed frame.
pub fn run(args: &LiveArgs) -> Result<String> {
    if !(args.fps.is_finite() && args.fps > 0.0 && args.fps <= 1000.0) {
        bail!("--fps {}: give a rate in (0, 1000]", args.fps);
    }
    if !(args.delay_ms.is_finite() && (0.0..=10_000.0).contains(&args.delay_ms)) {
        bail!("--delay-ms {}: give 0 to 10000 milliseconds", args.delay_ms);
    }
    if let Some(d) = args.duration
        && !(d.is_finite() && d > 0.0)
    {
        bail!("--duration {d}: give a positive number of seconds");
    }
    if !(args.replay_speed.is_finite() && args.replay_speed > 0.0 && args.replay_speed <= 100.0) {
        bail!(
            "--replay-speed {}: give a speed in (0, 100]",
            args.replay_speed
        );
    }
    if args.duration.is_none()
        && args.replay.is_none()
        && !std::io::IsTerminal::is_terminal(&std::io::stdin())
    {
        // Without a terminal nobody can press Ctrl-C: insist on an end.
        bail!("give --duration (or --replay): without a terminal the session would never end");
    }
    // The outputs are written when the session ends: refuse a place that cannot take them now,
    // before anything is listened to (a take must never be lost at the end).
    for (flag, path) in [("--record", &args.record), ("--report", &args.report)] {
        if let Some(p) = path {
            writable(p).with_context(|| format!("{flag} {}", p.display()))?;
        }
    }
    let recording = match &args.replay {
        Some(p) => Some(
            read_recording(p).with_context(|| format!("cannot read --replay {}", p.display()))?,
        ),
        None => None,
    };
    let asset = Arc::new(crate::load::character(args.character.as_deref())?);
    let (device, _) = Device::open_with(args.backend.into(), &DeviceOptions::from_env())
        .with_context(|| format!("--backend {}", args.backend.name()))?;
    let options = RuntimeOptions {
        instances: 1,
        lift: Some(LiftOptions::default()),
    };
    let mut rt = Runtime::new(asset.clone(), &device, &options)?;
    let mut rx = LiveReceiver::bind(&LiveOptions {
        bind: args.bind,
        port: args.port,
        subject: args.subject.clone(),
        delay_s: args.delay_ms / 1000.0,
        record: args.record.is_some(),
        ..LiveOptions::default()
    })?;
    let local = rx.local_addr()?;
    let sender = recording.map(|d| {
        let to = SocketAddr::new(
            if local.ip().is_unspecified() {
                Ipv4Addr::LOCALHOST.into()
            } else {
                local.ip()
            },
            local.port(),
        );
        let speed = args.replay_speed;
        std::thread::spawn(move || replay(d, to, speed))
    });
    eprintln!(
        "mien live: listening on UDP {local}{}; {}",
        args.subject
            .as_ref()
            .map(|s| format!(" for subject `{s}`"))
            .unwrap_or_default(),
        if sender.is_some() {
            "replaying"
        } else {
            "Ctrl-C ends the session"
        }
    );
    // Pose each packet as it falls due; between packets, wait for the socket or the next due
    // time, at most 1 ms (a live tool trades a core's idle polling for latency).
    let min_gap = 1.0 / args.fps;
    let mut total = Vec::new(); // arrival → posed, seconds
    let mut late = Vec::new(); // due → posed, seconds
    let mut frames = 0u64;
    let mut last_pose = f64::NEG_INFINITY;
    let mut done_at: Option<f64> = None;
    // A status line once a second on a terminal.
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last_status = 0.0;
    let start = Instant::now();
    loop {
        rx.poll()?;
        let now = rx.now();
        if now - last_pose >= min_gap
            && let Some(f) = rx.next_frame()
        {
            last_pose = now;
            rt.instance_mut(0)?
                .set_live_frame(f.packet.blendshapes(), f.packet.angles())?;
            rt.update(now)?;
            rt.finish()?;
            let posed = rx.now();
            total.push(posed - f.arrival);
            late.push(posed - f.due);
            frames += 1;
            continue;
        }
        if crate::interrupt::requested() || args.duration.is_some_and(|d| now >= d) {
            break;
        }
        if tty && now - last_status >= 1.0 {
            last_status = now;
            let st = rx.stats();
            eprint!(
                "\r  {now:6.1} s  {} received, {} played, {} malformed, {} late, {} duplicate   ",
                st.received,
                st.played,
                st.malformed.values().sum::<u64>(),
                st.late,
                st.duplicate
            );
        }
        if let Some(s) = &sender
            && s.is_finished()
            && rx.waiting() == 0
        {
            // Drain what is still in flight, then stop.
            let at = *done_at.get_or_insert(now);
            if now - at > args.delay_ms / 1000.0 + 0.2 {
                break;
            }
        }
        let until_due = rx.next_due().map_or(1e-3, |d| (d - now).clamp(0.0, 1e-3));
        std::thread::sleep(Duration::from_secs_f64(until_due.max(50e-6)));
    }
    if tty {
        eprintln!();
    }
    if let Some(s) = sender {
        s.join()
            .map_err(|_| anyhow::anyhow!("the replay sender panicked"))?
            .context("replay: cannot send")?;
    }
    rx.poll()?;
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(path) = &args.record {
        let text = rx.take_csv().unwrap_or_default();
        mien_core::io::atomic::write_atomic_bytes(path, text.as_bytes())
            .with_context(|| format!("cannot write --record {}", path.display()))?;
    }
    total.sort_by(f64::total_cmp);
    late.sort_by(f64::total_cmp);
    let st = rx.stats().clone();
    let report = serde_json::json!({
        "format": "mien-live-report",
        "version": 1,
        "character": asset.source(),
        "listen": local.to_string(),
        "subject": args.subject,
        "backend": device.name(),
        "delay_ms": args.delay_ms,
        "fps": args.fps,
        "seconds": elapsed,
        "frames_posed": frames,
        "packets": st,
        "blendshape_values_outside_0_1": rx.outside_unit,
        "latency_ms": {
            "arrival_to_posed": { "p50": percentile(&total, 50.0) * 1e3, "p99": percentile(&total, 99.0) * 1e3, "max": total.last().copied().unwrap_or(0.0) * 1e3 },
            "due_to_posed": { "p50": percentile(&late, 50.0) * 1e3, "p99": percentile(&late, 99.0) * 1e3, "max": late.last().copied().unwrap_or(0.0) * 1e3 },
        },
        "record": args.record.as_ref().map(|p| p.display().to_string()),
        "take_packets": rx.take_len(),
    });
    if let Some(p) = &args.report {
        let text = serde_json::to_string_pretty(&report)?;
        mien_core::io::atomic::write_atomic_bytes(p, text.as_bytes())
            .with_context(|| format!("cannot write --report {}", p.display()))?;
    }
    let mut s = String::new();
    let malformed: u64 = st.malformed.values().sum();
    let _ = writeln!(
        s,
        "mien live: {elapsed:.2} s on UDP {local}, {} backend",
        device.name()
    );
    let _ = writeln!(
        s,
        "  packets   {} received, {} played, {} malformed{}, {} other subject, {} duplicate, {} late, {} skipped, {} overflow, {} stray, {} resyncs ({} dropped)",
        st.received,
        st.played,
        malformed,
        if malformed > 0 {
            format!(
                " ({})",
                st.malformed
                    .iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        },
        st.other_subject,
        st.duplicate,
        st.late,
        st.skipped,
        st.overflow,
        st.stray,
        st.resyncs,
        st.resync_dropped
    );
    let _ = writeln!(
        s,
        "  values    {} blendshape values outside [0, 1] (the rig clamps at ±2 and counts)",
        rx.outside_unit
    );
    let _ = writeln!(
        s,
        "  latency   arrival → posed p50 {:.2} ms, p99 {:.2} ms (includes the {} ms buffer delay); due → posed p50 {:.2} ms, p99 {:.2} ms",
        percentile(&total, 50.0) * 1e3,
        percentile(&total, 99.0) * 1e3,
        args.delay_ms,
        percentile(&late, 50.0) * 1e3,
        percentile(&late, 99.0) * 1e3
    );
    if let Some(p) = &args.record {
        let _ = writeln!(
            s,
            "  take      {} ({} packets, Live Link CSV)",
            p.display(),
            rx.take_len()
        );
    }
    if let Some(p) = &args.report {
        let _ = writeln!(s, "  report    {}", p.display());
    }
    Ok(s)
}
