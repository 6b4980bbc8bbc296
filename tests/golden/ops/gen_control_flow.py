"""Generate MXNet 1.9.1 goldens for the control-flow operators ``_foreach``, ``_while_loop``
and ``_cond`` (tests/ops/test_control_flow.py).

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_control_flow.py

For each case it builds the graph with ``mx.sym.contrib.foreach/while_loop/cond``, writes
``control_flow/<case>-symbol.json`` exactly as MXNet's ``Symbol.save`` writes it (the subgraphs
in each node's ``subgraphs`` list), runs it through ``simple_bind``/``forward`` on seeded inputs,
and runs the same computation through ``mx.nd.contrib.*`` (MXNet's Python loops); then the
gradients of every input through ``bind(args_grad=...)``/``backward`` with seeded normal head
gradients. Everything goes to ``control_flow/outputs.npz`` as ``<case>:in:<name>``,
``<case>:sym:<k>``, ``<case>:nd:<k>``, ``<case>:ograd:<k>`` and ``<case>:grad:<name>``.
A hybridized Gluon block using F.contrib.foreach and F.contrib.cond is exported to
``control_flow/gluon_cell-symbol.json`` with its output. Deterministic: re-running gives the
same files, except the rows of while_count's step output
past its last step, which MXNet 1.9.1 leaves uninitialized (its ``_while_loop`` and the
``nd.empty`` padding of ``nd.contrib.while_loop``).
"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "control_flow")


def rnn_foreach(F, data, h, w, u):
    """An RNN cell over the first axis: h' = tanh(x w^T + h u^T); outputs h' and h' * 2."""
    def body(x, states):
        hh = states[0]
        nh = F.tanh(F.dot(x, w, transpose_b=True) + F.dot(hh, u, transpose_b=True))
        return [nh, nh * 2], [nh]
    return F.contrib.foreach(body, data, [h])


def sum_foreach(F, data, s):
    """Running sum over the first axis, a single (non-list) output and state."""
    def body(x, state):
        new = state + x
        return new, new
    return F.contrib.foreach(body, data, s)


def nested_foreach(F, x, s, w):
    """A foreach whose body runs a foreach over the inner axis (subgraph names nest as
    ``foreach<n>$foreach<m>``); the inner final state, scaled, is the outer state."""
    def outer(xt, st):
        def inner(xi, si):
            n = si[0] + xi * w
            return n * 2, [n]
        o, fin = F.contrib.foreach(inner, xt, [st[0]])
        return [o], [fin[0] * 1.5]
    return F.contrib.foreach(outer, x, [s])


def count_while(F, i, acc, limit):
    """Counting loop: while i < limit: acc += i; i += 1 (step outputs: i * acc)."""
    def cond(i, acc):
        return i < limit

    def func(i, acc):
        return [i * acc], [i + 1, acc + i]
    return F.contrib.while_loop(cond, func, [i, acc], max_iterations=8)


def count_while_const(F, i, acc):
    """The counting loop with a constant limit (``i < 5``): MXNet 1.9.1's backward of
    count_while fails (its cond reads an input the body does not: "Check failed:
    outputs.size() == num_forward_outputs + out_attrs->size() (5 vs. 6)"); this one runs."""
    def cond(i, acc):
        return i < 5

    def func(i, acc):
        return [i * acc], [i + 1, acc * i + 1]
    return F.contrib.while_loop(cond, func, [i, acc], max_iterations=8)


def cond_reduce(F, x, y):
    """A cond on a reduced value: sum(x) > 0 ? x * y : x - y (two outputs each)."""
    def then_f():
        return [x * y, x + 1]

    def else_f():
        return [x - y, x - 1]
    return F.contrib.cond(F.sum(x) > 0, then_f, else_f)


