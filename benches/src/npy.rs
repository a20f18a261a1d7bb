//! NumPy `.npy` files, format version 1.0, little-endian, C order: the arrays the peer scripts
//! read. Source: the NumPy format specification (`numpy.lib.format`): magic `\x93NUMPY`, version
//! bytes `1 0`, a u16 little-endian header length, an ASCII Python-dict header padded with spaces
//! and ended by `\n` so that magic + length + header is a multiple of 64 bytes, then the data.

use std::io::Write;
use std::path::Path;

/// The element types mien exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// IEEE binary32 (`<f4`).
    F32,
    /// IEEE binary16 (`<f2`).
    F16,
    /// Signed 32-bit integer (`<i4`).
    I32,
}

impl Dtype {
    /// The NumPy `descr` string.
    pub fn descr(self) -> &'static str {
        match self {
            Dtype::F32 => "<f4",
            Dtype::F16 => "<f2",
            Dtype::I32 => "<i4",
        }
    }

    /// The manifest's name for it (`f32`, `f16`, `i32`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::I32 => "i32",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::F16 => 2,
            _ => 4,
        }
    }
}

/// The header (magic through the padded dict) for `dtype` and `shape`.
pub fn header(dtype: Dtype, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}",
        dtype.descr()
    );
    // magic (6) + version (2) + length (2) + dict + '\n' ≡ 0 (mod 64).
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// Write `data` (little-endian element bytes, C order) as an `.npy` file.
///
/// # Errors
/// A data length that is not `Π shape · size`; I/O errors.
pub fn write(path: &Path, dtype: Dtype, shape: &[usize], data: &[u8]) -> anyhow::Result<()> {
    let n: usize = shape.iter().product();
    anyhow::ensure!(
        data.len() == n * dtype.size(),
        "{}: {} data bytes for shape {shape:?} of {}",
        path.display(),
        data.len(),
        dtype.name()
    );
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(&header(dtype, shape))?;
    f.write_all(data)?;
    f.flush()?;
    Ok(())
}

/// Little-endian bytes of f32 values.
pub fn f32_bytes<'a>(values: impl IntoIterator<Item = &'a f32>) -> Vec<u8> {
    values.into_iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of i32 values.
pub fn i32_bytes<'a>(values: impl IntoIterator<Item = &'a i32>) -> Vec<u8> {
    values.into_iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// An array read back by [`parse`].
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The `descr` string.
    pub descr: String,
    /// The shape.
    pub shape: Vec<usize>,
    /// The data bytes.
    pub data: Vec<u8>,
}

/// Parse an `.npy` v1.0 file written by [`write()`] (tests and tools; not a general reader).
///
/// # Errors
/// A wrong magic or version, a header that is not ours, a data length other than the shape's.
pub fn parse(bytes: &[u8]) -> anyhow::Result<Parsed> {
    anyhow::ensure!(bytes.len() >= 10, "shorter than the npy preamble");
    anyhow::ensure!(&bytes[..8] == b"\x93NUMPY\x01\x00", "not npy v1.0");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    anyhow::ensure!(bytes.len() >= 10 + hlen, "header runs past the file");
    anyhow::ensure!((10 + hlen) % 64 == 0, "header not padded to 64 bytes");
    let dict = std::str::from_utf8(&bytes[10..10 + hlen])?;
    let field = |key: &str| -> anyhow::Result<&str> {
        let at = dict
            .find(key)
            .ok_or_else(|| anyhow::anyhow!("no {key} in {dict}"))?;
        Ok(&dict[at + key.len()..])
    };
    let descr = field("'descr': '")?
        .split('\'')
        .next()
        .unwrap_or_default()
        .to_owned();
    anyhow::ensure!(
        field("'fortran_order': ")?.starts_with("False"),
        "fortran order"
    );
    let dims = field("'shape': (")?.split(')').next().unwrap_or_default();
    let shape: Vec<usize> = dims
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let size = match descr.as_str() {
        "<f2" => 2,
        "<f4" | "<i4" => 4,
        other => anyhow::bail!("unknown descr {other}"),
    };
    let data = bytes[10 + hlen..].to_vec();
    anyhow::ensure!(
        data.len() == shape.iter().product::<usize>() * size,
        "data length {} does not fit shape {shape:?}",
        data.len()
    );
    Ok(Parsed { descr, shape, data })
}

/// Write f32 `values` as an `.npy` file, streaming (no second copy of a large array).
///
/// # Errors
/// A length that is not `Π shape`; I/O errors.
pub fn write_f32s(path: &Path, shape: &[usize], values: &[f32]) -> anyhow::Result<()> {
    let n: usize = shape.iter().product();
    anyhow::ensure!(
        values.len() == n,
        "{}: {} values for shape {shape:?}",
        path.display(),
        values.len()
    );
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(&header(Dtype::F32, shape))?;
    for chunk in values.chunks(1 << 16) {
        f.write_all(&f32_bytes(chunk))?;
    }
    f.flush()?;
    Ok(())
}
