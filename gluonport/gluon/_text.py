"""Text helpers that the Gluon blocks share for their ``repr`` and their error messages.

MXNet 1.9.1 keeps the equivalents private in ``mxnet.gluon.utils``; here they are the
documented interface of this small module, which ``block``, ``parameter``, ``nn`` and
``rnn`` import.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["indent", "brief_names"]


def indent(text: str, n: int) -> str:
    """Indent every line of ``text`` but the first by ``n`` spaces.

    Parameters
    ----------
    text : str
        A possibly multi-line string, such as a child block's ``repr``.
    n : int
        How many spaces to put in front of the second and later lines.

    Returns
    -------
    str
        The indented text.
    """
    lines = text.split("\n")
    return "\n".join([lines[0]] + [" " * n + line for line in lines[1:]])


def brief_names(names: Iterable[str], limit: int = 3) -> str:
    """Quote at most ``limit`` names for an error message, eliding the middle of longer lists.

    Parameters
    ----------
    names : iterable of str
        The names to list.
    limit : int, optional
        The most names to show; a longer list shows its first ``limit - 1`` names, ``...``
        and its last name.

    Returns
    -------
    str
        The names, ``repr``-quoted and comma-separated.
    """
    names = list(names)
    if len(names) > limit:
        return ", ".join(repr(n) for n in names[:limit - 1]) + ", ..., " + repr(names[-1])
    return ", ".join(repr(n) for n in names)
