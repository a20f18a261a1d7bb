// Morph-target blend over the active weight slots, one workgroup per 64-vertex tile and block of 8
// instances, one invocation per vertex of the tile:
//   p = base_p + Σ w[t]·δp,   n = normalize(base_n + Σ w[t]·δn)
// Entries with w == 0 are skipped; a vertex with no entry of non-zero weight is copied bit-identical
// (its normal is not renormalised); a blended normal of zero length keeps the base normal.
// Source: DESIGN.md "Morph set"; the CPU reference is mien_core::rig::RigData::morph_vertex.
//
// Active-target walk: the workgroup walks only its block's active slots (`active_slots`, those with a
// non-zero weight for one of the block's 8 instances, ascending), never the rig's zero weights. For
// each it looks up the tile's entries of that slot in one read (`tile_slots[tile·W + t]`: first
// entry and a 64-bit mask of the tile's vertices it moves); invocation l owns the entry
// `first + popcount(mask below l)` when bit l is set. The 64 invocations look up 64 active slots at
// a time together and stage, in slot order, the lookups and 8 weights of those that move a vertex
// of the tile (most do not: a target moves a region of the face), so the walk's iterations are the
// tile's (slot, vertices) pairs that matter, it reads no storage except the deltas of the entries
// that move a vertex, and a tile's entries of one slot are neighbours in memory (coalesced). Rows
// of the rig hold strictly ascending slots, so walking the slots ascending applies each vertex's
// entries in row order: per instance the operations and their order are the reference's, and no
// instance's bits depend on the batch. The only atomics are the staging round's bit set (OR, whose
// result does not depend on order); the data is never accumulated atomically.
//
// Instances (N characters sharing one rig): the dispatch's z dimension is the block b of 8 instances
// (num_workgroups.z = ⌈N/8⌉). Instance i of block b writes `morphed[((8b + i)·count + v)·6 ..]` when
// 8b + i < N, N = arrayLength(morphed) / (6·count). A single rig is N = 1: one block, instance 0.
//
// Entry `skinned` (rigs without tangents): the same walk, then linear-blend skinning in registers
// before the one store, so binding 6 receives the *posed* vertices and the (N,V,6) morphed copy is
// never written or read back: per instance, the morph normal's renormalisation above, then
//   p' = Σ wₖ·(Mₖ·(p,1)).xyz,   n' = normalize_or_zero(Σ wₖ·(Nₖ·n))
// exactly as skin.wgsl computes it (slots of weight 0 skipped, joints summed in slot order; glTF 2.0
// §3.7.3; the CPU reference is mien_core::rig::skin::skin_vertex). Instance i's palette is entries
// [i·P/N, (i+1)·P/N) of `palette`. A vertex's joints and weights are read once for the block's 8
// instances.

