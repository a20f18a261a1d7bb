//! The `.aosrig` container (docs/formats/aosrig.md): packing is deterministic and round-trips
//! (`parse(to_bytes(p)) == p`, `to_bytes(parse(b)) == b`, also for random small packs), and every
//! kind of broken file is refused with an error that names the field — before any array is
//! allocated for absurd sizes.

use mien_core::Error;
use mien_core::gnm::HeadExtLayout;
use mien_core::gnm::arkit::{ArkitGnmTable, ArkitGnmTerm};
use mien_core::gnm::pack::{GnmPack, MAGIC, MAX_VERTICES, PackHeader, PackJoint, VERSION};
use proptest::prelude::*;
use serde_json::{Value, json};

mod support;

const IDENTITY: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// A pack of `v` vertices with regions `regions`, basis words from `seed`, two joints.
fn small_pack(v: usize, regions: &[(&str, usize)], seed: u32) -> GnmPack {
    let layout = HeadExtLayout {
        regions: regions.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect(),
        reduced: None,
    };
    let e = layout.expr_dim();
    let n_words = (v * e * 3).div_ceil(2);
    let mut basis: Vec<u32> = (0..n_words as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) ^ seed) & 0x3bff_3bff)
        .collect();
    if (v * e * 3) % 2 == 1 {
        if let Some(w) = basis.last_mut() {
            *w &= 0xffff;
        }
    }
    let mut table = ArkitGnmTable::new();
    table.insert(
        "jawOpen".into(),
        vec![ArkitGnmTerm {
            region: regions[0].0.into(),
            index: 0,
            gain: 1.0,
        }],
    );
    GnmPack {
        header: PackHeader {
            version: VERSION,
            model: "gnm".into(),
            units: "m".into(),
            vertex_count: v as u64,
            coeff_count: e as u64,
            head_ext: layout,
            max_influence: 4,
            joints: vec![
                PackJoint {
                    name: "root".into(),
                    parent: -1,
                },
                PackJoint {
                    name: "head".into(),
                    parent: 0,
                },
            ],
            eye_joints: None,
            bind_transform: IDENTITY,
            names: (0..e).map(|i| format!("shape{i}")).collect(),
            arkit: Some(table),
            source: json!({"test": seed}),
            buffers: Vec::new(),
        },
        neutral: (0..v).map(|i| [i as f32 * 0.01, 0.1, -0.02]).collect(),
        basis,
        basis_scale: (0..e).map(|i| 0.001 * (i + 1) as f32).collect(),
        eye_positions: [[0.03, 0.04, 0.08], [-0.03, 0.04, 0.08]],
        eye_weights: (0..2 * v).map(|i| (i % 2) as f32).collect(),
        faces: vec![[0, 1, 2]],
        quads: Some(vec![[0, 1, 2, 0]]),
        uv: None,
        seam: None,
        skin_index: vec![[0, 1, 0, 0]; v],
        skin_weight: vec![[0.75, 0.25, 0.0, 0.0]; v],
        rest_world: vec![IDENTITY, IDENTITY],
    }
}

/// `(header JSON, blob area)` of a pack.
fn split(bytes: &[u8]) -> (Value, Vec<u8>) {
    let h = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    (
        serde_json::from_slice(&bytes[16..16 + h]).unwrap(),
        bytes[16 + h..].to_vec(),
    )
}

/// A pack from an edited header and a blob area.
fn join(header: &Value, area: &[u8]) -> Vec<u8> {
    let mut json = serde_json::to_vec(header).unwrap();
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(area);
    out
}

fn valid() -> Vec<u8> {
    small_pack(5, &[("left_eye", 2), ("lower_face", 1)], 7)
        .to_bytes()
        .unwrap()
}

/// Edit the header of the valid pack and parse it.
fn edited(edit: impl Fn(&mut Value)) -> Error {
    let (mut h, area) = split(&valid());
    edit(&mut h);
    GnmPack::parse(&join(&h, &area), "t.aosrig").unwrap_err()
}

