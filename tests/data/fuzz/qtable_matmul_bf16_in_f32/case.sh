# ctpu_gengraph --seed 60 --max-steps 2 --keep-output 0 --chip-keep 4294934528 --flags-keep 4294967176
# chip: default
ok "$C" transform m.onnx -o m.top
ok "$C" lower m.top --quantize F32 -o m.tpu --quantize-table qtable.txt
ok "$C" deploy m.tpu --chip chip.json -o p.ctpu --compare-all --test-input x0.pb
