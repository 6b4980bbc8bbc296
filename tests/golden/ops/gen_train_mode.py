"""Generate MXNet 1.9.1 goldens for training-mode state: BatchNorm's moving statistics.

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_train_mode.py

MXNet 1.9.1 updates ``moving_mean``/``moving_var`` of ``BatchNorm`` (and SyncBatchNorm,
BatchNormWithReLU) in its *backward* kernel, in place (``FMutateInputs``), with
``moving = moving * momentum + batch * (1 - momentum)`` and the biased batch variance; a forward
pass alone, inference mode, or ``use_global_stats`` leaves them alone. For each case below the
op runs under ``autograd.record(train_mode=...)`` on fixed inputs, then ``backward`` with a fixed
head gradient (``train_mode`` the same); ``train_mode.npz`` holds per case ``<case>/in<i>``
(data, gamma, beta, moving_mean, moving_var as given), ``<case>/hg``, ``<case>/fwd_mean``,
``<case>/fwd_var`` (the moving statistics after the forward pass), ``<case>/mean``, ``<case>/var``
(after the backward pass) and ``<case>/grad<i>`` (data, gamma, beta).

Gluon cases (``gluon_*``): an ``nn.BatchNorm`` block and a one-device
``contrib.nn.SyncBatchNorm`` (imperative, and hybridized) take two
training steps each (record, forward, backward) on two batches; the golden holds the batches, the
head gradients, the block's running_mean/running_var after each step and the data gradients.
``executor_bn``: a bound BatchNorm graph (``simple_bind``, the Module API's path) runs
``forward(is_train=True)`` and ``backward`` twice; the golden holds the moving statistics after
each forward and backward and the argument gradients.
Deterministic: re-running gives the same file.
"""
import os

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [  # name, op, data shape, dtype, param dtype, attrs, train_mode
    ("bn4d", "BatchNorm", (2, 3, 2, 2), "float32", "float32", {"fix_gamma": False}, True),
    ("bn4d_fix_gamma", "BatchNorm", (2, 3, 2, 2), "float32", "float32", {}, True),
    ("bn2d_momentum", "BatchNorm", (5, 3), "float32", "float32",
     {"fix_gamma": False, "momentum": 0.7}, True),
    ("bn3d_axis_neg1", "BatchNorm", (2, 4, 3), "float32", "float32",
     {"fix_gamma": False, "axis": -1, "eps": 0.01}, True),
    ("bn_f64", "BatchNorm", (3, 3, 4), "float64", "float64", {"fix_gamma": False}, True),
    ("bn_f16", "BatchNorm", (4, 3, 2), "float16", "float32", {"fix_gamma": False}, True),
    ("bn_global_stats", "BatchNorm", (2, 3, 2, 2), "float32", "float32",
     {"fix_gamma": False, "use_global_stats": True}, True),
    ("bn_predict_mode", "BatchNorm", (2, 3, 2, 2), "float32", "float32",
     {"fix_gamma": False}, False),
    ("sync_bn", "_contrib_SyncBatchNorm", (2, 3, 4), "float32", "float32",
     {"fix_gamma": False, "key": "g0"}, True),
    ("bn_relu", "_contrib_BatchNormWithReLU", (2, 3, 2, 3), "float32", "float32",
     {"fix_gamma": False}, True),
]


def _op(name):
    if name.startswith("_contrib_"):
        return getattr(mx.nd.contrib, name[len("_contrib_"):])
    return getattr(mx.nd, name)


def _case(out, name, op, shape, dtype, pdtype, attrs, train, seed):
    rng = np.random.RandomState(seed)
    c = shape[attrs.get("axis", 1)]
    ins = [rng.uniform(-2, 2, shape).astype(dtype), rng.uniform(0.5, 1.5, c).astype(pdtype),
           rng.uniform(-1, 1, c).astype(pdtype), rng.uniform(-0.5, 0.5, c).astype(pdtype),
           rng.uniform(0.5, 2.0, c).astype(pdtype)]
    hg = rng.standard_normal(shape).astype(dtype)
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in ins]
    for a in arrays[:3]:
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        y = _op(op)(*arrays, **attrs)
    out[f"{name}/fwd_mean"] = arrays[3].asnumpy()
    out[f"{name}/fwd_var"] = arrays[4].asnumpy()
    mx.autograd.backward([y], [mx.nd.array(hg, dtype=hg.dtype)], train_mode=train)
    for i, a in enumerate(ins):
        out[f"{name}/in{i}"] = a
    out[f"{name}/hg"] = hg
    out[f"{name}/mean"] = arrays[3].asnumpy()
    out[f"{name}/var"] = arrays[4].asnumpy()
    for i in range(3):
        out[f"{name}/grad{i}"] = arrays[i].grad.asnumpy()