/// The buffer entry named `name`.
fn buffer<'a>(h: &'a mut Value, name: &str) -> &'a mut Value {
    h["buffers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|b| b["name"] == name)
        .unwrap()
}

#[track_caller]
fn names_field(e: &Error, field: &str) {
    match e {
        Error::Format { file, field: f, .. } => assert!(
            file == "t.aosrig" && f.contains(field),
            "expected field `{field}`: {e}"
        ),
        Error::Limit { what, .. } => assert!(
            what.contains("t.aosrig") && what.contains(field),
            "expected `{field}`: {e}"
        ),
        _ => panic!("expected a Format or Limit error naming `{field}`: {e}"),
    }
}

#[test]
fn packing_is_deterministic_and_round_trips() {
    let p = small_pack(5, &[("left_eye", 2), ("lower_face", 1)], 7);
    let a = p.to_bytes().unwrap();
    assert_eq!(a, p.clone().to_bytes().unwrap());
    assert_eq!(&a[..8], b"\x89AOSRIG\n");
    let q = GnmPack::parse(&a, "t.aosrig").unwrap();
    assert_eq!(q.to_bytes().unwrap(), a);
    // Everything but the buffer list (which `to_bytes` fills) comes back as it was.
    let mut p2 = p.clone();
    p2.header.buffers = q.header.buffers.clone();
    assert_eq!(q, p2);
    // The header's keys are in the documented order.
    let (h, _) = split(&a);
    let keys: Vec<&str> = h.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "version",
            "model",
            "units",
            "vertexCount",
            "coeffCount",
            "headExt",
            "maxInfluence",
            "joints",
            "eyeJoints",
            "bindTransform",
            "names",
            "arkit",
            "source",
            "buffers"
        ]
    );
    // Blobs are 8-byte aligned, in the written order.
    let names: Vec<&str> = h["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "neutral",
            "basis",
            "basis_scale",
            "eye_positions",
            "eye_weights",
            "faces",
            "quads",
            "skin_index",
            "skin_weight",
            "joint_parents",
            "rest_world"
        ]
    );
    assert!(
        h["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["offset"].as_u64().unwrap() % 8 == 0)
    );
}

#[test]
fn bad_magic_and_header_length() {
    let mut b = valid();
    b[1] = b'X';
    names_field(&GnmPack::parse(&b, "t.aosrig").unwrap_err(), "magic");
    names_field(
        &GnmPack::parse(b"\x89AOS", "t.aosrig").unwrap_err(),
        "magic",
    );
    let mut b = valid();
    let past = (b.len() as u32).to_le_bytes();
    b[8..12].copy_from_slice(&past);
    names_field(
        &GnmPack::parse(&b, "t.aosrig").unwrap_err(),
        "header length",
    );
    // Every truncation is refused, none panics.
    let b = valid();
    for n in 0..b.len() {
        assert!(
            GnmPack::parse(&b[..n], "t.aosrig").is_err(),
            "prefix of {n} bytes parsed"
        );
    }
}

#[test]
fn unknown_version_model_units_and_keys() {
    names_field(&edited(|h| h["version"] = json!(2)), "version");
    names_field(&edited(|h| h["model"] = json!("orl")), "model");
    names_field(&edited(|h| h["units"] = json!("mm")), "units");
    names_field(&edited(|h| h["colour"] = json!(1)), "header");
}

#[test]
fn blobs_that_disagree() {
    // A length that disagrees with its shape.
    names_field(
        &edited(|h| buffer(h, "neutral")["length"] = json!(56)),
        "buffers.neutral.length",
    );
    // A missing required blob.
    names_field(
        &edited(|h| {
            h["buffers"]
                .as_array_mut()
                .unwrap()
                .retain(|b| b["name"] != "basis")
        }),
        "buffers.basis",
    );
    names_field(
        &edited(|h| {
            h["buffers"]
                .as_array_mut()
                .unwrap()
                .retain(|b| b["name"] != "rest_world")
        }),
        "buffers.rest_world",
    );
    // A misaligned offset.
    names_field(
        &edited(|h| {
            let b = buffer(h, "basis_scale");
            b["offset"] = json!(b["offset"].as_u64().unwrap() + 4);
        }),
        "buffers.basis_scale.offset",
    );
    // A wrong dtype.
    names_field(
        &edited(|h| buffer(h, "faces")["dtype"] = json!("u16")),
        "buffers.faces.dtype",
    );
    // A blob past the end of the file.
    names_field(
        &edited(|h| buffer(h, "rest_world")["offset"] = json!(1 << 20)),
        "buffers.rest_world",
    );
}

