"""MXNet 1.9.1 optimizer usage: every optimizer through get_updater, every fused update op,
every lr scheduler, and Updater.get_states. Run by gen_optimizer.py in MXNet and by
tests/optimizer/test_optimizer_golden.py with only the import changed (tests/_ported.py).

``run()`` returns a dict name -> numpy array (bytes as uint8 arrays).
"""
import warnings

import numpy as np

import mxnet as mx

STEPS = 5
SHAPES = [(3, 4), (5,)]
NAMES = {0: "fc_weight", 1: "fc_bias"}

OPTIMIZERS = [
    ("sgd", {}), ("sgd", {"momentum": 0.9, "wd": 0.01}),
    ("sgd", {"momentum": 0.9, "rescale_grad": 0.5, "clip_gradient": 0.2}),
    ("sgd", {"momentum": 0.9, "wd": 0.01, "multi_precision": True, "dtype": "float16"}),
    ("sgd", {"wd": 0.01, "multi_precision": True, "dtype": "float16"}),
    ("sgd", {"momentum": 0.5, "names": True, "lr_mult": {"fc_weight": 0.5}, "wd": 0.1,
             "wd_mult": {"fc_weight": 2.0}}),
    ("sgd", {"momentum": 0.9, "scheduler": True}),
    ("ccsgd", {"momentum": 0.9}),
    ("nag", {"momentum": 0.9}), ("nag", {"momentum": 0.9, "wd": 0.01, "clip_gradient": 0.3}),
    ("nag", {}), ("nag", {"momentum": 0.9, "multi_precision": True, "dtype": "float16"}),
    ("signum", {}), ("signum", {"momentum": 0.0, "wd": 0.01}),
    ("signum", {"wd_lh": 0.01, "wd": 0.01, "clip_gradient": 0.2}),
    ("adam", {}), ("adam", {"wd": 0.01, "rescale_grad": 2.0, "clip_gradient": 0.5}),
    ("adam", {"multi_precision": True, "dtype": "float16"}), ("adam", {"scheduler": True}),
    ("adagrad", {}), ("adagrad", {"wd": 0.01, "clip_gradient": 0.2, "rescale_grad": 0.5}),
    ("adadelta", {}), ("adadelta", {"wd": 0.01, "clip_gradient": 0.2, "rescale_grad": 0.5}),
    ("rmsprop", {}), ("rmsprop", {"centered": True, "wd": 0.01}),
    ("rmsprop", {"clip_weights": 0.6, "clip_gradient": 0.2}),
    ("rmsprop", {"centered": True, "clip_weights": 0.6, "rescale_grad": 0.5}),
    ("ftrl", {}), ("ftrl", {"wd": 0.01, "clip_gradient": 0.2, "lamda1": 0.001}),
    ("ftml", {}), ("ftml", {"wd": 0.01, "clip_gradient": 0.2, "rescale_grad": 0.5}),
    ("adamax", {}), ("adamax", {"wd": 0.01, "clip_gradient": 0.2}),
    ("nadam", {}), ("nadam", {"wd": 0.01, "clip_gradient": 0.2}),
    ("dcasgd", {}), ("dcasgd", {"wd": 0.01, "lamda": 0.1, "clip_gradient": 0.2}),
    ("lamb", {}), ("lamb", {"wd": 0.01, "lower_bound": 0.1, "upper_bound": 2.0}),
    ("lamb", {"bias_correction": False, "clip_gradient": 0.2}),
    ("lamb", {"multi_precision": True, "dtype": "float16"}),
    ("lars", {"momentum": 0.9, "names": True, "wd": 0.01}), ("lars", {"eta": 0.01}),
    ("lars", {"momentum": 0.9, "multi_precision": True, "dtype": "float16"}),
    ("lbsgd", {"momentum": 0.9}),
    ("test", {}),
    ("lbsgd", {"momentum": 0.9, "batch_scale": 2, "warmup_epochs": 1, "updates_per_epoch": 4}),
    ("lbsgd", {"warmup_strategy": "lars", "batch_scale": 2, "wd": 0.01}),
    ("lbsgd", {"warmup_strategy": "sqrt", "batch_scale": 3, "warmup_epochs": 1,
               "updates_per_epoch": 3}),
    ("signum", {"multi_precision": True, "dtype": "float16"}),
    ("rmsprop", {"centered": True, "multi_precision": True, "dtype": "float16"}),
    ("adagrad", {"multi_precision": True, "dtype": "float16"}),
    ("ftml", {"multi_precision": True, "dtype": "float16"}),
    ("nadam", {"scheduler": True}),
    ("adam", {"names": True, "lr_mult": {"fc_bias": 2.0}, "wd": 0.1, "begin_num_update": 3}),
]


