"""Import handlers for ONNX control flow: If, Loop, Scan.

MXNet 1.x graphs are static. Control flow whose iterations are known while importing is
unrolled during folding (:mod:`.._import_unroll`): an ``If`` with a constant condition, a
``Loop`` with a constant trip count whose body passes its condition through, a ``Scan`` of
static length. A node that reaches these handlers is one that could not be unrolled; they say
why (and mark the inputs that would have to be constants, so that
:mod:`gluonport.onnx.backend` can import once per set of their values).
"""

from __future__ import annotations

from .._import_context import ImportContext, Value, importer
from .._import_unroll import MAX_UNROLL_NODES

__all__: list[str] = []


def _need(ctx: ImportContext, v: Value | None, what: str) -> None:
    if v is not None and v.const is None:
        ctx.needs_const.add(v.name)
        raise ctx.fail(f"{what} {v.name!r} must fold to a constant: MXNet 1.x graphs are "
                       "static, so control flow is imported by unrolling it")


@importer("If", since=1)
def if_(ctx: ImportContext, cond: Value, **_: object) -> object:
    _need(ctx, cond, "the condition")
    raise ctx.fail("the taken branch could not be inlined")


@importer("Loop", since=1)
def loop(ctx: ImportContext, trip: Value | None = None, cond: Value | None = None,
         *carried: Value, **_: object) -> object:
    if trip is None:
        raise ctx.fail("a Loop without a trip count (a while loop) cannot be unrolled")
    _need(ctx, trip, "the trip count")
    _need(ctx, cond, "the condition")
    raise ctx.fail("only loops whose body passes its condition through unchanged, run at "
                   f"least once and add at most {MAX_UNROLL_NODES} nodes are unrolled")


@importer("Scan", since=9)
def scan(ctx: ImportContext, *inputs: Value, **_: object) -> object:
    raise ctx.fail("a Scan is unrolled when its sequence length is static and it adds at "
                   f"most {MAX_UNROLL_NODES} nodes")
