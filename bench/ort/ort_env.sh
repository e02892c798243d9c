# ort_env.sh: sourced by the benchmarks that time onnxruntime-node (bench_infer.sh,
# bench_calib.sh). Sets ort_ok=1 when node loads onnxruntime-node, either from NODE_PATH (an
# existing install, e.g. NODE_PATH=/work/npm/node_modules) or from bench/ort/node_modules
# (npm install of bench/ort/package.json, done here once when neither has it), and exports
# NODE_PATH so that fuzz/ort_run.js, which ort_bench.js loads, finds the same copy.
# needs: $here = the bench/ folder.
ort_ok=0
ort_loads() { NODE_PATH="$here/ort/node_modules${NODE_PATH:+:$NODE_PATH}" node -e "require('onnxruntime-node')" 2>/dev/null; }
if command -v node >/dev/null; then
  if ! ort_loads && command -v npm >/dev/null; then
    (cd "$here/ort" && npm install --ignore-scripts --no-audit --no-fund --silent >/dev/null 2>&1)
  fi
  ort_loads && ort_ok=1
  export NODE_PATH="$here/ort/node_modules${NODE_PATH:+:$NODE_PATH}"
fi
[ $ort_ok = 1 ] || echo "onnxruntime-node unavailable (needs node and NODE_PATH or npm); ort columns empty"
