# ctpu_gengraph --seed 66
# chip: mxu.rows=8,mxu.dataflow='ws',vpu.lanes=256,lmem.bank_port_bytes=8,gmem.bytes_per_cycle=128,gmem.latency_cycles=500,queue.depth=4,sem.count=16
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali --method minmax
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali
ok "$C" deploy m.tpu --chip chip.json --layer-group greedy -o p.ctpu --compare-all --test-input x0.pb x1.pb
