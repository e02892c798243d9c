# ctpu_gengraph --seed 1948 --max-steps 5 --keep-output 2 --chip-keep 4294934528 --flags-keep 4294967168
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x0.pb
