#!/usr/bin/env python3
"""yolox_agreement.py: detection-level agreement of two YOLOX models (e.g. INT8 Tpu vs float
Top) on a folder of images — the task metric next to the output cosine of docs/accuracy.md.

  yolox_agreement.py REF.top|.tpu TEST.top|.tpu IMAGE_DIR [--conf 0.3] [--nms 0.45]
                     [--noise L] [--seed S]

Both models run through `ctpu infer` (Tpu models with --dequant) on every image; their raw
YOLOX outputs [1, A, 5 + C] (x, y, w, h offsets, objectness, C class scores, both already
sigmoid) are decoded on the 8 / 16 / 32 strides of the input size (anchor-free: centre =
(offset + grid) · stride, size = exp(offset) · stride; YOLOX's demo postprocess), scored
obj · max class, kept above --conf and class-wise NMS'd at --nms IoU. REF's boxes are then the
ground truth for TEST's: greedy matching by score, same class and IoU ≥ 0.5, gives recall,
precision, the mean IoU of the matches and AP50 (all-point interpolated). --noise L instead
runs REF on the images with ±L gray levels of uniform integer noise (saved as PNG) as TEST:
the float model's own detection noise floor.

Runs build/bin/ctpu (or $CTPU). Needs python3-numpy, python3-h5py (and python3-pil for --noise).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

CTPU = os.environ.get("CTPU", os.path.join(os.path.dirname(__file__), "..", "build", "bin", "ctpu"))


def infer(model, inp, out):
    cmd = [CTPU, "infer", model, "--input", inp, "-o", out] + (["--dequant"] if model.endswith(".tpu") else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"yolox_agreement: ctpu infer {model} {inp}: {r.stderr.strip()}")
    with h5py.File(out, "r") as h:
        return np.array(h[list(h.keys())[0]]).astype(np.float64)[0]


def input_size(model):
    """(H, W) of the model's image input, from its text IR's first tensor type."""
    with open(model) as f:
        for line in f:
            if "Input(" in line and "tensor<" in line:
                dims = line.split("tensor<")[1].split("x")
                return int(dims[2]), int(dims[3])
    sys.exit(f"yolox_agreement: {model}: no Input op")


def decode(out, hw, conf, nms):
    """Boxes [N, 4] (x0, y0, x1, y1), scores [N], classes [N] after threshold and NMS."""
    grids, strides = [], []
    for s in (8, 16, 32):
        gh, gw = hw[0] // s, hw[1] // s
        yy, xx = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
        grids.append(np.stack([xx.ravel(), yy.ravel()], 1))
        strides.append(np.full(gh * gw, s))
    grid, stride = np.concatenate(grids), np.concatenate(strides)[:, None]
    if len(grid) != len(out):
        sys.exit(f"yolox_agreement: {len(out)} anchors, strides 8/16/32 of {hw} give {len(grid)}")
    ctr = (out[:, :2] + grid) * stride
    wh = np.exp(np.minimum(out[:, 2:4], 20)) * stride
    cls = out[:, 5:].argmax(1)
    score = out[:, 4] * out[np.arange(len(out)), 5 + cls]
    keep = score >= conf
    boxes = np.concatenate([ctr - wh / 2, ctr + wh / 2], 1)[keep]
    score, cls = score[keep], cls[keep]
    order, kept = np.argsort(-score), []
    for i in order:
        if all(cls[j] != cls[i] or iou(boxes[i], boxes[j]) < nms for j in kept):
            kept.append(i)
    return boxes[kept], score[kept], cls[kept]


def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match(ref, test):
    """Per TEST box in score order: (score, matched?, IoU) against still-free REF boxes."""
    used, rows = set(), []
    for i in np.argsort(-test[1]):
        best, bj = 0.5, -1
        for j in range(len(ref[0])):
            if j in used or ref[2][j] != test[2][i]:
                continue
            v = iou(test[0][i], ref[0][j])
            if v >= best:
                best, bj = v, j
        if bj >= 0:
            used.add(bj)
        rows.append((test[1][i], bj >= 0, best if bj >= 0 else 0.0))
    return rows


def ap50(rows, n_ref):
    """All-point interpolated average precision of score-sorted match rows."""
    if n_ref == 0:
        return float("nan")
    rows = sorted(rows, key=lambda r: -r[0])
    tp = np.cumsum([r[1] for r in rows])
    prec = tp / np.arange(1, len(rows) + 1)
    rec = tp / n_ref
    ap, prev = 0.0, 0.0
    for k in range(len(rows)):
        if rows[k][1]:
            ap += (rec[k] - prev) * prec[k:].max()
            prev = rec[k]
    return ap


def noisy_copy(src, dst, levels, rng):
    from PIL import Image
    img = np.asarray(Image.open(src).convert("RGB")).astype(np.int32)
    img = np.clip(img + rng.integers(-levels, levels + 1, img.shape), 0, 255).astype(np.uint8)
    Image.fromarray(img).save(dst)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ref")
    p.add_argument("test")
    p.add_argument("images")
    p.add_argument("--conf", type=float, default=0.3)
    p.add_argument("--nms", type=float, default=0.45)
    p.add_argument("--noise", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    names = sorted(f for f in os.listdir(a.images) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    if not names:
        sys.exit(f"yolox_agreement: {a.images}: no images")
    hw = input_size(a.ref)
    rng = np.random.default_rng(a.seed)
    rows, n_ref, ious = [], 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            src = os.path.join(a.images, n)
            r = decode(infer(a.ref, src, os.path.join(tmp, "r.h5")), hw, a.conf, a.nms)
            if a.noise:
                noisy_copy(src, os.path.join(tmp, "n.png"), a.noise, rng)
                t = decode(infer(a.ref, os.path.join(tmp, "n.png"), os.path.join(tmp, "t.h5")), hw, a.conf, a.nms)
            else:
                t = decode(infer(a.test, src, os.path.join(tmp, "t.h5")), hw, a.conf, a.nms)
            m = match(r, t)
            rows += m
            n_ref += len(r[0])
            ious += [x[2] for x in m if x[1]]
    tp = sum(1 for x in rows if x[1])
    print(f"images {len(names)}  reference boxes {n_ref}  test boxes {len(rows)}")
    print(f"recall {tp / max(n_ref, 1):.4f}  precision {tp / max(len(rows), 1):.4f}  "
          f"mean IoU {np.mean(ious) if ious else 0:.4f}  AP50 {ap50(rows, n_ref):.4f}")


if __name__ == "__main__":
    main()
