"""Every registered op has compute, shape and type inference (or a stated reason), and
OPERATORS.md is current."""

import ast
import json
import os
import runpy

import numpy as np
import pytest

from gluonport.ops import _doc, registry
from gluonport.ops.registry import OpDef

OPS = registry.all_ops()


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_compute(name):
    assert OPS[name].compute is not None, f"{name} has no numpy compute"


def test_no_alias_shadows_an_op():
    for alias, target in registry.aliases().items():
        assert alias not in OPS, f"alias {alias} of {target} is also an op name"


def test_registry_refuses_duplicates():
    name = next(iter(OPS))
    with pytest.raises(Exception, match="registered twice"):
        registry.register(OpDef(name, compute=lambda p, x: x))


def test_onnx_handler_choice_is_newest_not_above_opset():
    op = OpDef("_test_only_op", compute=lambda p, x: x)
    op.to_onnx(since=13)(lambda ctx, node: "h13")
    op.to_onnx(since=17)(lambda ctx, node: "h17")
    assert op.onnx_handler(12) is None
    assert op.onnx_handler(13)(None, None) == "h13"
    assert op.onnx_handler(16)(None, None) == "h13"
    assert op.onnx_handler(21)(None, None) == "h17"


def test_operators_md_is_current():
    with open(_doc.PATH, encoding="utf-8") as f:
        committed = f.read()
    assert committed == _doc.render(), (
        "gluonport/ops/OPERATORS.md is stale: run `python -m gluonport.ops._doc`")


def test_unknown_op_lists_all_at_once():
    import gluonport as mx
    from gluonport.errors import UnsupportedOpError

    text = mx.sym.relu(mx.sym.var("x"), name="r").tojson()
    text = text.replace('"op": "relu"', '"op": "MyCustomOp"')
    sym = mx.sym.load_json(text)
    with pytest.raises(UnsupportedOpError) as err:
        sym.eval(x=mx.nd.array(np.ones(2)))
    assert "MyCustomOp" in str(err.value) and "'r'" in str(err.value) or "r)" in str(err.value)
    assert err.value.ops == {"MyCustomOp": ["r"]}


# --- every per-op fact lives in the OpDef -----------------------------------------------------

@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_onnx_lowering_or_reason(name):
    op = OPS[name]
    assert op.onnx_handlers or op.no_onnx, (
        f"{name} has neither an ONNX lowering nor a no_onnx reason")
    assert not (op.onnx_handlers and op.no_onnx), f"{name} has a lowering and a no_onnx reason"


def _default_params(op: OpDef):
    try:
        return op.parse({})
    except Exception:  # noqa: BLE001 - required attributes: no default params to look at
        return None


@pytest.mark.parametrize("name", sorted(OPS))
def test_default_shape_and_type_rules_fit(name):
    """Ops without their own shape/type rule get the documented defaults (registry.OpDef:
    every input and the one output share a shape; all share the first known dtype). Those
    defaults only fit ops that have inputs, and (for the shape rule) one output."""
    op = OPS[name]
    if op.infer_shape is not None and op.infer_type is not None:
        return
    p = _default_params(op)
    if p is None and (callable(op.inputs) or callable(op.num_outputs)):
        return  # the counts depend on required attributes
    if op.variadic is None:
        assert op.input_names(p), f"{name}: a default rule needs an input to follow"
    if op.infer_shape is None:
        assert op.n_outputs(p) == 1, f"{name}: the default shape rule makes one output"
    assert not op.shape_needs_outputs or op.infer_shape is not None


def test_facts_are_well_formed():
    from gluonport.ops.registry import InPlace

    for name, op in OPS.items():
        if op.inplace is not None:
            assert isinstance(op.inplace, InPlace) and op.inplace.donors, name
            assert op.fresh_outputs, f"{name}: an in-place op's own outputs are new arrays"
        if op.var_attrs is not None and not callable(op.var_attrs):
            names = set(op.input_names(_default_params(op) or {}, 8)) if not callable(
                op.inputs) else None
            for key, attrs in op.var_attrs.items():
                assert attrs and all(isinstance(v, str) for v in attrs.values()), (name, key)
                assert names is None or op.variadic is not None or key in names, (name, key)


def test_undefined_var_attrs_ops_stay_undefined():
    """The fallback for MXNet ops gluonport does not define must not shadow a definition."""
    for name in registry.UNDEFINED_VAR_ATTRS:
        assert registry.find(name) is None, f"{name} is defined now: put var_attrs on its OpDef"


