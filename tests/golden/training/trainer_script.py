"""MXNet 1.9.1 gluon.Trainer and kvstore usage with known gradients. Run by gen_trainer.py in
MXNet and by tests/training/test_trainer.py and test_kvstore.py with only the import changed
(tests/_ported.py).

Backward is simulated: each parameter's gradient buffer on each context is written directly and
its data is marked fresh (``data._fresh_grad = True``), which is what ``backward`` does.
``run()`` returns ``(arrays, messages)``: name -> numpy array, and name -> [error type, text].
"""
import collections
import logging
import os
import tempfile

import numpy as np

import mxnet as mx

SHAPES = {"fc_weight": (3, 4), "fc_bias": (3,), "fc2_weight": (2, 3)}
STEPS = 3


def rand(rs, shape):
    return rs.uniform(-1, 1, size=shape).astype(np.float32)


def make_params(ctxs, seed=0, grad_req=None):
    """A ParameterDict of three float32 parameters with seeded values on ``ctxs``."""
    rs = np.random.RandomState(seed)
    pd = mx.gluon.ParameterDict()
    for name, shape in SHAPES.items():
        req = (grad_req or {}).get(name, "write")
        p = pd.get(name, shape=shape, grad_req=req)
        p.initialize(ctx=ctxs)
        p.set_data(mx.nd.array(rand(rs, shape)))
    return pd


def fake_backward(pd, rs, ctxs, skip=()):
    """Write a seeded gradient into every context's buffer and mark it fresh."""
    for name in sorted(pd.keys()):
        p = pd[name]
        if p.grad_req == "null" or name in skip:
            continue
        for c in ctxs:
            p.grad(c)[:] = mx.nd.array(rand(rs, p.shape))
            p.data(c)._fresh_grad = True


def record(out, prefix, pd, ctxs, grads=False):
    for name in sorted(pd.keys()):
        for j, c in enumerate(ctxs):
            out["%s/%s/data%d" % (prefix, name, j)] = pd[name].data(c).asnumpy()
            if grads and pd[name].grad_req != "null":
                out["%s/%s/grad%d" % (prefix, name, j)] = pd[name].grad(c).asnumpy()


