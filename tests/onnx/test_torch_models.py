"""PyTorch-exported ONNX models through the importer (no torch needed: the files are committed).

``tests/golden/onnx/torch/make_torch_models.py`` exported twelve small models (a transformer
encoder with a padding mask, a pre-norm GELU encoder without a mask and with a float attention
mask, a ResNet-style CNN, a bidirectional LSTM, a GRU, a U-Net with
ConvTranspose/Upsample, a MobileNetV2 block, an MLP with LayerNorm/GELU, tensor ops, a
detection head with TopK/GatherElements, a token model with Embedding, a causal mask and
nn.MultiheadAttention) with the classic exporter at opsets 13 (14) and 17
and the dynamo exporter at opset 18 -- the three encoders also at opset 23, where
``scaled_dot_product_attention`` is exported as ONNX's ``Attention`` op -- all with a dynamic
batch axis, plus a batch-1 input and torch's output. For every file:

* import + numpy executor == torch's recorded output at batch 1;
* at batch 3, == onnxruntime on the original file (the dynamic batch really is dynamic);
  where onnxruntime cannot run the file (``ORT_REFUSES``: its CPU ``Attention`` kernel rejects
  the padding mask torch writes, shaped (N, 1, 1, L), although the ONNX spec lets a mask
  broadcast over the query positions), onnx's reference evaluator takes its place, and the
  test checks that onnxruntime still refuses, so it notices when onnxruntime is fixed;
* ``export_mxnet`` files run by ``gluonport.load(prefix, backend="numpy")`` == the import;
* the imported graph re-exported with ``gluonport.onnx.export_model`` (dynamic batch) runs in
  onnxruntime at batch 2 == our executor (a full round trip).

Tolerances: rtol 1e-4, atol 1e-5 for every model (float32 throughout; the largest error seen,
the transformer's, is about 1e-5 relative). The MXNet checkpoint must reproduce the import
exactly (same graph, same parameters, same executor).
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import gluonport
from gluonport.executor import GraphPlan
from gluonport.onnx import export_model, export_mxnet, import_graph, import_model

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "onnx", "torch")
with open(os.path.join(HERE, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
RTOL, ATOL = 1e-4, 1e-5
# (model, variant) -> (rtol, atol) where a model needs its own (none does today)
TOLERANCES: dict[tuple[str, str], tuple[float, float]] = {}
# (model, variant) -> the precise reason it cannot import (xfail strict); none today
NOT_IMPORTABLE: dict[tuple[str, str], str] = {}
# (model, variant) -> the text of onnxruntime's refusal to run the original file
ORT_REFUSES: dict[tuple[str, str], str] = {
    ("transformer", "dynamo23"): "inconsistent q_sequence_length (between attn_mask and Q)",
}
# models exported at opset 23 (the Attention op) besides the three opsets every model has
OPSET23 = ("transformer", "encoder", "encoder_mask")

CASES = [pytest.param(name, key, id=f"{name}-{key}",
                      marks=[pytest.mark.xfail(strict=True, reason=NOT_IMPORTABLE[name, key])]
                      if (name, key) in NOT_IMPORTABLE else [])
         for name, entry in MANIFEST.items() for key, f in entry["variants"].items()
         if f.endswith(".onnx")]


def _path(name: str, key: str) -> str:
    return os.path.join(HERE, MANIFEST[name]["variants"][key])


def _skip_if_onnx_predates(key: str) -> None:
    """The opset-23 files need an onnx that knows opset 23 (1.18 on) to pass its checker, the
    importer's gate; onnx 1.17, which pyproject.toml allows, stops at 22."""
    import onnx

    if key == "dynamo23" and onnx.defs.onnx_opset_version() < 23:
        pytest.skip(f"onnx {onnx.__version__} knows opsets up to "
                    f"{onnx.defs.onnx_opset_version()}; the file is opset 23")


def _tol(name: str, key: str) -> dict:
    rtol, atol = TOLERANCES.get((name, key), (RTOL, ATOL))
    return {"rtol": rtol, "atol": atol}


@functools.cache
def _imported(name: str, key: str):
    return import_graph(_path(name, key))


def _run(g, feed: dict) -> list[np.ndarray]:
    return GraphPlan(g.sym).run({**feed, **g.arg_params, **g.aux_params})


def _recorded(name: str) -> tuple[dict, list]:
    entry = MANIFEST[name]
    inputs = {k: np.load(os.path.join(HERE, f"{name}.input.{k}.npy")) for k in entry["inputs"]}
    outputs = [np.load(os.path.join(HERE, f"{name}.output.{i}.npy"))
               for i in range(len(entry["outputs"]))]
    return inputs, outputs


