# ctpu_gengraph --seed 2077
# chip: mxu.fp_rate=0.125,lmem.bytes=262144,gmem.bytes_per_cycle=16,gmem.latency_cycles=0,queue.depth=2,sem.count=16
ok "$C" transform m.onnx -o m.top
ok "$C" lower m.top --quantize F32 -o m.tpu
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x1.pb
