# ctpu_gengraph --seed 33 --max-steps 8 --keep-output 3 --chip-keep 4294934528 --flags-keep 4294967168 --max-hw 1
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" lower m.top --quantize F16 -o m.tpu
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x0.pb
