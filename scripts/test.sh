#!/usr/bin/env bash
# test.sh: installs dependencies, builds ctpu and runs the whole test suite with CTest.
#   scripts/test.sh             release build in build/
#   scripts/test.sh --sanitize  ASan+UBSan build in build-asan/
#   scripts/test.sh --clang     clang build in build-clang/ (-Werror as with gcc), unit tests only
# Tests that need ../shared (real models, ONNX conformance tests) skip when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
# the sanitizer run also installs clang + libFuzzer for the fuzz smoke run at its end
# (and the clang build needs clang, which --fuzz installs)
case "${1:-}" in --sanitize | --clang) bash scripts/deps.sh --fuzz ;; *) bash scripts/deps.sh ;; esac
dir=build; opts=()
if [ "${1:-}" = "--clang" ]; then
  cc=$(command -v clang-14 || command -v clang)
  CC=$cc cmake -S . -B build-clang >/dev/null
  cmake --build build-clang -j"$(nproc)" >/dev/null
  (cd build-clang && ctest -j"$(nproc)" -L unit --output-on-failure)
  exit 0
fi
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan; opts=(-DCTPU_SANITIZE=ON -DCTPU_ALLOC_FAIL=ON -DCMAKE_BUILD_TYPE=Debug)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$dir" "${opts[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
(cd "$dir" && ctest -j"$(nproc)" --output-on-failure)
# with the sanitizers, also a short smoke run of every fuzz harness when clang is there
# (scripts/fuzz.sh exits 77 without it: skipped)
if [ "${1:-}" = "--sanitize" ]; then
  rc=0; bash scripts/fuzz.sh --seconds "${CTPU_FUZZ_SMOKE_SECONDS:-3}" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
fi
