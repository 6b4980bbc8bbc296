"""Start-up stays lazy: ``import gluonport`` and the CLI's ``--help`` import neither ``onnx`` nor
``onnxruntime`` (about half of the start-up time they once took), and the lazily loaded names
still behave as the eagerly imported ones did.

Structural checks in fresh interpreters (which modules are in ``sys.modules``), never timings:
benchmarks/bench_startup.py measures the time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYMBOL = os.path.join(ROOT, "sample_models", "lenet_bn-symbol.json")
HEAVY = ("onnx", "onnxruntime", "google.protobuf")


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter from the repository root; its stdout."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, timeout=120,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def assert_not_imported(after: str) -> None:
    """After running ``after``, none of the heavy packages is imported."""
    got = run_python("import sys\n" + textwrap.dedent(after)
                     + f"\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    assert got.strip().splitlines()[-1] == "[]", got


def test_import_gluonport_imports_no_onnx():
    assert_not_imported("import gluonport")


def test_core_api_imports_no_onnx():
    # the imperative, symbolic and Gluon front ends, and naming the ONNX namespace, need no onnx
    assert_not_imported("""
        import gluonport as mx
        x = mx.nd.array([[1.0, 2.0]])
        net = mx.gluon.nn.Dense(3, in_units=2)
        net.initialize()
        net(x).asnumpy()
        (mx.sym.var("a") + 1).tojson()
        mx.init.Xavier, mx.mod.Module, mx.model, mx.io, mx.metric, mx.image, mx.onnx
        mx.onnx.export_model, mx.onnx.verify, mx.onnx.DEFAULT_OPSET
        import gluonport.ops._families
        import gluonport.executor, gluonport.model, gluonport.module, gluonport.runtime
        import gluonport.summary, gluonport.onnx.export, gluonport.onnx.verify
    """)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["inspect", "--help"],
                                  ["convert", "--help"], ["run", "--help"],
                                  ["validate", "--help"], ["inspect", SYMBOL]],
                         ids=["help", "version", "inspect-help", "convert-help", "run-help",
                              "validate-help", "inspect-symbol"])
def test_cli_imports_no_onnx(argv):
    # the console script's code path (gluonport_cli.main:main), with sys.modules read at exit
    assert_not_imported(f"""
        sys.argv = ["gluonport"] + {argv!r}
        from gluonport_cli.main import main
        try:
            main()
        except SystemExit as exc:
            assert not exc.code, exc.code
    """)


def test_lazy_names_resolve_as_before():
    got = run_python("""
        import gluonport as mx
        from gluonport import gluon, nd, sym, init, mod, img, load, Predictor, MXNetError
        assert mx.gluon is gluon and mx.nd is mx.ndarray and mx.sym is mx.symbol
        assert mx.gluon.nn.Dense.__name__ == "Dense"
        assert mx.init is mx.initializer and mx.mod is mx.module and mx.img is mx.image
        assert mx.load is load and mx.Predictor is Predictor and mx.MXNetError is MXNetError
        assert mx.Executor.__name__ == "Executor" and mx.AttrScope.__name__ == "AttrScope"
        assert mx.runtime.OrtRunner.__name__ == "OrtRunner"  # submodules, as when eager
        import gluonport.onnx.verify
        assert callable(mx.onnx.verify) and mx.onnx.verify.__name__ == "verify"
        from gluonport.onnx import verify, bisect, export_model
        assert verify is mx.onnx.verify
        assert set(mx.__all__) <= set(dir(mx)) and set(mx.onnx.__all__) <= set(dir(mx.onnx))
        for name in mx.__all__:
            getattr(mx, name)
        for name in mx.onnx.__all__:
            getattr(mx.onnx, name)
        for bad in ("no_such_thing", "__wrapped__"):
            assert not hasattr(mx, bad) and not hasattr(mx.onnx, bad)
        print("ok")
    """)
    assert got.strip() == "ok"


def test_onnx_loads_when_used():
    # the laziness defers the import, it does not lose it
    got = run_python("""
        import sys
        import gluonport as mx
        mx.onnx.import_model
        print("onnx" in sys.modules)
    """)
    assert got.strip() == "True"