struct DispatchParams {
    count: u32,       // vertices in this chunk
    row_width: u32,   // invocations per dispatch row (workgroups_x · 64), for 2D dispatches
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: DispatchParams;
// Bind position xyz then normal xyz per vertex: (V,6) f32.
@group(0) @binding(1) var<storage, read> base: array<f32>;
// Per tile and slot (⌈V/64⌉, W): first entry, lane mask 0–31, lane mask 32–63, 0.
@group(0) @binding(2) var<storage, read> tile_slots: array<vec4<u32>>;
// The active slots, packed: block offsets (⌈N/8⌉+1,), then the list — block b's slots, ascending,
// are list entries off[b] .. off[b+1]. Sized for every slot of every block:
// ⌈N/8⌉ + 1 + ⌈N/8⌉·W u32 (W is derived from this length).
@group(0) @binding(3) var<storage, read> active_slots: array<u32>;
// Position delta xyz then normal delta xyz per entry, in (tile, slot, vertex) order: (nnz,6) f32.
@group(0) @binding(4) var<storage, read> entry_delta: array<f32>;
// The 8 weights of each listed slot (list entry k: vec4 pair 2k, 2k + 1; lane j is instance 8b + j).
@group(0) @binding(5) var<storage, read> weights: array<vec4<f32>>;
// Morphed (`main`) or posed (`skinned`, metres) position xyz then normal xyz per instance and
// vertex: (N,V,6) f32.
@group(0) @binding(6) var<storage, read_write> morphed: array<f32>;
// `skinned` only (`main` has it in its layout, unread): per vertex its 4 palette indices then its
// 4 skin weights (bit patterns of f32, summing to 1): (V,2) vec4<u32>.
@group(0) @binding(7) var<storage, read> skin: array<vec4<u32>>;
// `skinned` only: per instance the palette (P,) — joint matrix and normal matrix — (N·P,).
@group(0) @binding(8) var<storage, read> palette: array<Joint>;

const TILE: u32 = 64u;

// One palette entry: the joint matrix and its normal matrix (3×3 in the upper-left, column-major).
struct Joint {
    m: mat4x4<f32>,
    n: mat4x4<f32>,
}

// Up to 64 active slots at a time, those that move a vertex of the tile: the tile's lookup and the
// block's 8 weights of each.
var<workgroup> staged_slot: array<vec4<u32>, 64>;
var<workgroup> staged_w: array<vec4<f32>, 128>;
var<workgroup> staged_count: u32;
var<workgroup> staged_first: u32;
// Which of this round's 64 lookups move a vertex of the tile (bit l: lookup l).
var<workgroup> nonempty: array<atomic<u32>, 2>;

// The block's 8 blended positions and normals, as named members (a dynamically indexed array
// would live in local memory).
struct Blend {
    p0: vec3<f32>,
    n0: vec3<f32>,
    p1: vec3<f32>,
    n1: vec3<f32>,
    p2: vec3<f32>,
    n2: vec3<f32>,
    p3: vec3<f32>,
    n3: vec3<f32>,
    p4: vec3<f32>,
    n4: vec3<f32>,
    p5: vec3<f32>,
    n5: vec3<f32>,
    p6: vec3<f32>,
    n6: vec3<f32>,
    p7: vec3<f32>,
    n7: vec3<f32>,
}

// The morph normal: renormalised when an entry touched it; a zero, infinite or NaN length keeps the
// base normal.
fn morph_normal(n_in: vec3<f32>, base_n: vec3<f32>, touched: bool) -> vec3<f32> {
    if (!touched) {
        return n_in;
    }
    let len2 = dot(n_in, n_in);
    // len2 < f32::MAX also rejects +inf; NaN fails both comparisons.
    if (len2 > 0.0 && len2 <= 3.4028235e38) {
        return n_in * (1.0 / sqrt(len2));
    }
    return base_n;
}

fn store(inst: u32, v: u32, p: vec3<f32>, n: vec3<f32>) {
    let o = 6u * (inst * params.count + v);
    morphed[o] = p.x;
    morphed[o + 1u] = p.y;
    morphed[o + 2u] = p.z;
    morphed[o + 3u] = n.x;
    morphed[o + 4u] = n.y;
    morphed[o + 5u] = n.z;
}

// Instance `inst`'s morphed vertex v (`main`).
fn put(inst: u32, v: u32, n_inst: u32, p: vec3<f32>, n_in: vec3<f32>, base_n: vec3<f32>, touched: bool) {
    if (inst >= n_inst) {
        return;
    }
    store(inst, v, p, morph_normal(n_in, base_n, touched));
}

// Instance `inst`'s posed vertex v (`skinned`): the morphed vertex skinned by the instance's palette.
fn put_skinned(
    inst: u32,
    v: u32,
    n_inst: u32,
    p_in: vec3<f32>,
    n_in: vec3<f32>,
    base_n: vec3<f32>,
    touched: bool,
    j: vec4<u32>,
    w: vec4<f32>,
) {
    if (inst >= n_inst) {
        return;
    }
    let p = vec4<f32>(p_in, 1.0);
    let n = morph_normal(n_in, base_n, touched);
    let first_joint = inst * (arrayLength(&palette) / n_inst);
    var po = vec3<f32>(0.0);
    var no = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let wk = w[k];
        if (wk == 0.0) {
            continue;
        }
        let joint = palette[first_joint + j[k]];
        po = po + wk * (joint.m * p).xyz;
        let nm = mat3x3<f32>(joint.n[0].xyz, joint.n[1].xyz, joint.n[2].xyz);
        no = no + wk * (nm * n);
    }
    let len2 = dot(no, no);
    if (len2 > 0.0 && len2 <= 3.4028235e38) {
        no = no * (1.0 / sqrt(len2));
    } else {
        no = vec3<f32>(0.0);
    }
    store(inst, v, po, no);
}

// The walk's result for one vertex: the block's 8 blended vertices, which of them an entry touched
// (bit i: instance 8b + i), and the base normal.
struct Walked {
    s: Blend,
    touched: u32,
    base_n: vec3<f32>,
}

