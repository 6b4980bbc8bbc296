"""Automatic node names, mirroring ``mxnet.name``.

MXNet names an unnamed op node ``<hint><n>``, where the hint is the lower-cased name the op was
called by (``FullyConnected`` -> ``fullyconnected0``, ``_Plus`` -> ``_plus0``) and ``n`` counts
per hint in the current manager. Gluon blocks install a :class:`Prefix` manager inside
``name_scope()`` so their nodes are named ``dense0_fwd``, ``hybridsequential0_dense0_relu0``...
Counters live in the manager, so names depend on what was created before, as in MXNet.
"""

from __future__ import annotations

import threading

__all__ = ["NameManager", "Prefix", "current"]

_local = threading.local()


class NameManager:
    """Hands out ``<hint><counter>`` names; a context manager that becomes the current one."""

    def __init__(self) -> None:
        self._counter: dict[str, int] = {}
        self._old: NameManager | None = None

    def get(self, name: str | None, hint: str) -> str:
        """``name`` when given, else the next ``<hint><n>``."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self) -> NameManager:
        self._old = current()
        _local.value = self
        return self

    def __exit__(self, *exc: object) -> None:
        _local.value = self._old


class Prefix(NameManager):
    """A manager that puts ``prefix`` in front of every name, given or generated."""

    def __init__(self, prefix: str):
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


def current() -> NameManager:
    """The current manager (a process-wide default one unless a ``with`` block set another)."""
    mgr = getattr(_local, "value", None)
    if mgr is None:
        mgr = _local.value = _DEFAULT
    return mgr


_DEFAULT = NameManager()
