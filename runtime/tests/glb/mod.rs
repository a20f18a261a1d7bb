//! GLB containers split and joined by hand in tests (glTF 2.0 §4.4: a 12-byte header, a JSON
//! chunk padded with spaces, a BIN chunk), so a test can edit a baked file as a script would.

#![allow(dead_code)]

/// Split a GLB into its JSON value and BIN chunk.
pub fn split_glb(b: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let bin = b[20 + jl + 8..].to_vec();
    (json, bin)
}

/// A GLB from a JSON value and a BIN chunk.
pub fn join_glb(json: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let total = 12 + 8 + j.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}
