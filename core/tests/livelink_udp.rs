//! Live Link Face v6 packets: the real recordings decode (and re-encode byte for byte), every
//! malformed datagram is refused with its reason and never panics, the jitter buffer orders,
//! drops and counts as documented, and a take written as CSV reads back as the same stream.

use std::path::{Path, PathBuf};

use mien_core::anim::arkit::arkit_index;
use mien_core::io::livelink_csv::read_livelink_csv_from_str;
use mien_core::io::livelink_udp::{
    Admission, FrameTime, JitterBuffer, MAX_PACKET_BYTES, Packet, PacketError, decode, encode,
    read_recording, recording_bytes, recording_from_bytes, to_livelink_csv,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn packets(rel: &str) -> Vec<Packet> {
    read_recording(&data(rel))
        .unwrap()
        .iter()
        .map(|d| decode(d).unwrap())
        .collect()
}

#[test]
fn the_recordings_decode_and_reencode_byte_for_byte() {
    for (rel, n) in [
        ("livelink-udp/dao.gesichter", 180),
        ("livelink-udp/debug-jawopen.gesichter", 66),
    ] {
        let raw = read_recording(&data(rel)).unwrap();
        assert_eq!(raw.len(), n, "{rel}");
        for d in &raw {
            let p = decode(d).unwrap();
            assert_eq!(&encode(&p), d);
            assert_eq!(p.subject, "LLV Default Device");
            assert_eq!(p.device_id, "DEADC0DE-1337-1337-1337-CAFEBABE");
            assert_eq!((p.time.rate_numerator, p.time.rate_denominator), (60, 1));
        }
        // Frames in increasing order (the real take has gaps where the network lost packets).
        let ps: Vec<Packet> = raw.iter().map(|d| decode(d).unwrap()).collect();
        for w in ps.windows(2) {
            assert!(w[1].time.frame > w[0].time.frame);
        }
        // The recording writer gives the same file content back.
        let again = recording_from_bytes(&recording_bytes(&raw), "again").unwrap();
        assert_eq!(again, raw);
    }
    // debug-jawopen ramps jawOpen (value 17, Epic's enum order = ARKit order) from −1 to 1.
    let ps = packets("livelink-udp/debug-jawopen.gesichter");
    let j = arkit_index("jawOpen").unwrap();
    assert_eq!(j, 17);
    assert_eq!(ps[0].values[j], -1.0);
    assert_eq!(ps[65].values[j], 1.0);
    assert!(ps.windows(2).all(|w| w[1].values[j] >= w[0].values[j]));
    // Frame time: (1337 + 0.121) / 60 s.
    let t = ps[0].time.seconds();
    assert!((t - (1337.0 + f64::from(ps[0].time.sub_frame)) / 60.0).abs() < 1e-12);
}

fn sample() -> Vec<u8> {
    read_recording(&data("livelink-udp/dao.gesichter")).unwrap()[0].clone()
}

#[test]
fn every_truncation_and_every_malformed_field_is_refused_with_its_reason() {
    let good = sample();
    for n in 0..good.len() {
        match decode(&good[..n]) {
            Err(PacketError::Truncated { len, .. }) => assert_eq!(len, n),
            other => panic!("{n} bytes: {other:?}"),
        }
    }
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(decode(&long), Err(PacketError::Oversized { end, .. }) if end == good.len()));
    let mut v = good.clone();
    v[0] = 5;
    assert_eq!(decode(&v), Err(PacketError::Version(5)));
    // A device id length of 2³²−1: refused by its length, nothing allocated for it.
    let mut v = good.clone();
    v[1..5].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        decode(&v),
        Err(PacketError::Name {
            field: "device id",
            ..
        })
    ));
    // Invalid UTF-8 in the subject (offset 1 + 4 + 32 + 4).
    let mut v = good.clone();
    v[41] = 0xFF;
    assert!(matches!(
        decode(&v),
        Err(PacketError::Name {
            field: "subject name",
            ..
        })
    ));
    let at = 1 + 4 + 32 + 4 + 18; // frame time
    let mut v = good.clone();
    v[at + 8..at + 12].copy_from_slice(&0i32.to_be_bytes());
    assert_eq!(decode(&v), Err(PacketError::Rate(0, 1)));
    let mut v = good.clone();
    v[at + 4..at + 8].copy_from_slice(&1.5f32.to_be_bytes());
    assert!(matches!(decode(&v), Err(PacketError::SubFrame(_))));
    let mut v = good.clone();
    v[at + 16] = 60;
    assert_eq!(decode(&v), Err(PacketError::Count(60)));
    let mut v = good.clone();
    let j = at + 17 + 4 * 17;
    v[j..j + 4].copy_from_slice(&f32::NAN.to_be_bytes());
    assert_eq!(
        decode(&v),
        Err(PacketError::NonFinite {
            index: 17,
            name: "jawOpen"
        })
    );
    assert!(good.len() <= MAX_PACKET_BYTES);
}