def _gluon(out, name, hybridize, seed, sync=False):
    rng = np.random.RandomState(seed)
    if sync:  # one device: SyncBatchNorm is BatchNorm
        net = mx.gluon.contrib.nn.SyncBatchNorm(momentum=0.8, in_channels=3, num_devices=1)
    else:
        net = mx.gluon.nn.BatchNorm(momentum=0.8, in_channels=3)
    net.initialize()
    if hybridize:
        net.hybridize()
    for step in range(2):
        x = rng.uniform(-2, 2, (4, 3, 2, 2)).astype("float32")
        hg = rng.standard_normal(x.shape).astype("float32")
        xa = mx.nd.array(x)
        xa.attach_grad()
        with mx.autograd.record():
            y = net(xa)
        y.backward(mx.nd.array(hg))
        out[f"{name}/x{step}"] = x
        out[f"{name}/hg{step}"] = hg
        out[f"{name}/mean{step}"] = net.running_mean.data().asnumpy()
        out[f"{name}/var{step}"] = net.running_var.data().asnumpy()
        out[f"{name}/grad{step}"] = xa.grad.asnumpy()


def _executor(out, name, seed):
    """A bound BatchNorm graph (MXNet's Executor, the Module API's path): forward(is_train)
    then backward, twice."""
    rng = np.random.RandomState(seed)
    y = mx.sym.BatchNorm(mx.sym.var("x"), mx.sym.var("g"), mx.sym.var("b"), fix_gamma=False,
                         momentum=0.7, eps=0.01, name="bn")
    ex = y.simple_bind(mx.cpu(), x=(4, 3, 2), grad_req="write")
    ex.arg_dict["g"][:] = mx.nd.array(rng.uniform(0.5, 1.5, 3))
    ex.arg_dict["b"][:] = mx.nd.array(rng.uniform(-1, 1, 3))
    ex.aux_dict["bn_moving_var"][:] = 1
    for step in range(2):
        x = rng.uniform(-2, 2, (4, 3, 2)).astype("float32")
        hg = rng.standard_normal(x.shape).astype("float32")
        ex.arg_dict["x"][:] = mx.nd.array(x)
        ex.forward(is_train=True)
        out[f"{name}/fwd_mean{step}"] = ex.aux_dict["bn_moving_mean"].asnumpy()
        ex.backward(mx.nd.array(hg))
        out[f"{name}/x{step}"] = x
        out[f"{name}/hg{step}"] = hg
        out[f"{name}/mean{step}"] = ex.aux_dict["bn_moving_mean"].asnumpy()
        out[f"{name}/var{step}"] = ex.aux_dict["bn_moving_var"].asnumpy()
        for arg in ("x", "g", "b"):
            out[f"{name}/grad_{arg}{step}"] = ex.grad_dict[arg].asnumpy()
    out[f"{name}/g"] = ex.arg_dict["g"].asnumpy()
    out[f"{name}/b"] = ex.arg_dict["b"].asnumpy()


def main():
    out = {}
    for k, (name, op, shape, dtype, pdtype, attrs, train) in enumerate(CASES):
        _case(out, name, op, shape, dtype, pdtype, attrs, train, 100 + k)
    _gluon(out, "gluon_bn", False, 7)
    _gluon(out, "gluon_bn_hybrid", True, 7)
    _gluon(out, "gluon_sync_bn", False, 7, sync=True)
    _gluon(out, "gluon_sync_bn_hybrid", True, 7, sync=True)
    _executor(out, "executor_bn", 11)
    np.savez(os.path.join(HERE, "train_mode.npz"), **out)
    print(f"wrote {len(out)} arrays")


if __name__ == "__main__":
    main()