// The active-target walk of tile `tile` for block `block` of `blocks` (every invocation of the
// workgroup calls it: it holds barriers). Vertex v = tile·64 + lane, `live` when inside the chunk.
fn walk(tile: u32, lane: u32, block: u32, blocks: u32, v: u32, live: bool) -> Walked {
    let slots = (arrayLength(&active_slots) - blocks - 1u) / blocks;  // W
    let list = blocks + 1u;  // where the list starts
    if (lane == 0u) {
        staged_first = active_slots[block];
        staged_count = active_slots[block + 1u] - staged_first;
    }
    let n_active = workgroupUniformLoad(&staged_count);
    let a0 = workgroupUniformLoad(&staged_first);  // this block's first list entry

    var base_p = vec3<f32>(0.0);
    var base_n = vec3<f32>(0.0);
    if (live) {
        let b = 6u * v;
        base_p = vec3<f32>(base[b], base[b + 1u], base[b + 2u]);
        base_n = vec3<f32>(base[b + 3u], base[b + 4u], base[b + 5u]);
    }
    var s: Blend;
    s.p0 = base_p; s.n0 = base_n;
    s.p1 = base_p; s.n1 = base_n;
    s.p2 = base_p; s.n2 = base_n;
    s.p3 = base_p; s.n3 = base_n;
    s.p4 = base_p; s.n4 = base_n;
    s.p5 = base_p; s.n5 = base_n;
    s.p6 = base_p; s.n6 = base_n;
    s.p7 = base_p; s.n7 = base_n;
    var touched = 0u;
    // Lanes 0–31 test mask word y, lanes 32–63 word z; `below` keeps the lanes under this one.
    let hi = lane >= 32u;
    let bit = 1u << (lane & 31u);
    let below = bit - 1u;

    for (var k0 = 0u; k0 < n_active; k0 = k0 + TILE) {
        // Stage this round's active slots that move a vertex of the tile, compacted in order:
        // each invocation looks one slot up, the non-empty ones set their bit (OR commutes: the
        // same bits whatever the order), and each takes the place given by the bits below its own.
        if (lane == 0u) {
            atomicStore(&nonempty[0], 0u);
            atomicStore(&nonempty[1], 0u);
        }
        workgroupBarrier();
        let k = k0 + lane;
        var ts = vec4<u32>(0u);
        var t = 0u;
        if (k < n_active) {
            t = active_slots[list + a0 + k];
            ts = tile_slots[tile * slots + t];
            if ((ts.y | ts.z) != 0u) {
                if (hi) {
                    atomicOr(&nonempty[1], bit);
                } else {
                    atomicOr(&nonempty[0], bit);
                }
            }
        }
        workgroupBarrier();
        let f0 = atomicLoad(&nonempty[0]);
        let f1 = atomicLoad(&nonempty[1]);
        if ((ts.y | ts.z) != 0u) {
            var c = countOneBits(f0 & below);
            if (hi) {
                c = countOneBits(f0) + countOneBits(f1 & below);
            }
            staged_slot[c] = ts;
            staged_w[2u * c] = weights[2u * (a0 + k)];
            staged_w[2u * c + 1u] = weights[2u * (a0 + k) + 1u];
        }
        workgroupBarrier();
        let m = countOneBits(f0) + countOneBits(f1);
        for (var j = 0u; j < m; j = j + 1u) {
            let ts = staged_slot[j];
            var mine = ts.y & bit;
            var rank = countOneBits(ts.y & below);
            if (hi) {
                mine = ts.z & bit;
                rank = countOneBits(ts.y) + countOneBits(ts.z & below);
            }
            if (!live || mine == 0u) {
                continue;
            }
            let wa = staged_w[2u * j];
            let wb = staged_w[2u * j + 1u];
            let d = 6u * (ts.x + rank);
            let dp = vec3<f32>(entry_delta[d], entry_delta[d + 1u], entry_delta[d + 2u]);
            let dn = vec3<f32>(entry_delta[d + 3u], entry_delta[d + 4u], entry_delta[d + 5u]);
            if (wa.x != 0.0) { s.p0 = s.p0 + wa.x * dp; s.n0 = s.n0 + wa.x * dn; touched = touched | 1u; }
            if (wa.y != 0.0) { s.p1 = s.p1 + wa.y * dp; s.n1 = s.n1 + wa.y * dn; touched = touched | 2u; }
            if (wa.z != 0.0) { s.p2 = s.p2 + wa.z * dp; s.n2 = s.n2 + wa.z * dn; touched = touched | 4u; }
            if (wa.w != 0.0) { s.p3 = s.p3 + wa.w * dp; s.n3 = s.n3 + wa.w * dn; touched = touched | 8u; }
            if (wb.x != 0.0) { s.p4 = s.p4 + wb.x * dp; s.n4 = s.n4 + wb.x * dn; touched = touched | 16u; }
            if (wb.y != 0.0) { s.p5 = s.p5 + wb.y * dp; s.n5 = s.n5 + wb.y * dn; touched = touched | 32u; }
            if (wb.z != 0.0) { s.p6 = s.p6 + wb.z * dp; s.n6 = s.n6 + wb.z * dn; touched = touched | 64u; }
            if (wb.w != 0.0) { s.p7 = s.p7 + wb.w * dp; s.n7 = s.n7 + wb.w * dn; touched = touched | 128u; }
        }
        workgroupBarrier();
    }
    return Walked(s, touched, base_n);
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tile = wg.x + wg.y * groups.x;
    // Whole workgroups past the chunk (the last row of a 2D dispatch) leave together.
    if (tile * TILE >= params.count) {
        return;
    }
    let v = tile * TILE + lane;
    let live = v < params.count;
    let r = walk(tile, lane, wg.z, groups.z, v, live);
    if (!live) {
        return;
    }
    let n_inst = arrayLength(&morphed) / (6u * params.count);
    let first_inst = 8u * wg.z;
    let s = r.s;
    let touched = r.touched;
    let base_n = r.base_n;
    put(first_inst + 0u, v, n_inst, s.p0, s.n0, base_n, (touched & 1u) != 0u);
    put(first_inst + 1u, v, n_inst, s.p1, s.n1, base_n, (touched & 2u) != 0u);
    put(first_inst + 2u, v, n_inst, s.p2, s.n2, base_n, (touched & 4u) != 0u);
    put(first_inst + 3u, v, n_inst, s.p3, s.n3, base_n, (touched & 8u) != 0u);
    put(first_inst + 4u, v, n_inst, s.p4, s.n4, base_n, (touched & 16u) != 0u);
    put(first_inst + 5u, v, n_inst, s.p5, s.n5, base_n, (touched & 32u) != 0u);
    put(first_inst + 6u, v, n_inst, s.p6, s.n6, base_n, (touched & 64u) != 0u);
    put(first_inst + 7u, v, n_inst, s.p7, s.n7, base_n, (touched & 128u) != 0u);
}

