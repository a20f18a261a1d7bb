//! A bounds-checked big-endian cursor over a DNA file, with the field path kept for messages.
//!
//! Source: OpenRigLogic's terse binary archive (`terse/archives/binary/InputArchive.h`): every
//! number is big-endian ("network" order, `Endianness::Network`); a vector, dynamic array or string
//! is a `u32` element count followed by its elements; `ArchiveOffset<u32>` and `ArchiveSize<u32>`
//! are plain `u32`s (an absolute byte offset, a byte count from the anchor after it). There are no
//! half floats in the binary format: every real number is an IEEE `f32`.
//!
//! Every read checks the bytes left in the current region first; a length prefix is compared with
//! the bytes left (times the smallest encoding of one element) before anything is allocated, so a
//! hostile count cannot reserve more memory than the file could fill.

use crate::error::{Error, Result};

/// One step of a field path: a key (`jointGroups`) or an element index (`[2]`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg {
    /// A named field.
    Key(&'static str),
    /// An element of the field before it.
    At(usize),
}

/// A cursor over the whole file, reading inside a region `[pos, end)`.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    file: &'a str,
    path: Vec<Seg>,
}

/// Largest capacity reserved up front for a list of structures (it grows past this as elements
/// are actually read, so memory follows the bytes consumed).
const RESERVE_STRUCTS: usize = 1024;

impl<'a> Cursor<'a> {
    /// A cursor at byte 0 whose region is the whole file.
    pub(crate) fn new(data: &'a [u8], file: &'a str) -> Self {
        Cursor {
            data,
            pos: 0,
            end: data.len(),
            file,
            path: Vec::with_capacity(8),
        }
    }

    /// Current byte offset.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// End of the current region.
    pub(crate) fn end(&self) -> usize {
        self.end
    }

    /// File length.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    /// Bytes left in the current region.
    pub(crate) fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// Move to the region `[start, end)` of the file.
    ///
    /// # Errors
    /// The region reaches past the end of the file or is reversed.
    pub(crate) fn region(&mut self, start: usize, end: usize, leaf: &str) -> Result<()> {
        if start > end || end > self.data.len() {
            return Err(self.fail_at(
                leaf,
                start,
                format!(
                    "bytes {start}..{end} lie outside the file ({} bytes)",
                    self.data.len()
                ),
            ));
        }
        self.pos = start;
        self.end = end;
        Ok(())
    }

    /// Jump to `pos` inside the current region (a forward or backward seek the format asks for).
    ///
    /// # Errors
    /// `pos` lies outside the current region.
    pub(crate) fn seek(&mut self, pos: usize, leaf: &str) -> Result<()> {
        if pos > self.end {
            return Err(self.fail(
                leaf,
                format!(
                    "offset {pos} lies past the end of its region (byte {})",
                    self.end
                ),
            ));
        }
        self.pos = pos;
        Ok(())
    }

    /// Enter a named field; returns the depth to [`Cursor::back`] to.
    pub(crate) fn key(&mut self, key: &'static str) -> usize {
        self.path.push(Seg::Key(key));
        self.path.len() - 1
    }

    /// Enter element `i` of the current field; returns the depth to [`Cursor::back`] to.
    pub(crate) fn at(&mut self, i: usize) -> usize {
        self.path.push(Seg::At(i));
        self.path.len() - 1
    }

    /// Leave to `depth` (as returned by [`Cursor::key`] / [`Cursor::at`]).
    pub(crate) fn back(&mut self, depth: usize) {
        self.path.truncate(depth);
    }

    /// The current path with `leaf` appended: `behavior.joints.jointGroups[2].outputIndices`.
    pub(crate) fn path(&self, leaf: &str) -> String {
        let mut out = String::new();
        for s in &self.path {
            match s {
                Seg::Key("") => {}
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::At(i) => out.push_str(&format!("[{i}]")),
            }
        }
        if !leaf.is_empty() {
            if !out.is_empty() && !leaf.starts_with('[') {
                out.push('.');
            }
            out.push_str(leaf);
        }
        out
    }

    /// A format error at `leaf`, indexed by the current byte offset.
    pub(crate) fn fail(&self, leaf: &str, reason: impl Into<String>) -> Error {
        self.fail_at(leaf, self.pos, reason)
    }

