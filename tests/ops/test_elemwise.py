"""Elementwise ops against MXNet 1.9.1 (tests/golden/ops/elemwise.npz)."""

import pytest

from tests.ops import cases_elemwise
from tests.ops._check import check_nd, check_sym, load_golden

GOLDEN = load_golden("elemwise")
IDS = [c["name"] for c in cases_elemwise.CASES]


@pytest.mark.parametrize("case", cases_elemwise.CASES, ids=IDS)
def test_nd(case):
    check_nd(case, GOLDEN[case["name"]])


@pytest.mark.parametrize("case", cases_elemwise.CASES, ids=IDS)
def test_sym(case):
    check_sym(case, GOLDEN[case["name"]])