proptest::proptest! {
    /// Any bytes decode to a packet or an error — never a panic — and a packet re-encodes to
    /// exactly the bytes it came from.
    #[test]
    fn any_datagram_decodes_or_is_refused(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
        if let Ok(p) = decode(&bytes) {
            proptest::prop_assert_eq!(encode(&p), bytes);
        }
    }

    /// Flipping any one byte of a real packet never panics.
    #[test]
    fn a_flipped_byte_of_a_real_packet_never_panics(i in 0usize..320, b in proptest::num::u8::ANY) {
        let mut v = sample();
        v[i] = b;
        let _ = decode(&v);
    }
}

fn at(frame: i32) -> Packet {
    let mut p = decode(&sample()).unwrap();
    p.time = FrameTime {
        frame,
        sub_frame: 0.0,
        rate_numerator: 60,
        rate_denominator: 1,
    };
    p.values[17] = frame as f32;
    p
}

#[test]
fn the_jitter_buffer_orders_and_counts_duplicates_late_overflow_and_skips() {
    // Delay 0.1 s; the first packet (frame 600 = 10 s) arrives at receiver time 1.0, so the
    // offset is −9 and frame f is due at f/60 − 9 + 0.1.
    let mut b = JitterBuffer::new(0.1, 4);
    assert_eq!(b.push(at(600), 1.0), Admission::Accepted);
    assert_eq!(b.push(at(602), 1.01), Admission::Accepted); // out of order
    assert_eq!(b.push(at(601), 1.02), Admission::Accepted);
    assert_eq!(b.push(at(601), 1.03), Admission::Duplicate);
    assert_eq!(b.pop(1.09), None, "nothing due before 1.1");
    let (p, arrival, due) = b.pop(1.1).unwrap();
    assert_eq!((p.time.frame, arrival), (600, 1.0));
    assert!((due - 1.1).abs() < 1e-9);
    // At 1.14 frames 601 (due 1.1167) and 602 (due 1.1333) are due: the later is played, the
    // earlier skipped.
    let (p, _, _) = b.pop(1.14).unwrap();
    assert_eq!(p.time.frame, 602);
    assert_eq!(b.stats.skipped, 1);
    // A packet not after the last played is late.
    assert_eq!(b.push(at(602), 1.2), Admission::Late);
    assert_eq!(b.push(at(599), 1.2), Admission::Late);
    // Capacity 4: the fifth buffered packet pushes the oldest out.
    for f in 603..608 {
        assert_eq!(b.push(at(f), 1.3), Admission::Accepted);
    }
    assert_eq!((b.len(), b.stats.overflow), (4, 1));
    assert_eq!(b.stats.duplicate, 1);
    assert_eq!(b.stats.late, 2);
    assert_eq!(b.stats.accepted, 8);
    assert_eq!(b.stats.played, 2);
    let first = b.next_due().unwrap();
    assert!(
        (first - (604.0 / 60.0 - 9.0 + 0.1)).abs() < 1e-9,
        "603 was dropped"
    );
}

#[test]
fn a_take_written_as_csv_reads_back_as_the_same_stream() {
    let ps = packets("livelink-udp/dao.gesichter");
    let t0 = ps[0].time.seconds();
    let take: Vec<(f64, Packet)> = ps
        .iter()
        .map(|p| (p.time.seconds() - t0, p.clone()))
        .collect();
    let text = to_livelink_csv(&take);
    let s = read_livelink_csv_from_str(&text, "take.csv").unwrap();
    assert_eq!(s.frame_count(), ps.len());
    assert_eq!(s.channel_count(), 52);
    assert_eq!(s.aux_channels.len(), 9);
    assert_eq!(s.nominal_fps, Some(60.0));
    for (k, p) in ps.iter().enumerate() {
        // Times to the 1/1000 frame the timecode keeps.
        assert!(
            (s.times[k] - (p.time.seconds() - t0)).abs() < 1.0 / 60_000.0 + 1e-9,
            "frame {k}"
        );
        for c in 0..52 {
            assert_eq!(s.values[k * 52 + c], p.values[c], "frame {k} channel {c}");
        }
        for a in 0..9 {
            assert_eq!(s.aux_values[k * 9 + a], p.values[52 + a]);
        }
    }
}