def _stream(seed, shape, dtype, scale=1.0):
    return (np.random.RandomState(seed).uniform(-1, 1, shape) * scale).astype(dtype)


def _flat(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _flat(s)]
    return [state.asnumpy()]


def _make(name, kw):
    kw = dict(kw)
    dtype = kw.pop("dtype", "float32")
    names = kw.pop("names", False)
    lr_mult, wd_mult = kw.pop("lr_mult", None), kw.pop("wd_mult", None)
    if kw.pop("scheduler", False):
        kw["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1,
                                                             warmup_steps=2,
                                                             warmup_begin_lr=0.01)
    if names:
        kw["param_idx2name"] = dict(NAMES)
    opt = mx.optimizer.create(name, **kw)
    if lr_mult:
        opt.set_lr_mult(lr_mult)
    if wd_mult:
        opt.set_wd_mult(wd_mult)
    return opt, dtype


def _weights(dtype):
    return [mx.nd.array(_stream(10 + i, s, "float32"), dtype=dtype) for i, s in enumerate(SHAPES)]


def _grad(i, step, dtype):
    return mx.nd.array(_stream(100 * step + i, SHAPES[i], "float32", 0.8), dtype=dtype)


def run_optimizer(name, kw, steps=STEPS, updater=None, weights=None, first=0):
    opt, dtype = _make(name, kw)
    updater = updater or mx.optimizer.get_updater(opt)
    weights = weights or _weights(dtype)
    out = {}
    for step in range(first, first + steps):
        for i, w in enumerate(weights):
            updater(i, _grad(i, step, dtype), w)
        for i, w in enumerate(weights):
            out["step%d_w%d" % (step, i)] = w.asnumpy()
            for k, a in enumerate(_flat(updater.states[i])):
                out["step%d_s%d_%d" % (step, i, k)] = a
    return out


def _nd(seed, shape=(2, 5), dtype="float32", scale=1.0, positive=False):
    a = _stream(seed, shape, "float32", scale)
    return mx.nd.array(np.abs(a) if positive else a, dtype=dtype)


