"""Generate N dialogue takes and a manifest for `python -m mien.ray_bake` from the shared aligner
files (../shared/data): each take a window of one real alignment (Gentle JSON, a Rhubarb TSV, an
MFA TextGrid), shifted to start near 0 and time-scaled by 0.8–1.2 — so the takes differ in length,
words and tempo while every timing stays one a real aligner produced, only stretched.

    python benches/ray/generate_takes.py --data ../shared/data --n 1000 --out /tmp/takes

writes /tmp/takes/takes/take_0000.{json,tsv,TextGrid} … and /tmp/takes/manifest.csv (character:
Face Cap, out: take_NNNN.glb). Deterministic: the same N gives the same files.
"""

import argparse
import csv
import json
import os
import re

GOLDEN = 0.6180339887498949


def frac(x):
    return x - int(x)


def gentle(src, k, scale, out):
    doc = json.load(open(src, encoding="utf-8"))
    words = [w for w in doc["words"] if w.get("case") == "success"]
    n = 6 + (k * 7) % 19  # 6–24 words a line
    a = (k * 13) % max(1, len(words) - n)
    sel = words[a : a + n]
    t0 = sel[0]["start"] - 0.2
    new = []
    for w in sel:
        w = dict(w)
        w["start"] = round((w["start"] - t0) * scale, 4)
        w["end"] = round((w["end"] - t0) * scale, 4)
        if "phones" in w:
            w["phones"] = [dict(p, duration=round(p["duration"] * scale, 4)) for p in w["phones"]]
        new.append(w)
    doc["words"] = new
    json.dump(doc, open(out, "w", encoding="utf-8"), indent=1)


def rhubarb(src, k, scale, out):
    rows = [l.split("\t") for l in open(src, encoding="utf-8").read().splitlines() if l.strip()]
    n = 8 + (k * 5) % 20
    a = (k * 3) % max(1, len(rows) - n)
    sel = rows[a : a + n]
    t0 = float(sel[0][0])
    with open(out, "w", encoding="utf-8") as f:
        for t, shape in sel:
            f.write(f"{(float(t) - t0) * scale:.3f}\t{shape.strip()}\n")
        f.write(f"{(float(sel[-1][0]) - t0) * scale + 0.3:.3f}\tX\n")


def textgrid(src, k, scale, out):
    text = open(src, encoding="utf-8").read()
    text = re.sub(
        r"(xmin|xmax) = ([0-9.]+)",
        lambda m: f"{m.group(1)} = {float(m.group(2)) * scale:.6f}",
        text,
    )
    open(out, "w", encoding="utf-8").write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("MIEN_DATA", "../shared/data"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    os.makedirs(os.path.join(a.out, "takes"), exist_ok=True)
    sources = [
        ("gentle/lucier_golden.json", gentle, "json"),
        ("rhubarb/pangram_rhubarb_tpi.tsv", rhubarb, "tsv"),
        ("gentle/lucier_golden.json", gentle, "json"),
        ("mfa/MFA_mfa_michael_ipa.TextGrid", textgrid, "TextGrid"),
    ]
    rows = []
    for k in range(a.n):
        rel, fn, ext = sources[k % len(sources)]
        scale = 0.8 + 0.4 * frac(k * GOLDEN)
        name = f"take_{k:04d}"
        path = os.path.join(a.out, "takes", f"{name}.{ext}")
        fn(os.path.join(data, rel), k, scale, path)
        rows.append(
            {
                "character": os.path.join(data, "facecap/facecap.glb"),
                "out": f"{name}.glb",
                "speech": os.path.abspath(path),
                "clip": "rest",
                "fps": "30",
            }
        )
    with open(os.path.join(a.out, "manifest.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{a.n} takes and {os.path.join(a.out, 'manifest.csv')}")


if __name__ == "__main__":
    main()
