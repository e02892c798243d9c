#!/usr/bin/python3
"""make_input.py: renders a line of text (DejaVu Sans) into a W x H RGB image, writes it as
PNG and as the model's preprocessed input: RGB/255, ImageNet mean/std, NCHW float32, both as
an ONNX TensorProto .pb (for ctpu) and raw float32 (for onnxruntime-node).
usage: make_input.py OUTDIR NAME H W TEXT"""
import sys

import numpy as np
import onnx.numpy_helper as nh
from PIL import Image, ImageDraw, ImageFont

out, name, h, w, text = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
img = Image.new("RGB", (w, h), "white")
font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", max(12, h // 8))
draw = ImageDraw.Draw(img)
for i, line in enumerate(text.split("|")):
    draw.text((w // 16, h // 10 + i * (h // 4)), line, fill="black", font=font)
img.save(f"{out}/input.png")
x = np.asarray(img, dtype=np.float32) / 255.0
x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
x = np.ascontiguousarray(x.transpose(2, 0, 1)[None]).astype(np.float32)
t = nh.from_array(x, name)
open(f"{out}/input_0.pb", "wb").write(t.SerializeToString())
x.tofile(f"{out}/input_0.f32")
