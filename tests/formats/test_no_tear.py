"""File pairs that cannot tear: a writer killed at a random moment leaves files that either load
and give exactly the outputs of one complete model version, or fail to load with a
GluonportError; never a model that loads with mixed outputs.

The writer is a real process (forked from the test, so it starts in microseconds) that exports
model versions in a loop over the same files until it is killed with SIGKILL after a random
delay. Every version's outputs are computed independently with numpy from the weights the test
made. Also: the loaders' refusal of a params file that does not fit its graph (missing, wrong
shape, no params file) through ``gluonport.load``, ``SymbolBlock.imports`` and the CLI, the
external-data digest, and the clean-up of stale temp files.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from gluonport_cli.main import cli

import gluonport as mx
from gluonport import gluon
from gluonport._core.onnxdigest import DIGEST_KEY, data_files_of
from gluonport.errors import FormatError, GluonportError, ParameterError
from gluonport.formats._atomic import STALE_AFTER_S, TEMP_MARK, remove_stale_temps
from gluonport.gluon import nn
from tests._cli import CliRunner

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

IN = 1024
X = np.random.default_rng(7).standard_normal((2, IN)).astype(np.float32)


class Version:
    """One model version: its weights (numpy) and the net carrying them."""

    def __init__(self, prefix: str, hidden: int, act: str, seed: int):
        rng = np.random.default_rng(seed)
        self.hidden, self.act = hidden, act
        self.w = [rng.standard_normal((hidden, IN)).astype(np.float32) * 0.05,
                  rng.standard_normal(hidden).astype(np.float32),
                  rng.standard_normal((10, hidden)).astype(np.float32),
                  rng.standard_normal(10).astype(np.float32)]
        net = nn.HybridSequential(prefix=prefix)
        with net.name_scope():
            net.add(nn.Dense(hidden, activation=act, in_units=IN), nn.Dense(10, in_units=hidden))
        net.initialize()
        for p, w in zip(net.collect_params().values(), self.w):
            p.set_data(mx.nd.array(w))
        net.hybridize()
        net(mx.nd.array(X))
        self.net = net

    def expected(self) -> np.ndarray:
        """The outputs, by numpy alone."""
        h = X @ self.w[0].T + self.w[1]
        h = np.maximum(h, 0) if self.act == "relu" else np.tanh(h)
        return h @ self.w[2].T + self.w[3]

    def symbol_and_params(self):
        x = mx.sym.var("data")
        h = mx.sym.FullyConnected(x, num_hidden=self.hidden, name="fc0")
        h = mx.sym.Activation(h, act_type=self.act, name="act")
        y = mx.sym.FullyConnected(h, num_hidden=10, name="fc1")
        names = ["fc0_weight", "fc0_bias", "fc1_weight", "fc1_bias"]
        return y, dict(zip(names, (mx.nd.array(w) for w in self.w)))


def _kill_during(write, seed: int, max_delay: float) -> None:
    """Fork a writer calling ``write(i)`` for i = 0, 1, 2, ... and SIGKILL it after a random
    delay."""
    delay = np.random.default_rng(seed).uniform(0, max_delay)
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            i = 0
            while True:
                write(i)
                i += 1
        finally:
            os._exit(0)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _classify(load, versions: list[Version]) -> str:
    """Which version the files on disk give: 'refused' (loading raises a GluonportError), a
    version index, 'MIXED' (loads and runs, and matches no complete version) or 'LOADS-BROKEN'
    (loads, but then cannot run on the model's input: asks for weights as inputs, say)."""
    try:
        model = load()
    except GluonportError:
        return "refused"
    try:
        got = np.asarray(model(X))
    except GluonportError:
        return "LOADS-BROKEN"
    for i, v in enumerate(versions):
        want = v.expected()
        if got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4):
            return str(i)
    return "MIXED"


def _temps(folder) -> list[str]:
    return [n for n in os.listdir(folder) if TEMP_MARK in n]


