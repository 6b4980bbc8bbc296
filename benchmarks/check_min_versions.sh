#!/usr/bin/env bash
# Rebuild a throw-away venv with the LOWEST onnx / onnxruntime / numpy / protobuf / click that
# pyproject.toml allows, and run the tests there: by default a fast subset (ONNX trust
# (external-data traversal), import, runtime and onnxruntime training-graph tests, about a
# minute); with ALL=1 the whole suite (about 8 minutes on 2 cores), which must pass there as it
# does at the newest versions (tests that need something a floor lacks -- a kernel
# onnxruntime 1.19 does not have, an opset onnx 1.17 does not know -- skip, saying which).
# Not run by CI (it downloads wheels); run it when a dependency floor changes:
#
#   benchmarks/check_min_versions.sh [VENV_DIR [PYTEST ARGS]]    # default /tmp/minvenv
#   ALL=1 benchmarks/check_min_versions.sh /tmp/minvenv           # the whole suite
#   PYTHON=python3.12 benchmarks/check_min_versions.sh /tmp/minvenv312
#
# Keep the pins below equal to the floors in pyproject.toml (numpy: the lowest release with
# wheels for the Python used, 1.26 from Python 3.12 on).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-/tmp/minvenv}"
python="${PYTHON:-python3}"
numpy=$("$python" -c 'import sys; print("1.26.0" if sys.version_info >= (3, 12) else "1.23.5")')
pins=(onnx==1.17.0 onnxruntime==1.19.0 "numpy==$numpy" protobuf==3.20.3 click==8.0.4)

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install -q "${pins[@]}" "pytest>=7" "hypothesis>=6" "jsonschema>=4.17"
"$venv/bin/pip" install -q --no-deps -e "$here"
"$venv/bin/python" - <<'PY'
import importlib.metadata as md
import sys
print("python", sys.version.split()[0], *(f"{p} {md.version(p)}" for p in
      ("onnx", "onnxruntime", "numpy", "protobuf", "click")))
PY
cd "$here"
if [ "${ALL:-0}" = 1 ]; then
    tests=(tests)
else
    tests=(tests/onnx/test_onnx_trust.py tests/onnx/test_onnx_fuzz.py tests/onnx/test_import.py
           tests/onnx/test_import_provenance.py tests/runtime/test_ort.py
           tests/runtime/test_serving.py tests/runtime/test_inference_session.py
           tests/autograd/test_train_graph_ort.py tests/autograd/test_reuse.py
           tests/autograd/test_grad_takeover.py tests/ops/test_conv_gemm_onnx.py
           tests/cli tests/serve/test_serve_cli.py)
fi
"$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}" "${@:2}"
