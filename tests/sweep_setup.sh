# sweep_setup.sh: sourced by the `ctpu sweep` script tests (run_sweep.sh, run_sweep_slurm.sh)
# with NAME set and $1 the ctpu binary: sets ctpu, root, m (../shared fmnist-rescnn), a scratch
# directory t (the caller's EXIT trap removes it) and fail(); spec FILE QUANTIZE writes the
# fmnist sweep (QUANTIZE as JSON) × mxu.rows 16, 32 × dp, greedy with compare_all. Exits 77
# without ../shared or GNU parallel.
ctpu=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
m=$root/../shared/models/fmnist-rescnn
[ -f "$m/model.onnx" ] || { echo "$NAME: skipped: ../shared/models/fmnist-rescnn is absent"; exit 77; }
command -v parallel >/dev/null || { echo "$NAME: skipped: GNU parallel is absent (Debian package parallel)"; exit 77; }
t=$(mktemp -d)
spec() {
  cat > "$1" <<JSON
{"models": [{"name": "fmnist", "path": "$m/model.onnx", "quantize": $2,
             "test_input": "$m/test_data_set_0/input_0.pb"}],
 "sweep": {"mxu.rows": [16, 32], "mxu.cols": [16]},
 "layer_group": ["dp", "greedy"], "compare_all": true}
JSON
}