# --- the symbol + params pair -----------------------------------------------------------------
def test_killed_export_leaves_no_torn_pair_that_loads(tmp_path, capsys):
    """Three versions cycle over one prefix: two with the same parameter names but other shapes
    (hidden 256 / 512), one with other names."""
    versions = [Version("net_", 256, "relu", 1), Version("net_", 512, "relu", 2),
                Version("other_", 256, "tanh", 3)]
    prefix = str(tmp_path / "m")
    versions[0].net.export(prefix)
    runs, counts = 40, {}
    for run in range(runs):
        _kill_during(lambda i: versions[(i + 1) % 3].net.export(prefix), run, 0.08)
        state = _classify(lambda: mx.load(prefix, backend="numpy"), versions)
        counts[state] = counts.get(state, 0) + 1
    with capsys.disabled():
        print(f"\nexport pair, {runs} kills: {counts}")
    assert counts.get("MIXED", 0) == counts.get("LOADS-BROKEN", 0) == 0, counts
    assert len(counts) > 1, f"the writer never completed a write: {counts}"
    versions[0].net.export(prefix)  # the next write removes the killed writers' temp files
    assert _temps(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == ["m-0000.params", "m-symbol.json"]


# --- the .onnx + external data pair -----------------------------------------------------------
def test_killed_onnx_external_write_leaves_no_torn_pair_that_loads(tmp_path, capsys):
    """Two versions with the same initializer names and shapes (old graph + new weights would
    load and run) but other weights and activation."""
    from gluonport.onnx import export_model

    versions = [Version("a_", 256, "relu", 4), Version("b_", 256, "tanh", 5)]
    exports = [v.symbol_and_params() for v in versions]
    path = str(tmp_path / "m.onnx")

    def write(i: int) -> None:
        sym, params = exports[(i + 1) % 2]
        export_model(sym, params, [X.shape], onnx_file_path=path, external_data=True)

    write(1)
    runs, counts = 30, {}
    for run in range(runs):
        _kill_during(write, 100 + run, 0.25)
        state = _classify(lambda: mx.load(path), versions)
        counts[state] = counts.get(state, 0) + 1
        assert len(data_files_of(path)) <= 2  # at most the model's and one from a killed write
    with capsys.disabled():
        print(f"\n.onnx + external data, {runs} kills: {counts}")
    assert counts.get("MIXED", 0) == counts.get("LOADS-BROKEN", 0) == 0, counts
    assert len(counts) > 1, f"the writer never completed a write: {counts}"
    write(1)
    assert _temps(tmp_path) == [] and len(data_files_of(path)) == 1


def test_onnx_data_of_another_write_is_refused(tmp_path):
    """The old writer's failure: an old graph beside new weights (here: the data file of
    version A put under the name that version B's model uses) must not load."""
    from gluonport.onnx import export_model

    a, b = Version("a_", 64, "relu", 8), Version("b_", 64, "tanh", 9)
    path = str(tmp_path / "m.onnx")
    export_model(*a.symbol_and_params(), [X.shape], onnx_file_path=path, external_data=True)
    a_data = open(data_files_of(path)[0], "rb").read()
    export_model(*b.symbol_and_params(), [X.shape], onnx_file_path=path, external_data=True)
    (b_data,) = data_files_of(path)  # A's data file was removed after B's model was in place
    np.testing.assert_allclose(mx.load(path)(X), b.expected(), rtol=1e-4, atol=1e-4)
    with open(b_data, "wb") as f:
        f.write(a_data)
    for load in (lambda: mx.load(path), lambda: mx.load(path, backend="numpy")):
        with pytest.raises(FormatError, match="sha256"):
            load()


def test_onnx_data_without_digest_still_loads(tmp_path):
    """Files written by older gluonport versions or other tools (``m.onnx.data``, no digest)."""
    import onnx

    from gluonport.onnx import export_symbol

    v = Version("a_", 64, "relu", 10)
    sym, params = v.symbol_and_params()
    model = export_symbol(sym, params, {"data": X.shape})
    assert DIGEST_KEY not in {p.key for p in model.metadata_props}
    path = str(tmp_path / "m.onnx")
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="m.onnx.data", size_threshold=0)
    np.testing.assert_allclose(mx.load(path)(X), v.expected(), rtol=1e-4, atol=1e-4)


