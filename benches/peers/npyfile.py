"""Pure-Python reader and writer of NumPy ``.npy`` files, format version 1.0.

No numpy needed: the self-test builds its tiny exports with this module and
checks it on machines without numpy. Only the three element types of a mien
export are supported: little-endian float32 (``<f4``), float16 (``<f2``) and
int32 (``<i4``), C order.

Format (numpy's ``numpy.lib.format`` documentation, "Format Version 1.0"):
the 6 magic bytes ``\\x93NUMPY``, major and minor version bytes (1, 0), a
little-endian uint16 header length ``HLEN``, then ``HLEN`` bytes of ASCII: a
Python dict literal with keys ``descr``, ``fortran_order`` and ``shape``,
padded with spaces and ended by ``\\n`` so that ``10 + HLEN`` is a multiple
of 64. The raw element data follows.
"""

import ast
import struct

MAGIC = b"\x93NUMPY"
ALIGN = 64

# descr -> (struct format letter, item size in bytes, manifest dtype name)
DESCRS = {
    "<f4": ("f", 4, "f32"),
    "<f2": ("e", 2, "f16"),
    "<i4": ("i", 4, "i32"),
}
DTYPE_TO_DESCR = {v[2]: k for k, v in DESCRS.items()}


class NpyError(ValueError):
    """A malformed or unsupported .npy file; the message names the file and field."""


def count(shape):
    """Number of elements of an array of ``shape`` (a tuple of ints)."""
    n = 1
    for d in shape:
        n *= d
    return n


def header_bytes(descr, shape):
    """The full header (magic .. final newline) for an array of ``descr`` and ``shape``."""
    if descr not in DESCRS:
        raise NpyError(f"descr {descr!r} is not one of {sorted(DESCRS)}")
    shape = tuple(int(d) for d in shape)
    text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    # 6 magic + 2 version + 2 length bytes, then the text, spaces, and '\n'.
    pad = (-(10 + len(text) + 1)) % ALIGN
    text = text + " " * pad + "\n"
    if len(text) > 0xFFFF:
        raise NpyError("header longer than 65535 bytes (version 1.0 limit)")
    return MAGIC + bytes([1, 0]) + struct.pack("<H", len(text)) + text.encode("latin1")


def dumps(dtype, shape, values):
    """Bytes of a .npy file holding the flat ``values`` (C order) as ``dtype``.

    ``dtype`` is a manifest name (``f32``, ``f16``, ``i32``). Floats are rounded
    to the element type by ``struct`` (round to nearest even).
    """
    descr = DTYPE_TO_DESCR.get(dtype)
    if descr is None:
        raise NpyError(f"dtype {dtype!r} is not one of {sorted(DTYPE_TO_DESCR)}")
    values = list(values)
    if len(values) != count(shape):
        raise NpyError(f"{len(values)} values for shape {tuple(shape)} ({count(shape)} elements)")
    letter = DESCRS[descr][0]
    return header_bytes(descr, shape) + struct.pack("<%d%s" % (len(values), letter), *values)


def write(path, dtype, shape, values):
    """Write ``values`` as a .npy file at ``path`` (see :func:`dumps`)."""
    data = dumps(dtype, shape, values)
    with open(path, "wb") as f:
        f.write(data)


def parse_header(data, name="<bytes>"):
    """Parse the header of .npy bytes ``data``.

    Returns ``(descr, shape, offset)`` where ``offset`` is where element data
    starts. Raises :class:`NpyError` naming ``name`` and the bad field.
    """
    if len(data) < 10 or data[:6] != MAGIC:
        raise NpyError(f"{name}: magic: not a .npy file")
    major, minor = data[6], data[7]
    if (major, minor) != (1, 0):
        raise NpyError(f"{name}: version: {major}.{minor}, only 1.0 is read")
    (hlen,) = struct.unpack("<H", data[8:10])
    if 10 + hlen > len(data):
        raise NpyError(f"{name}: header length {hlen} runs past the file ({len(data)} bytes)")
    text = data[10 : 10 + hlen].decode("latin1")
    try:
        d = ast.literal_eval(text)
    except (ValueError, SyntaxError) as e:
        raise NpyError(f"{name}: header: not a dict literal ({e})") from None
    if not isinstance(d, dict):
        raise NpyError(f"{name}: header: not a dict")
    for key in ("descr", "fortran_order", "shape"):
        if key not in d:
            raise NpyError(f"{name}: header: missing key {key!r}")
    descr = d["descr"]
    if descr not in DESCRS:
        raise NpyError(f"{name}: descr: {descr!r} is not one of {sorted(DESCRS)}")
    if d["fortran_order"] is not False:
        raise NpyError(f"{name}: fortran_order: only C order is read")
    shape = d["shape"]
    if not isinstance(shape, tuple) or not all(
        isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in shape
    ):
        raise NpyError(f"{name}: shape: {shape!r} is not a tuple of non-negative ints")
    return descr, shape, 10 + hlen


def loads(data, name="<bytes>"):
    """Decode .npy bytes: returns ``(dtype, shape, values)`` with a flat list of values.

    The element data must be exactly ``prod(shape) * itemsize`` bytes.
    """
    descr, shape, offset = parse_header(data, name)
    letter, size, dtype = DESCRS[descr]
    n = count(shape)
    have = len(data) - offset
    if have != n * size:
        raise NpyError(
            f"{name}: data: {have} bytes for shape {shape} of {descr} (needs {n * size})"
        )
    values = list(struct.unpack("<%d%s" % (n, letter), data[offset:]))
    return dtype, shape, values


def read(path):
    """Read the .npy file at ``path`` (see :func:`loads`)."""
    with open(path, "rb") as f:
        data = f.read()
    return loads(data, str(path))
