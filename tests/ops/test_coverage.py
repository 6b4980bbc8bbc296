"""Every registered op has compute, shape and type inference (or a stated reason), and
OPERATORS.md is current."""

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
