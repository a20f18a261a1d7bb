"""A character bundle from Python: the branches, the camera, decodes counted, memory, and the head's
colours checked against ONNX Runtime's own Python run for the same inputs."""

import json
import os

import numpy as np
import pytest

import mien

BUNDLE = os.environ.get("MIEN_TEST_BUNDLE")
pytestmark = pytest.mark.skipif(
    not BUNDLE, reason="MIEN_TEST_BUNDLE is not set (runtime/tests/python.rs builds the bundle)"
)


def manifest():
    return os.path.join(BUNDLE, "head.character.json")


def test_branches_camera_and_decodes():
    rt = mien.Runtime(manifest())
    assert [n for n, _ in rt.branches] == ["head", "eyes", "teeth"]
    assert rt.needs_camera
    with pytest.raises(mien.Error, match="set_camera"):
        rt.update(0.0)
    rt.set_camera([0.0, 0.0, 0.6], [0.0, 0.0, 0.0])
    rt.update(0.0)
    rt.update(0.1)
    s = rt.appearance_stats()
    # Two view-dependent branches decode on the first frame, nothing on the second.
    assert (s["decodes"], s["skipped"]) == (2, 2)
    rt.set_camera([0.0, 0.0, 0.601], [0.0, 0.0, 0.0])  # 1 mm: under the epsilon
    rt.update(0.2)
    assert rt.appearance_stats()["decodes"] == 2
    rt.set_camera([0.0, 0.0, 0.605], [0.0, 0.0, 0.0])  # 5 mm
    rt.update(0.3)
    assert rt.appearance_stats()["decodes"] == 4
    m = rt.bundle_memory()
    assert [b["name"] for b in m["branches"]] == ["head", "eyes", "teeth"]
    assert m["slots"] == sum(c for _, (_, c) in rt.branches)
    assert m["resident_bytes"] == sum(m["files"].values())
    # Teeth keep their flat colour.
    teeth = dict(rt.branches)["teeth"][0]
    assert rt.splats(0)["color"][teeth].tolist() == [237, 230, 209, 255]


def test_eye_colours_are_onnxruntime_outputs_for_the_same_inputs():
    """The eye decoder's inputs are reproducible from outside: its features are one constant row
    (every vertex alike), and each gaussian's view direction is normalize(centre - eye) with the
    centre it has at rest — what the splats hold at rest on the CPU."""
    import onnxruntime as ort

    rt = mien.Runtime(manifest())
    eye = np.array([0.03, 0.01, 0.55])
    rt.set_camera(eye.tolist(), [0.0, 0.0, 0.0])
    rt.update(0.0)
    s = rt.splats(0)
    off, count = dict(rt.branches)["eyes"]
    centre = s["center"][off : off + count].astype(np.float64)
    d = centre - eye
    view = (d / np.linalg.norm(d, axis=1, keepdims=True)).astype(np.float32)
    feats = np.load(os.path.join(BUNDLE, "eye_features.npy"))
    assert np.all(feats == feats[0])
    f = np.repeat(feats[:1], count, axis=0)
    sess = ort.InferenceSession(os.path.join(BUNDLE, "eyes.onnx"), providers=["CPUExecutionProvider"])
    rgb, opacity = sess.run(["rgb", "opacity"], {"features": f, "view_dir": view})
    want = np.round(np.clip(np.concatenate([rgb, opacity], 1), 0, 1) * 255).astype(int)
    got = s["color"][off : off + count].astype(int)
    assert np.abs(got - want).max() <= 1
    # The glint is there: some gaussians brighter than the albedo's 0.92.
    assert (got[:, 0] > round(0.92 * 255) + 2).any()


def test_bundle_options_from_python():
    c = mien.Character.load(manifest(), prefer_fp16=True, decoder_threads=1, pose_anchors=False)
    rt = mien.Runtime(c)
    rt.set_camera([0.0, 0.0, 0.6], [0.0, 0.0, 0.0])
    rt.update(0.0)
    assert rt.appearance_stats()["decodes"] == 2
    with pytest.raises(mien.Error, match="threads"):
        mien.Character.load(manifest(), decoder_threads=0)
    # A plain lift replaces the branches: no decoders, no camera needed.
    rt = mien.Runtime(manifest(), lift="surface")
    assert not rt.needs_camera and rt.appearance_stats() is None and rt.branches == []
