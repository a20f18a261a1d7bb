"""Type stubs of mien's extension module. Units everywhere: metres, radians, seconds on the media
clock. Arrays are read-only NumPy arrays over memory mien owns (no copy); `numpy.array(a)` copies.
Every function that works releases the interpreter lock."""

from os import PathLike
from typing import Any, Literal, Sequence

import numpy as np
import numpy.typing as npt

__version__: str
ARKIT_52: list[str]
"""The 52 ARKit blendshape names in canonical order (`eyeBlinkLeft` … `tongueOut`): the order of
`Runtime.set_arkit`'s weights."""

_Path = str | PathLike[str]

class Error(Exception):
    """Every error mien raises; its message is mien's whole chain (file, field, index, causes)."""

class FormatError(Error):
    """A malformed file (glTF, DNA, stream, speech timing, splat file)."""
    file: str
    """The file."""
    field: str
    """The field at fault (`accessors[3].count`)."""
    index: int | None
    """The index within it, when there is one."""

class LimitError(Error):
    """An input over a documented limit."""
    found: int
    limit: int

class InvalidError(Error):
    """An input or argument mien refuses (out of range, binding to nothing, of the wrong kind)."""

class IoError(Error, OSError):
    """A file that could not be read or written; also an OSError."""
    path: str

class BackendError(Error):
    """A GPU backend that failed, or is not in this build."""

class PosedError(Error):
    """A posed frame that broke the rule (finite, within ±10⁶ m)."""
    frame: int
    time_s: float

class ScenarioError(Error):
    """An invalid scenario; no step was run."""
    problems: list[tuple[str, str]]
    """(JSON pointer, message) per problem."""

class Array:
    """A read-only C-contiguous array owned by mien, exported through the buffer protocol."""
    @property
    def shape(self) -> list[int]: ...
    def __len__(self) -> int: ...

class Character:
    """A loaded character, immutable and shared by any number of runtimes and bakes."""

    @staticmethod
    def load(
        path: _Path,
        *,
        prefer_fp16: bool | None = None,
        pose_anchors: bool | None = None,
        decoder_threads: int | None = None,
    ) -> Character:
        """Load `.glb`/`.gltf`/`.vrm`, `.aosrig`, `.dna` (LOD 0), `*.character.json`, or the names
        `builtin` / `builtin-body`. A bundle's options: prefer_fp16 (None: CUDA provider only),
        pose_anchors (None: as the file says, default off), decoder_threads (1-1024).
        Raises IoError, FormatError, InvalidError."""
    @staticmethod
    def builtin() -> Character:
        """The built-in sample head (52 ARKit morph targets)."""
    @property
    def source(self) -> str: ...
    @property
    def vertex_count(self) -> int:
        """V, vertices of the posed surface."""
    @property
    def model(self) -> Literal["rig", "linear_head"]: ...
    @property
    def triangles(self) -> npt.NDArray[np.uint32]:
        """`(T, 3)` vertex indices."""
    @property
    def clips(self) -> list[str]:
        """`index: name` of each clip."""
    @property
    def morph_targets(self) -> dict[str, list[str]]:
        """Target names per mesh node."""
    def with_retargeted_clip(
        self, source: _Path, clip: str | None = None, fps: float = 30.0
    ) -> tuple[Character, int]:
        """This character with `source`'s clip (glTF/VRM/VRMA, mapped by humanoid role)
        retargeted and appended; the new clip's index. `fps`: keys per second, 1–240."""

