"""mien from Python: drive character faces and bodies from animation input, pose them on the CPU
or a GPU, lift them into 3D Gaussian splats, and bake takes into GLBs engines play.

The package is a thin layer over mien's Rust runtime (the `_mien` extension, PyO3, abi3 for
CPython >= 3.11). Every long call releases the interpreter lock, so Python threads bake and pose in
parallel. Arrays come back as read-only NumPy arrays over Rust-owned memory (no copy); errors as
`mien.Error` subclasses carrying mien's message (the file, field and index).

    import mien
    face = mien.Character.load("facecap.glb")
    rt = mien.Runtime(face, backend="cpu")
    rt.play_stream_file(0, "take.csv")
    rt.update(0.5)
    vertices = rt.posed(0)          # (V, 3) float32, metres

    mien.bake("facecap.glb", "out.glb", speech="line.TextGrid")   # one take, written atomically
    mien.verify("out.glb")

`python -m mien.ray_bake manifest.csv --out DIR` bakes a manifest of takes on Ray Data.
"""

from ._mien import (  # noqa: F401
    ARKIT_52,
    Array,
    BackendError,
    Character,
    Error,
    FormatError,
    InvalidError,
    IoError,
    LimitError,
    PosedError,
    Runtime,
    ScenarioError,
    __version__,
    backends,
    bake,
    inspect,
    run_scenario,
    verify,
)

__all__ = [
    "ARKIT_52",
    "Array",
    "BackendError",
    "Character",
    "Error",
    "FormatError",
    "InvalidError",
    "IoError",
    "LimitError",
    "PosedError",
    "Runtime",
    "ScenarioError",
    "__version__",
    "backends",
    "bake",
    "inspect",
    "run_scenario",
    "verify",
]
