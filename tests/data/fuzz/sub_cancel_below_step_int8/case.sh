# ctpu_gengraph --seed 6634
# chip: mxu.cols=4,mxu.dataflow='os',mxu.fp_rate=0.125,vpu.lanes=256,lmem.bytes=98304,gmem.bytes_per_cycle=64,gmem.latency_cycles=0,dma.load_engines=4,sem.count=4
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali --method percentile
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali --float-fallback-f32
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x1.pb
