"""Parameter / ParameterDict / Block behaviour against MXNet 1.9.1 (facts recorded by
tests/golden/gluon/gen_gluon.py under ``api`` in manifest.json).

Messages are compared verbatim. Exception types: gluonport raises GluonportError subclasses
that also derive from the builtin MXNet raises (RuntimeError, ValueError); where MXNet uses a
bare ``assert`` (AssertionError) we raise ParameterError, a ValueError.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings

import numpy as np
import pytest

import gluonport as mx
from gluonport import gluon
from gluonport.errors import DeferredInitializationError, GluonportError, ParameterError
from gluonport.gluon import nn

from . import _golden as G

API = G.manifest()["api"]

# MXNet's exception type name -> what ours must be an instance of.
_TYPES = {"RuntimeError": RuntimeError, "ValueError": ValueError,
          "AssertionError": ParameterError,
          "DeferredInitializationError": DeferredInitializationError}


def _raised(fn) -> BaseException:
    with pytest.raises(GluonportError) as info:
        fn()
    return info.value


def _check(exc: BaseException, expected: list) -> None:
    kind, text = expected
    assert isinstance(exc, _TYPES[kind])
    assert str(exc) == text


def _two_layer(units=(4, 3)):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(units[0], in_units=5), nn.Dense(units[1]))
    return net


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


# --- initialization errors -------------------------------------------------------------------
def test_initialization_errors_match_mxnet():
    errors = API["errors"]
    d = nn.Dense(3)
    d.initialize()
    _check(_raised(lambda: d.weight.data()), errors["deferred_data"])
    d2 = nn.Dense(3, in_units=2)
    _check(_raised(lambda: d2.weight.data()), errors["uninitialized_data"])
    _check(_raised(lambda: d2(mx.nd.ones((1, 2)))), errors["call_before_initialize"])
    d3 = nn.Dense(3)
    _check(_raised(lambda: d3(mx.nd.ones((1, 2)))), errors["call_before_initialize_deferred"])
    _check(_raised(lambda: gluon.Parameter("w", grad_req="bogus")), errors["bad_grad_req"])


def test_unknown_shape_message_starts_as_mxnet_and_adds_the_remedy():
    kind, text = API["errors"]["init_unknown_shape"]
    exc = _raised(lambda: gluon.Parameter("weight", shape=(2, 0)).initialize())
    assert isinstance(exc, _TYPES[kind])
    assert str(exc).startswith(text[:-1]) and "in_units" in str(exc)


def test_deferred_init_completes_on_first_forward():
    d = nn.Dense(3)
    d.initialize()
    assert d.weight.shape == (3, 0)
    d(mx.nd.ones((2, 7)))
    assert d.weight.data().shape == (3, 7)


# --- save / load -----------------------------------------------------------------------------
def test_save_parameters_structural_names(tmp_path):
    f = str(tmp_path / "p.params")
    net = _two_layer()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    net.save_parameters(f)
    assert list(mx.nd.load(f).keys()) == API["save_load"]["save_parameters_keys"]
    other = _two_layer()
    other.load_parameters(f)
    x = mx.nd.array(G.shared.make_input((2, 5)))
    np.testing.assert_array_equal(other(x).asnumpy(), net(x).asnumpy())


def _saved(tmp_path):
    f = str(tmp_path / "p.params")
    net = _two_layer()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    small = nn.HybridSequential()
    with small.name_scope():
        small.add(nn.Dense(4, in_units=5))
    small.initialize()
    return f, net, small


@pytest.mark.parametrize("case", ["missing", "extra", "shape_mismatch"])
def test_load_errors(case, tmp_path):
    f, net, small = _saved(tmp_path)
    kind, text = API["save_load"][case]
    text = text.replace("<file>", f)
    if case == "missing":
        small.save_parameters(f)
        exc = _raised(lambda: net.load_parameters(f))
        assert str(exc) == text
        net.load_parameters(f, allow_missing=True)
        np.testing.assert_array_equal(net[0].weight.data().asnumpy(),
                                      small[0].weight.data().asnumpy())
    elif case == "extra":
        net.save_parameters(f)
        exc = _raised(lambda: small.load_parameters(f))
        # MXNet's list of present names comes out empty (a bug in its message); ours lists them
        head = text.split(" which contains")[0]
        assert str(exc).startswith(head) and "'0.weight', '0.bias'" in str(exc)
        assert str(exc).endswith("Set ignore_extra=True to ignore. ")
        small.load_parameters(f, ignore_extra=True)
    else:
        net.save_parameters(f)
        wrong = _two_layer((6, 3))
        wrong.initialize()
        wrong(mx.nd.ones((1, 5)))
        exc = _raised(lambda: wrong.load_parameters(f))
        assert str(exc) == text
    assert isinstance(exc, _TYPES[kind])


def test_dtype_mismatch_needs_cast_dtype(tmp_path):
    f = str(tmp_path / "h.params")
    net = _two_layer()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    net.cast("float16")
    net.save_parameters(f)
    fresh = _two_layer()
    with pytest.raises(ParameterError, match="dtype incompatible"):
        fresh.load_parameters(f)
    fresh.load_parameters(f, cast_dtype=True)
    assert fresh[0].weight.data().dtype == np.float32


def test_legacy_save_params_and_load_params(tmp_path):
    f = str(tmp_path / "legacy.params")
    net = _two_layer()
    net.initialize()
    net(mx.nd.ones((1, 5)))
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(f)
    assert list(mx.nd.load(f).keys()) == API["save_load"]["save_params_keys"]
    net.collect_params().save(f, strip_prefix=net.prefix)
    assert list(mx.nd.load(f).keys()) == API["save_load"]["collect_params_save_keys"]
    other = _two_layer()  # another prefix: legacy names are prefix-free
    with pytest.warns(UserWarning, match="load_params is deprecated"):
        other.load_params(f)
    np.testing.assert_array_equal(other[1].weight.data().asnumpy(),
                                  net[1].weight.data().asnumpy())


def test_shared_parameters_and_deduplicate(tmp_path):
    class Shared(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.a = nn.Dense(2, in_units=3)
                self.b = nn.Dense(2, in_units=3, params=self.a.params)

        def hybrid_forward(self, F, x):
            return self.a(x) + self.b(x)

    f = str(tmp_path / "s.params")
    net = Shared()
    net.initialize()
    assert list(net.collect_params().keys()) == API["save_load"]["shared_collect"]
    net.save_parameters(f)
    assert list(mx.nd.load(f).keys()) == API["save_load"]["shared_keys"]
    net.save_parameters(f, deduplicate=True)
    assert list(mx.nd.load(f).keys()) == API["save_load"]["shared_dedup_keys"]
    fresh = Shared()
    fresh.load_parameters(f)  # one stored copy fills both aliases
    x = mx.nd.ones((1, 3))
    np.testing.assert_array_equal(fresh(x).asnumpy(), net(x).asnumpy())


# --- hooks -----------------------------------------------------------------------------------
def test_hooks_run_in_order_and_detach():
    net = _two_layer()
    net.initialize()
    calls = []
    pre = net[0].register_forward_pre_hook(lambda blk, inp: calls.append(("pre", blk.name)))
    post = net[0].register_forward_hook(
        lambda blk, inp, out: calls.append(("post", blk.name, out.shape)))
    net(mx.nd.ones((2, 5)))
    assert calls == [("pre", "hybridsequential0_dense0"),
                     ("post", "hybridsequential0_dense0", (2, 4))]
    pre.detach()
    post.detach()
    net(mx.nd.ones((2, 5)))
    assert len(calls) == 2
    with net[1].register_forward_hook(lambda *a: calls.append("ctx")):
        net(mx.nd.ones((2, 5)))
    net(mx.nd.ones((2, 5)))
    assert calls[2:] == ["ctx"]


# --- summary, repr, cast ---------------------------------------------------------------------
def _conv_bn_dense():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, in_channels=2), nn.BatchNorm(in_channels=4),
                nn.Dense(3, in_units=4 * 6 * 6))
    net.initialize()
    return net


def test_summary_prints_mxnet_table():
    net = _conv_bn_dense()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        net.summary(mx.nd.ones((1, 2, 8, 8)))
    assert buf.getvalue() == API["misc"]["summary"]
    net.hybridize()
    with pytest.raises(GluonportError, match="must not be hybridized"):
        net.summary(mx.nd.ones((1, 2, 8, 8)))


def test_parameter_reprs():
    net = _conv_bn_dense()
    assert repr(net[0].weight) == API["misc"]["param_repr"]
    assert repr(net[0].params) == API["misc"]["paramdict_repr"]


def test_layer_reprs():
    layers = [nn.Dense(3), nn.Dense(3, activation="relu", in_units=2), nn.Dropout(0.5),
              nn.BatchNorm(), nn.Embedding(10, 4), nn.Flatten(), nn.InstanceNorm(),
              nn.LayerNorm(), nn.GroupNorm(), nn.Conv2D(3, 3),
              nn.Conv2D(3, 3, 2, 1, 2, in_channels=4),
              nn.Conv1DTranspose(3, 3, output_padding=1, strides=2),
              nn.MaxPool2D(), nn.AvgPool1D(), nn.GlobalAvgPool3D(), nn.Activation("relu"),
              nn.LeakyReLU(0.1), nn.PReLU(), nn.ELU(), nn.SELU(), nn.GELU(), nn.Swish(),
              nn.HybridLambda("tanh"), nn.Lambda("tanh"), nn.ReflectionPad2D(2)]
    assert [repr(layer) for layer in layers] == API["misc"]["layer_reprs"]


def test_cast_keeps_batchnorm_float32():
    net = _conv_bn_dense()
    net.cast("float16")
    got = {k: np.dtype(p.dtype).name for k, p in net.collect_params().items()}
    assert got == API["misc"]["cast_dtypes"]
    assert net[0].weight.data().dtype == np.float16


def test_collect_params_select_is_re_match():
    net = _conv_bn_dense()
    keys = list(net.collect_params(".*batchnorm.*|.*dense0_bias").keys())
    assert keys == ["hybridsequential0_batchnorm0_gamma", "hybridsequential0_batchnorm0_beta",
                    "hybridsequential0_batchnorm0_running_mean",
                    "hybridsequential0_batchnorm0_running_var", "hybridsequential0_dense0_bias"]
    assert list(net.collect_params("batchnorm").keys()) == []  # re.match: from the start


# --- SymbolBlock on a Module-API checkpoint ---------------------------------------------------
def test_symbolblock_runs_legacy_softmax_checkpoint(caplog):
    """MXNet's imports refuses this file (softmax_label is not in the params); we run it
    and log that the label input is fed zeros."""
    facts = API["legacy_softmax"]
    assert facts["arguments"][-1] == "softmax_label" and facts["imports_error"] is not None
    with caplog.at_level(logging.INFO, logger="gluonport"):
        block = gluon.SymbolBlock.imports(G.path("legacy_softmax-symbol.json"), ["data"],
                                          G.path("legacy_softmax-0000.params"))
    assert "softmax_label" in caplog.text
    x = mx.nd.array(G.shared.make_input((2, 4)))
    G.assert_close(block(x).asnumpy(), G.output("legacy_softmax"))
    block.hybridize()
    G.assert_close(block(x).asnumpy(), G.output("legacy_softmax"))


def test_symbolblock_missing_param_message():
    with pytest.raises(ParameterError, match="is missing in file"):
        gluon.SymbolBlock.imports(G.path("nn_1d-symbol.json"), ["data"],
                                  G.path("legacy_softmax-0000.params"))


def test_unused_parameter_warns_on_hybridize():
    class Spare(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.dense = nn.Dense(2, in_units=3)
                self.spare = self.params.get("spare", shape=(2,))

        def hybrid_forward(self, F, x, spare):
            return self.dense(x)

    net = Spare()
    net.initialize()
    net.hybridize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net(mx.nd.ones((1, 3)))
    assert any("spare0_spare is not used" in str(w.message) for w in caught)


def test_pinned_and_shared_inputs_use_the_cpu_parameters():
    # MXNet 1.9.1 (checked in the oracle): a net on cpu(0) takes cpu_pinned / cpu_shared input
    # (DataLoader's pin_memory / workers) and its outputs, like any op's, are on cpu(0)
    import gluonport as mx
    from gluonport.gluon import nn

    net = nn.Dense(3)
    net.initialize()
    for ctx in (mx.cpu_pinned(0), mx.Context("cpu_shared", 0)):
        x = mx.nd.ones((2, 4), ctx=ctx)
        assert net(x).context == mx.cpu(0)
        assert (x + 1).context == mx.cpu(0) and mx.nd.relu(x).context == mx.cpu(0)
    assert net.weight.data(mx.cpu_pinned(0)) is net.weight.data(mx.cpu(0))
    with pytest.raises(mx.errors.ParameterNotInitializedError):
        net.weight.data(mx.gpu(0))


@pytest.mark.parametrize("backend", [None, "onnxruntime"])
def test_onnxruntime_without_a_kernel_falls_back_on_the_automatic_backend(monkeypatch, backend):
    # onnxruntime 1.19 has no float64 Cos kernel: loading the graph raises UnsupportedOpError.
    # Chosen automatically, the block warns once and runs on the numpy executor from then on;
    # a requested onnxruntime backend keeps the error.
    from gluonport.errors import UnsupportedOpError
    from gluonport.runtime.graph import OnnxGraph

    def no_kernel(self, *args, **kwargs):
        raise UnsupportedOpError("ONNX model 'gluonport': onnxruntime 0.0 has no kernel for "
                                 "part of this model: Cos(7) (simulated)")

    monkeypatch.setattr(OnnxGraph, "__call__", no_kernel)

    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.cos(x) * 2

    net = Net()
    net.hybridize(backend=backend)
    x = mx.nd.array(np.linspace(-3, 3, 12).reshape(3, 4), dtype="float64")
    if backend == "onnxruntime":
        with pytest.raises(UnsupportedOpError, match="no kernel"):
            net(x)
        return
    with pytest.warns(UserWarning, match="runs on the numpy executor instead"):
        first = net(x).asnumpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: later calls go to numpy directly
        second = net(x).asnumpy()
    assert net._cached_op.backend == "numpy"
    want = np.cos(np.linspace(-3, 3, 12).reshape(3, 4)) * 2
    np.testing.assert_allclose(first, want, rtol=1e-12)
    np.testing.assert_array_equal(second, first)
