//! Mirror-symmetric grid topology shared by every part of the sample head: rings of vertices
//! around an axis (skin, eyeballs, mouth cavity, tongue) and open sheets (teeth).
//!
//! Columns carry a signed index `j` whose mirror image through x = 0 is `−j`; quads on the +X side
//! are split along one diagonal and quads on the −X side along the mirrored one, so the triangle
//! set is its own mirror image and normals computed from it mirror exactly. Winding: a ring index
//! that grows "up" and a column index that grows "right", seen from the side the normals point to,
//! give counter-clockwise triangles (glTF 2.0 §3.7.2.1 front faces).

/// A triangulated grid with its vertex mirror map.
#[derive(Clone, Debug, Default)]
pub(super) struct Topology {
    /// Vertex count.
    pub vertex_count: usize,
    /// Triangles `(T*3,)`.
    pub indices: Vec<u32>,
    /// The band (lower ring index) each triangle belongs to `(T,)`; caps use the ring they fan to.
    pub band: Vec<u32>,
    /// Mirror partner of each vertex `(V,)`.
    pub mirror: Vec<u32>,
}

/// Rings of vertices with per-ring even column counts; neighbouring rings have equal counts or a
/// 2:1 ratio. Ring `r` column `c` (`0 ≤ c < n_r`) is the signed column `j = c − n_r/2`.
#[derive(Clone, Debug)]
pub(super) struct Rings {
    /// Column count of each ring, bottom to top.
    pub counts: Vec<usize>,
    /// A single vertex below ring 0 (index 0).
    pub cap_start: bool,
    /// A single vertex above the last ring (the last index).
    pub cap_end: bool,
}

impl Rings {
    /// Index of ring `r`'s first vertex.
    pub fn offset(&self, r: usize) -> usize {
        usize::from(self.cap_start) + self.counts[..r].iter().sum::<usize>()
    }

    /// Index of the vertex at ring `r`, signed column `j` (wrapped into the ring).
    pub fn vertex(&self, r: usize, j: i64) -> usize {
        let n = self.counts[r] as i64;
        self.offset(r) + (j + n / 2).rem_euclid(n) as usize
    }

    /// Total vertices including caps.
    pub fn vertex_count(&self) -> usize {
        usize::from(self.cap_start) + self.counts.iter().sum::<usize>() + usize::from(self.cap_end)
    }

    /// Build the triangles and the mirror map.
    pub fn topology(&self) -> Topology {
        let nv = self.vertex_count();
        let mut t = Topology {
            vertex_count: nv,
            ..Default::default()
        };
        t.mirror = (0..nv as u32).collect();
        for (r, &n) in self.counts.iter().enumerate() {
            let o = self.offset(r);
            for c in 0..n {
                t.mirror[o + c] = (o + (n - c) % n) as u32;
            }
        }
        for r in 0..self.counts.len().saturating_sub(1) {
            let (n0, n1) = (self.counts[r], self.counts[r + 1]);
            let (o0, o1) = (self.offset(r), self.offset(r + 1));
            let a = |c: usize| (o0 + c % n0) as u32;
            let b = |c: usize| (o1 + c % n1) as u32;
            let mut tri = |x: u32, y: u32, z: u32| {
                t.indices.extend_from_slice(&[x, y, z]);
                t.band.push(r as u32);
            };
            if n0 == n1 {
                for c in 0..n0 {
                    let plus_x = c >= n0 / 2;
                    quad(&mut tri, a(c), a(c + 1), b(c + 1), b(c), plus_x);
                }
            } else if n0 == 2 * n1 {
                for k in 0..n1 {
                    tri(a(2 * k), a(2 * k + 1), b(k));
                    tri(a(2 * k + 1), a(2 * k + 2), b(k + 1));
                    tri(a(2 * k + 1), b(k + 1), b(k));
                }
            } else {
                debug_assert_eq!(n1, 2 * n0, "ring counts must be equal or 2:1");
                for k in 0..n0 {
                    tri(a(k), a(k + 1), b(2 * k + 1));
                    tri(a(k), b(2 * k + 1), b(2 * k));
                    tri(a(k + 1), b(2 * k + 2), b(2 * k + 1));
                }
            }
        }
        if self.cap_start {
            let n = self.counts[0];
            for c in 0..n {
                t.indices
                    .extend_from_slice(&[0, (1 + (c + 1) % n) as u32, (1 + c) as u32]);
                t.band.push(0);
            }
        }
        if self.cap_end {
            let last = self.counts.len() - 1;
            let (n, o, cap) = (self.counts[last], self.offset(last), (nv - 1) as u32);
            for c in 0..n {
                t.indices
                    .extend_from_slice(&[(o + c) as u32, (o + (c + 1) % n) as u32, cap]);
                t.band.push(last as u32);
            }
        }
        t
    }
}

