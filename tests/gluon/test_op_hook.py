"""HybridBlock.register_op_hook against MXNet 1.9.1.

tests/golden/gluon/op_hook_script.py, written for MXNet, runs here with only its import
changed; the callback must see MXNet's sequence (names, op names, shapes, order) and values
(1e-5) with monitor_all False and True, in inference and under autograd.record. The naming
tables of gluonport.gluon._op_hook are checked against the names MXNet reported for every
operator of the per-op case tables (tests/golden/gluon/op_hook_names.json)."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import warnings

import numpy as np
import pytest

import gluonport as mx
from gluonport.gluon import _op_hook, nn
from tests._ported import load_golden, load_ported
from tests.ops._check import _build_sym
from tests.ops._check import load_golden as load_op_golden

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "gluon")
CASES = os.path.join(os.path.dirname(__file__), "..", "ops")
MODES = ("outputs", "all", "all_train")


@pytest.fixture(scope="module")
def results() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_ported(os.path.join(HERE, "op_hook_script.py")).run()


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict]:
    return load_golden(os.path.join(HERE, "op_hook_golden"))


@pytest.mark.parametrize("mode", MODES)
def test_callback_sequence_matches_mxnet(results, golden, mode):
    arrays, facts = golden
    assert results[f"{mode}/names"] == facts[f"{mode}/names"]
    for k in range(len(facts[f"{mode}/names"])):
        key = f"{mode}/{k:03d}"
        np.testing.assert_allclose(results[key], arrays[key], rtol=1e-5, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(results[f"{mode}/y"], arrays[f"{mode}/y"], rtol=1e-5, atol=1e-5)


def test_monitor_all_reports_inputs_first(golden):
    _, facts = golden
    names = [n for n, _, _ in facts["all/names"]]
    assert names.index("net_dense0_fwd_weight") < names.index("net_dense0_fwd_output")
    assert set(n for n, _, _ in facts["outputs/names"]) < set(names)


def test_hook_registered_after_the_first_call_and_switched_off():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(2, in_units=3))
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((1, 3))
    net(x)
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append((name, op)), monitor_all=True)
    net(x)
    assert [op for _, op in seen] == ["FullyConnected"] * 4
    assert seen[0][0].endswith("_fwd_data") and seen[-1][0].endswith("_fwd_output")
    seen.clear()
    net.register_op_hook(lambda name, op, arr: seen.append(name), monitor_all=False)
    net(x)
    assert len(seen) == 1 and mx.base.py_str(seen[0]).endswith("_fwd_output")


@functools.cache
def _case_tables() -> dict:
    out = {}
    for name in os.listdir(CASES):
        if name.startswith("cases_") and name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(CASES, name))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            out[name[6:-3]] = {c["name"]: c for c in mod.CASES}
    return out


@functools.cache
def _op_golden(family: str) -> dict:
    return load_op_golden(family)


def _node(entry: dict):
    if entry["family"] == "extra":
        variables = [mx.sym.var(f"in{i}") for i in range(len(entry["shapes"]))]
        sym = mx.sym.invoke(entry["called"], variables, dict(entry["attrs"]))
    else:
        case = _case_tables()[entry["family"]][entry["case"]]
        sym, _ = _build_sym(case, _op_golden(entry["family"])[entry["case"]])
    return sym._outputs[0][0]


def test_names_of_every_operator_match_mxnet():
    with open(os.path.join(HERE, "op_hook_names.json")) as f:
        entries = json.load(f)
    assert len(entries) > 300
    wrong = []
    for entry in entries:
        node = _node(entry)
        want = entry["names"]
        # inference: the visible outputs only
        got = _op_hook.input_names(node) + \
            _op_hook.output_names(node)[:node.num_visible_outputs()]
        if (node.op.name, got) != (entry["op"], want):
            wrong.append((entry["case"], node.op.name, got, entry["op"], want))
    assert not wrong, wrong[:10]


def test_symbol_block_reports_inputs_with_monitor_all():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models", "mlp")
    block = mx.gluon.SymbolBlock.imports(f"{root}-symbol.json", ["data"], f"{root}-0000.params")
    seen = []
    block.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)), True)
    block(mx.nd.ones((2, 10)))
    first = [s for s in seen if s[1] == "FullyConnected"][:4]
    assert [n.rsplit("_", 1)[1] for n, _, _ in first] == ["data", "weight", "bias", "output"]
    assert first[0][2] == (2, 10)


def test_plain_block_installs_the_hook_on_its_hybridized_children():
    class Outer(mx.gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.inner = nn.HybridSequential()
                self.inner.add(nn.Dense(2, in_units=3, activation="relu"))

        def forward(self, x):
            return self.inner(x) * 2

    net = Outer()
    net.initialize()
    seen = []
    net.register_op_hook(lambda name, op, arr: seen.append(op), monitor_all=True)
    net(mx.nd.ones((1, 3)))
    assert seen == []  # nothing is hybridized: no cached graph, no hook calls (as MXNet)
    net.hybridize()
    net(mx.nd.ones((1, 3)))
    assert seen == ["FullyConnected"] * 4 + ["Activation"] * 2