# MXNet 1.9.1's re-saved text of 0.9.3 graphs (the 0.9.4 upgrader applies each op's
# FSetInputVarAttrOnCompose): the Symbol layer's upgrade must read the same facts from here.
_COMPOSE = os.path.join(os.path.dirname(__file__), "..", "golden", "compose")


def _legacy_cases() -> tuple[dict, dict]:
    with open(os.path.join(_COMPOSE, "legacy_var_attrs_golden.json"), encoding="utf-8") as f:
        golden = json.load(f)
    texts = runpy.run_path(os.path.join(_COMPOSE, "gen_legacy_var_attrs.py"))["cases"]()
    return golden, texts


@pytest.mark.parametrize("case", sorted(_legacy_cases()[0]))
def test_legacy_upgrade_reads_var_attrs_from_the_registry(case):
    import gluonport as mx

    golden, texts = _legacy_cases()
    ours = json.loads(mx.sym.load_json(texts[case]).tojson())
    # nodes compared whole; node_row_ptr is not (an undefined op's stand-in has one output)
    assert ours["nodes"] == json.loads(golden[case])["nodes"]


# --- no per-op table outside ops/ --------------------------------------------------------------
_READERS = ("_fusion.py", "summary.py", os.path.join("formats", "_symlegacy.py"),
            os.path.join("onnx", "_context.py"), os.path.join("gluon", "_op_hook.py"),
            os.path.join("symbol", "_graphio.py"))


def _op_names_in(node: ast.AST) -> list[str]:
    names = set(OPS) | set(registry.aliases())
    return [c.value for c in ast.walk(node)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in names]


@pytest.mark.parametrize("module", _READERS)
def test_no_op_name_tables_outside_ops(module):
    """The modules that read per-op facts (in-place kernels, summary hints, the legacy
    upgrader's variable attributes, the exporter's all-zero producers, the op hook's tensor
    names, the AMP casts symbol JSON drops) hold no table keyed by
    op names and no comparison with one: the facts are OpDef fields. (The legacy upgrader's
    0.9.5 step names argmax/argmin because MXNet's upgrader does; it is a rule of the file
    format, not a table.)"""
    import gluonport

    path = os.path.join(os.path.dirname(gluonport.__file__), module)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = []
    for node in ast.walk(tree):
        call = isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set")
        if isinstance(node, (ast.Dict, ast.Set)) or call:
            found += _op_names_in(node)
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
            found += _op_names_in(node.value)
        elif isinstance(node, ast.Compare) and not _is_format_rule(node):
            found += _op_names_in(node)
    assert not found, f"{module} keys behaviour on op names {sorted(set(found))}: use OpDef facts"


def _is_format_rule(node: ast.Compare) -> bool:
    """``node.op in ("argmax", "argmin")``: MXNet's 0.9.5 upgrader rule, by op name."""
    return sorted(_op_names_in(node)) == ["argmax", "argmin"]


@pytest.mark.parametrize("fill, omitted", [("_zeros", True), ("_zeros_without_dtype", True),
                                           ("_full0", True), ("_full1", False)])
def test_exporter_reads_all_zeros_from_the_op(fill, omitted):
    """An RNN's initial state made by an op whose ``OpDef.all_zeros`` holds is left out of the
    ONNX node (ONNX's default is zeros); any other state is fed. Numbers against the
    numpy executor either way."""
    import gluonport as mx
    from gluonport.onnx import export_symbol
    from gluonport.ops.nn.rnn import rnn_param_size
    from tests.onnx._export_check import run_ort
    from tests.ops._check import forward

    T, N, C, H = 4, 2, 3, 5
    rng = np.random.RandomState(3)
    flat = rng.uniform(-0.5, 0.5, rnn_param_size("gru", H, 1, False, C)).astype(np.float32)
    attrs = {"shape": (1, N, H)}
    op = {"_full0": "_full", "_full1": "_full"}.get(fill, fill)
    if fill.startswith("_full"):
        attrs["value"] = float(fill[-1])
    if op == "_zeros_without_dtype":
        attrs["dtype"] = 0
    state = mx.sym.invoke(op, [], attrs)
    sym = mx.sym.invoke("RNN", [mx.sym.var("data"), mx.sym.var("w"), state],
                        {"mode": "gru", "state_size": H, "num_layers": 1})
    data = {"data": rng.uniform(-1, 1, (T, N, C)).astype(np.float32)}
    model = export_symbol(sym, {"w": flat}, in_shapes={"data": (T, N, C)})
    gru = [n for n in model.graph.node if n.op_type == "GRU"]
    assert len(gru) == 1
    initial_h = list(gru[0].input)[5] if len(gru[0].input) > 5 else ""
    assert (initial_h == "") == omitted
    want = forward(sym, {**data, "w": flat})
    got = run_ort(model, data)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


