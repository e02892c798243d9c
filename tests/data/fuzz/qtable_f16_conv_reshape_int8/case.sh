# ctpu_gengraph --seed 328 --avoid-known 1
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" calibrate m.top --dataset cal/list.txt -o m.cali --method minmax
ok "$C" lower m.top --quantize INT8 -o m.tpu --calibration-table m.cali --quantize-table qtable.txt
ok "$C" deploy m.tpu --chip chip.json --layer-group none -o p.ctpu --compare-all --test-input x0.pb
