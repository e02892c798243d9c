#!/usr/bin/python3
"""summary.py: prints the cmodel's summary JSON (ctpu sim --summary) as a few lines:
total cycles and time, MXU utilization, DDR traffic, busy / stalled cycles per engine.
usage: summary.py SUMMARY.json"""
import json
import sys

s = json.load(open(sys.argv[1]))
print(f"cycles {s['total_cycles']:,} ({s['time_us']:.1f} us at {s['freq_mhz']} MHz), "
      f"{s['instructions']:,} instructions, {s['macs']:,} MACs")
print(f"MXU utilization {s['mxu_utilization']:.4f}; DDR read {s['ddr_bytes_read']:,} B, "
      f"written {s['ddr_bytes_written']:,} B; simulated at {s['sim_cycles_per_second']:,.0f} cycles/s")
for name, e in s["engines"].items():
    stalls = ", ".join(f"{k} {v:,}" for k, v in e["stall"].items() if v)
    print(f"  {name:7s} busy {e['busy']:>11,}  stalled {e['stall_total']:>11,} ({stalls or 'none'})")
