#!/usr/bin/env bash
# Rebuild a throw-away venv with the LOWEST onnx / onnxruntime / numpy / protobuf / click that
# pyproject.toml allows, and run the ONNX trust (external-data traversal), import, runtime and
# onnxruntime training-graph tests there. Not run by CI (it downloads wheels); run it when a
# dependency floor changes:
#
#   benchmarks/check_min_versions.sh [VENV_DIR [PYTEST ARGS]]    # default /tmp/minvenv
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
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/onnx/test_onnx_trust.py \
    tests/onnx/test_onnx_fuzz.py tests/onnx/test_import.py tests/onnx/test_import_provenance.py \
    tests/runtime/test_ort.py tests/runtime/test_serving.py \
    tests/autograd/test_train_graph_ort.py tests/autograd/test_reuse.py \
    tests/autograd/test_grad_takeover.py tests/ops/test_conv_gemm_onnx.py "${@:2}"
