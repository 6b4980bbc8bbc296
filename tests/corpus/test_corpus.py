"""Model corpus: real-world MXNet graphs (model zoo, GluonCV, RNN LMs, a legacy Module
checkpoint) with random weights, checked against MXNet 1.9.1's recorded outputs.

Optional and slow: the corpus (several GB) is made by ``gen_corpus.py`` with the oracle
interpreter into ``tests/golden/large/corpus`` (git-ignored), and these tests run only when it
exists and ``GLUONPORT_CORPUS=1`` is set (so a plain ``pytest`` on a machine that has it stays
fast). ``python tests/corpus/report.py`` prints the same checks as one table.

Tolerances: see ``_corpus.py`` (1e-4 relative, 1e-5 absolute scaled by the tensor's largest
magnitude; detector outputs behind NMS/topk by shape, the inputs of those ops by value).
"""

from __future__ import annotations

import os

import pytest

from . import _corpus as C

NAMES = C.model_names()


def _gate() -> None:
    if not NAMES:
        pytest.skip(f"no model corpus at {C.CORPUS}: make it with "
                    "~/.cache/gluonport-oracle/bin/python tests/corpus/gen_corpus.py")
    if os.environ.get("GLUONPORT_CORPUS") != "1":
        pytest.skip("the model corpus is present but slow (~30 min): set GLUONPORT_CORPUS=1 "
                    "to run it, or run python tests/corpus/report.py")


def _run(check: str, name: str) -> None:
    _gate()
    skip = failure = None
    try:
        C.CHECK_FUNCS[check](name)
    except C.CorpusSkip as exc:
        skip = f"{name}: {exc}"
    except C.CorpusFailure as exc:
        failure = str(exc)
    if skip:
        pytest.skip(skip)
    if failure:
        pytest.fail(failure, pytrace=False)


PARAMS = NAMES or ["<no corpus>"]
pytestmark = [pytest.mark.oracle, pytest.mark.slow]


@pytest.mark.parametrize("name", PARAMS)
def test_executor(name):
    """The numpy executor (load_checkpoint + bind + forward) vs MXNet's outputs."""
    _run("executor", name)


@pytest.mark.parametrize("name", PARAMS)
def test_infer_shape(name):
    """Our infer_shape of every internal output equals MXNet's recorded one."""
    _run("infer_shape", name)


@pytest.mark.parametrize("name", PARAMS)
def test_onnx_export(name):
    """Default-opset export on onnxruntime vs MXNet: static shapes, then a dynamic batch axis
    at batch 1 and batch 4 (vs MXNet's batch-4 outputs)."""
    _run("onnx_static", name)
    _run("onnx_dynamic", name)


@pytest.mark.parametrize("name", PARAMS)
def test_onnx_roundtrip(name):
    """export -> import_model -> numpy executor equals MXNet's outputs."""
    _run("roundtrip", name)


@pytest.mark.parametrize("name", PARAMS)
def test_runtime(name):
    """gluonport.load on onnxruntime vs numpy, batch 1 and 4."""
    _run("runtime", name)


def test_corpus_has_no_generator_skips():
    """Every model in the generator's table was built and exported by MXNet (a model the
    oracle cannot make is listed in _skipped.json with its reason)."""
    _gate()
    skipped = C.skipped_models()
    assert not skipped, f"models MXNet/GluonCV could not build or export: {skipped}"