#[test]
fn the_blob_table_as_a_whole() {
    let index_of = |e: &Error| match e {
        Error::Format { field, index, .. } => (field.clone(), *index),
        _ => panic!("expected a Format error: {e}"),
    };
    // An unknown name, at its index (checked before any blob is looked up).
    let e = edited(|h| buffer(h, "faces")["name"] = json!("facez"));
    let (_, area) = split(&valid());
    let (h, _) = split(&valid());
    let at = |name: &str| {
        h["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .position(|b| b["name"] == name)
    };
    assert_eq!(index_of(&e), ("buffers".into(), at("faces")));
    assert!(e.to_string().contains("unknown blob `facez`"), "{e}");
    // A duplicate: a second `faces` entry pointing at the same bytes.
    let e = edited(|h| {
        let dup = buffer(h, "faces").clone();
        h["buffers"].as_array_mut().unwrap().push(dup);
    });
    let n = h["buffers"].as_array().unwrap().len();
    assert_eq!(index_of(&e), ("buffers".into(), Some(n)));
    assert!(e.to_string().contains("listed again"), "{e}");
    // Overlap: basis_scale moved onto the basis (same length and alignment rules still hold).
    let e = edited(|h| {
        let off = buffer(h, "basis")["offset"].clone();
        buffer(h, "basis_scale")["offset"] = off;
    });
    assert!(e.to_string().contains("overlaps"), "{e}");
    // Trailing bytes after the last blob.
    let mut bytes = valid();
    bytes.extend_from_slice(&[0u8; 8]);
    let e = GnmPack::parse(&bytes, "t.aosrig").unwrap_err();
    assert!(e.to_string().contains("8 bytes after the last blob"), "{e}");
    // Unlisted bytes between blobs: the same area with 8 zero bytes inserted before the last
    // blob and its offset moved past them.
    let (mut h2, _) = split(&valid());
    let last = h2["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|b| b["offset"].as_u64().unwrap())
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    let off = buffer(&mut h2, &last)["offset"].as_u64().unwrap() as usize;
    buffer(&mut h2, &last)["offset"] = json!(off + 8);
    let mut area2 = area[..off].to_vec();
    area2.extend_from_slice(&[0u8; 8]);
    area2.extend_from_slice(&area[off..]);
    let e = GnmPack::parse(&join(&h2, &area2), "t.aosrig").unwrap_err();
    assert!(e.to_string().contains("unlisted bytes"), "{e}");
    // The valid pack itself still parses (the checks do not refuse what the writer makes).
    assert!(GnmPack::parse(&valid(), "t.aosrig").is_ok());
}

#[test]
fn arrays_that_contradict_the_header() {
    // V: the neutral blob claims one vertex more.
    names_field(
        &edited(|h| buffer(h, "neutral")["shape"] = json!([6, 3])),
        "buffers.neutral.shape",
    );
    // E: the header's coefficient count against its regions, then against the basis.
    names_field(&edited(|h| h["coeffCount"] = json!(4)), "coeffCount");
    names_field(
        &edited(|h| buffer(h, "basis")["shape"] = json!([5, 4, 3])),
        "buffers.basis.shape",
    );
    // Joints: a third joint without a rest matrix or parent entry.
    names_field(
        &edited(|h| {
            h["joints"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "x", "parent": 1}))
        }),
        "buffers.joint_parents.shape",
    );
    // A parent that is not an earlier joint.
    names_field(&edited(|h| h["joints"][0]["parent"] = json!(1)), "joints");
    // Influence count.
    names_field(&edited(|h| h["maxInfluence"] = json!(8)), "maxInfluence");
    names_field(
        &edited(|h| buffer(h, "skin_index")["shape"] = json!([5, 8])),
        "buffers.skin_index.shape",
    );
    // Names for a different E.
    names_field(
        &edited(|h| {
            h["names"].as_array_mut().unwrap().pop();
        }),
        "names",
    );
}

