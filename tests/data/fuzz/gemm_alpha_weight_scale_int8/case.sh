# ctpu_gengraph --seed 9767
# chip: mxu.cols=128,vpu.lanes=4,lmem.bytes=262144,lmem.banks=2,lmem.bank_port_bytes=256,gmem.burst_bytes=4,dma.load_engines=4,queue.depth=2
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali --method percentile
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali --chip chip.json
ok "$C" deploy m.tpu --chip chip.json --layer-group greedy -o p.ctpu --compare-all --test-input x0.pb