def gluon_cell():
    """A hybridized Gluon block whose hybrid_forward uses F.contrib.foreach (an RNN cell with
    a Dense layer and a parameter in the body) and F.contrib.cond on the final state; returns
    the block (initialized with constants) and its two inputs."""
    gluon = mx.gluon

    class Cell(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.w = self.params.get("w", shape=(4, 3))
                self.dense = gluon.nn.Dense(4, flatten=False, in_units=4)

        def hybrid_forward(self, F, x, h, w):
            def body(xt, states):
                nh = F.tanh(F.dot(xt, w, transpose_b=True) + self.dense(states[0]))
                return nh, [nh]
            outs, states = F.contrib.foreach(body, x, [h])
            return F.contrib.cond(F.sum(states[0]) > 0, lambda: outs * 2, lambda: outs - 1)

    net = Cell(prefix="cell_")
    net.initialize(mx.init.Constant(0.1))
    net.hybridize()
    x = mx.nd.array(np.linspace(-1, 1, 30).reshape(5, 2, 3).astype(np.float32))
    h = mx.nd.array(np.linspace(-1, 1, 8).reshape(2, 4).astype(np.float32))
    return net, x, h


CASES = {
    # name: (function, {input: shape}, input value transform)
    "foreach_rnn": (rnn_foreach, {"data": (5, 2, 3), "h": (2, 4), "w": (4, 3), "u": (4, 4)}),
    "foreach_sum": (sum_foreach, {"data": (4, 3), "s": (3,)}),
    "nested_foreach": (nested_foreach, {"x": (2, 4, 3), "s": (3,), "w": (3,)}),
    "while_count": (count_while, {"i": (1,), "acc": (1,), "limit": (1,)}),
    "while_grad": (count_while_const, {"i": (1,), "acc": (1,)}),
    "cond_pos": (cond_reduce, {"x": (2, 3), "y": (2, 3)}),
    "cond_neg": (cond_reduce, {"x": (2, 3), "y": (2, 3)}),
}


def inputs_for(name, shapes, rng):
    vals = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    if name == "while_count":
        vals = {"i": np.array([0], np.float32), "acc": np.array([1], np.float32),
                "limit": np.array([5], np.float32)}
    if name == "while_grad":
        vals = {"i": np.array([0.5], np.float32), "acc": np.array([1.5], np.float32)}
    if name == "cond_pos":
        vals["x"] = np.abs(vals["x"])
    if name == "cond_neg":
        vals["x"] = -np.abs(vals["x"])
    return vals


def flat(out):
    res = []
    for o in (out if isinstance(out, (list, tuple)) else [out]):
        res.extend(flat(o) if isinstance(o, (list, tuple)) else [o])
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays = {}
    for k, (name, (fn, shapes)) in enumerate(sorted(CASES.items())):
        rng = np.random.default_rng(100 + k)
        vals = inputs_for(name, shapes, rng)
        names = list(shapes)
        syms = [mx.sym.var(n) for n in names]
        outs = flat(fn(mx.sym, *syms))
        group = mx.sym.Group(outs)
        group.save(os.path.join(OUT, f"{name}-symbol.json"))
        ex = group.bind(mx.cpu(), {n: mx.nd.array(vals[n]) for n in names}, grad_req="null")
        got = ex.forward(is_train=False)
        nd_outs = flat(fn(mx.nd, *[mx.nd.array(vals[n]) for n in names]))
        for n in names:
            arrays[f"{name}:in:{n}"] = vals[n]
        for j, o in enumerate(got):
            arrays[f"{name}:sym:{j}"] = o.asnumpy()
        for j, o in enumerate(nd_outs):
            arrays[f"{name}:nd:{j}"] = o.asnumpy()
        # gradients: MXNet's FGradient of the op (ForeachGradient, WhileLoopGradient,
        # CondGradient) through bind/backward, seeded normal head gradients per output
        hrng = np.random.default_rng(500 + k)
        heads = [hrng.standard_normal(o.shape).astype(np.float32) for o in got]
        grads = {n: mx.nd.zeros(vals[n].shape) for n in names}
        try:
            ex = group.bind(mx.cpu(), {n: mx.nd.array(vals[n]) for n in names},
                            args_grad=grads)
            ex.forward(is_train=True)
            ex.backward([mx.nd.array(h) for h in heads])
        except mx.base.MXNetError as exc:  # while_count: see count_while_const
            print(name, "no gradient:", str(exc).splitlines()[0][:120])
            continue
        for j, h in enumerate(heads):
            arrays[f"{name}:ograd:{j}"] = h
        for n in names:
            arrays[f"{name}:grad:{n}"] = ex.grad_dict[n].asnumpy()
        print(name, [o.shape for o in got], [o.shape for o in nd_outs])
    net, x, h = gluon_cell()
    arrays["gluon_cell:out"] = net(x, h).asnumpy()
    net.export(os.path.join(OUT, "gluon_cell"), 0)
    os.remove(os.path.join(OUT, "gluon_cell-0000.params"))  # constants: the test re-makes them
    np.savez_compressed(os.path.join(OUT, "outputs.npz"), **arrays)


if __name__ == "__main__":
    main()