#[test]
fn bad_recordings_are_refused_naming_the_problem() {
    let e = recording_from_bytes(b"not gzip", "x.gesichter")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.gesichter") && e.contains("gzip"), "{e}");
    let raw = read_recording(&data("livelink-udp/debug-jawopen.gesichter")).unwrap();
    // A header announcing more packets than the data holds.
    let mut gz = recording_bytes(&raw);
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain).unwrap();
    plain[1..5].copy_from_slice(&67u32.to_be_bytes());
    gz = gzip(&plain);
    let e = recording_from_bytes(&gz, "x").unwrap_err().to_string();
    assert!(e.contains("67 packets"), "{e}");
    // A length over the packet cap.
    plain[1..5].copy_from_slice(&66u32.to_be_bytes());
    plain[5..9].copy_from_slice(&100_000u32.to_be_bytes());
    let e = recording_from_bytes(&gzip(&plain), "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("length 100000"), "{e}");
}

fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    g.write_all(b).unwrap();
    g.finish().unwrap()
}

#[test]
fn a_stray_packet_is_dropped_and_a_jump_of_the_senders_clock_starts_a_new_epoch() {
    // Normal packets at 60 fps arriving on time; a stray one far in the future among them. It
    // is held, the next packet is on the clock, so it is dropped as a stray: nothing else lost.
    let mut b = JitterBuffer::new(0.05, 64);
    let mut played = 0;
    for k in 0..30 {
        let arrival = f64::from(k) / 60.0;
        if k == 10 {
            assert_eq!(b.push(at(i32::MAX), arrival), Admission::Held);
            assert_eq!(b.epoch(), 0);
        }
        assert_eq!(b.push(at(600 + k), arrival), Admission::Accepted);
        // Just after its due time (due = arrival + delay, up to rounding).
        while b.pop(arrival + 0.051).is_some() {
            played += 1;
        }
    }
    assert_eq!(
        (b.stats.stray, b.stats.resyncs, b.stats.late),
        (1, 0, 0),
        "{:?}",
        b.stats
    );
    assert_eq!(played, 30, "every normal packet played: {:?}", b.stats);
    // A restart: the same frames again 10 s later. The first is held, the second agrees with
    // it: a new epoch holding both, not 30 late packets.
    let mut played = 0;
    for k in 0..30 {
        let arrival = 10.0 + f64::from(k) / 60.0;
        let want = if k == 0 {
            Admission::Held
        } else {
            Admission::Accepted
        };
        assert_eq!(b.push(at(600 + k), arrival), want, "packet {k}");
        while b.pop(arrival + 0.051).is_some() {
            played += 1;
        }
    }
    assert_eq!((b.stats.resyncs, b.stats.late, b.stats.stray), (1, 0, 1));
    assert_eq!(b.epoch(), 1);
    assert_eq!(played + b.stats.skipped as usize, 30, "{:?}", b.stats);
    // Midnight: the time of day wraps from 86,399.98 s to 0; frame 0 is held, frame 1 confirms.
    let mut b = JitterBuffer::new(0.05, 64);
    let day = 86_400 * 60;
    let mut got = Vec::new();
    for (k, f) in [day - 2, day - 1, 0, 1, 2].into_iter().enumerate() {
        let arrival = k as f64 / 60.0;
        b.push(at(f), arrival);
        if let Some((p, _, _)) = b.pop(arrival + 0.051) {
            got.push(p.time.frame);
        }
    }
    assert_eq!(got, [day - 2, day - 1, 1, 2]);
    assert_eq!((b.stats.resyncs, b.stats.skipped, b.stats.stray), (1, 1, 0));
}

#[test]
fn a_take_across_midnight_reads_back_in_order() {
    let day = 86_400 * 60;
    let take: Vec<(f64, Packet)> = [day - 2, day - 1, 0, 1]
        .into_iter()
        .enumerate()
        .map(|(k, f)| (k as f64 / 60.0, at(f)))
        .collect();
    let s = read_livelink_csv_from_str(&to_livelink_csv(&take), "midnight.csv").unwrap();
    assert_eq!(s.frame_count(), 4);
    for k in 0..4 {
        assert!((s.times[k] - k as f64 / 60.0).abs() < 1e-4, "{:?}", s.times);
    }
}
