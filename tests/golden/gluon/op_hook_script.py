"""register_op_hook on a hybridized net, written for MXNet 1.9.1 (only the import changes to
run it in gluonport): records what the callback sees, in order, with monitor_all False and
True, in inference and under autograd.record.

MXNet calls the hook with bytes names and a raw NDArrayHandle; gluonport with str names and
the NDArray. ``_text``/``_array`` accept both, as code written for either would.
"""
import mxnet as mx
import numpy as np
from mxnet.gluon import nn


class Net(nn.HybridBlock):
    """Dense -> Activation -> BatchNorm, concat of the two, then sigmoid and a 3-way split."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(4, in_units=3)
            self.act = nn.Activation("relu")
            self.bn = nn.BatchNorm(in_channels=4)

    def hybrid_forward(self, F, x):
        a = self.act(self.dense(x))
        b = self.bn(a)
        c = F.concat(a, b, dim=1)
        parts = F.split(F.sigmoid(c), num_outputs=2, axis=1)
        return F.broadcast_add(parts[0], parts[1])


def _text(name):
    return name.decode("utf-8") if isinstance(name, bytes) else name


def _array(handle):
    if isinstance(handle, mx.nd.NDArray):
        return handle
    import ctypes

    from mxnet.base import NDArrayHandle
    return mx.nd.NDArray(ctypes.cast(handle, NDArrayHandle), writable=False)


def run():
    rng = np.random.RandomState(7)
    net = Net(prefix="net_")
    net.initialize()
    for name, param in sorted(net.collect_params().items()):
        value = rng.uniform(0.5, 1.5, param.shape) if "var" in name else \
            rng.uniform(-1, 1, param.shape)
        param.set_data(mx.nd.array(value))
    net.hybridize()
    x = mx.nd.array(rng.uniform(-1, 1, (2, 3)))
    out = {}
    for mode in ("outputs", "all", "all_train"):
        seen = []

        def hook(name, op_name, arr, seen=seen):
            seen.append((_text(name), _text(op_name), _array(arr).asnumpy().copy()))

        net.register_op_hook(hook, monitor_all=mode != "outputs")
        if mode == "all_train":
            with mx.autograd.record():
                y = net(x)
        else:
            y = net(x)
        y.wait_to_read()
        out[mode + "/names"] = [[n, o, list(a.shape)] for n, o, a in seen]
        for k, (_, _, a) in enumerate(seen):
            out[f"{mode}/{k:03d}"] = a
        out[mode + "/y"] = y.asnumpy()
    return out
