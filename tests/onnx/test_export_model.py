"""export_model's contract: MXNet 1.9.1's signature, naming, heads, metadata, checker,
external data, atomic writes, custom converters, fix_gamma."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import gluonport as mx
from gluonport.errors import ConversionError, InputShapeError, UnsupportedOpError
from gluonport.onnx import export_model, export_symbol, register_converter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LENET = os.path.join(ROOT, "sample_models", "lenet_bn")


def _run(path_or_model, **feed):
    src = path_or_model if isinstance(path_or_model, str) else path_or_model.SerializeToString()
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def test_file_paths_and_mxnet_argument_names(tmp_path):
    out = str(tmp_path / "m.onnx")
    # MXNet 1.9.1's old names input_shape/input_type still work
    path = export_model(LENET + "-symbol.json", LENET + "-0000.params",
                        input_shape=[(2, 1, 28, 28)],
                        input_type=np.float32, onnx_file_path=out)
    assert path == out
    x = np.load(LENET + "-input.npy")
    np.testing.assert_allclose(_run(out, data=x)[0], np.load(LENET + "-output.npy"), rtol=1e-4,
                               atol=1e-5)
    meta = {p.key: p.value for p in onnx.load(out).metadata_props}
    assert len(meta["gluonport.source_symbol_sha256"]) == 64
    assert len(meta["gluonport.source_params_sha256"]) == 64
    m = onnx.load(out)
    assert m.producer_name == "gluonport" and m.producer_version == mx.__version__
    onnx.checker.check_model(m, full_check=True)
    assert not {i.name for i in m.graph.input} & {t.name for t in m.graph.initializer}


def test_params_as_arg_aux_list_and_dynamic_batch(tmp_path):
    sym, arg, aux = mx.model.load_checkpoint(LENET, 0)
    out = export_model(sym, [arg, aux], [(1, 1, 28, 28)], onnx_file_path=str(tmp_path / "d.onnx"),
                       dynamic=True)
    x = np.load(LENET + "-input.npy")
    for batch in (1, 4):
        xb = np.resize(x, (batch, 1, 28, 28)).astype(np.float32)
        want = sym.bind(mx.cpu(), {"data": mx.nd.array(xb), **arg}, aux_states=aux).forward()
        np.testing.assert_allclose(_run(out, data=xb)[0], want[0].asnumpy(), rtol=1e-4,
                                   atol=1e-5)


def test_names_are_unique_even_when_mxnet_names_repeat_or_start_with_underscore():
    x = mx.sym.var("data")
    a = mx.sym.relu(x, name="_same")
    b = mx.sym.sigmoid(a, name="_same")
    c = mx.sym.FullyConnected(b, num_hidden=2, name="_same")
    params = {"_same_weight": np.ones((2, 3), np.float32), "_same_bias": np.zeros(2, np.float32)}
    m = export_symbol(c, params, {"data": (1, 3)})
    outputs = [o for n in m.graph.node for o in n.output]
    assert len(outputs) == len(set(outputs))
    names = [n.name for n in m.graph.node]
    assert len(names) == len(set(names))
    again = export_symbol(c, params, {"data": (1, 3)})
    assert [n.name for n in again.graph.node] == names  # deterministic


def test_multiple_heads_repeated_head_and_input_head():
    x = mx.sym.var("data")
    r = mx.sym.relu(x, name="r")
    g = mx.sym.Group([r, mx.sym.sigmoid(x, name="s"), r, x])
    m = export_symbol(g, {}, {"data": (2, 3)})
    assert len(m.graph.output) == 4 and len({o.name for o in m.graph.output}) == 4
    xv = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    outs = _run(m, data=xv)
    np.testing.assert_allclose(outs[0], np.maximum(xv, 0))
    np.testing.assert_allclose(outs[2], outs[0])
    np.testing.assert_allclose(outs[3], xv)
    back = json.loads({p.key: p.value for p in m.metadata_props}["gluonport.output_names"])
    assert list(back.values()) == g.list_outputs()


def test_all_unsupported_ops_listed_at_once_and_no_file_left(tmp_path):
    text = mx.sym.relu(mx.sym.sigmoid(mx.sym.var("data"), name="a"), name="b").tojson()
    text = text.replace('"op": "relu"', '"op": "OpOne"').replace('"op": "sigmoid"',
                                                                 '"op": "OpTwo"')
    sym = mx.sym.load_json(text)
    out = tmp_path / "x.onnx"
    with pytest.raises(UnsupportedOpError) as err:
        export_model(sym, {}, [(1, 2)], onnx_file_path=str(out))
    assert set(err.value.ops) == {"OpOne", "OpTwo"}
    assert "unknown to gluonport" in str(err.value)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_custom_converter_for_an_unknown_op():
    text = mx.sym.relu(mx.sym.var("data"), name="r6").tojson().replace('"relu"', '"MyRelu6"')
    sym = mx.sym.load_json(text)

    @register_converter("MyRelu6")
    def _(ctx):
        lo = ctx.const(np.float32(0))
        hi = ctx.const(np.float32(6))
        ctx.make("Clip", [ctx.inputs[0], lo, hi], outputs=ctx.outputs[:1])

    m = export_symbol(sym, {}, {"data": (1, 3)})
    np.testing.assert_allclose(_run(m, data=np.array([[-1, 3, 9]], np.float32))[0], [[0, 3, 6]])


def test_batchnorm_fix_gamma_default_ignores_stored_gamma():
    x = mx.sym.var("data")
    bn = mx.sym.BatchNorm(x, name="bn")  # fix_gamma=True is MXNet's default
    rng = np.random.default_rng(0)
    params = {"bn_gamma": np.full(3, 5.0, np.float32), "bn_beta": rng.normal(size=3).astype("f4"),
              "bn_moving_mean": rng.normal(size=3).astype("f4"),
              "bn_moving_var": rng.uniform(0.5, 2, 3).astype("f4")}
    xv = rng.normal(size=(2, 3, 4, 4)).astype(np.float32)
    want = bn.bind(mx.cpu(), {"data": mx.nd.array(xv), "bn_gamma": mx.nd.array(params["bn_gamma"]),
                              "bn_beta": mx.nd.array(params["bn_beta"])},
                   aux_states={k: mx.nd.array(v) for k, v in params.items()
                               if "moving" in k}).forward()[0].asnumpy()
    got = _run(export_symbol(bn, params, {"data": xv.shape}), data=xv)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_external_data(tmp_path):
    sym, arg, aux = mx.model.load_checkpoint(LENET, 0)
    out = str(tmp_path / "ext.onnx")
    export_model(sym, {**arg, **aux}, [(2, 1, 28, 28)], onnx_file_path=out, external_data=True)
    data = [p for p in os.listdir(tmp_path) if p.startswith("ext.onnx.") and p.endswith(".data")]
    assert len(data) == 1  # ext.onnx.<12 hex digits of its sha256>.data
    assert os.path.getsize(out) < os.path.getsize(tmp_path / data[0])
    x = np.load(LENET + "-input.npy")
    np.testing.assert_allclose(_run(out, data=x)[0], np.load(LENET + "-output.npy"), rtol=1e-4,
                               atol=1e-5)
    assert sorted(os.listdir(tmp_path)) == sorted(["ext.onnx", data[0]])  # no temp file left


@pytest.mark.parametrize("opset", [12, 99])
def test_opset_out_of_range(opset):
    with pytest.raises(ConversionError, match="opset"):
        export_symbol(mx.sym.relu(mx.sym.var("data")), {}, {"data": (1,)}, opset_version=opset)


def test_in_shapes_errors_name_the_inputs():
    sym = mx.sym.relu(mx.sym.var("data"))
    with pytest.raises(ConversionError, match="give in_shapes"):
        export_symbol(sym, {}, None)
    with pytest.raises(ConversionError, match="not inputs"):
        export_symbol(sym, {}, {"nope": (1,)})
    with pytest.raises(ConversionError, match="not an input"):
        export_symbol(sym, {}, {"data": (1,)}, dynamic_axes={"x": [0]})


def test_in_shapes_mapping_completed_from_recorded_shapes():
    a = mx.sym.var("a", shape=(2, 3))
    b = mx.sym.var("b")
    sym = mx.sym.broadcast_add(a, b)
    with pytest.raises(InputShapeError, match=r"\['b'\]") as err:
        export_symbol(sym, {}, None)
    assert err.value.inputs == ["b"]  # 'a' records its shape; front ends word the fix
    model = export_symbol(sym, {}, {"b": (1, 3)})  # 'a' comes from its __shape__
    dims = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input}
    assert dims == {"a": [2, 3], "b": [1, 3]}
