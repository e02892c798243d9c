#!/usr/bin/env python3
"""render_text.py: a calibration / evaluation set of rendered-text images for text detectors
(PP-OCRv4 det): white-ish pages with 1–5 lines of random words in the DejaVu fonts.

  render_text.py OUT_DIR [--count 16] [--seed 1] [--size 640x320]

Each image gets its own font (DejaVu Sans / Serif / Mono, regular, bold, oblique,
condensed), size (20–56 px), text colour (black to dark gray or a dark colour), background
(white to light gray) and left / top margins; the words are drawn from a fixed vocabulary of
compiler, hardware and everyday words and numbers. Deterministic for a seed. Needs
python3-pil and the fonts-dejavu-core / fonts-dejavu-extra fonts.
"""
import argparse
import glob
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFont

WORDS = ("the of and to in is for on with as by at from this that which quantization "
         "compiler simulator systolic array tensor kernel memory bank channel layer group tile "
         "scale threshold integer float model image network output input weight bias cycle "
         "program deploy lower calibrate table sample error cosine bright morning river stone "
         "garden window paper yellow market station coffee winter orange silver number").split()


def line(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
    if rng.random() < 0.5:
        words.insert(rng.randint(0, len(words)), str(rng.randint(0, 99999)))
    if rng.random() < 0.3:
        words[0] = words[0].capitalize()
    if rng.random() < 0.15:
        words = [w.upper() for w in words]
    return " ".join(words)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", default="640x320")
    a = ap.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    fonts = sorted(glob.glob("/usr/share/fonts/truetype/dejavu/DejaVu*.ttf"))
    if not fonts:
        sys.exit("render_text: no DejaVu font in /usr/share/fonts/truetype/dejavu (apt-get install fonts-dejavu-core)")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    for i in range(a.count):
        bg = rng.randint(225, 255)
        img = Image.new("RGB", (w, h), (bg, bg, bg))
        d = ImageDraw.Draw(img)
        size = rng.randint(20, 56)
        font = ImageFont.truetype(rng.choice(fonts), size)
        ink = (rng.randint(0, 60),) * 3 if rng.random() < 0.7 else tuple(rng.randint(0, 120) for _ in range(3))
        x0, y = rng.randint(4, 40), rng.randint(4, 40)
        for _ in range(rng.randint(1, 5)):
            if y + size > h:
                break
            d.text((x0 + rng.randint(0, 20), y), line(rng), font=font, fill=ink)
            y += int(size * rng.uniform(1.3, 2.0))
        img.save(os.path.join(a.out, f"text_{a.seed:02d}_{i:03d}.png"))


if __name__ == "__main__":
    main()
