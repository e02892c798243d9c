#!/usr/bin/env python3
"""noise_floor.py: how far a float model moves under imperceptible input noise — the yardstick
for quantization targets (docs/accuracy.md "The float models' own noise floor").

  noise_floor.py classify MODEL.top IMAGE_DIR [--seed S] [--levels L]
      top-1 flips of MODEL on every image of IMAGE_DIR with ±L gray levels of uniform integer
      noise added to the source pixels (saved as PNG), against the same images without noise
  noise_floor.py tensor MODEL.top INPUT.pb [--seed S] [--levels L] [--std s,s,s]
      output cosine of MODEL on an ONNX TensorProto input with ±L levels of noise added in the
      input's own units (divided by 255·std per channel for a normalized input)

Runs build/bin/ctpu (or $CTPU). Needs python3-numpy, python3-h5py, python3-pil, python3-onnx.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np

CTPU = os.environ.get("CTPU", os.path.join(os.path.dirname(__file__), "..", "build", "bin", "ctpu"))


def infer(model, inp, out):
    r = subprocess.run([CTPU, "infer", model, "--input", inp, "-o", out], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"noise_floor: ctpu infer {inp}: {r.stderr.strip()}")
    with h5py.File(out, "r") as h:
        return np.array(h[list(h.keys())[0]]).astype(np.float64).ravel()


def classify(a, tmp):
    from PIL import Image
    rng = np.random.default_rng(a.seed)
    names = sorted(f for f in os.listdir(a.data) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    if not names:
        sys.exit(f"noise_floor: {a.data}: no images")
    jobs = []
    for i, f in enumerate(names):
        px = np.array(Image.open(os.path.join(a.data, f)).convert("RGB")).astype(np.int16)
        noisy = np.clip(px + rng.integers(-a.levels, a.levels + 1, px.shape), 0, 255).astype(np.uint8)
        for tag, img in (("c", px.astype(np.uint8)), ("n", noisy)):
            p = os.path.join(tmp, f"{i}{tag}.png")
            Image.fromarray(img).save(p)
            jobs.append(p)
    with ThreadPoolExecutor(2) as ex:
        top1 = list(ex.map(lambda p: int(np.argmax(infer(a.model, p, p + ".h5"))), jobs))
    flips = sum(top1[2 * i] != top1[2 * i + 1] for i in range(len(names)))
    print(f"{len(names)} images, ±{a.levels} levels (seed {a.seed}): {flips} top-1 flips, "
          f"agreement {1 - flips / len(names):.4f}")


def tensor(a, tmp):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(a.data, "rb") as f:
        t.ParseFromString(f.read())
    x = numpy_helper.to_array(t).astype(np.float32)
    n = np.random.default_rng(a.seed).integers(-a.levels, a.levels + 1, x.shape).astype(np.float32)
    if a.std:
        std = np.array([float(s) for s in a.std.split(",")], np.float32)
        n /= 255.0 * std.reshape((1, -1) + (1,) * (x.ndim - 2))
    noisy = os.path.join(tmp, "noisy.h5")
    with h5py.File(noisy, "w") as h:
        h[t.name] = x + n
    ref, got = infer(a.model, a.data, os.path.join(tmp, "c.h5")), infer(a.model, noisy, os.path.join(tmp, "n.h5"))
    cos = float(ref @ got / (np.linalg.norm(ref) * np.linalg.norm(got)))
    print(f"±{a.levels} levels (seed {a.seed}): output cosine {cos:.5f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("classify", "tensor"))
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--levels", type=int, default=1)
    ap.add_argument("--std", default="")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (classify if a.mode == "classify" else tensor)(a, tmp)


if __name__ == "__main__":
    main()
