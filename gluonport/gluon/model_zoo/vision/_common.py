"""Pretrained-weight loading shared by the model-zoo constructors."""

from __future__ import annotations

from typing import Any

from ....context import Context
from ...block import Block
from ..model_store import get_model_file

__all__ = ["finish"]


def finish(net: Block, name: str, pretrained: bool, ctx: Context | None,
           root: str | None) -> Any:
    """Return ``net``, with the published weights of ``name`` loaded when ``pretrained``.

    As MXNet, the weights are read with ``load_parameters`` (structural names) onto ``ctx``;
    unlike MXNet the file must already be on disk (see ``model_store.get_model_file``).
    """
    if pretrained:
        net.load_parameters(get_model_file(name, root=root), ctx=ctx)
    return net
