"""MXNet 1.x user code: training with the legacy Module API. gen_module_train.py runs it in
MXNet 1.9.1 and records what it returns; tests/training/test_module_fit.py runs the same text
with only the import changed to ``import gluonport as mx``.

1. ``fit``: a symbolic MLP (FullyConnected, relu, FullyConnected, SoftmaxOutput) for 2 epochs
   on an NDArrayIter (40 samples, batch 8, not shuffled), SGD with momentum and wd, from saved
   initial parameters, with an eval_data iterator, Speedometer / log_train_metric /
   do_checkpoint callbacks; records the parameters after each epoch, the metric after every
   batch, the log lines (times and speeds masked), the checkpoint files, score and predict.
2. step by step: an MLP with BatchNorm bound with ``inputs_need_grad``; forward_backward +
   update for 3 batches, recording outputs, input gradients, arg and aux parameters (the moving
   statistics) after each step; save_checkpoint with optimizer states, Module.load with them,
   one more step on both.
3. a head without a loss (plain FullyConnected): backward(out_grads) and get_input_grads.
4. other loss heads through fit: LinearRegressionOutput (grad_scale) with Adam and 'mse',
   SoftmaxOutput with normalization='valid' and ignore_label.
"""
import logging
import os
import re

import mxnet as mx
import numpy as np

BATCH, SAMPLES, FEATURES, CLASSES = 8, 40, 10, 4
INIT = "module_train_init.params"
INIT_BN = "module_train_bn_init.params"


def mlp():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=CLASSES, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def mlp_bn():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=12, name="fc1")
    net = mx.sym.BatchNorm(net, fix_gamma=False, momentum=0.8, name="bn1")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh1")
    net = mx.sym.FullyConnected(net, num_hidden=CLASSES, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def data(seed=17):
    rs = np.random.RandomState(seed)
    x = rs.uniform(-1, 1, (SAMPLES, FEATURES)).astype("float32")
    y = (x[:, :CLASSES].argmax(axis=1)).astype("float32")
    return x, y


def init(folder):
    """Save seeded initial parameters (run once, in MXNet)."""
    mx.random.seed(7)
    for make, name in ((mlp, INIT), (mlp_bn, INIT_BN)):
        mod = mx.mod.Module(make())
        mod.bind(data_shapes=[("data", (BATCH, FEATURES))],
                 label_shapes=[("softmax_label", (BATCH,))])
        mod.init_params(mx.init.Xavier(magnitude=2.0))
        mod.save_params(os.path.join(folder, name))


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        msg = record.getMessage()
        msg = re.sub(r"Time cost=[0-9.]+", "Time cost=T", msg)
        msg = re.sub(r"Speed: [0-9.]+", "Speed: S", msg)
        msg = re.sub(r'"[^"]*[/\\\\]', '"', msg)  # file paths: the base name only
        self.lines.append(msg)


def _load(folder, name):
    saved = mx.nd.load(os.path.join(folder, name))
    return ({k[4:]: v for k, v in saved.items() if k.startswith("arg:")},
            {k[4:]: v for k, v in saved.items() if k.startswith("aux:")})


def fit(folder, work):
    out = {}
    arg_params, aux_params = _load(folder, INIT)
    x, y = data()
    vx, vy = data(23)
    train = mx.io.NDArrayIter(x, y, batch_size=BATCH, shuffle=False, label_name="softmax_label")
    val = mx.io.NDArrayIter(vx[:20], vy[:20], batch_size=BATCH, label_name="softmax_label")

    def batch_end(param):
        for name, value in param.eval_metric.get_name_value():
            out[f"fit:epoch{param.epoch}:batch{param.nbatch}:{name}"] = np.array(value)

    def epoch_end(epoch, sym, args, auxs):
        for k, v in args.items():
            out[f"fit:epoch{epoch}:arg:{k}"] = v.asnumpy()
        out[f"fit:epoch{epoch}:outputs"] = np.array(sym.list_outputs())

    prefix = os.path.join(work, "mlp")
    root = logging.getLogger()
    lines = _Lines()
    old_level = root.level
    root.setLevel(logging.INFO)
    root.addHandler(lines)
    try:
        mod = mx.mod.Module(mlp(), data_names=["data"], label_names=["softmax_label"])
        mod.fit(train, eval_data=val, eval_metric="acc", validation_metric=["acc", "ce"],
                optimizer="sgd",
                optimizer_params={"learning_rate": 0.3, "momentum": 0.9, "wd": 1e-3},
                arg_params=arg_params, aux_params=aux_params, num_epoch=2,
                batch_end_callback=[batch_end, mx.callback.Speedometer(BATCH, 2),
                                    mx.callback.log_train_metric(3)],
                epoch_end_callback=[epoch_end, mx.callback.do_checkpoint(prefix)])
    finally:
        root.removeHandler(lines)
        root.setLevel(old_level)
    out["fit:log"] = np.array(lines.lines)
    args, auxs = mod.get_params()
    for k, v in args.items():
        out[f"fit:final:{k}"] = v.asnumpy()
    sym, ck_args, _ = mx.model.load_checkpoint(prefix, 2)
    for k, v in ck_args.items():
        out[f"fit:checkpoint2:{k}"] = v.asnumpy()
    out["fit:checkpoint_files"] = np.array(sorted(os.listdir(work)))
    for name, value in mod.score(val, ["acc", mx.metric.CrossEntropy()]):
        out[f"fit:score:{name}"] = np.array(value)
    out["fit:predict"] = mod.predict(val).asnumpy()
    return out


def steps(folder, work):
    out = {}
    arg_params, aux_params = _load(folder, INIT_BN)
    x, y = data()
    it = mx.io.NDArrayIter(x, y, batch_size=BATCH, label_name="softmax_label")
    mod = mx.mod.Module(mlp_bn())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, inputs_need_grad=True)
    mod.init_params(arg_params=arg_params, aux_params=aux_params)
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", 0.2),
                                                          ("momentum", 0.9), ("wd", 1e-3)))
    metric = mx.metric.create("acc")
    batches = list(it)
    for k, batch in enumerate(batches[:3]):
        mod.forward_backward(batch)
        out[f"steps:{k}:output"] = mod.get_outputs()[0].asnumpy()
        out[f"steps:{k}:input_grad"] = mod.get_input_grads()[0].asnumpy()
        mod.update()
        mod.update_metric(metric, batch.label)
        args, auxs = mod.get_params()
        for name, v in list(args.items()) + list(auxs.items()):
            out[f"steps:{k}:{name}"] = v.asnumpy()
    out["steps:acc"] = np.array(metric.get()[1])
    prefix = os.path.join(work, "bn")
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    loaded = mx.mod.Module.load(prefix, 3, load_optimizer_states=True)
    loaded.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    loaded.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", 0.2),
                                                             ("momentum", 0.9), ("wd", 1e-3)))
    for who, m in (("orig", mod), ("loaded", loaded)):
        m.forward(batches[3], is_train=True)
        m.backward()
        m.update()
        args, auxs = m.get_params()
        for name, v in list(args.items()) + list(auxs.items()):
            out[f"steps:{who}:{name}"] = v.asnumpy()
    # predict mode leaves the moving statistics alone
    mod.forward(batches[4], is_train=False)
    out["steps:eval_output"] = mod.get_outputs()[0].asnumpy()
    out["steps:eval_bn1_moving_mean"] = mod.get_params()[1]["bn1_moving_mean"].asnumpy()
    return out


