# ctpu_gengraph --seed 10135
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali --method mse
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali --chip chip.json
ok "$C" deploy m.tpu --chip chip.json --layer-group greedy -o p.ctpu --compare-all --test-input x0.pb