def _fused_cases():
    """(name, function, inputs, params, out_is_weight): mx.nd.<op>(*inputs, out=?, **params)."""
    f16 = "float16"
    base = [
        ("sgd_update", [0, 1], {"lr": 0.1}), ("sgd_update", [0, 1], {"lr": 0.1, "wd": 0.1,
                                                                      "rescale_grad": 0.5,
                                                                      "clip_gradient": 0.3}),
        ("sgd_mom_update", [0, 1, 2], {"lr": 0.1, "momentum": 0.9}),
        ("sgd_mom_update", [0, 1, 2], {"lr": 0.1, "momentum": 0.9, "wd": 0.1,
                                       "clip_gradient": 0.3}),
        ("nag_mom_update", [0, 1, 2], {"lr": 0.1, "momentum": 0.9, "wd": 0.1}),
        ("nag_mom_update", [0, 1, 2], {"lr": 0.1, "momentum": 0.9, "clip_gradient": 0.2}),
        ("signsgd_update", [0, 1], {"lr": 0.1, "wd": 0.1}),
        ("signum_update", [0, 1, 2], {"lr": 0.1, "momentum": 0.9, "wd": 0.1, "wd_lh": 0.01}),
        ("signum_update", [0, 1, 2], {"lr": 0.1, "momentum": 0.9, "clip_gradient": 0.2}),
        ("adam_update", [0, 1, 2, "p3"], {"lr": 0.01}),
        ("adam_update", [0, 1, 2, "p3"], {"lr": 0.01, "wd": 0.1, "clip_gradient": 0.2,
                                          "rescale_grad": 2.0, "beta1": 0.8, "epsilon": 1e-3}),
        ("rmsprop_update", [0, 1, "p2"], {"lr": 0.01}),
        ("rmsprop_update", [0, 1, "p2"], {"lr": 0.01, "wd": 0.1, "clip_gradient": 0.2,
                                          "clip_weights": 0.5, "gamma1": 0.8}),
        ("rmspropalex_update", [0, 1, "p2", 3, "p4"], {"lr": 0.01}),
        ("rmspropalex_update", [0, 1, "p2", 3, "p4"], {"lr": 0.01, "wd": 0.1,
                                                       "clip_gradient": 0.2,
                                                       "clip_weights": 0.5}),
        ("ftrl_update", [0, 1, 2, "p3"], {"lr": 0.1}),
        ("ftrl_update", [0, 1, 2, "p3"], {"lr": 0.1, "wd": 0.1, "lamda1": 0.3, "beta": 0.5,
                                          "clip_gradient": 0.2}),
        ("ftml_update", [0, 1, "p2", "p3", 4], {"lr": 0.1, "t": 3}),
        ("ftml_update", [0, 1, "p2", "p3", 4], {"lr": 0.1, "t": 1, "wd": 0.1, "clip_grad": 0.2,
                                                "rescale_grad": 0.5}),
        ("lamb_update_phase1", [0, 1, 2, "p3"], {"t": 2, "wd": 0.1}),
        ("lamb_update_phase1", [0, 1, 2, "p3"], {"t": 1, "wd": 0.0, "bias_correction": False,
                                                 "clip_gradient": 0.2}),
    ]
    cases = []
    for name, spec, params in base:
        cases.append((name, spec, params, "float32"))
    mp = [
        ("mp_sgd_update", [0, 1, "w32"], {"lr": 0.1, "wd": 0.1}),
        ("mp_sgd_mom_update", [0, 1, "m32", "w32"], {"lr": 0.1, "momentum": 0.9, "wd": 0.1}),
        ("mp_nag_mom_update", [0, 1, "m32", "w32"], {"lr": 0.1, "momentum": 0.9, "wd": 0.1}),
        ("mp_lamb_update_phase1", [0, 1, "m32", "v32", "w32"], {"t": 2, "wd": 0.1}),
    ]
    for name, spec, params in mp:
        cases.append((name, spec, params, f16))
    return cases


def _inputs(spec, dtype):
    arrays = []
    for k, s in enumerate(spec):
        if s == "w32":
            arrays.append(_nd(20, dtype="float16").astype("float32"))
        elif s in ("m32", "v32"):
            arrays.append(_nd(30 + k, positive=s == "v32", scale=0.1))
        elif isinstance(s, str):
            arrays.append(_nd(40 + k, dtype=dtype, positive=True, scale=0.1))
        else:
            arrays.append(_nd(20 + s if s else 20, dtype=dtype, scale=0.5 if s else 1.0))
    return arrays