def _inputs(name: str, batch: int, seed: int) -> dict:
    """Inputs at another batch size: normal floats (the float attention mask too: any
    additive bias is a valid mask); token ids below the vocabulary size; a padding mask
    (True = padded) that keeps at least half of every row (a fully padded row would make
    attention NaN in torch too). An input without a batch axis keeps its shape."""
    rng = np.random.default_rng(seed)
    feed = {}
    for k, spec in MANIFEST[name]["inputs"].items():
        shape = list(spec["shape"])
        if spec["batch_axis"] is not None:
            shape[spec["batch_axis"]] = batch
        if spec["dtype"] == "bool":
            length = shape[1]
            mask = np.zeros(shape, bool)
            for i in range(batch):
                mask[i, length - (i % (length // 2 + 1)):] = True
            feed[k] = mask
        elif "high" in spec:
            feed[k] = rng.integers(0, spec["high"], shape).astype(spec["dtype"])
        else:
            feed[k] = rng.standard_normal(shape).astype(spec["dtype"])
    return feed


def _close(got: list, want: list, **tol) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, **tol)


def test_manifest_lists_every_model_and_file():
    """Twelve models, each with three variants on disk, four for the opset-23 encoders (an
    export failure is recorded as text, which would show up here)."""
    assert len(MANIFEST) == 12
    for name, entry in MANIFEST.items():
        assert len(entry["variants"]) == (4 if name in OPSET23 else 3), name
        for key, f in entry["variants"].items():
            assert f.endswith(".onnx") and os.path.exists(_path(name, key)), (name, key, f)


@pytest.mark.parametrize("name,key", CASES)
def test_batch1_matches_torch(name, key):
    _skip_if_onnx_predates(key)
    sym, arg, aux = import_model(_path(name, key))
    inputs, want = _recorded(name)
    feed = {**inputs, **{k: v.asnumpy() for k, v in {**arg, **aux}.items()}}
    _close(GraphPlan(sym).run(feed), want, **_tol(name, key))


def test_opset23_files_use_the_attention_op():
    """What the opset-23 files are for: torch writes ONNX's Attention op (a function op the
    importer expands), at opset 23."""
    import onnx

    for name in OPSET23:
        model = onnx.load(_path(name, "dynamo23"))
        assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) == 23
        assert sum(n.op_type == "Attention" for n in model.graph.node) == 2, name


@pytest.mark.parametrize("name,key", CASES)
def test_batch3_matches_onnxruntime(name, key):
    if key == "dynamo23" and tuple(int(v) for v in ort.__version__.split(".")[:2]) < (1, 23):
        pytest.skip(f"onnxruntime {ort.__version__} predates opset 23 (1.23 runs it)")
    feed = _inputs(name, 3, seed=1)
    sess = ort.InferenceSession(_path(name, key), providers=["CPUExecutionProvider"])
    if (name, key) in ORT_REFUSES:
        from onnx.reference import ReferenceEvaluator

        with pytest.raises(Exception, match=re.escape(ORT_REFUSES[name, key])):
            sess.run(None, feed)
        want = ReferenceEvaluator(_path(name, key)).run(None, feed)
    else:
        want = sess.run(None, feed)
    _close(_run(_imported(name, key), feed), want, **_tol(name, key))


@pytest.mark.parametrize("name,key", CASES)
def test_export_mxnet_loads_in_numpy_backend(name, key, tmp_path):
    _skip_if_onnx_predates(key)
    g = _imported(name, key)
    sym_file, params_file = export_mxnet(_path(name, key), str(tmp_path / name))
    assert os.path.exists(sym_file) and os.path.exists(params_file)
    model = gluonport.load(str(tmp_path / name), backend="numpy")
    assert sorted(model.input_names) == sorted(MANIFEST[name]["inputs"])
    feed = _inputs(name, 2, seed=3)
    got = model(**feed)
    got = got if isinstance(got, list) else [got]
    for a, b in zip(got, _run(g, feed)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,key", CASES)
def test_round_trip_through_export_model(name, key, tmp_path):
    """Our imported graph exported back to ONNX with the batch axis dynamic, run by
    onnxruntime at a batch size it was not exported with."""
    _skip_if_onnx_predates(key)
    g = _imported(name, key)
    specs = MANIFEST[name]["inputs"]
    shapes = [tuple(s["shape"]) for s in specs.values()]
    types = [np.dtype(s["dtype"]) for s in specs.values()]
    axes = {k: [s["batch_axis"]] for k, s in specs.items() if s["batch_axis"] is not None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the exporter's notes on RNN per-shape fallbacks)
        path = export_model(g.sym, {**g.arg_params, **g.aux_params}, in_shapes=shapes,
                            in_types=types, onnx_file_path=str(tmp_path / "rt.onnx"),
                            dynamic_axes=axes)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == list(specs)
    feed = _inputs(name, 2, seed=2)
    _close(sess.run(None, feed), _run(g, feed), **_tol(name, key))
