# ctpu_gengraph --seed 46 --max-steps 2 --chip-keep 4294934528 --flags-keep 4294967176 --avoid-known 1
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali --quantize-table qtable.txt
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x0.pb
