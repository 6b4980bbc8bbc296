"""``mx.model.load_checkpoint`` / ``save_checkpoint``: the Module-API checkpoint pair.

Files: ``PREFIX-symbol.json`` and ``PREFIX-%04d.params``; params keys are ``arg:<name>`` and
``aux:<name>`` (arguments first, then auxiliary states, as MXNet writes them).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .errors import FormatError
from .ndarray import NDArray
from .ndarray import load as nd_load
from .ndarray import save as nd_save

__all__ = ["load_checkpoint", "save_checkpoint", "save_pair", "load_params", "split_params",
           "no_params_if_empty"]


def no_params_if_empty(loaded: Any) -> Any:
    """``{}`` for an empty params file, else ``loaded`` unchanged.

    MXNet writes the same bytes for ``nd.save(f, {})`` and ``nd.save(f, [])``, and
    ``HybridBlock.export`` of a block without parameters writes them too; ``nd.load`` reads them
    back as ``[]``. Read for a graph, such a file means "no parameters", not an unnamed list.
    """
    return {} if isinstance(loaded, (list, tuple)) and not loaded else loaded


def split_params(loaded: Mapping[str, Any], path: str | None = None
                 ) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    """Split ``arg:``/``aux:`` keys into two dicts, as ``load_checkpoint`` does.

    MXNet raises on a key without a ``:``; so do we, naming the key and the file.
    """
    arg, aux = {}, {}
    for key, value in loaded.items():
        kind, sep, name = key.partition(":")
        if not sep or kind not in ("arg", "aux"):
            raise FormatError(f"key {key!r} is not of the form arg:NAME or aux:NAME; a "
                              "save_parameters file is loaded with Block.load_parameters", path)
        (arg if kind == "arg" else aux)[name] = value
    return arg, aux


def load_params(prefix: str, epoch: int) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    """``(arg_params, aux_params)`` from ``PREFIX-%04d.params``."""
    path = f"{prefix}-{epoch:04d}.params"
    loaded = no_params_if_empty(nd_load(path))
    if not isinstance(loaded, dict):
        raise FormatError("holds an unnamed list of arrays, not a checkpoint dict", path)
    return split_params(loaded, path)


def load_checkpoint(prefix: str, epoch: int):
    """``(symbol, arg_params, aux_params)`` from a checkpoint (``mx.model.load_checkpoint``)."""
    from .symbol import load

    sym = load(f"{prefix}-symbol.json")
    arg, aux = load_params(prefix, epoch)
    return sym, arg, aux


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: Mapping[str, Any],
                    aux_params: Mapping[str, Any], remove_amp_cast: bool = True) -> None:
    """Write ``PREFIX-symbol.json`` and ``PREFIX-%04d.params`` as MXNet 1.9.1 does, as one pair
    (:func:`save_pair`)."""
    data = {f"arg:{k}": v for k, v in arg_params.items()}
    data.update({f"aux:{k}": v for k, v in aux_params.items()})
    save_pair(symbol, f"{prefix}-symbol.json", f"{prefix}-{epoch:04d}.params", data,
              remove_amp_cast)
    logging.info('Saved checkpoint to "%s"', f"{prefix}-{epoch:04d}.params")  # as MXNet


def save_pair(symbol: Any, symbol_file: str, params_file: str, data: Mapping[str, Any],
              remove_amp_cast: bool = True) -> None:
    """Write a symbol file and its params file (``data``: ``arg:``/``aux:`` keys) so that a
    process killed meanwhile leaves the old pair or the new one, not one file of each.

    MXNet's file names and bytes are kept, so the pair cannot be one file or one rename. Both
    files are written completely to temp files, then renamed into place params first, symbol
    last (:func:`gluonport.formats._atomic.atomic_group`): the renames are microseconds apart,
    and the symbol file is the commit point. A reader that finds the new symbol file finds its
    params beside it; only a kill between the two renames leaves the new params beside the old
    graph, and then the loaders' check (``gluonport._paramcheck``: every parameter present with
    the shape the graph implies, no foreign names) refuses the pair unless the two graphs have
    the same parameters (a retrained model: the new weights on an identical graph are the new
    model). Written the other way round, symbol first, the new graph would sit beside the old
    params for the whole (long) params write of a one-file-at-a-time writer.
    ``symbol=None`` writes the params file alone.
    """
    from .formats._atomic import atomic_group

    with atomic_group():
        nd_save(params_file, data)
        if symbol is not None:
            symbol.save(symbol_file, remove_amp_cast=remove_amp_cast)
