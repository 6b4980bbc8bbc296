"""Builds the ``nd`` and ``sym`` op namespaces from the registry, with MXNet's placement rules.

MXNet 1.x puts an op named ``_contrib_X`` at ``nd.contrib.X``, ``_linalg_X`` at ``nd.linalg.X``,
``_random_X``/``_sample_X`` at ``nd.random.X``, ``_image_X`` at ``nd.image.X``, other names with a
leading underscore at ``nd._internal.X``, and everything else at ``nd.X`` (and ``nd.op.X``).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable

from .ops import registry

__all__ = ["populate", "short_name"]

_PREFIXES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_random_", "random"),
             ("_sample_", "random"), ("_image_", "image"))


def short_name(name: str) -> str:
    """The function name MXNet gives an op in its namespace (``_contrib_box_nms`` ->
    ``box_nms``); MXNet also uses it, lower-cased, as the automatic node-name hint."""
    return _placement(name)[1]


def _placement(name: str) -> tuple[str, str]:
    for prefix, sub in _PREFIXES:
        if name.startswith(prefix):
            return sub, name[len(prefix):]
    if name.startswith("_"):
        return "_internal", name
    return "", name


def _submodule(parent: types.ModuleType, sub: str) -> types.ModuleType:
    full = f"{parent.__name__}.{sub}"
    mod = sys.modules.get(full)
    if mod is None:
        mod = types.ModuleType(full, f"MXNet's ``{sub}`` op namespace.")
        sys.modules[full] = mod
    setattr(parent, sub, mod)
    return mod


def populate(module: types.ModuleType, factory: Callable[[str, registry.OpDef], Callable],
             skip: set[str] | frozenset[str] = frozenset()) -> None:
    """Add one function per op name and alias to ``module`` and its submodules.

    Names already defined on the module (hand-written wrappers such as ``nd.zeros``) win.
    """
    names = dict.fromkeys(registry.all_ops())
    names.update(dict.fromkeys(registry.aliases()))
    subs = {"": module, "op": _submodule(module, "op")}
    for name in names:
        op = registry.find(name)
        sub, short = _placement(name)
        target = subs.get(sub)
        if target is None:
            target = subs[sub] = (getattr(module, sub, None)
                                  if isinstance(getattr(module, sub, None), types.ModuleType)
                                  else _submodule(module, sub))
        fn = factory(name, op)
        if short not in skip and not hasattr(target, short):
            setattr(target, short, fn)
        if sub == "" and not hasattr(subs["op"], short):
            setattr(subs["op"], short, fn)