def test_save_model_external_data_is_one_write(tmp_path):
    from gluonport.onnx import export_symbol, save_model

    v = Version("a_", 64, "relu", 11)
    model = export_symbol(*v.symbol_and_params(), {"data": X.shape})
    path = str(tmp_path / "m.onnx")
    for _ in range(2):
        save_model(model, path, external_data=True)
    (data,) = data_files_of(path)
    assert os.path.basename(data).startswith("m.onnx.") and _temps(tmp_path) == []
    np.testing.assert_allclose(mx.load(path)(X), v.expected(), rtol=1e-4, atol=1e-4)
    save_model(model, path)  # inline now: the data file of the external write goes
    assert data_files_of(path) == []
    np.testing.assert_allclose(mx.load(path)(X), v.expected(), rtol=1e-4, atol=1e-4)


# --- stale temp files -------------------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temp_files_are_removed_on_the_next_write(tmp_path):
    dead = _dead_pid()
    stale = f".m-symbol.json{TEMP_MARK}{dead}-0123456789ab"
    old = f".m-0000.params{TEMP_MARK}{os.getppid()}-abcdef012345"  # live pid, long untouched
    fresh = f".m-0000.params{TEMP_MARK}{os.getpid()}-aaaaaaaaaaaa"  # ours, being written
    others = ["notes.txt", f".x{TEMP_MARK}{dead}-short", f"m{TEMP_MARK}{dead}-0123456789ab",
              ".tmp-m-symbol.json.abc"]
    for name in [stale, old, fresh, *others]:
        (tmp_path / name).write_bytes(b"x")
    past = time.time() - STALE_AFTER_S - 10
    os.utime(tmp_path / old, (past, past))
    Version("net_", 8, "relu", 12).net.export(str(tmp_path / "m"))
    left = set(os.listdir(tmp_path))
    assert stale not in left and old not in left
    assert {fresh, *others, "m-symbol.json", "m-0000.params"} == left
    assert remove_stale_temps(str(tmp_path)) == []


def test_temp_file_name_is_recognisable(tmp_path, monkeypatch):
    """A write that fails half-way leaves nothing, and its temp file had our name."""
    from gluonport.formats import _atomic

    seen = []
    real = _atomic._create

    def spy(path):
        fd, tmp = real(path)
        seen.append(os.path.basename(tmp))
        return fd, tmp

    monkeypatch.setattr(_atomic, "_create", spy)
    with pytest.raises(RuntimeError), _atomic.atomic_open(tmp_path / "m.bin") as f:
        f.write(b"half")
        raise RuntimeError("disk full")
    assert seen and seen[0].startswith(f".m.bin{TEMP_MARK}{os.getpid()}-")
    assert os.listdir(tmp_path) == []


# --- a params file that does not fit its graph ------------------------------------------------
@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """``a`` (hidden 32) and ``b`` (hidden 16): the same parameter names, other shapes."""
    folder = tmp_path_factory.mktemp("pairs")
    for name, hidden in (("a", 32), ("b", 16)):
        Version("net_", hidden, "relu", hidden).net.export(str(folder / name))
    return folder


def _mixed(folder, tmp_path, params_from: str = "b"):
    """``m-symbol.json`` of model a beside ``m-0000.params`` of model ``params_from``."""
    (tmp_path / "m-symbol.json").write_bytes((folder / "a-symbol.json").read_bytes())
    if params_from:
        (tmp_path / "m-0000.params").write_bytes(
            (folder / f"{params_from}-0000.params").read_bytes())
    return str(tmp_path / "m")


def test_load_refuses_params_of_the_wrong_shape(pairs, tmp_path):
    prefix = _mixed(pairs, tmp_path)
    for backend in ("numpy", "onnxruntime"):
        with pytest.raises(ParameterError) as err:
            mx.load(prefix, backend=backend)
        msg = str(err.value)
        assert "'net_dense0_weight' has shape (16, 1024)" in msg and "expects (32, 1024)" in msg
        assert "m-0000.params" in msg and "m-symbol.json" in msg