@compute @workgroup_size(64)
fn skinned(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tile = wg.x + wg.y * groups.x;
    if (tile * TILE >= params.count) {
        return;
    }
    let v = tile * TILE + lane;
    let live = v < params.count;
    let r = walk(tile, lane, wg.z, groups.z, v, live);
    if (!live) {
        return;
    }
    let n_inst = arrayLength(&morphed) / (6u * params.count);
    let first_inst = 8u * wg.z;
    let j = skin[2u * v];
    let w = bitcast<vec4<f32>>(skin[2u * v + 1u]);
    let s = r.s;
    let t = r.touched;
    let bn = r.base_n;
    put_skinned(first_inst + 0u, v, n_inst, s.p0, s.n0, bn, (t & 1u) != 0u, j, w);
    put_skinned(first_inst + 1u, v, n_inst, s.p1, s.n1, bn, (t & 2u) != 0u, j, w);
    put_skinned(first_inst + 2u, v, n_inst, s.p2, s.n2, bn, (t & 4u) != 0u, j, w);
    put_skinned(first_inst + 3u, v, n_inst, s.p3, s.n3, bn, (t & 8u) != 0u, j, w);
    put_skinned(first_inst + 4u, v, n_inst, s.p4, s.n4, bn, (t & 16u) != 0u, j, w);
    put_skinned(first_inst + 5u, v, n_inst, s.p5, s.n5, bn, (t & 32u) != 0u, j, w);
    put_skinned(first_inst + 6u, v, n_inst, s.p6, s.n6, bn, (t & 64u) != 0u, j, w);
    put_skinned(first_inst + 7u, v, n_inst, s.p7, s.n7, bn, (t & 128u) != 0u, j, w);
}
