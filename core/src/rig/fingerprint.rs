//! An ordered content fingerprint of a facial part (seed 002: the bake's change detector): for a
//! mesh, FNV-1a 64 over each of its vertex order and base positions, its triangle indices, its
//! target names, and its target offsets, so a changed part is refused naming what changed.
//!
//! **Not cryptographic**: FNV-1a detects accidental or tool-made changes (a re-export that reorders
//! vertices, a decimator, an edited vertex); it neither authenticates a file nor proves where it
//! came from.

use super::mesh::Mesh;

/// FNV-1a 64 offset basis and prime.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// An FNV-1a 64 hasher over little-endian words.
#[derive(Clone, Copy, Debug)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(FNV_OFFSET)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }
}

/// The fingerprints of one mesh, each a change detector for one aspect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartFingerprint {
    /// Vertex count and base positions in vertex order (primitive by primitive).
    pub positions: u64,
    /// Triangle indices (primitive by primitive, with each primitive's vertex count).
    pub indices: u64,
    /// Target names in order.
    pub target_names: u64,
    /// Every target's position offsets (CSR rows in vertex order, entries in target order).
    pub target_offsets: u64,
}

impl PartFingerprint {
    /// The fingerprints of `mesh`.
    pub fn of(mesh: &Mesh) -> Self {
        let (mut p, mut i, mut n, mut o) = (Fnv::new(), Fnv::new(), Fnv::new(), Fnv::new());
        for prim in &mesh.primitives {
            p.u32(prim.positions.len() as u32);
            for v in &prim.positions {
                v.iter().for_each(|&x| p.f32(x));
            }
            i.u32(prim.positions.len() as u32);
            for &x in &prim.indices {
                i.u32(x);
            }
            let m = &prim.morph;
            o.u32(m.vertex_count() as u32);
            for v in 0..m.vertex_count() {
                let (a, b) = (
                    m.vertex_offsets()[v] as usize,
                    m.vertex_offsets()[v + 1] as usize,
                );
                o.u32(v as u32);
                for e in a..b {
                    o.u32(m.entry_target()[e]);
                    m.entry_position()[e].iter().for_each(|&x| o.f32(x));
                }
            }
        }
        for name in &mesh.target_names {
            n.bytes(name.as_bytes());
            n.bytes(&[0]);
        }
        PartFingerprint {
            positions: p.0,
            indices: i.0,
            target_names: n.0,
            target_offsets: o.0,
        }
    }

    /// What differs from `other`, in words (`vertex order or base positions`, `triangle
    /// indices`, `target names`, `target offsets`); empty when nothing does.
    pub fn differences(&self, other: &PartFingerprint) -> Vec<&'static str> {
        [
            (
                self.positions != other.positions,
                "vertex order or base positions",
            ),
            (self.indices != other.indices, "triangle indices"),
            (self.target_names != other.target_names, "target names"),
            (
                self.target_offsets != other.target_offsets,
                "target offsets",
            ),
        ]
        .into_iter()
        .filter_map(|(d, w)| d.then_some(w))
        .collect()
    }
}

/// FNV-1a 64 of a byte string (the bake record's own change detector).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv::new();
    h.bytes(bytes);
    h.0
}