#[test]
fn absurd_sizes_are_refused_before_allocation() {
    // 2^40 vertices in a file of a few hundred bytes: a limit, named, from the header alone.
    let e = edited(|h| h["vertexCount"] = json!(1u64 << 40));
    assert!(
        matches!(e, Error::Limit { found, .. } if found == 1 << 40),
        "{e}"
    );
    names_field(&e, "vertexCount");
    names_field(
        &edited(|h| {
            h["joints"] = json!(
                (0..2000)
                    .map(|i| json!({"name": "j", "parent": i - 1}))
                    .collect::<Vec<_>>()
            )
        }),
        "joints",
    );
    // Just under the vertex cap, every blob then claims gigabytes the file does not have: refused
    // as a blob past the blob area, before reading it.
    let e = edited(|h| {
        let v = MAX_VERTICES;
        h["vertexCount"] = json!(v);
        for (name, shape) in [
            ("neutral", json!([v, 3])),
            ("basis", json!([v, 3, 3])),
            ("eye_weights", json!([2, v])),
            ("skin_index", json!([v, 4])),
            ("skin_weight", json!([v, 4])),
        ] {
            let b = buffer(h, name);
            let size = if name == "skin_index" || name == "skin_weight" || name == "basis" {
                2
            } else {
                4
            };
            b["length"] = json!(
                shape
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .product::<u64>()
                    * size
            );
            b["shape"] = shape;
        }
    });
    names_field(&e, "buffers.neutral");
    assert!(e.to_string().contains("past the blob area"), "{e}");
    // A shape whose byte count overflows u64.
    names_field(
        &edited(|h| buffer(h, "faces")["shape"] = json!([u64::MAX / 2, 3])),
        "buffers.faces",
    );
}

fn arb_pack() -> impl Strategy<Value = GnmPack> {
    (
        1usize..12,
        prop::collection::vec(1usize..4, 1..4),
        any::<u32>(),
        any::<bool>(),
        prop::collection::vec(-1.0e3f32..1.0e3, 16),
        prop::collection::vec(0u16..0x3c00, 4),
    )
        .prop_map(|(v, counts, seed, extras, m, w)| {
            let names = ["left_eye", "right_eye", "lower_face"];
            let regions: Vec<(&str, usize)> = counts
                .iter()
                .enumerate()
                .map(|(i, c)| (names[i], *c))
                .collect();
            let mut p = small_pack(v, &regions, seed);
            p.header.bind_transform = m.clone().try_into().unwrap();
            p.rest_world[1] = m.try_into().unwrap();
            let w: Vec<f32> = w
                .iter()
                .map(|b| half::f16::from_bits(*b).to_f32())
                .collect();
            p.skin_weight = (0..v)
                .map(|i| [w[i % 4], w[(i + 1) % 4], 0.0, w[(i + 2) % 4]])
                .collect();
            p.neutral = (0..v)
                .map(|i| [seed as f32 * 1e-9, -(i as f32) / 7.0, 1.0 / (i + 1) as f32])
                .collect();
            if extras {
                p.uv = Some((0..v).map(|i| [i as f32 / 3.0, 0.5]).collect());
                p.seam = Some(vec![[0.001, -0.002, 0.0]; v]);
                p.quads = None;
                p.header.names.clear();
                p.header.arkit = None;
                p.header.eye_joints = Some([0, 1]);
            }
            if v < 3 {
                p.faces.clear();
                p.quads = None;
            }
            p
        })
}

proptest! {
    #![proptest_config(support::proptest_config(64))]

    #[test]
    fn random_packs_round_trip_byte_identically(p in arb_pack()) {
        let a = p.to_bytes().unwrap();
        let q = GnmPack::parse(&a, "p.aosrig").unwrap();
        let b = q.to_bytes().unwrap();
        prop_assert_eq!(&a, &b);
        let mut p2 = p.clone();
        p2.header.buffers = q.header.buffers.clone();
        prop_assert_eq!(q, p2);
    }
}

