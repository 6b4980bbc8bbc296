"""``mx.optimizer.contrib``: GroupAdaGrad."""

from .adaptive import GroupAdaGrad

__all__ = ["GroupAdaGrad"]