def run_fused():
    out = {}
    for n, (name, spec, params, dtype) in enumerate(_fused_cases()):
        arrays = _inputs(spec, dtype)
        fn = getattr(mx.nd, name)
        inplace = not name.startswith("lamb") and not name.startswith("mp_lamb")
        res = fn(*arrays, out=arrays[0], **params) if inplace else fn(*arrays, **params)
        out["fused%d_out" % n] = res.asnumpy()
        for k, a in enumerate(arrays):
            out["fused%d_in%d" % (n, k)] = a.asnumpy()
    # LAMB phase 2, multi ops, LARS
    w, g = _nd(20), _nd(21, scale=0.5)
    r1, r2 = mx.nd.array([1.5]), mx.nd.array([0.5])
    out["lamb2"] = mx.nd.lamb_update_phase2(w, g, r1, r2, lr=0.1).asnumpy()
    out["lamb2_bounds"] = mx.nd.lamb_update_phase2(w, g, r1, r2, lr=0.1, lower_bound=1.6,
                                                   upper_bound=3.0).asnumpy()
    w16, w32 = _nd(20, dtype="float16"), _nd(20, dtype="float16").astype("float32")
    out["mplamb2"] = mx.nd.mp_lamb_update_phase2(w16, g, r1, r2, w32, lr=0.1).asnumpy()
    out["mplamb2_w32"] = w32.asnumpy()
    def fresh():
        ws = [_nd(50 + i, shape=(3 + i,)) for i in range(3)]
        gs = [_nd(60 + i, shape=(3 + i,), scale=0.5) for i in range(3)]
        ms = [_nd(70 + i, shape=(3 + i,), scale=0.1) for i in range(3)]
        return ws, gs, ms

    ws, gs, ms = fresh()
    mx.nd.multi_sgd_mom_update(*[x for t in zip(ws, gs, ms) for x in t], out=ws,
                               lrs=(0.1, 0.2, 0.3), wds=(0.0, 0.1, 0.2), momentum=0.9,
                               num_weights=3, clip_gradient=0.3)
    for i in range(3):
        out["msgdm_out%d" % i] = ws[i].asnumpy()
        out["msgdm_mom%d" % i] = ms[i].asnumpy()
    ws, gs, ms = fresh()
    mx.nd.multi_sgd_update(*[x for t in zip(ws, gs) for x in t], out=ws, lrs=(0.1, 0.2, 0.3),
                           wds=(0.0, 0.1, 0.2), num_weights=3, rescale_grad=0.5)
    for i in range(3):
        out["msgd_out%d" % i] = ws[i].asnumpy()
    ws, gs, ms = fresh()
    out["sumsq"] = mx.nd.multi_sum_sq(*ws, num_arrays=3).asnumpy()
    lrs, wds = mx.nd.array([0.1, 0.2, 0.3]), mx.nd.array([0.0, 0.1, 0.2])
    out["lars"] = mx.nd.multi_lars(lrs, mx.nd.multi_sum_sq(*ws, num_arrays=3),
                                   mx.nd.multi_sum_sq(*gs, num_arrays=3), wds, eta=0.01,
                                   eps=1e-6, rescale_grad=0.5).asnumpy()
    mx.nd.preloaded_multi_sgd_mom_update(*[x for t in zip(ws, gs, ms) for x in t], lrs, wds,
                                         out=ws, momentum=0.9, num_weights=3)
    for i in range(3):
        out["pmsgdm_out%d" % i] = ws[i].asnumpy()
        out["pmsgdm_mom%d" % i] = ms[i].asnumpy()
    return out


