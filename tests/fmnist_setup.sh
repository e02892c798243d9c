# fmnist_setup.sh: sourced by the fmnist-rescnn script tests (run_qtable.sh, run_refine.sh)
# with NAME set to the test's name and $1 the ctpu binary: sets ctpu, sh (../shared), model,
# data, a scratch directory t (removed on exit) and fail(); exits 77 without ../shared.
ctpu=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sh=$root/../shared
model=$sh/models/fmnist-rescnn/model.onnx
data=$sh/datasets/fashion-mnist-test.h5
if [ ! -f "$model" ] || [ ! -f "$data" ]; then
  echo "$NAME: skipped: ../shared (fmnist-rescnn, fashion-mnist-test.h5) is absent"
  exit 77
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "$NAME: FAIL: $*"; exit 1; }
"$ctpu" transform "$model" -o "$t/fm.top" --mean 72.93 --scale 0.0111092595 >/dev/null || fail transform
