#!/usr/bin/python3
"""to_h5.py: gathers onnxruntime-node's raw outputs (ort_outputs.json) into one HDF5 tensor
file (dataset per output name, dtype attribute), the format `ctpu compare` reads.
usage: to_h5.py OUTDIR OUT.h5"""
import json
import sys

import h5py
import numpy as np

out, dst = sys.argv[1], sys.argv[2]
index = json.load(open(f"{out}/ort_outputs.json"))
with h5py.File(dst, "w") as f:
    for name, e in index.items():
        a = np.fromfile(f"{out}/{e['file']}", dtype=np.float32).reshape(e["dims"])
        ds = f.create_dataset(name.replace("%", "%25").replace("/", "%2F"), data=a)
        ds.attrs["dtype"] = np.bytes_("f32")
