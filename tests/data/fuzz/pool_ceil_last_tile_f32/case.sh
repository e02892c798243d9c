# ctpu_gengraph --seed 5444
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" lower m.top --quantize F32 -o m.tpu
ok "$C" deploy m.tpu --chip chip.json --layer-group longest -o p.ctpu --compare-all --test-input x0.pb
