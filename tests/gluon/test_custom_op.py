"""Python custom operators (``mx.operator.CustomOp``/``CustomOpProp``/``register``): the code in
tests/golden/custom_op/custom_ops.py, written for MXNet 1.x, runs with only its import changed,
and reproduces what MXNet 1.9.1 computed with it (gen_custom_op.py): a saved checkpoint with a
two-output custom op that has an auxiliary state, ``nd.Custom`` imperatively, and a Gluon block
calling ``F.Custom`` (imperative, hybridized, exported and re-imported). Tolerance rtol 1e-5 /
atol 1e-6: float32, the same formulas in a different order."""

import json
import os
import types

import numpy as np
import onnx
import pytest

import gluonport as mx
from gluonport.errors import UnsupportedOpError
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "custom_op")
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module")
def ops() -> types.ModuleType:
    return load_ported(os.path.join(HERE, "custom_ops.py"))


@pytest.fixture(scope="module")
def gold() -> dict:
    with np.load(os.path.join(HERE, "golden.npz")) as z:
        return {k: z[k] for k in z.files}


def test_symbol_api_matches_mxnet(ops, gold):
    sym = ops.build_symbol()
    assert sym.list_outputs() == list(gold["list_outputs"])
    assert sym.list_arguments() == list(gold["list_arguments"])
    assert sym.list_auxiliary_states() == list(gold["list_auxiliary_states"])
    # the graph we build is the one MXNet saved, attribute strings included
    with open(os.path.join(HERE, "custom-symbol.json"), encoding="utf-8") as f:
        saved = json.load(f)
    ours = json.loads(sym.tojson())
    assert [(n["op"], n["name"], n.get("attrs")) for n in ours["nodes"]] == \
        [(n["op"], n["name"], n.get("attrs")) for n in saved["nodes"]]
    args, _, auxs = sym.infer_shape(data=gold["custom_data"].shape)
    assert auxs == [(6,)] and args[sym.list_arguments().index("norm0_gamma")] == (6,)


@pytest.mark.parametrize("backend", ["numpy", None])
def test_saved_checkpoint_runs_as_in_mxnet(ops, gold, backend):
    prefix = os.path.join(HERE, "custom")
    net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                       prefix + "-0000.params")
    net.hybridize(backend=backend)  # default: onnxruntime only when every op exports
    fc, norm = net(mx.nd.array(gold["custom_data"]))
    np.testing.assert_allclose(fc.asnumpy(), gold["custom_fc0_output"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(norm.asnumpy(), gold["custom_norm0_norm"], rtol=RTOL, atol=ATOL)


def test_nd_custom_imperative(ops, gold):
    out, norm = mx.nd.Custom(mx.nd.array(gold["custom_data"]), mx.nd.array(gold["nd_gamma"]),
                             mx.nd.array(gold["nd_offset"]), op_type="l2norm_scale", eps=1e-6)
    np.testing.assert_allclose(out.asnumpy(), gold["nd_output"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(norm.asnumpy(), gold["nd_norm"], rtol=RTOL, atol=ATOL)


def test_gluon_block_with_f_custom(ops, gold, tmp_path):
    with mx.name.NameManager():  # a fresh counter: prefix net0_, as in gen_custom_op.py's process
        net = ops.Net()
    x = mx.nd.array(gold["net_data"])
    net.initialize()  # as gen_custom_op.py: deferred init on the first call, then MXNet's weights
    net(x)
    net.load_parameters(os.path.join(HERE, "net.params"))
    np.testing.assert_allclose(net(x).asnumpy(), gold["net_imperative"], rtol=RTOL, atol=ATOL)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), gold["net_hybridized"], rtol=RTOL, atol=ATOL)
    sym_file, params_file = net.export(str(tmp_path / "net"))
    with open(sym_file, encoding="utf-8") as f, \
            open(os.path.join(HERE, "net-symbol.json"), encoding="utf-8") as g:
        assert f.read() == g.read()  # byte-identical to MXNet's export
    back = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), gold["net_hybridized"], rtol=RTOL, atol=ATOL)


def test_onnx_export_names_custom_and_accepts_a_user_converter(ops, gold, tmp_path):
    from gluonport.onnx import export_model, register_converter
    from gluonport.onnx.export import _CUSTOM

    x = mx.sym.var("data")
    sym = mx.sym.Custom(x, op_type="softsign_np", name="soft")
    with pytest.raises(UnsupportedOpError, match="Custom.*register_converter"):
        export_model(sym, {}, [(2, 3)], onnx_file_path=str(tmp_path / "a.onnx"))

    @register_converter("Custom")
    def _custom(ctx):
        assert ctx.params.op_type == "softsign_np"
        ctx.make("Softsign", ctx.inputs, outputs=ctx.outputs)

    try:
        path = export_model(sym, {}, [(2, 3)], onnx_file_path=str(tmp_path / "b.onnx"))
    finally:
        _CUSTOM.pop("Custom", None)
    import onnxruntime as ort

    data = np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"data": data})[0]
    np.testing.assert_allclose(got, sym.eval(data=mx.nd.array(data))[0].asnumpy(), rtol=1e-6)
    assert onnx.load(path).graph.node[0].op_type == "Softsign"


def test_unregistered_op_type_loads_and_says_what_to_import(tmp_path):
    with open(os.path.join(HERE, "custom-symbol.json"), encoding="utf-8") as f:
        text = f.read().replace('"l2norm_scale"', '"never_registered"')
    path = tmp_path / "m-symbol.json"
    path.write_text(text)
    sym = mx.sym.load(str(path))  # loads, so it can be inspected or cut
    assert sym.list_outputs() == ["fc0_output", "norm0_output1"]
    net = mx.gluon.SymbolBlock.imports(str(path), ["data"],
                                       os.path.join(HERE, "custom-0000.params"))
    with pytest.raises(UnsupportedOpError, match=r"never_registered.*operator\.register"):
        net(mx.nd.ones((2, 3, 5, 4)))


def test_prop_errors_are_clear(ops):
    @mx.operator.register("bad_shapes")
    class BadProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [], []  # one output declared, none returned

    with pytest.raises(mx.GluonportError, match="bad_shapes.*infer_shape returned 0 output"):
        mx.sym.Custom(mx.sym.var("data"), op_type="bad_shapes").infer_shape(data=(2,))
    with pytest.raises(mx.GluonportError, match="op_type is required"):
        mx.nd.Custom(mx.nd.ones((2,)))
    with pytest.raises(mx.GluonportError, match="CustomOpProp subclass"):
        mx.operator.register("x")(object)
    assert "l2norm_scale" in mx.operator.get_all_registered_operators()