/// The valid pack with bytes of blob `name` rewritten by `edit` (offset within the blob).
fn blob_edited(name: &str, edit: impl Fn(&mut [u8])) -> Error {
    let (mut h, mut area) = split(&valid());
    let b = buffer(&mut h, name);
    let (off, len) = (
        b["offset"].as_u64().unwrap() as usize,
        b["length"].as_u64().unwrap() as usize,
    );
    edit(&mut area[off..off + len]);
    GnmPack::parse(&join(&h, &area), "t.aosrig").unwrap_err()
}

#[track_caller]
fn refused_at(e: &Error, field: &str, index: Option<usize>, words: &str) {
    match e {
        Error::Format {
            file,
            field: f,
            index: i,
            reason,
        } => assert!(
            file == "t.aosrig" && f == field && *i == index && reason.contains(words),
            "expected {field}{index:?} ({words}): {e}"
        ),
        _ => panic!("expected a Format error at {field}: {e}"),
    }
}

#[test]
fn values_that_cannot_pose_a_head_are_refused() {
    // A NaN half in the basis (the 8th half: vertex 0, coefficient 2, axis 1 of E = 3).
    let e = blob_edited("basis", |b| {
        b[14..16].copy_from_slice(&0x7e00u16.to_le_bytes())
    });
    refused_at(&e, "basis", Some(7), "vertex 0, coefficient 2");
    // Infinity too.
    let e = blob_edited("basis", |b| {
        b[0..2].copy_from_slice(&0x7c00u16.to_le_bytes())
    });
    refused_at(&e, "basis", Some(0), "not finite");
    // A finite scale that moves a vertex kilometres away: 3e38 × the basis.
    let e = blob_edited("basis_scale", |b| {
        b[4..8].copy_from_slice(&3e38f32.to_le_bytes())
    });
    refused_at(&e, "basis_scale", Some(1), "over 1e6 m");
    // A neutral far beyond any head.
    let e = blob_edited("neutral", |b| {
        b[12..16].copy_from_slice(&1e30f32.to_le_bytes())
    });
    refused_at(&e, "neutral", Some(1), "within ±1e6 m");
    // A NaN eye centre (right eye, y).
    let e = blob_edited("eye_positions", |b| {
        b[16..20].copy_from_slice(&f32::NAN.to_le_bytes())
    });
    refused_at(&e, "eye_positions", Some(1), "not finite");
    // A singular or NaN rest matrix, a singular bind transform.
    let e = blob_edited("rest_world", |b| b[64..].fill(0));
    refused_at(&e, "rest_world", Some(1), "invertible");
    let e = blob_edited("rest_world", |b| {
        b[0..4].copy_from_slice(&f32::NAN.to_le_bytes())
    });
    refused_at(&e, "rest_world", Some(0), "invertible");
    let e = edited(|h| h["bindTransform"] = json!(vec![0.0; 16]));
    refused_at(&e, "bindTransform", None, "invertible");
}

#[test]
fn an_arkit_table_that_does_not_resolve_is_refused() {
    let term = |region: &str, index: usize, gain: f64| json!([{"region": region, "index": index, "gain": gain}]);
    let e = edited(|h| h["arkit"]["jawOpen"] = term("left_eye", 999, 1.0));
    refused_at(
        &e,
        "arkit.jawOpen",
        Some(0),
        "index 999 past region `left_eye` of 2",
    );
    let e = edited(|h| h["arkit"]["jawOpen"] = term("jaw", 0, 1.0));
    refused_at(
        &e,
        "arkit.jawOpen",
        Some(0),
        "region `jaw` is not in the head_ext layout",
    );
    let e = edited(|h| h["arkit"]["jawOpenWide"] = term("left_eye", 0, 1.0));
    refused_at(&e, "arkit.jawOpenWide", None, "not an ARKit-52 channel");
}