def run_fused_extra():
    """AdamW and LAMB wrappers of nd.contrib, group AdaGrad, float16 kernels, NAG without out=."""
    out = {}
    ws = [_nd(80 + i, shape=(2, 3 + i)) for i in range(2)]
    gs = [_nd(82 + i, shape=(2, 3 + i), scale=0.5) for i in range(2)]
    ms = [_nd(84 + i, shape=(2, 3 + i), scale=0.1) for i in range(2)]
    vs = [_nd(86 + i, shape=(2, 3 + i), scale=0.1, positive=True) for i in range(2)]
    copies = lambda xs: [x.copy() for x in xs]  # noqa: E731
    for k, (rescale, kw) in enumerate([(1.0, {}), (0.5, {"wd": 0.1, "clip_gradient": 0.2}),
                                       (0.0, {}), (float("inf"), {})]):
        w, g, m, v = ws[0].copy(), gs[0].copy(), ms[0].copy(), vs[0].copy()
        res = mx.nd.contrib.adamw_update(w, g, m, v, rescale, lr=0.01, eta=0.5, out=w, **kw)
        for name, a in (("out", res), ("g", g), ("m", m), ("v", v)):
            out["adamw%d_%s" % (k, name)] = a.asnumpy()
        w16, w32 = ws[0].astype("float16"), ws[0].astype("float16").astype("float32")
        g16, m, v = gs[0].astype("float16"), ms[0].copy(), vs[0].copy()
        res = mx.nd.contrib.mp_adamw_update(w16, g16, m, v, w32, rescale, lr=0.01, eta=0.5,
                                            out=w16, **kw)
        for name, a in (("out", res), ("w32", w32), ("m", m), ("v", v)):
            out["mpadamw%d_%s" % (k, name)] = a.asnumpy()
    w, m, v = copies(ws), copies(ms), copies(vs)
    mx.nd.contrib.multi_adamw_update(w, gs, m, v, 0.5, lrs=(0.01, 0.02), wds=(0.0, 0.1),
                                     etas=(1.0, 0.5), out=w, clip_gradient=0.3)
    for i in range(2):
        out["madamw_w%d" % i], out["madamw_m%d" % i] = w[i].asnumpy(), m[i].asnumpy()
        out["madamw_v%d" % i] = v[i].asnumpy()
    w16 = [x.astype("float16") for x in ws]
    w32 = [x.astype("float32") for x in w16]
    m, v = copies(ms), copies(vs)
    mx.nd.contrib.multi_mp_adamw_update(w16, [x.astype("float16") for x in gs], m, v, w32, 1.0,
                                        lrs=(0.01, 0.02), wds=(0.0, 0.1), etas=(1.0, 0.5),
                                        out=w16)
    for i in range(2):
        out["mmpadamw_w%d" % i], out["mmpadamw_w32_%d" % i] = w16[i].asnumpy(), w32[i].asnumpy()
        out["mmpadamw_m%d" % i] = m[i].asnumpy()
    w, m, v = copies(ws), copies(ms), copies(vs)
    mx.nd.contrib.multi_lamb_update(w, gs, m, v, step_count=[1, 3], lrs=[0.01, 0.02],
                                    wds=[0.0, 0.1], out=w, lower_bound=0.5, upper_bound=3.0)
    for i in range(2):
        out["mlamb_w%d" % i], out["mlamb_m%d" % i] = w[i].asnumpy(), m[i].asnumpy()
        out["mlamb_v%d" % i] = v[i].asnumpy()
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, clip_gradient=0.3)
    u = mx.optimizer.get_updater(opt)
    w = ws[1].copy()
    for step in range(3):
        u(0, _nd(200 + step, shape=(2, 4)), w)
        out["groupadagrad_w%d" % step] = w.asnumpy()
        out["groupadagrad_h%d" % step] = u.states[0].asnumpy()
    for k, (name, n_in, kw) in enumerate([
            ("sgd_update", 2, {"lr": 0.1, "wd": 0.1}),
            ("sgd_mom_update", 3, {"lr": 0.1, "momentum": 0.9, "wd": 0.1}),
            ("adam_update", 4, {"lr": 0.01, "wd": 0.1}),
            ("multi_sgd_update", 2, {"lrs": (0.1,), "wds": (0.1,), "num_weights": 1})]):
        arrays = [x.astype("float16") for x in (ws[0], gs[0], ms[0], vs[0])[:n_in]]
        res = getattr(mx.nd, name)(*arrays, out=arrays[0], **kw)
        res = res[0] if isinstance(res, (list, tuple)) else res
        out["f16_%d_out" % k] = res.asnumpy()
        for j, a in enumerate(arrays[2:]):
            out["f16_%d_s%d" % (k, j)] = a.asnumpy()
    w, m = ws[0].copy(), ms[0].copy()
    res = mx.nd.nag_mom_update(w, gs[0], m, lr=0.1, momentum=0.9, wd=0.1)
    out["nag_noout"], out["nag_noout_m"], out["nag_noout_w"] = (res.asnumpy(), m.asnumpy(),
                                                                w.asnumpy())
    w16 = [x.astype("float16") for x in ws]
    w32 = [x.astype("float32") for x in w16]
    m = copies(ms)
    mx.nd.multi_mp_sgd_mom_update(*[x for t in zip(w16, [x.astype("float16") for x in gs], m,
                                                   w32) for x in t],
                                  out=w16, lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9,
                                  num_weights=2)
    for i in range(2):
        out["mmpsgdm_w%d" % i], out["mmpsgdm_w32_%d" % i] = w16[i].asnumpy(), w32[i].asnumpy()
        out["mmpsgdm_m%d" % i] = m[i].asnumpy()
    return out


