//! Live Link Face over real UDP loopback: the recordings replayed into a receiver with truncated,
//! oversized, garbage, duplicate and other-subject datagrams mixed in; every one counted, none
//! fatal; each played packet posing the character exactly as its values say; the take read back.

use std::net::{Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mien_core::anim::arkit::arkit_index;
use mien_core::io::livelink_csv::read_livelink_csv_from_str;
use mien_runtime::live::{
    LiveOptions, LiveReceiver, MAX_PACKET_BYTES, decode, encode, read_recording,
};
use mien_runtime::{Asset, Device, Runtime, RuntimeOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data")
        .join(rel)
}

fn loopback(delay_s: f64, subject: Option<&str>) -> LiveReceiver {
    LiveReceiver::bind(&LiveOptions {
        bind: Ipv4Addr::LOCALHOST.into(),
        port: 0,
        subject: subject.map(str::to_string),
        delay_s,
        record: true,
        ..LiveOptions::default()
    })
    .unwrap()
}

/// Poll until `n` datagrams were received (loopback delivery is quick but not instant).
fn poll_until(rx: &mut LiveReceiver, n: u64) {
    let t = Instant::now();
    while rx.stats().received < n {
        rx.poll().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "only {} of {n} arrived",
            rx.stats().received
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_replay_with_bad_datagrams_mixed_in_counts_each_and_plays_the_rest() {
    let raw = read_recording(&data("livelink-udp/debug-jawopen.gesichter")).unwrap();
    let mut rx = loopback(0.0, Some("LLV Default Device"));
    let to = rx.local_addr().unwrap();
    let tx = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let mut other = decode(&raw[3]).unwrap();
    other.subject = "someone else".into();
    let mut sent = 0u64;
    let mut send = |b: &[u8]| {
        tx.send_to(b, to).unwrap();
        sent += 1;
    };
    for (i, d) in raw.iter().enumerate() {
        send(d);
        match i {
            5 => send(&d[..d.len() / 2]),                   // truncated
            10 => send(&vec![0x06; MAX_PACKET_BYTES + 10]), // oversized
            15 => send(b"hello, world"),                    // garbage (version 104)
            20 => send(d),                                  // duplicate
            25 => send(&encode(&other)),                    // another subject
            _ => {}
        }
    }
    poll_until(&mut rx, sent);
    let st = rx.stats().clone();
    assert_eq!(st.received, 71);
    assert_eq!(st.malformed.get("truncated"), Some(&1));
    assert_eq!(st.malformed.get("oversized"), Some(&1));
    assert_eq!(st.malformed.get("version"), Some(&1));
    assert_eq!(st.duplicate, 1);
    assert_eq!(st.other_subject, 1);
    assert_eq!(st.accepted, 66);
    // jawOpen from −1 to 1: the values below 0 are outside ARKit's range and counted.
    let j = arkit_index("jawOpen").unwrap();
    let below = raw
        .iter()
        .map(|d| decode(d).unwrap().values[j])
        .filter(|v| *v < 0.0)
        .count() as u64;
    assert!(below > 0);
    assert_eq!(rx.outside_unit, below);
    // The take holds the 66 accepted packets in frame order and reads back as a stream.
    let take = read_livelink_csv_from_str(&rx.take_csv().unwrap(), "take.csv").unwrap();
    assert_eq!(take.frame_count(), 66);
}

#[test]
fn each_played_packet_poses_the_character_as_its_values_say() {
    let raw = read_recording(&data("livelink-udp/dao.gesichter")).unwrap();
    let asset = Arc::new(Asset::builtin());
    let mut rt = Runtime::new(
        asset.clone(),
        &Device::Cpu,
        &RuntimeOptions {
            instances: 1,
            lift: None,
        },
    )
    .unwrap();
    let head = asset.character().mesh_nodes()[0].index();
    let names = &asset.character().meshes[0].target_names;
    let jaw_t = names.iter().position(|n| n == "jawOpen").unwrap();
    let blink_t = names.iter().position(|n| n == "eyeBlinkLeft").unwrap();
    let mut rx = loopback(0.0, None);
    for d in raw.iter().take(40) {
        rx.offer_datagram(d);
        // Due at its frame time on the receiver's clock: at once, or after a gap in the take.
        let t = Instant::now();
        let f = loop {
            if let Some(f) = rx.next_frame() {
                break f;
            }
            assert!(t.elapsed() < Duration::from_secs(2));
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(f.due <= rx.now());
        rt.instance_mut(0)
            .unwrap()
            .set_live_frame(f.packet.blendshapes(), f.packet.angles())
            .unwrap();
        rt.update(rx.now()).unwrap();
        let w = &rt.instance(0).unwrap().pose().weights[head];
        assert_eq!(w[jaw_t], f.packet.values[arkit_index("jawOpen").unwrap()]);
        assert_eq!(
            w[blink_t],
            f.packet.values[arkit_index("eyeBlinkLeft").unwrap()]
        );
    }
    assert_eq!(rx.stats().played, 40);
    // Non-finite or mis-sized live frames are refused, the instance unchanged.
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_live_frame(&[0.0; 51], &[0.0; 9])
        .err()
        .unwrap();
    assert!(e.to_string().contains("a live frame has 52"), "{e}");
    let mut bad = [0.0f32; 52];
    bad[3] = f32::INFINITY;
    let e = rt
        .instance_mut(0)
        .unwrap()
        .set_live_frame(&bad, &[0.0; 9])
        .err()
        .unwrap();
    assert!(e.to_string().contains("value 3"), "{e}");
}

#[test]
fn a_port_in_use_and_bad_options_are_refused() {
    let rx = loopback(0.0, None);
    let port = rx.local_addr().unwrap().port();
    let e = LiveReceiver::bind(&LiveOptions {
        bind: Ipv4Addr::LOCALHOST.into(),
        port,
        ..LiveOptions::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    let e = LiveReceiver::bind(&LiveOptions {
        delay_s: f64::NAN,
        port: 0,
        ..LiveOptions::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("live delay"), "{e}");
}

#[test]
fn a_stray_packet_or_a_restarted_sender_never_stalls_and_the_take_stays_readable() {
    let raw = read_recording(&data("livelink-udp/debug-jawopen.gesichter")).unwrap();
    let mut rx = loopback(0.05, None);
    let mut stray = decode(&raw[0]).unwrap();
    stray.time.frame = i32::MAX;
    let mut played = 0;
    // The take, a stray far-future packet in the middle, then the take again 5 s later (the
    // sender restarted): a simulated clock, each packet arriving at its own frame time.
    for round in 0..2 {
        for (k, d) in raw.iter().enumerate() {
            let now = 5.0 * f64::from(round) + k as f64 / 60.0;
            if round == 0 && k == 20 {
                rx.offer_datagram_at(&encode(&stray), now);
            }
            rx.offer_datagram_at(d, now);
            while rx.next_frame_at(now + 0.051).is_some() {
                played += 1;
            }
        }
    }
    let st = rx.stats().clone();
    assert_eq!(st.late, 0, "{st:?}");
    // The stray is held and dropped; the restart is one resync (its first packet held, then
    // confirmed by the second and buffered before it).
    assert_eq!((st.stray, st.resyncs), (1, 1), "{st:?}");
    assert_eq!(st.accepted, 132, "{st:?}");
    assert_eq!(played as u64 + st.skipped, 132, "{st:?}");
    // Every accepted packet is in the take, on one time line that never goes back.
    let take = read_livelink_csv_from_str(&rx.take_csv().unwrap(), "take.csv").unwrap();
    assert_eq!(take.frame_count() as u64, st.accepted);
    assert!(take.times.windows(2).all(|w| w[1] > w[0]));
    assert!(
        *take.times.last().unwrap() < 10.0,
        "a compact take: {:?}",
        take.times.last()
    );
}
