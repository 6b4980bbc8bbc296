"""``AttrScope``: attributes attached to every symbol created inside a ``with`` block.

Mirrors ``mxnet.attribute.AttrScope`` (used for ``ctx_group``, ``lr_mult`` and user annotations).
"""

from __future__ import annotations

import threading

__all__ = ["AttrScope", "current"]

_local = threading.local()


class AttrScope:
    """``with AttrScope(ctx_group='dev1'):`` adds ``__ctx_group__`` to new symbols."""

    def __init__(self, **kwargs: str):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError(f"AttrScope: attribute {k} must be a string, got {v!r}")
        self._attr = dict(kwargs)
        self._old: AttrScope | None = None

    def get(self, attr: dict[str, str] | None) -> dict[str, str]:
        """The scope's attributes updated with ``attr``."""
        if not self._attr:
            return dict(attr or {})
        out = dict(self._attr)
        out.update(attr or {})
        return out

    def __enter__(self) -> AttrScope:
        self._old = current()
        merged = dict(self._old._attr)
        merged.update(self._attr)
        self._attr = merged
        _local.value = self
        return self

    def __exit__(self, *exc: object) -> None:
        _local.value = self._old


def current() -> AttrScope:
    scope = getattr(_local, "value", None)
    if scope is None:
        scope = _local.value = AttrScope()
    return scope