def run_schedulers():
    out = {}
    counts = [0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 15, 20, 25, 30, 40]
    make = [
        lambda: mx.lr_scheduler.FactorScheduler(step=3, factor=0.5, base_lr=0.1),
        lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=0.1, stop_factor_lr=1e-4,
                                                base_lr=0.1, warmup_steps=4,
                                                warmup_begin_lr=0.01),
        lambda: mx.lr_scheduler.MultiFactorScheduler(step=[3, 9, 20], factor=0.5, base_lr=0.1),
        lambda: mx.lr_scheduler.MultiFactorScheduler(step=[5, 10], factor=0.3, base_lr=1.0,
                                                     warmup_steps=3, warmup_mode="constant",
                                                     warmup_begin_lr=0.1),
        lambda: mx.lr_scheduler.PolyScheduler(max_update=30, base_lr=0.1, pwr=2),
        lambda: mx.lr_scheduler.PolyScheduler(max_update=30, base_lr=0.1, pwr=1.5,
                                              final_lr=0.01, warmup_steps=5),
        lambda: mx.lr_scheduler.CosineScheduler(max_update=30, base_lr=0.1),
        lambda: mx.lr_scheduler.CosineScheduler(max_update=30, base_lr=0.1, final_lr=0.001,
                                                warmup_steps=5, warmup_begin_lr=0.02),
    ]
    for k, m in enumerate(make):
        s = m()
        out["sched%d" % k] = np.array([s(c) for c in counts], dtype=np.float64)
    return out


STATE_CASES = [6, 17, 24, 29, 33, 40]  # indices into OPTIMIZERS


def run_states():
    """get_states after 3 steps (with and without the optimizer)."""
    out = {}
    for k, case in enumerate(STATE_CASES):
        opt, dtype = _make(*OPTIMIZERS[case])
        u = mx.optimizer.get_updater(opt)
        weights = _weights(dtype)
        for step in range(3):
            for i, w in enumerate(weights):
                u(i, _grad(i, step, dtype), w)
        for dump in (True, False):
            blob = u.get_states(dump_optimizer=dump)
            out["states%d_%d" % (k, dump)] = np.frombuffer(blob, dtype=np.uint8)
        for i, w in enumerate(weights):
            out["states%d_w%d" % (k, i)] = w.asnumpy()
    return out


def run():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {}
        for k, (name, kw) in enumerate(OPTIMIZERS):
            for key, v in run_optimizer(name, kw).items():
                out["opt%d_%s" % (k, key)] = v
        out.update(run_fused())
        out.update({"x_" + k: v for k, v in run_fused_extra().items()})
        out.update(run_schedulers())
        out.update(run_states())
    return out