def catch(msgs, key, fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the message is the result
        msgs[key] = [type(exc).__name__, str(exc)]
        return
    msgs[key] = ["ok", ""]


def train(out, prefix, ctxs, optimizer, opt_params, kvstore="device", steps=STEPS,
          update_on_kvstore=None, batch_size=4, seed=1, setup=None):
    pd = make_params(ctxs)
    if setup is not None:
        setup(pd)
    tr = mx.gluon.Trainer(pd, optimizer, dict(opt_params), kvstore=kvstore,
                          update_on_kvstore=update_on_kvstore)
    rs = np.random.RandomState(seed)
    for s in range(steps):
        fake_backward(pd, rs, ctxs)
        tr.step(batch_size)
        record(out, "%s/step%d" % (prefix, s), pd, ctxs, grads=True)
    out[prefix + "/lr"] = np.array(tr.learning_rate, dtype=np.float64)
    return pd, tr


def trainer_cases(out, msgs):
    one = [mx.cpu(0)]
    two = [mx.cpu(0), mx.cpu(1)]
    three = [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    train(out, "sgd_mom", one, "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})

    def mults(pd):
        pd["fc_weight"].lr_mult = 0.5
        pd["fc_bias"].wd_mult = 3.0
    train(out, "sgd_mults", one, "sgd", {"learning_rate": 0.1, "wd": 0.1}, setup=mults)
    train(out, "adam", one, "adam", {"learning_rate": 0.01, "clip_gradient": 0.3})
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.2)
    train(out, "sched", one, "sgd", {"lr_scheduler": sched, "momentum": 0.5})
    # several contexts: device kvstore updates on the store; local without; no kvstore
    train(out, "dev2_adam", two, "adam", {"learning_rate": 0.01})
    train(out, "dev3_sgd", three, "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    train(out, "local2_noupd", two, "sgd", {"learning_rate": 0.1, "momentum": 0.9},
          kvstore="local", update_on_kvstore=False)
    train(out, "nokv2", two, "sgd", {"learning_rate": 0.1}, kvstore=None)
    kv = mx.kv.create("local")
    train(out, "kvobj2", two, "rmsprop", {"learning_rate": 0.01}, kvstore=kv)

    # set_learning_rate between steps
    pd, tr = train(out, "setlr", one, "sgd", {"learning_rate": 0.1}, steps=1)
    tr.set_learning_rate(0.05)
    fake_backward(pd, np.random.RandomState(7), one)
    tr.step(2)
    record(out, "setlr/after", pd, one)
    out["setlr/lr"] = np.array(tr.learning_rate, dtype=np.float64)

    # allreduce_grads + update separately (update_on_kvstore=False): grads are summed in place
    pd = make_params(two)
    tr = mx.gluon.Trainer(pd, "sgd", {"learning_rate": 0.1}, update_on_kvstore=False)
    fake_backward(pd, np.random.RandomState(3), two)
    tr.allreduce_grads()
    record(out, "split/reduced", pd, two, grads=True)
    tr.update(2)
    record(out, "split/updated", pd, two)
    pd = make_params(two)
    tr = mx.gluon.Trainer(pd, "sgd", {"learning_rate": 0.1})
    catch(msgs, "allreduce_on_kvstore", tr.allreduce_grads)
    catch(msgs, "update_on_kvstore", lambda: tr.update(1))

    # stale gradients
    pd = make_params(one)
    tr = mx.gluon.Trainer(pd, "sgd", {"learning_rate": 0.1})
    catch(msgs, "stale_first", lambda: tr.step(1))
    fake_backward(pd, np.random.RandomState(4), one, skip=("fc_bias",))
    catch(msgs, "stale_partial", lambda: tr.step(1))
    record(out, "stale/after_error", pd, one)
    tr.step(1, ignore_stale_grad=True)
    record(out, "stale/ignored", pd, one)
    catch(msgs, "stale_after_step", lambda: tr.step(1))
    # stale check on two contexts, updates on the kvstore
    pd = make_params(two)
    tr = mx.gluon.Trainer(pd, "sgd", {"learning_rate": 0.1})
    fake_backward(pd, np.random.RandomState(5), two)
    tr.step(1)
    catch(msgs, "stale_kv_second_step", lambda: tr.step(1))
    record(out, "stale_kv/after", pd, two)
    pd = make_params(two)
    tr = mx.gluon.Trainer(pd, "sgd", {"learning_rate": 0.1}, kvstore="local",
                          update_on_kvstore=False)
    fake_backward(pd, np.random.RandomState(5), two)
    tr.step(1)
    catch(msgs, "stale_local_second_step", lambda: tr.step(1))

    # grad_req='null' parameters are skipped; their grad() is refused
    pd = make_params(one, grad_req={"fc_bias": "null"})
    tr = mx.gluon.Trainer(pd, "sgd", {"learning_rate": 0.1})
    fake_backward(pd, np.random.RandomState(6), one)
    tr.step(1)
    record(out, "nullreq", pd, one)
    catch(msgs, "grad_null", lambda: pd["fc_bias"].grad())
    catch(msgs, "list_grad_null", lambda: pd["fc_bias"].list_grad())
    # switching grad_req keeps the values and gives a zero gradient
    pd["fc_bias"].grad_req = "write"
    out["nullreq/regrad"] = pd["fc_bias"].grad().asnumpy()
    pd.setattr("grad_req", "null")
    catch(msgs, "grad_null_setattr", lambda: pd["fc_weight"].grad())

    # zero_grad, list_grad, grad on a missing context
    pd = make_params(two)
    fake_backward(pd, np.random.RandomState(8), two)
    out["zero/before"] = pd["fc_weight"].grad(mx.cpu(1)).asnumpy()
    g = pd["fc_weight"].grad(mx.cpu(1))
    pd["fc_weight"].zero_grad()
    out["zero/same_object_after"] = g.asnumpy()
    fake_backward(pd, np.random.RandomState(8), two)
    pd.zero_grad()
    out["zero/dict"] = np.stack([x.asnumpy() for x in pd["fc_bias"].list_grad()])
    catch(msgs, "grad_wrong_ctx", lambda: pd["fc_weight"].grad(mx.cpu(5)))
    catch(msgs, "grad_ambiguous_ctx", lambda: pd["fc_weight"].grad())

    # bad input
    p = mx.gluon.Parameter("lonely_weight", shape=(2, 2))
    catch(msgs, "uninit_trainer", lambda: mx.gluon.Trainer([p], "sgd"))
    p.initialize(ctx=[mx.cpu(0)])
    q = mx.gluon.Parameter("other_weight", shape=(2, 2))
    q.initialize(ctx=[mx.cpu(1)])
    catch(msgs, "ctx_mismatch", lambda: mx.gluon.Trainer([p, q], "sgd"))
    catch(msgs, "not_params", lambda: mx.gluon.Trainer(p, "sgd"))
    catch(msgs, "list_not_params", lambda: mx.gluon.Trainer([p, 3], "sgd"))
    catch(msgs, "opt_instance_with_params",
          lambda: mx.gluon.Trainer([p], mx.optimizer.SGD(), {"learning_rate": 0.1}))
    d = mx.gluon.Parameter("deferred_weight", shape=(2, 0), allow_deferred_init=True)
    d.initialize(ctx=[mx.cpu(0)])
    tr = mx.gluon.Trainer([d], "sgd")
    catch(msgs, "deferred_step", lambda: tr.step(1))
    catch(msgs, "grad_deferred", lambda: d.grad())
    catch(msgs, "grad_uninit", lambda: mx.gluon.Parameter("x_weight", shape=(2,)).grad())


def states_cases(out, msgs, folder):
    one = [mx.cpu(0)]
    two = [mx.cpu(0), mx.cpu(1)]
    for prefix, ctxs, opt, params in (("st_sgd", one, "sgd", {"learning_rate": 0.1,
                                                              "momentum": 0.9}),
                                      ("st_adam2", two, "adam", {"learning_rate": 0.01})):
        pd, tr = train(out, prefix, ctxs, opt, params, steps=2)
        fname = os.path.join(folder, prefix + ".states")
        tr.save_states(fname)
        with open(fname, "rb") as f:
            out[prefix + "/states_bytes"] = np.frombuffer(f.read(), dtype=np.uint8)
        saved = {n: pd[n].data(ctxs[0]).asnumpy() for n in pd.keys()}
        # a fresh trainer over the same values, loading the states, continues identically
        pd2 = make_params(ctxs)
        for n in pd2.keys():
            pd2[n].set_data(mx.nd.array(saved[n]))
        tr2 = mx.gluon.Trainer(pd2, opt, dict(params))
        tr2.load_states(fname)
        rs = np.random.RandomState(11)
        for s in range(2):
            fake_backward(pd2, rs, ctxs)
            tr2.step(4)
            record(out, "%s/resumed%d" % (prefix, s), pd2, ctxs)
        out[prefix + "/resumed_num_update"] = np.array(tr2.optimizer.num_update)


def kvstore_cases(out, msgs, sparse):
    shape = (2, 3)
    rs = np.random.RandomState(20)
    for kind in ("local", "device"):
        kv = mx.kv.create(kind)
        out["kv/%s/type" % kind] = np.frombuffer(kv.type.encode(), dtype=np.uint8)
        out["kv/%s/rank_workers" % kind] = np.array([kv.rank, kv.num_workers])
        init = rand(rs, shape)
        kv.init(3, mx.nd.array(init))
        a = mx.nd.zeros(shape)
        kv.pull(3, out=a)
        out["kv/%s/pull_init" % kind] = a.asnumpy()
        vals = [mx.nd.array(rand(rs, shape), ctx=mx.cpu(i)) for i in range(3)]
        kv.push(3, vals)
        outs = [mx.nd.zeros(shape, ctx=mx.cpu(i)) for i in range(2)]
        kv.pull(3, out=outs)
        out["kv/%s/push_sum" % kind] = np.stack([o.asnumpy() for o in outs])
        # string keys (a store takes one key type), lists of keys
        catch(msgs, "kv_%s_mixed_keys" % kind, lambda: kv.init("s", mx.nd.zeros(shape)))
        kvs = mx.kv.create(kind)
        keys = ["a", "b"]
        kvs.init(keys, [mx.nd.array(rand(rs, shape)) for _ in keys])
        vals = [[mx.nd.array(rand(rs, shape), ctx=mx.cpu(i)) for i in range(2)] for _ in keys]
        kvs.push(keys, vals)
        outs = [[mx.nd.zeros(shape, ctx=mx.cpu(i)) for i in range(2)] for _ in keys]
        kvs.pull(keys, out=outs)
        out["kv/%s/list_keys" % kind] = np.stack([[o.asnumpy() for o in r] for r in outs])
        # pushpull in place and into out
        kv.init(9, mx.nd.zeros(shape))
        vals = [mx.nd.array(rand(rs, shape), ctx=mx.cpu(i)) for i in range(2)]
        kv.pushpull(9, vals)
        out["kv/%s/pushpull_inplace" % kind] = np.stack([v.asnumpy() for v in vals])
        o = mx.nd.zeros(shape)
        kv.pushpull(9, [mx.nd.ones(shape), mx.nd.ones(shape) * 2], out=o)
        out["kv/%s/pushpull_out" % kind] = o.asnumpy()
        # broadcast
        outs = [mx.nd.zeros(shape, ctx=mx.cpu(i)) for i in range(2)]
        kv.broadcast(11, mx.nd.array(init), out=outs)
        out["kv/%s/broadcast" % kind] = np.stack([v.asnumpy() for v in outs])
        # an optimizer on the store: push applies it to the stored value
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        kv.init(20, mx.nd.array(init))
        for _ in range(3):
            kv.push(20, [mx.nd.array(rand(rs, shape), ctx=mx.cpu(i)) for i in range(2)])
        o = mx.nd.zeros(shape)
        kv.pull(20, out=o)
        out["kv/%s/optimizer" % kind] = o.asnumpy()
        fname = os.path.join(tempfile.mkdtemp(), "kv.states")
        kv.save_optimizer_states(fname, dump_optimizer=True)
        kv.push(20, mx.nd.ones(shape))
        kv.load_optimizer_states(fname)
        kv.push(20, mx.nd.ones(shape))
        kv.pull(20, out=o)
        out["kv/%s/optimizer_reloaded" % kind] = o.asnumpy()
    kv = mx.kv.create("local")
    val = rand(rs, (4, 3))
    out["kv/row_sparse_value"] = val
    if sparse:
        # row_sparse_pull: the rows named, zeros elsewhere (MXNet needs row_sparse storage;
        # gluonport's dense fallback is checked against this in test_kvstore.py)
        kv.init("emb", mx.nd.array(val).tostype("row_sparse"))
        o = mx.nd.sparse.zeros("row_sparse", (4, 3))
        kv.row_sparse_pull("emb", out=o, row_ids=mx.nd.array([3, 0, 3], dtype="int64"))
        out["kv/row_sparse_pull"] = o.asnumpy()
    catch(msgs, "kv_compression_local",
          lambda: kv.set_gradient_compression({"type": "2bit", "threshold": 0.5}))
    catch(msgs, "kv_create_not_str", lambda: mx.kv.create(3))


class _Lines(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def callback_cases(out, msgs, folder):
    """mx.callback: what each callback logs (Speedometer's speed masked) and the checkpoint
    files do_checkpoint writes."""
    Param = collections.namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])
    handler = _Lines()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        metric = mx.metric.Accuracy()
        metric.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8],
                                                              [0.7, 0.3]])])
        for cb in (mx.callback.log_train_metric(2), mx.callback.log_train_metric(2, True),
                   mx.callback.ProgressBar(total=4, length=8),
                   mx.callback.Speedometer(3, frequent=2),
                   mx.callback.Speedometer(3, frequent=2, auto_reset=False)):
            for n in range(5):
                cb(Param(epoch=1, nbatch=n, eval_metric=metric, locals=None))
        speedo = mx.callback.Speedometer(3, frequent=2)
        for n in range(3):
            speedo(Param(epoch=0, nbatch=n, eval_metric=None, locals=None))
        mx.callback.LogValidationMetricsCallback()(Param(2, 0, metric, None))
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    lines = []
    for line in handler.lines:
        if "Speed: " in line:
            head, tail = line.split("Speed: ", 1)
            line = head + "Speed: <s>" + tail[tail.index(" samples/sec"):]
        lines.append(line)
    msgs["callback_log"] = ["ok", "\n".join(lines)]
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    arg = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    prefix = os.path.join(folder, "ck")
    cb = mx.callback.do_checkpoint(prefix, period=2)
    for epoch in range(4):
        cb(epoch, net, arg, {})
    msgs["callback_files"] = ["ok", " ".join(sorted(os.listdir(folder)))]
    loaded = mx.nd.load(prefix + "-0004.params")
    out["callback/ck4_weight"] = loaded["arg:fc_weight"].asnumpy()


def run(sparse=True):
    """All cases; ``sparse=False`` leaves out the one that needs row_sparse storage."""
    out, msgs = {}, {}
    trainer_cases(out, msgs)
    states_cases(out, msgs, tempfile.mkdtemp())
    kvstore_cases(out, msgs, sparse)
    callback_cases(out, msgs, tempfile.mkdtemp())
    return out, msgs
