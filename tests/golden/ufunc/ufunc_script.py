"""MXNet 1.x's hand-written namespace functions (nd.maximum(x, 0), nd.power, sym.pow, nd.eye,
split_v2, moveaxis, ...) and F.* calls of them inside hybrid_forward, as Gluon code uses them.
gen_ufunc.py runs this in MXNet 1.9.1; tests/core/test_ufunc.py runs it with only the import
changed to ``import gluonport as mx``."""
import mxnet as mx
import numpy as np

BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum",
          "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
          "logical_and", "logical_or", "logical_xor"]


class Clamp(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, y):
        a = F.maximum(F.minimum(x, 2.5), -1)
        b = F.power(F.abs(x) + 1, 0.5) + F.maximum(x, y) - F.minimum(1, y)
        return F.broadcast_add(a, b) * F.power(x * x + 9, 0.5)


def run():
    # a fresh name counter, so node names do not depend on what ran before in the process
    with mx.name.NameManager():
        return _run()


def _run():
    out = {}
    rng = np.random.RandomState(0)
    a = mx.nd.array(rng.uniform(0.5, 3, (2, 3)))
    b = mx.nd.array(rng.uniform(0.5, 3, (1, 3)))
    for name in BINARY:
        fn = getattr(mx.nd, name)
        out["nd_%s_aa" % name] = fn(a, b).asnumpy()
        out["nd_%s_as" % name] = fn(a, 2).asnumpy()
        out["nd_%s_sa" % name] = fn(2, a).asnumpy()
        out["nd_%s_ss" % name] = np.array(fn(3, 2), dtype=np.float64)
    out["nd_negative"] = mx.nd.negative(a).asnumpy()
    out["nd_eye"] = mx.nd.eye(3, 4, -1).asnumpy()
    out["nd_linspace"] = mx.nd.linspace(-1, 2, 7, endpoint=False).asnumpy()
    parts = mx.nd.split_v2(mx.nd.arange(12).reshape((6, 2)), (1, 4), axis=0)
    out["nd_split_v2"] = np.concatenate([p.asnumpy().ravel() for p in parts])
    out["nd_split_v2_shapes"] = np.array([p.shape[0] for p in parts])
    out["nd_moveaxis"] = mx.nd.moveaxis(mx.nd.arange(24).reshape((2, 3, 4)), [0, 1], [-1, 0]).asnumpy()
    mx.nd.save("ufunc_tmp.params", {"w": a})
    with open("ufunc_tmp.params", "rb") as f:
        buf = f.read()
    out["nd_load_frombuffer"] = mx.nd.load_frombuffer(buf)["w"].asnumpy()
    special = mx.nd.array([1, np.inf, -np.inf, np.nan, 0])
    for name in ("isinf", "isfinite", "isnan"):
        out["contrib_" + name] = getattr(mx.nd.contrib, name)(special).asnumpy()

    x, y = mx.sym.var("x"), mx.sym.var("y")
    graph = mx.sym.Group([mx.sym.maximum(x, 0), mx.sym.minimum(1.5, x), mx.sym.maximum(x, y),
                          mx.sym.pow(x, 2), mx.sym.pow(2, x), mx.sym.power(x, y),
                          mx.sym.hypot(x, y), mx.sym.hypot(x, 4), mx.sym.eye(3, k=1),
                          mx.sym.linspace(0, 1, 4)] + list(mx.sym.split_v2(x, 3, axis=1)))
    out["sym_json"] = graph.tojson()
    ex = graph.eval(ctx=mx.cpu(), x=mx.nd.array(rng.uniform(0.5, 3, (2, 3))),
                    y=mx.nd.array(rng.uniform(0.5, 3, (2, 3))))
    for i, o in enumerate(ex):
        out["sym_out%d" % i] = o.asnumpy()

    net = Clamp()
    xs = mx.nd.array(rng.uniform(-3, 3, (2, 3)))
    ys = mx.nd.array(rng.uniform(-3, 3, (2, 3)))
    out["clamp_imperative"] = net(xs, ys).asnumpy()
    net.hybridize()
    out["clamp_hybridized"] = net(xs, ys).asnumpy()
    out["clamp_json"] = net(mx.sym.var("data0"), mx.sym.var("data1")).tojson()
    out.update(histograms())
    return out


def histograms():
    """nd.histogram's three dispatches, sym.histogram, and the legacy nd.onehot_encode."""
    out = {}
    rng = np.random.RandomState(1)
    h = mx.nd.array(rng.uniform(-1, 6, (20,)))
    for tag, kwargs in (("range", {"bins": 5, "range": (0, 5)}),
                        ("edges", {"bins": mx.nd.array([0, 1, 2.5, 5])}),
                        ("numpy", {"bins": 4})):  # no range: numpy's result (float32), a warning
        counts, edges = mx.nd.histogram(h, **kwargs)
        out["nd_histogram_%s_counts" % tag] = counts.asnumpy()
        out["nd_histogram_%s_edges" % tag] = edges.asnumpy()
    a, e = mx.sym.var("a"), mx.sym.var("e")
    graph = mx.sym.Group(list(mx.sym.histogram(a, bins=3, range=(-1, 4), name="hist_range")) +
                         list(mx.sym.histogram(a, bins=e, name="hist_edges")))
    out["sym_histogram_json"] = graph.tojson()
    for i, o in enumerate(graph.eval(ctx=mx.cpu(), a=h, e=mx.nd.array([-1, 0, 3, 6]))):
        out["sym_histogram_out%d" % i] = o.asnumpy()
    target = mx.nd.ones((4, 5))
    got = mx.nd.onehot_encode(mx.nd.array([4, 0, 2.7, 7]), target)
    out["nd_onehot_encode"] = target.asnumpy()
    out["nd_onehot_encode_returns_out"] = np.array(got is target)
    return out