/// Split the quad `a b c d` (counter-clockwise: lower-left, lower-right, upper-right, upper-left)
/// along `a–c` on the +X side and along `b–d` on the −X side.
fn quad(tri: &mut impl FnMut(u32, u32, u32), a: u32, b: u32, c: u32, d: u32, plus_x: bool) {
    if plus_x {
        tri(a, b, c);
        tri(a, c, d);
    } else {
        tri(a, b, d);
        tri(b, c, d);
    }
}

/// An open sheet of `rows × (2·half + 1)` vertices, columns `j = −half ..= half` (vertex
/// `r·(2·half+1) + j + half`), mirror `j ↔ −j`.
pub(super) fn sheet(rows: usize, half: usize) -> Topology {
    let cols = 2 * half + 1;
    let id = |r: usize, c: usize| (r * cols + c) as u32;
    let mut t = Topology {
        vertex_count: rows * cols,
        ..Default::default()
    };
    t.mirror = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| id(r, cols - 1 - c)))
        .collect();
    for r in 0..rows.saturating_sub(1) {
        for c in 0..cols - 1 {
            let mut tri = |x: u32, y: u32, z: u32| {
                t.indices.extend_from_slice(&[x, y, z]);
                t.band.push(r as u32);
            };
            quad(
                &mut tri,
                id(r, c),
                id(r, c + 1),
                id(r + 1, c + 1),
                id(r + 1, c),
                c >= half,
            );
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The triangle set maps onto itself under the mirror map (as unordered vertex triples).
    fn assert_mirror_closed(t: &Topology) {
        let key = |a: u32, b: u32, c: u32| {
            let mut k = [a, b, c];
            k.sort_unstable();
            k
        };
        let set: HashSet<[u32; 3]> = t
            .indices
            .chunks_exact(3)
            .map(|x| key(x[0], x[1], x[2]))
            .collect();
        for x in t.indices.chunks_exact(3) {
            let m = |i: u32| t.mirror[i as usize];
            assert!(
                set.contains(&key(m(x[0]), m(x[1]), m(x[2]))),
                "mirror of {x:?} missing"
            );
        }
        for (v, &m) in t.mirror.iter().enumerate() {
            assert_eq!(t.mirror[m as usize] as usize, v, "mirror is an involution");
        }
    }

    #[test]
    fn rings_with_transitions_are_closed_and_symmetric() {
        let rings = Rings {
            counts: vec![8, 16, 16, 8, 4],
            cap_start: true,
            cap_end: true,
        };
        let t = rings.topology();
        assert_eq!(t.vertex_count, 2 + 8 + 16 + 16 + 8 + 4);
        assert_mirror_closed(&t);
        // A closed surface: every edge is shared by exactly two triangles, in opposite directions.
        let mut edges = HashSet::new();
        for x in t.indices.chunks_exact(3) {
            for k in 0..3 {
                assert!(
                    edges.insert((x[k], x[(k + 1) % 3])),
                    "edge used twice in one direction"
                );
            }
        }
        for &(a, b) in &edges {
            assert!(edges.contains(&(b, a)), "open edge {a}-{b}");
        }
        // Euler characteristic of a sphere.
        assert_eq!(
            t.vertex_count as i64 - edges.len() as i64 / 2 + t.band.len() as i64,
            2
        );
    }

    #[test]
    fn sheet_is_symmetric() {
        let t = sheet(4, 3);
        assert_eq!(t.indices.len(), 3 * 2 * 3 * 6);
        assert_mirror_closed(&t);
    }
}
