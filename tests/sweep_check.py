#!/usr/bin/env python3
"""sweep_check.py RESULTS N: checks RESULTS/results.csv (ctpu sweep, docs/sweep.md) against the
point folders it was built from, read independently here: N point rows, each point row's
status equal to its status file (a failed deploy) and no other rows, or its cycles / DDR
bytes / compare equal to its summary.json, one group row per line of its groups CSV and one
layer row per line of its layers.csv; each swept key equal to the value in its chip.json. Exit 0 ok, 1 with the first difference."""
import csv, json, os, sys

res, n = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(os.path.join(res, "results.csv"), newline="")))
fixed = ["point", "model", "quantize", "strategy", "level", "index", "group", "name", "status", "compare",
         "est_cycles", "sim_cycles", "est_over_sim", "mxu_util", "ddr_bytes", "lmem_bytes"]
keys = [k for k in rows[0].keys() if k not in fixed]
def fail(msg):
    print("sweep_check: " + msg)
    sys.exit(1)
points = [r for r in rows if r["level"] == "point"]
if len(points) != n:
    fail(f"{len(points)} point rows, not {n}")
status_names = {"1": "check_failed", "2": "usage", "3": "bad_input", "4": "limit", "5": "internal"}
for r in points:
    d = os.path.join(res, "points", r["point"])
    if os.path.exists(os.path.join(d, "status")):
        code = open(os.path.join(d, "status")).read().strip()
        if r["status"] != status_names.get(code) or os.path.exists(os.path.join(d, "summary.json")):
            fail(f"point {r['point']}: status {r['status']!r}, its status file says {code}")
        if [x for x in rows if x["point"] == r["point"] and x["level"] != "point"]:
            fail(f"point {r['point']}: group or layer rows for a failed point")
        continue
    s = json.load(open(os.path.join(d, "summary.json")))
    sim = s["sim"]
    want = {"status": "ok", "compare": "pass" if s["compare"]["pass"] else "fail",
            "est_cycles": str(s["est_cycles"]), "sim_cycles": str(sim["total_cycles"]),
            "ddr_bytes": str(sim["ddr_bytes_read"] + sim["ddr_bytes_written"]),
            "lmem_bytes": str(s["lmem_peak_bytes"]), "strategy": s["strategy"]}
    for k, v in want.items():
        if r[k] != v:
            fail(f"point {r['point']}: {k} is {r[k]!r}, summary.json says {v!r}")
    if abs(float(r["mxu_util"]) - sim["mxu_utilization"]) > 5e-5:
        fail(f"point {r['point']}: mxu_util {r['mxu_util']} vs {sim['mxu_utilization']}")
    chip = json.load(open(os.path.join(d, "chip.json")))
    for k in keys:
        v = chip
        for part in k.split("."):
            v = v[part]
        if float(r[k]) != float(v):
            fail(f"point {r['point']}: {k} is {r[k]}, chip.json says {v}")
    for level, f in (("group", "prog.ctpu.groups.csv"), ("layer", "layers.csv")):
        lines = list(csv.DictReader(open(os.path.join(d, f), newline="")))
        got = [x for x in rows if x["point"] == r["point"] and x["level"] == level]
        if len(got) != len(lines) or not lines:
            fail(f"point {r['point']}: {len(got)} {level} rows, {f} has {len(lines)}")
        col = "sim_cycles" if level == "group" else "cycles"
        if [x["sim_cycles"] for x in got] != [x[col] for x in lines]:
            fail(f"point {r['point']}: {level} sim_cycles differ from {f}")
print(f"sweep_check: {len(rows)} rows of {n} points match their point folders")