def no_loss_head():
    out = {}
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (2, 5))], inputs_need_grad=True)
    mod.init_params(mx.init.Constant(0.25))
    x = mx.nd.array(np.arange(10, dtype="float32").reshape(2, 5) / 10)
    mod.forward(mx.io.DataBatch([x]), is_train=True)
    mod.backward(out_grads=[mx.nd.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])])
    out["nohead:input_grad"] = mod.get_input_grads()[0].asnumpy()
    out["nohead:output"] = mod.get_outputs()[0].asnumpy()
    out["nohead:output_names"] = np.array(mod.output_names)
    return out


def heads(folder):
    """Other loss heads through Module.fit: LinearRegressionOutput (grad_scale) with Adam and
    'mse'; SoftmaxOutput with normalization='valid' and an ignored label with 'acc'."""
    out = {}
    x, y = data()
    arg_params, _ = _load(folder, INIT)
    fc1 = {k: v for k, v in arg_params.items() if k.startswith("fc1")}
    target = np.stack([x[:, 0] - x[:, 1], x[:, 2] * 0.5], axis=1).astype("float32")
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="tanh", name="tanh1")
    net = mx.sym.FullyConnected(net, num_hidden=2, name="reg")
    net = mx.sym.LinearRegressionOutput(net, grad_scale=0.5, name="lro")
    it = mx.io.NDArrayIter(x, target, batch_size=BATCH, label_name="lro_label")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    mx.random.seed(3)
    mod.fit(it, eval_metric="mse", optimizer="adam",
            optimizer_params={"learning_rate": 0.01, "wd": 1e-4},
            arg_params=fc1, allow_missing=True, initializer=mx.init.Constant(0.05),
            num_epoch=1)
    for k, v in mod.get_params()[0].items():
        out["heads:lro:" + k] = v.asnumpy()
    for name, value in mod.score(it, "mse"):
        out["heads:lro:score:" + name] = np.array(value)

    net = mx.sym.SoftmaxOutput(mlp().get_internals()["fc2_output"], normalization="valid",
                               use_ignore=True, ignore_label=0, name="softmax")
    it = mx.io.NDArrayIter(x, y, batch_size=BATCH, label_name="softmax_label")
    mod = mx.mod.Module(net)
    mod.fit(it, eval_metric="acc", optimizer="sgd",
            optimizer_params={"learning_rate": 0.3, "momentum": 0.5},
            arg_params=arg_params, num_epoch=1)
    for k, v in mod.get_params()[0].items():
        out["heads:valid:" + k] = v.asnumpy()
    return out


def run(folder, work):
    """``folder`` holds the initial parameters, ``work`` is an empty scratch folder."""
    out = {}
    out.update(fit(folder, os.path.join(work, "fit")))
    out.update(steps(folder, os.path.join(work, "steps")))
    out.update(no_loss_head())
    out.update(heads(folder))
    return out
