#!/usr/bin/env python3
"""Build mien's test character bundle around a GNM head baked from ICT-FaceKit.

No trained avatar decoder can ship with mien, so this script makes its own (ONNX, opset 17) with
numpy and onnx, and records ONNX Runtime's own outputs for them:

  skin.onnx       head branch: features (N,8) + controls (1,C) + view_dir (N,3) -> rgb, opacity
                  rgb = clip(albedo * (1 - 0.45 * mask * clip(controls . w, 0, 1))
                             + 0.25 * max(0, -view . normal)^4, 0, 1)
                  i.e. the head's colour (a procedural albedo standing in for a texture), darkened
                  where the brows wrinkle as the brow controls rise, plus a view-dependent sheen.
  skin.fp16.onnx  the same network with float16 inputs, weights and outputs (the fp16 sibling)
  eyes.onnx       eyes branch: features (N,4) + view_dir (N,3) -> rgb, opacity, offset, log_scale,
                  rotation (identity geometry: zero offset and log-scale, unit rotation) and a glint
  golden.json     ONNX Runtime's outputs for random inputs of each model (the oracle mien's tests
                  compare against)

plus the branch meshes (head.obj, eyes.obj, teeth.obj: ICT's neutral split by its documented
vertex ranges, vertex lines copied verbatim), per-vertex features (.npy) and the manifest
head.character.json naming the pack.

usage: make_test_bundle.py ICT_DIR OUT_DIR CONTROL_NAMES_JSON PACK_FILE
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RANGES = {"head": (0, 9409), "teeth": (17039, 21451), "eyes": (21451, 24591)}
SEED = 20261207


def read_neutral(path):
    v_lines, vt_lines, faces = [], [], []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                v_lines.append(line.rstrip("\n"))
            elif line.startswith("vt "):
                vt_lines.append(line.rstrip("\n"))
            elif line.startswith("f "):
                corners = []
                for tok in line.split()[1:]:
                    parts = tok.split("/")
                    corners.append((int(parts[0]) - 1, int(parts[1]) - 1 if len(parts) > 1 and parts[1] else -1))
                faces.append(corners)
    pos = np.array([[float(x) for x in l.split()[1:4]] for l in v_lines])
    return v_lines, vt_lines, faces, pos


def write_branch(path, lo, hi, v_lines, vt_lines, faces):
    used_vt, out_faces = {}, []
    for f in faces:
        if all(lo <= v < hi for v, _ in f):
            for _, t in f:
                if t >= 0 and t not in used_vt:
                    used_vt[t] = len(used_vt)
            out_faces.append(f)
    with open(path, "w") as o:
        o.write(f"# ICT-FaceKit neutral, vertices [{lo}, {hi}) (MIT, USC ICT)\n")
        for l in v_lines[lo:hi]:
            o.write(l + "\n")
        for t, _ in sorted(used_vt.items(), key=lambda kv: kv[1]):
            o.write(vt_lines[t] + "\n")
        for f in out_faces:
            o.write("f " + " ".join(f"{v - lo + 1}/{used_vt[t] + 1}" for v, t in f) + "\n")
    return len(out_faces)


def vertex_normals(pos, faces, lo, hi):
    n = np.zeros((hi - lo, 3))
    for f in faces:
        if not all(lo <= v < hi for v, _ in f):
            continue
        idx = [v - lo for v, _ in f]
        for k in range(1, len(idx) - 1):
            a, b, c = pos[idx[0] + lo], pos[idx[k] + lo], pos[idx[k + 1] + lo]
            fn = np.cross(b - a, c - a)
            for i in (idx[0], idx[k], idx[k + 1]):
                n[i] += fn
    l = np.linalg.norm(n, axis=1, keepdims=True)
    return n / np.where(l > 0, l, 1)


def t(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def skin_model(C, w, dtype):
    np_t = np.float16 if dtype == TensorProto.FLOAT16 else np.float32
    inits = [
        numpy_helper.from_array(w.reshape(C, 1).astype(np_t), "w"),
        numpy_helper.from_array(np.array(0, np_t), "zero"),
        numpy_helper.from_array(np.array(1, np_t), "one"),
        numpy_helper.from_array(np.array(0.45, np_t), "k_dark"),
        numpy_helper.from_array(np.array(0.25, np_t), "k_sheen"),
        numpy_helper.from_array(np.array(4, np_t), "p_sheen"),
        numpy_helper.from_array(np.array([0], np.int64), "s0"),
        numpy_helper.from_array(np.array([3], np.int64), "s3"),
        numpy_helper.from_array(np.array([4], np.int64), "s4"),
        numpy_helper.from_array(np.array([7], np.int64), "s7"),
        numpy_helper.from_array(np.array([8], np.int64), "s8"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
    ]
    nodes = [
        helper.make_node("Slice", ["features", "s0", "s3", "ax1"], ["albedo"]),
        helper.make_node("Slice", ["features", "s3", "s4", "ax1"], ["mask"]),
        helper.make_node("Slice", ["features", "s4", "s7", "ax1"], ["normal"]),
        helper.make_node("Slice", ["features", "s7", "s8", "ax1"], ["opacity"]),
        helper.make_node("MatMul", ["controls", "w"], ["w0"]),
        helper.make_node("Clip", ["w0", "zero", "one"], ["wr"]),
        helper.make_node("Mul", ["mask", "wr"], ["mw"]),
        helper.make_node("Mul", ["mw", "k_dark"], ["mk"]),
        helper.make_node("Sub", ["one", "mk"], ["dark"]),
        helper.make_node("Mul", ["albedo", "dark"], ["base"]),
        helper.make_node("Mul", ["view_dir", "normal"], ["vn3"]),
        helper.make_node("ReduceSum", ["vn3", "ax1"], ["vn"], keepdims=1),
        helper.make_node("Neg", ["vn"], ["nvn"]),
        helper.make_node("Relu", ["nvn"], ["facing"]),
        helper.make_node("Pow", ["facing", "p_sheen"], ["f4"]),
        helper.make_node("Mul", ["f4", "k_sheen"], ["sheen"]),
        helper.make_node("Add", ["base", "sheen"], ["lit"]),
        helper.make_node("Clip", ["lit", "zero", "one"], ["rgb"]),
    ]
    g = helper.make_graph(
        nodes,
        "mien_test_skin",
        [t("features", dtype, ["N", 8]), t("controls", dtype, [1, C]), t("view_dir", dtype, ["N", 3])],
        [t("rgb", dtype, ["N", 3]), t("opacity", dtype, ["N", 1])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="mien-test-bundle")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def eyes_model():
    f32 = TensorProto.FLOAT
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "s0"),
        numpy_helper.from_array(np.array([2], np.int64), "s2"),
        numpy_helper.from_array(np.array([3], np.int64), "s3"),
        numpy_helper.from_array(np.array([4], np.int64), "s4"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.6, np.float32), "k_glint"),
        numpy_helper.from_array(np.array(16.0, np.float32), "p_glint"),
        numpy_helper.from_array(np.array([[0.0, 0.0, 0.0]], np.float32), "zero3"),
        numpy_helper.from_array(np.array([[1.0, 0.0, 0.0, 0.0]], np.float32), "unit_q"),
        numpy_helper.from_array(np.array([0.0], np.float32), "zcol"),
    ]
    nodes = [
        helper.make_node("Slice", ["features", "s0", "s3", "ax1"], ["albedo"]),
        helper.make_node("Slice", ["features", "s3", "s4", "ax1"], ["opacity"]),
        # glint when the view runs along -z (a camera in front looking at the face): max(0, -v_z)^16
        helper.make_node("Slice", ["view_dir", "s2", "s3", "ax1"], ["vs"]),
        helper.make_node("Neg", ["vs"], ["nvs"]),
        helper.make_node("Relu", ["nvs"], ["fa"]),
        helper.make_node("Pow", ["fa", "p_glint"], ["g16"]),
        helper.make_node("Mul", ["g16", "k_glint"], ["glint"]),
        helper.make_node("Add", ["albedo", "glint"], ["lit"]),
        helper.make_node("Clip", ["lit", "zero", "one"], ["rgb"]),
        # identity geometry, one row per gaussian: 0·opacity + constant
        helper.make_node("Mul", ["opacity", "zcol"], ["z1"]),
        helper.make_node("Add", ["z1", "zero3"], ["offset"]),
        helper.make_node("Add", ["z1", "zero3"], ["log_scale"]),
        helper.make_node("Add", ["z1", "unit_q"], ["rotation"]),
    ]
    g = helper.make_graph(
        nodes,
        "mien_test_eyes",
        [t("features", f32, ["N", 4]), t("view_dir", f32, ["N", 3])],
        [t("rgb", f32, ["N", 3]), t("opacity", f32, ["N", 1]), t("offset", f32, ["N", 3]),
         t("log_scale", f32, ["N", 3]), t("rotation", f32, ["N", 4])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="mien-test-bundle")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) != 5:
        sys.exit(
            "usage: make_test_bundle.py ICT_DIR OUT_DIR CONTROL_NAMES_JSON PACK_FILE\n"
            "  CONTROL_NAMES_JSON: the pack's control names as a JSON list (`mien inspect --json "
            "PACK` prints them as control_names; the library: mien_runtime::bundle::control_names);\n"
            "  mien_runtime::bundle::make_test_bundle does all of it"
        )
    ict, out, names_path, pack = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    names = json.load(open(names_path))
    C = len(names)
    v_lines, vt_lines, faces, pos = read_neutral(os.path.join(ict, "generic_neutral_mesh.obj"))
    rng = np.random.default_rng(SEED)
    counts = {}
    for b, (lo, hi) in RANGES.items():
        counts[b] = write_branch(os.path.join(out, f"{b}.obj"), lo, hi, v_lines, vt_lines, faces)
    # Head features: a procedural albedo (skin tone varying over the face), a forehead mask, the
    # rest normal, opacity.
    lo, hi = RANGES["head"]
    p = pos[lo:hi]
    y = (p[:, 1] - p[:, 1].min()) / np.ptp(p[:, 1])
    albedo = np.stack([0.78 - 0.10 * y, 0.56 - 0.08 * y, 0.46 - 0.05 * y], 1)
    albedo += 0.03 * np.sin(p[:, 0:1] * 1.7)
    mask = np.clip((y - 0.72) / 0.12, 0, 1)[:, None]
    normal = vertex_normals(pos, faces, lo, hi)
    skin_f = np.concatenate([albedo, mask, normal, np.full((hi - lo, 1), 0.98)], 1).astype(np.float32)
    np.save(os.path.join(out, "skin_features.npy"), skin_f)
    lo, hi = RANGES["eyes"]
    eye_f = np.concatenate([np.full((hi - lo, 3), [0.92, 0.92, 0.90]), np.ones((hi - lo, 1))], 1).astype(np.float32)
    np.save(os.path.join(out, "eye_features.npy"), eye_f)
    # The brow controls darken the forehead.
    w = np.zeros(C, np.float32)
    for i, n in enumerate(names):
        if n.lower().startswith("browinnerup") or n.lower().startswith("browouterup"):
            w[i] = 0.5
    skin = skin_model(C, w, TensorProto.FLOAT)
    onnx.save(skin, os.path.join(out, "skin.onnx"))
    skin16 = skin_model(C, w, TensorProto.FLOAT16)
    onnx.save(skin16, os.path.join(out, "skin.fp16.onnx"))
    onnx.save(eyes_model(), os.path.join(out, "eyes.onnx"))
    # ONNX Runtime's own outputs for random inputs.
    import onnxruntime as ort

    def run(name, feeds):
        s = ort.InferenceSession(os.path.join(out, name), providers=["CPUExecutionProvider"])
        outs = s.run(None, feeds)
        return {o.name: v.astype(np.float32).tolist() for o, v in zip(s.get_outputs(), outs)}

    n = 64
    feats = skin_f[rng.choice(len(skin_f), n)]
    view = rng.standard_normal((n, 3)).astype(np.float32)
    view /= np.linalg.norm(view, axis=1, keepdims=True)
    ctrl = rng.uniform(0, 1, (1, C)).astype(np.float32)
    golden = {
        "onnxruntime_version": ort.__version__,
        "tolerance_abs": 1e-5,
        "tolerance_abs_fp16": 2e-3,
        "inputs": {"features": feats.tolist(), "controls": ctrl[0].tolist(), "view_dir": view.tolist()},
        "skin": run("skin.onnx", {"features": feats, "controls": ctrl, "view_dir": view}),
        "skin_fp16": run("skin.fp16.onnx", {"features": feats.astype(np.float16), "controls": ctrl.astype(np.float16),
                                           "view_dir": view.astype(np.float16)}),
        "eyes_inputs": {"features": eye_f[:n].tolist(), "view_dir": view.tolist()},
        "eyes": run("eyes.onnx", {"features": eye_f[:n], "view_dir": view}),
    }
    json.dump(golden, open(os.path.join(out, "golden.json"), "w"))
    manifest = {
        "format": "mien-character",
        "version": 1,
        "description": "GNM head baked from ICT-FaceKit with eye and teeth branches and test decoders (docs/bundles/make_test_bundle.py)",
        "rig": {"backend": "gnm", "pack": pack, "control_names": names, "vertex_count": 26719},
        "expression_space": {"kind": "gnm", "dim": C, "names": names},
        "branches": [
            {"name": "head", "mesh": "head.obj", "vertices": list(RANGES["head"]), "units": "cm",
             "lift": {"kind": "texel", "resolution": 256}, "decoders": ["skin"]},
            {"name": "eyes", "mesh": "eyes.obj", "vertices": list(RANGES["eyes"]), "units": "cm",
             "lift": {"kind": "surface", "target": 4000}, "decoders": ["eyes"]},
            {"name": "teeth", "mesh": "teeth.obj", "vertices": list(RANGES["teeth"]), "units": "cm",
             "lift": {"kind": "surface", "target": 3000}, "color": [0.93, 0.9, 0.82]},
        ],
        "decoders": {
            "skin": {"file": "skin.onnx", "fp16": "skin.fp16.onnx", "features": "skin_features.npy"},
            "eyes": {"file": "eyes.onnx", "features": "eye_features.npy"},
        },
    }
    json.dump(manifest, open(os.path.join(out, "head.character.json"), "w"), indent=1)
    print(json.dumps({"faces": counts, "controls": C}))


if __name__ == "__main__":
    main()
