"""ONNX function ops imported by expanding their function body (gluonport/onnx/_import_expand).

Each model is built with ``onnx.helper`` and run through gluonport's importer and numpy
executor; the reference is onnxruntime on the same model (an independent implementation of the
fused op).
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.errors import UnsupportedOpError
from gluonport.onnx import _import_expand
from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from gluonport.onnx.opset import ir_version_for

B, S, E, H = 2, 5, 16, 4


def _ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    try:
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - an onnxruntime older than the opset
        pytest.skip(f"onnxruntime {ort.__version__} cannot run the reference: {exc}")
    return sess.run(None, feeds)


def _ops(rep) -> set[str]:
    return {n["op"] for n in json.loads(rep.graph.sym.tojson())["nodes"]}


def _encoder(batch, causal: int, mask: bool) -> onnx.ModelProto:
    """A transformer encoder block at opset 23, as recent torch.onnx.export writes it for
    scaled_dot_product_attention: projections, ``Attention`` (3-D inputs, 4 heads), output
    projection, residual, LayerNormalization and Gelu."""
    if onnx.defs.onnx_opset_version() < 23:
        pytest.skip(f"onnx {onnx.__version__} has no opset 23 (Attention)")
    rng = np.random.default_rng(7)

    def weight(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32),
                                       name)

    inits = [weight(n, (E, E)) for n in ("wq", "wk", "wv", "wo")] + [
        weight("bo", (E,)), weight("gamma", (E,)), weight("beta", (E,))]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, S, E])]
    att_in = ["wq_y", "wk_y", "wv_y"]
    if mask:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.BOOL, [S, S]))
        att_in.append("mask")
    nodes = [helper.make_node("MatMul", ["x", w], [f"{w}_y"]) for w in ("wq", "wk", "wv")]
    nodes += [
        helper.make_node("Attention", att_in, ["att"], q_num_heads=H, kv_num_heads=H,
                         is_causal=causal, name="sdpa"),
        helper.make_node("MatMul", ["att", "wo"], ["proj"]),
        helper.make_node("Add", ["proj", "bo"], ["proj_b"]),
        helper.make_node("Add", ["proj_b", "x"], ["res"]),
        helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["ln"], axis=-1),
        helper.make_node("Gelu", ["ln"], ["y"], approximate="tanh"),
    ]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, S, E])
    model = helper.make_model(helper.make_graph(nodes, "encoder", inputs, [out], inits),
                              opset_imports=[helper.make_opsetid("", 23)],
                              ir_version=ir_version_for(23))
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("causal,mask", [(1, False), (0, True), (0, False)])
def test_attention_opset23_encoder_matches_onnxruntime(causal, mask):
    model = _encoder(B, causal, mask)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((B, S, E)).astype(np.float32)}
    if mask:
        feeds["mask"] = rng.random((S, S)) > 0.3
        feeds["mask"][:, 0] = True  # no fully masked row
    want = _ort(model, feeds)[0]
    rep = prepare(model)
    got = rep.run(feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ops = _ops(rep)
    assert "LayerNorm" in ops  # a direct mapping is kept, not expanded
    assert "batch_dot" in ops and "softmax" in ops  # Attention became primitive ops


def test_attention_dynamic_batch():
    """A symbolic batch dim (as exporters write it): the expanded body's shape arithmetic is
    resolved at run time; batch sizes other than the one used first run too."""
    model = _encoder("N", 1, False)
    rep = prepare(model)
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, S, E)).astype(np.float32)
        want = _ort(model, {"x": x})[0]
        np.testing.assert_allclose(rep.run({"x": x})[0], want, rtol=1e-5, atol=1e-5)


def test_expanded_names_are_unique_and_model_unchanged():
    model = _encoder(B, 1, False)
    before = model.SerializeToString()
    g = import_graph(model)
    assert model.SerializeToString() == before  # the caller's model is not modified
    names = [n["name"] for n in json.loads(g.sym.tojson())["nodes"]]
    assert len(names) == len(set(names))
    assert any(n.startswith("sdpa") for n in names)  # body nodes named after their node


def _window_mish_model(opset: int) -> onnx.ModelProto:
    """HannWindow (a plain function body, opset 17) feeding Mish."""
    size = numpy_helper.from_array(np.array(10, np.int64), "size")
    nodes = [helper.make_node("HannWindow", ["size"], ["w"], periodic=0),
             helper.make_node("Add", ["w", "x"], ["s"]),
             helper.make_node("Mish", ["s"], ["y"])]
    graph = helper.make_graph(
        nodes, "win", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10])], [size])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_version_for(opset))


def test_window_function_matches_onnxruntime():
    model = _window_mish_model(18)
    x = np.linspace(-3, 3, 10).astype(np.float32)
    want = _ort(model, {"x": x})[0]
    np.testing.assert_allclose(prepare(model).run([x])[0], want, rtol=1e-5, atol=1e-6)


def test_nested_bodies_expand(monkeypatch):
    """A body using another function op without a handler is expanded in turn: with the
    handlers of Mish and Softplus hidden, Mish -> Softplus, Tanh, Mul -> Exp, Add, Log..."""
    real = _import_expand.select_handler

    def hide(op_type, domain, opset):
        if op_type in ("Mish", "Softplus"):
            return None, 0, "no import handler"
        return real(op_type, domain, opset)

    monkeypatch.setattr(_import_expand, "select_handler", hide)
    model = _window_mish_model(18)
    expanded, problems = _import_expand.expand_functions(model, {"": 18})
    ops = [n.op_type for n in expanded.graph.node]
    assert problems == {}
    assert "Mish" not in ops and "Softplus" not in ops and "HannWindow" not in ops
    assert {"Tanh", "Exp", "Log"} <= set(ops)
    x = np.linspace(-3, 3, 10).astype(np.float32)
    want = _ort(model, {"x": x})[0]
    np.testing.assert_allclose(prepare(model).run([x])[0], want, rtol=1e-5, atol=1e-6)


def test_no_expansion_without_need():
    model = _window_mish_model(18)
    del model.graph.node[0]
    model.graph.node[0].input[0] = "x"
    same, problems = _import_expand.expand_functions(model, {"": 18})
    assert same is model and problems == {}


def test_unexpandable_body_is_reported(monkeypatch):
    """A body written for another opset in which one of its ops means something else is not
    used: the node is refused, and the error says why."""
    real_handler, real_mismatch = _import_expand.select_handler, _import_expand._opset_mismatch
    monkeypatch.setattr(_import_expand, "select_handler",
                        lambda op, dom, opset: (None, 0, "no import handler") if op == "Mish"
                        else real_handler(op, dom, opset))
    monkeypatch.setattr(_import_expand, "_opset_mismatch",
                        lambda fn, opsets: "its function body is written for opset 1"
                        if fn.name == "Mish" else real_mismatch(fn, opsets))
    expanded, problems = _import_expand.expand_functions(_window_mish_model(18), {"": 18})
    assert [n.op_type for n in expanded.graph.node].count("Mish") == 1
    assert list(problems.values()) == ["its function body is written for opset 1"]
    monkeypatch.setattr("gluonport.onnx.importer.select_handler",
                        _import_expand.select_handler)
    with pytest.raises(UnsupportedOpError, match=r"Mish.*written for opset 1"):
        import_graph(_window_mish_model(18))