def test_load_refuses_missing_params_and_names_them(pairs, tmp_path):
    prefix = _mixed(pairs, tmp_path)
    from gluonport import nd

    nd.save(prefix + "-0000.params", {"arg:net_dense0_weight": nd.zeros((32, IN))})
    with pytest.raises(ParameterError, match=r"'net_dense0_bias' \(expected shape \(32,\)\)"
                       r".* is missing"):
        mx.load(prefix)
    nd.save(prefix + "-0000.params", {})
    with pytest.raises(ParameterError, match="net_dense0_weight"):
        mx.load(prefix)


def test_load_without_params_file(pairs, tmp_path):
    prefix = _mixed(pairs, tmp_path, params_from="")
    with pytest.raises(ParameterError, match=r"no params file beside it \(expected .*"
                       r"m-NNNN\.params\)") as err:
        mx.load(prefix)
    assert "'net_dense0_weight' (expected shape (32, 1024))" in str(err.value)
    # the caller may allow it: the weights then become inputs
    pred = mx.load(prefix, backend="numpy", allow_missing=True)
    assert pred.input_names[0] == "data" and "net_dense0_weight" in pred.input_names


def test_load_refuses_extra_params_unless_told(pairs, tmp_path):
    from gluonport import nd

    prefix = _mixed(pairs, tmp_path, params_from="a")
    loaded = nd.load(prefix + "-0000.params")
    loaded["arg:net_dense2_weight"] = nd.zeros((3, 3))
    nd.save(prefix + "-0000.params", loaded)
    with pytest.raises(ParameterError, match="net_dense2_weight.*ignore_extra"):
        mx.load(prefix)
    assert mx.load(prefix, backend="numpy", ignore_extra=True)(X).shape == (2, 10)


def test_matching_pair_still_loads(pairs):
    v = Version("net_", 32, "relu", 32)
    got = mx.load(str(pairs / "a"), backend="numpy")(X)
    np.testing.assert_allclose(got, v.expected(), rtol=1e-4, atol=1e-4)


def test_symbolblock_imports_refuses_wrong_shape(pairs, tmp_path):
    prefix = _mixed(pairs, tmp_path)
    with pytest.raises(ParameterError, match=r"'net_dense0_weight' has shape \(16, 1024\).*"
                       r"expects \(32, 1024\)"):
        gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    # MXNet's own message for a missing parameter
    from gluonport import nd

    nd.save(prefix + "-0000.params", {"arg:net_dense0_weight": nd.zeros((32, IN))})
    with pytest.raises(ParameterError, match="'net_dense0_bias' is missing in file"):
        gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")


def test_module_load_refuses_wrong_shape(pairs, tmp_path):
    prefix = _mixed(pairs, tmp_path)
    with pytest.raises(ParameterError, match="net_dense0_weight"):
        mx.mod.Module.load(prefix, 0)


@pytest.mark.parametrize("params_from", ["b", ""])
def test_cli_run_refuses_a_torn_pair(pairs, tmp_path, params_from):
    prefix = _mixed(pairs, tmp_path, params_from)
    res = CliRunner().invoke(cli, ["run", prefix, "--input-shape", f"data=2,{IN}"])
    assert res.exit_code != 0
    assert "net_dense0_weight" in res.output and "internal error" not in res.output
    assert "--input-shape net_dense0_weight" not in res.output  # not asked for as an input
    assert ("m-0000.params" if params_from else "m-NNNN.params") in res.output


def test_load_refuses_missing_parameter_known_only_by_its_attributes(tmp_path):
    """A Gluon parameter without a parameter-like name or op slot (``offset``, added with
    ``broadcast_add``) is still a parameter: ``Parameter.var()`` marks it with ``__lr_mult__``."""
    from gluonport import nd

    class Offset(nn.HybridBlock):
        def __init__(self):
            super().__init__(prefix="off_")
            with self.name_scope():
                self.offset = self.params.get("offset", shape=(3,))

        def hybrid_forward(self, F, x, offset):
            return F.broadcast_add(x, offset)

    net = Offset()
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((2, 3)))
    prefix = str(tmp_path / "m")
    net.export(prefix)
    assert mx.load(prefix, backend="numpy").input_names == ["data"]
    nd.save(prefix + "-0000.params", {})
    with pytest.raises(ParameterError, match=r"'off_offset' \(expected shape \(3,\)\)"):
        mx.load(prefix)
