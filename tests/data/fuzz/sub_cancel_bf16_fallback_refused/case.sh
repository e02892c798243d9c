# ctpu_gengraph --seed 12657
# chip: mxu.rows=128,mxu.dataflow='os',mxu.fp_rate=0.25,lmem.banks=32,lmem.bank_port_bytes=16,gmem.latency_cycles=500,gmem.burst_bytes=4,queue.depth=2
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali --method percentile
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali --no-unsigned --chip chip.json
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x0.pb
