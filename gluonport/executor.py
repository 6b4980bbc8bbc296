"""MXNet's ``mx.executor`` module: :class:`Executor` and the numpy :class:`GraphPlan`.

The code lives in :mod:`gluonport.symbol.executor`, next to the ``Symbol`` it runs
(``Symbol.bind`` creates an ``Executor``); this module keeps the public name.
"""

from .symbol.executor import Executor, GraphPlan

__all__ = ["GraphPlan", "Executor"]
