"""Every row of every ``tests/ops/cases_<family>.py`` checked every way against MXNet 1.9.1.

The ways (``nd``, ``sym``, ``json``, ``onnx<N>[-params]``, ``import``) and the per-family facts
are in ``tests/ops/_driver.py``; test ids read ``<family>-<case name>-<way>``, so
``pytest tests/ops/test_ops.py -k "conv- and onnx"`` selects one family's ONNX checks. Checks
that a table row cannot express stay in the family's ``test_<family>.py`` and
``tests/onnx/test_export_<family>.py``.
"""

import pytest

from tests.ops._driver import check_op, params


@pytest.mark.parametrize("family, case, how", list(params()))
def test_op(family, case, how):
    check_op(family, case, how)