class Runtime:
    """N instances of one character posed (and lifted) together on one device."""

    def __init__(
        self,
        character: Character | _Path,
        *,
        backend: Literal["cpu", "wgpu", "vulkan", "auto"] = "cpu",
        instances: int = 1,
        lift: Literal["auto", "bundle", "surface", "texel", "debug", "none"] | None = "auto",
    ) -> None: ...
    @property
    def device(self) -> str: ...
    @property
    def character(self) -> Character: ...
    def __len__(self) -> int: ...
    def update(self, t: float) -> dict[str, Any]:
        """Pose and lift every instance at media time `t` seconds; the frame's report."""
    def posed(self, i: int = 0) -> npt.NDArray[np.float32]:
        """`(V, 3)` world positions, metres."""
    def normals(self, i: int = 0) -> npt.NDArray[np.float32]:
        """`(V, 3)` world unit normals (zeros for a linear head)."""
    def splats(self, i: int = 0) -> dict[str, npt.NDArray[Any]]:
        """`center` (G,3) m, `color` (G,4) uint8 RGBA, `cov_a` (G,4) and `cov_b` (G,4) m² (the
        stored words c00 c01 c02 c11 | c12 c22 0 0), `covariance` (G,3,3) m²."""
    def write_splats(self, path: _Path, i: int | None = None) -> None:
        """`.ply`, `.spz` or `.glb` by extension; every instance when `i` is None; atomic."""
    def set_arkit(self, i: int, weights: Sequence[float] | npt.NDArray[np.float32]) -> None:
        """A live ARKit-52 frame `(52,)` in canonical order, weights 0–1."""
    def set_controls(
        self,
        i: int,
        space: Literal["arkit52", "gnm", "gnm68", "vrm", "rig"],
        values: Sequence[float] | npt.NDArray[np.float32],
    ) -> None:
        """Live values in the character's space: arkit52 (52,), gnm (E+4,) with the 4 gaze angles
        in radians, gnm68 (R+4,), vrm (X,) expressions, rig (a DNA board's raw controls)."""
    def play_stream_file(self, i: int, path: _Path) -> list[str]:
        """Play an ARKit-52 stream file; the reader's notes."""
    def play_clip(self, i: int, clip: str) -> None: ...
    def play_clips(self, i: int, clips: Sequence[int]) -> None: ...
    def rest(self, i: int) -> None: ...
    def set_drive_timing(self, i: int, offset: float, looping: bool) -> None:
        """The drive's time 0 at media time `offset` seconds; loop or hold the last frame."""
    def set_head_motion(self, i: int, on: bool) -> None: ...
    def set_speech(
        self,
        i: int,
        path: _Path | None,
        *,
        sampler: Literal["held", "envelope"] = "held",
        audio_offset: float = 0.0,
        min_hold: float = 0.0,
        speech_format: str | None = None,
    ) -> None:
        """Lip-sync from a timing file; the utterance starts at `audio_offset` s on the media clock;
        `min_hold` 0–1 s (envelope only). None removes the speech."""
    def speech_transport(self, i: int, action: Literal["pause", "resume", "seek"], position: float) -> None:
        """Pause, resume or seek the speech at `position` seconds into the utterance."""
    def set_face(
        self,
        i: int,
        *,
        face: _Path | None = None,
        script: _Path | None = None,
        look_at: tuple[float, float, float] | None = None,
        t0: float = 0.0,
    ) -> None:
        """Attach the face driver (expressions, blink, look-at, avatar states)."""
    def set_expression(self, i: int, name: str, weight: float, t: float) -> None:
        """Fade an expression to `weight` (0–1) from media time `t`."""
    def look_at(self, i: int, point: tuple[float, float, float] | None, t: float) -> None:
        """Look at a world point (metres) from `t`, or release the gaze with None."""
    def blink(self, i: int, t: float) -> None: ...
    def signal(self, i: int, signal: str, t: float) -> None:
        """An avatar-state signal (`talking_started`, `listening_started`, …) at `t`."""
    def state_hash(self, i: int) -> str:
        """The instance's state hash (pose, weights, placement, springs), 16 hex digits."""
    def set_camera(
        self, eye: Sequence[float], target: Sequence[float], fov_y: float = 0.6
    ) -> None:
        """The camera a bundle's view-dependent decoders see: eye and target (3,) metres, fov_y
        radians. A branch re-decodes only when it moved > 2 mm (plus a turn/fov term) or its
        controls changed."""
    @property
    def needs_camera(self) -> bool: ...
    def appearance_stats(self) -> dict[str, Any] | None:
        """decodes, skipped, clamped, degenerate_offsets, decode_s, record_s, record_bytes."""
    def bundle_memory(self) -> dict[str, Any] | None:
        """branches [{name, slots, bytes}], slots, bytes, on_gpu, files, resident_bytes."""
    @property
    def branches(self) -> list[tuple[str, tuple[int, int]]]:
        """Each branch's (name, (offset, count)) within an instance's slots."""
    def memory(self) -> dict[str, int]: ...
    def times(self) -> dict[str, Any]: ...
    def finish(self) -> None:
        """Wait for every frame in flight."""

def inspect(path: _Path) -> dict[str, Any]:
    """What a character, stream, speech timing, splat file or groom holds (`mien inspect --json`)."""

def bake(
    character: Character | _Path,
    out: _Path,
    *,
    arkit: _Path | None = None,
    speech: _Path | None = None,
    clip: str | None = None,
    name: str | None = None,
    fps: float = 30.0,
    start: float = 0.0,
    frames: int | None = None,
    tolerance: tuple[float, float] | None = None,
    lod: int | None = None,
    sampler: Literal["held", "envelope"] = "held",
    audio_offset: float = 0.0,
    min_hold: float = 0.0,
    speech_format: str | None = None,
    record: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Bake one take (an ARKit stream, a clip, or rest, with an optional speech layer) into the
    character's GLB and write `out` (.glb, or .vrm for a VRM) atomically. `fps` 1–1000 keys per
    second from `start` seconds; `tolerance` (weight, degrees) drops keys LINEAR interpolation
    reproduces; `lod` a game-face LOD in triangles. Deterministic: the same inputs give the same
    bytes. `record`: JSON-able data kept in the file's record (`take.caller`). The report: name,
    keys, channels, bytes, span_s, drive, speech, notes."""

def verify(path: _Path) -> dict[str, Any]:
    """Check a baked file: `takes`, `parts` (facial parts unchanged), `alignments` (each speech
    take's timing record). Raises InvalidError/FormatError when anything is off."""

def run_scenario(path: _Path) -> dict[str, Any]:
    """Run a scenario twice from scratch; the report (`passed`, failures, hashes, captures)."""

def backends() -> list[str]:
    """The backends this build carries (`cpu`, and `wgpu` / `vulkan`)."""
