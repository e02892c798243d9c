# ctpu_gengraph --seed 63 --max-steps 1 --keep-output 0
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" lower m.top --quantize BF16 -o m.tpu
ok "$C" deploy m.tpu --chip chip.json --layer-group greedy -o p.ctpu --compare-all --test-input x0.pb