# --- gradients: a rule or a reason, as MXNet 1.9.1 registers them ------------------------------

with open(os.path.join(os.path.dirname(__file__), "..", "golden", "ops", "grad_ops_mxnet.json"),
          encoding="utf-8") as _f:
    MXNET_GRADS = json.load(_f)
"""What MXNet 1.9.1 registers per op (tests/golden/ops/gen_grads.py read its source and ran it):
``kind`` is ``fgradient``, ``zero`` (MakeZeroGradNodes) or ``no_fgradient``."""

_WRITES_ZEROS = ("MXNet registers an FGradient whose backward kernel writes zeros; "
                 "zero_gradient gives the same")
#: Where gluonport's gradient is registered differently from MXNet's, and why.
GRADIENT_DIFFERS: dict[str, str] = {
    "_backward_FullyConnected": "MXNet's second-order FullyConnected gradient "
                                "(_backward_backward_FullyConnected) is not provided: "
                                "create_graph through Dense refuses, naming the op",
    "_image_resize": "MXNet's gradient (_copy of the head gradient) has the output's shape and "
                     "fails MXNet's own shape check; refused with that reason",
    "_image_to_tensor": "as _image_resize: MXNet's _copy gradient fails its shape check",
    "sign": "MXNet's _backward_sign multiplies by sign's derivative, 0: zero_gradient",
    **dict.fromkeys(("_contrib_MultiBoxDetection", "_contrib_MultiBoxPrior",
                     "_contrib_MultiBoxTarget", "_contrib_MultiProposal", "_contrib_Proposal",
                     "_contrib_bipartite_matching", "_contrib_box_iou"), _WRITES_ZEROS),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_gradient_or_reason(name):
    op = OPS[name]
    assert op.gradient is not None or op.no_gradient, (
        f"{name} has neither a gradient rule nor a no_gradient reason")
    assert not (op.gradient is not None and op.no_gradient), (
        f"{name} has a gradient rule and a no_gradient reason")


@pytest.mark.parametrize("name", sorted(n for n in MXNET_GRADS if n in OPS))
def test_gradient_kind_is_mxnets(name):
    op, kind = OPS[name], MXNET_GRADS[name].get("kind")
    if name in GRADIENT_DIFFERS or kind == "unknown":
        return
    if not callable(op.inputs) and not op.inputs and op.variadic is None:
        return  # a creation op: no input, nothing to differentiate
    if kind == "no_fgradient":
        assert op.no_gradient, f"{name}: MXNet 1.9.1 registers no FGradient; state why here"
    elif kind == "zero":
        assert op.gradient is registry.zero_gradient, f"{name}: MXNet gives zero gradients"
    else:
        assert op.gradient is not None and op.gradient is not registry.zero_gradient, (
            f"{name}: MXNet 1.9.1 differentiates it")


def test_every_op_and_alias_is_one_mxnet_1_9_1_registers():
    """Graphs gluonport writes -- Gluon exports and ONNX imports alike -- name only ops MXNet
    1.9.1 has (``tests/golden/ops/mxnet_op_names.json``, from the oracle's registry), so an
    imported model never needs a 'gluonport-only' mark: where ONNX has no MXNet 1.9.1
    expression the importer refuses the node instead of inventing an op. ``_backward_*``
    kernels (the backward kernels, and the training forwards that carry their own gradient:
    ``_backward_RNN_lstm_forward``, which keeps the LSTM's reserve, and
    ``_backward_BatchNorm_train_forward``) live only in training-step graphs, which are never
    written as MXNet files."""
    with open(os.path.join(os.path.dirname(__file__), "..", "golden", "ops",
                           "mxnet_op_names.json")) as f:
        mxnet = set(json.load(f))
    assert len(mxnet) == 1167
    ours = set(OPS) | set(registry.aliases())
    extra = sorted(n for n in ours if n not in mxnet and not n.startswith("_backward_"))
    assert not extra, f"ops MXNet 1.9.1 does not register: {extra}"


@pytest.mark.parametrize("module", ["gluonport.ops.nn.conv_grad", "gluonport.ops.nn.rnn_grad",
                                    "gluonport.ops.nn.conv"])
def test_an_op_file_imports_before_the_registry(module):
    """An op file imported first (as a test module does) must not trip over its own family
    loading half way: attaching a lowering to an op it just defined loads nothing else."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