    /// A format error at `leaf`, indexed by byte offset `at`.
    pub(crate) fn fail_at(&self, leaf: &str, at: usize, reason: impl Into<String>) -> Error {
        Error::Format {
            file: self.file.to_string(),
            field: self.path(leaf),
            index: Some(at),
            reason: format!("{} (at byte {at})", reason.into()),
        }
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    /// Fewer than `n` bytes are left in the region.
    pub(crate) fn take(&mut self, n: usize, leaf: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.fail(
                leaf,
                format!(
                    "needs {n} bytes, {} left before byte {}",
                    self.remaining(),
                    self.end
                ),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, leaf: &str) -> Result<[u8; N]> {
        let b = self.take(N, leaf)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// A byte.
    pub(crate) fn u8(&mut self, leaf: &str) -> Result<u8> {
        Ok(self.array::<1>(leaf)?[0])
    }

    /// A big-endian `u16`.
    pub(crate) fn u16(&mut self, leaf: &str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array(leaf)?))
    }

    /// A big-endian `u32`.
    pub(crate) fn u32(&mut self, leaf: &str) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array(leaf)?))
    }

    /// A big-endian `f32`.
    pub(crate) fn f32(&mut self, leaf: &str) -> Result<f32> {
        Ok(f32::from_be_bytes(self.array(leaf)?))
    }

    /// A `u32` element count whose elements take at least `min_bytes` each, checked against the
    /// bytes left before anything is allocated.
    ///
    /// # Errors
    /// The count cannot fit in the bytes left in the region.
    pub(crate) fn count(&mut self, leaf: &str, min_bytes: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.u32(leaf)? as usize;
        let need = n.saturating_mul(min_bytes.max(1));
        if need > self.remaining() {
            return Err(self.fail_at(
                leaf,
                at,
                format!(
                    "length prefix {n} needs at least {need} bytes, {} left before byte {}",
                    self.remaining(),
                    self.end
                ),
            ));
        }
        Ok(n)
    }

    /// A capacity to reserve for `n` structures (bounded; the list grows as it is read).
    pub(crate) fn reserve(n: usize) -> usize {
        n.min(RESERVE_STRUCTS)
    }

    /// A `u16` array.
    pub(crate) fn vec_u16(&mut self, leaf: &str) -> Result<Vec<u16>> {
        let n = self.count(leaf, 2)?;
        let b = self.take(n * 2, leaf)?;
        Ok(b.chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect())
    }

    /// A `u32` array.
    pub(crate) fn vec_u32(&mut self, leaf: &str) -> Result<Vec<u32>> {
        let n = self.count(leaf, 4)?;
        let b = self.take(n * 4, leaf)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// An `f32` array.
    pub(crate) fn vec_f32(&mut self, leaf: &str) -> Result<Vec<f32>> {
        let n = self.count(leaf, 4)?;
        let b = self.take(n * 4, leaf)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// A string (a byte count, then the bytes; bytes that are not UTF-8 are replaced with
    /// U+FFFD, as the file's `char` strings carry no encoding).
    pub(crate) fn string(&mut self, leaf: &str) -> Result<String> {
        let n = self.count(leaf, 1)?;
        let b = self.take(n, leaf)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    /// A list of strings.
    pub(crate) fn vec_string(&mut self, leaf: &'static str) -> Result<Vec<String>> {
        self.list(leaf, 4, |c| c.string(""))
    }

    /// A list of `u16` arrays.
    pub(crate) fn vec_vec_u16(&mut self, leaf: &'static str) -> Result<Vec<Vec<u16>>> {
        self.list(leaf, 4, |c| c.vec_u16(""))
    }

    /// A list of elements read by `each` (which reads at least `min_bytes` per element), each
    /// under `leaf[i]` in messages.
    pub(crate) fn list<T>(
        &mut self,
        leaf: &'static str,
        min_bytes: usize,
        mut each: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let n = self.count(leaf, min_bytes)?;
        let mut out = Vec::with_capacity(Self::reserve(n));
        let depth = self.key(leaf);
        for i in 0..n {
            self.at(i);
            out.push(each(self)?);
            self.back(depth + 1);
        }
        self.back(depth);
        Ok(out)
    }

    /// Three `f32` arrays `xs`, `ys`, `zs` of one length, as `(N,3)` rows.
    ///
    /// # Errors
    /// The three lengths differ, or an array is cut short.
    pub(crate) fn vec3s(&mut self, leaf: &'static str) -> Result<Vec<[f32; 3]>> {
        let depth = self.key(leaf);
        let at = self.pos;
        let xs = self.vec_f32("xs")?;
        let ys = self.vec_f32("ys")?;
        let zs = self.vec_f32("zs")?;
        if xs.len() != ys.len() || ys.len() != zs.len() {
            return Err(self.fail_at(
                "",
                at,
                format!(
                    "xs, ys and zs hold {}, {} and {} values; they must be equal",
                    xs.len(),
                    ys.len(),
                    zs.len()
                ),
            ));
        }
        self.back(depth);
        Ok(xs
            .into_iter()
            .zip(ys)
            .zip(zs)
            .map(|((x, y), z)| [x, y, z])
            .collect())
    }
}
