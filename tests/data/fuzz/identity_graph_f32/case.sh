# ctpu_gengraph --seed 2 --max-steps 0 --keep-output 0 --chip-keep 0 --flags-keep 0 --max-hw 1
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" lower m.top --quantize F32 -o m.tpu
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x0.pb
