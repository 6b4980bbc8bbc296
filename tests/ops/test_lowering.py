"""The typed ONNX handler context: the exporter's ExportContext provides every member of
gluonport.ops.lowering.LoweringContext, and ``deliver`` never renames another node's tensor."""

import typing

import numpy as np
import pytest

from gluonport.onnx._context import ExportContext, Namer
from gluonport.ops import registry
from gluonport.ops.lowering import LoweringContext, deliver, lowering

pytest.importorskip("onnx")


def _members() -> set[str]:
    names = {n for n in vars(LoweringContext) if not n.startswith("_")}
    return names | set(typing.get_type_hints(LoweringContext))


def test_export_context_implements_every_member():
    ctx = ExportContext(13, Namer())
    # the class defines the methods and properties, the constructor sets the data members
    missing = sorted(n for n in _members() if n not in vars(ctx) and not hasattr(ExportContext, n))
    assert not missing, f"ExportContext lacks {missing}"
    for prop in ("shape", "dtype"):
        assert isinstance(getattr(ExportContext, prop), property)
    assert len(_members()) >= 25


def test_protocol_members_are_the_documented_set():
    expected = {"opset", "node", "params", "inputs", "outputs", "in_shapes", "in_dtypes",
                "in_dynamic", "out_shapes", "out_dtypes", "out_dynamic", "producers", "nodes",
                "initializers", "param_values", "make", "const", "ints", "fresh", "param",
                "is_zeros", "cast_to", "fail", "shape", "dtype", "wants", "is_dynamic", "body"}
    assert _members() == expected


def _ctx() -> ExportContext:
    ctx = ExportContext(13, Namer())
    ctx.inputs, ctx.outputs = ["x"], ["y"]
    ctx.in_dtypes, ctx.out_dtypes = [np.dtype(np.float32)], [np.dtype(np.float32)]
    return ctx


def test_deliver_renames_only_this_handlers_node():
    ctx = _ctx()
    t = ctx.make("Relu", ["x"])
    deliver(ctx, t)
    assert [list(n.output) for n in ctx.nodes] == [["y"]]


def test_deliver_never_renames_an_input_or_initializer():
    ctx = _ctx()
    ctx.make("Relu", ["a"], outputs=["x"])  # another MXNet node produced the input
    deliver(ctx, "x")
    assert [n.op_type for n in ctx.nodes] == ["Relu", "Identity"]
    assert list(ctx.nodes[0].output) == ["x"]
    ctx = _ctx()
    c = ctx.const(np.float32(1.0))
    deliver(ctx, c)
    assert [n.op_type for n in ctx.nodes] == ["Identity"]


def test_deliver_casts_from_the_work_dtype():
    ctx = _ctx()
    t = ctx.make("Relu", ["x"])
    deliver(ctx, t, 0, np.float64)
    assert [n.op_type for n in ctx.nodes] == ["Relu", "Cast"]
    assert list(ctx.nodes[-1].output) == ["y"]


def test_lowering_attaches_by_name_or_opdef():
    op = registry.OpDef("_test_lowering_only", compute=lambda p, x: x)
    lowering(op, since=15)(lambda ctx: None)
    assert op.onnx_handler(14) is None and op.onnx_handler(15) is not None
    assert registry.get("Reshape").onnx_handler(13) is not None
