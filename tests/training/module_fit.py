"""MXNet 1.x user code: the legacy Module API. A symbol MLP (FullyConnected, relu,
FullyConnected, SoftmaxOutput) bound in a Module and fit for one epoch on an NDArrayIter
(40 samples, batch 8, not shuffled) with eval_metric 'acc' and SGD with momentum. Returns the
metric after every batch (batch_end_callback), the parameters after the epoch
(epoch_end_callback and get_params) and the score and predictions after training."""
import os

import mxnet as mx
import numpy as np

BATCH, SAMPLES, FEATURES = 8, 40, 10
INIT = "module_fit_init.params"


def symbol():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=4, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def data():
    rs = np.random.RandomState(17)
    x = rs.uniform(-1, 1, (SAMPLES, FEATURES)).astype("float32")
    y = (x[:, :4].argmax(axis=1)).astype("float32")  # learnable: the largest of 4 features
    return x, y


def init(folder):
    mx.random.seed(7)
    mod = mx.mod.Module(symbol(), data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", (BATCH, FEATURES))],
             label_shapes=[("softmax_label", (BATCH,))])
    mod.init_params(mx.init.Xavier())
    mod.save_params(os.path.join(folder, INIT))


def run(folder):
    saved = mx.nd.load(os.path.join(folder, INIT))
    arg_params = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
    aux_params = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
    x, y = data()
    train_iter = mx.io.NDArrayIter(x, y, batch_size=BATCH, shuffle=False,
                                   label_name="softmax_label")
    out = {}

    def batch_end(param):
        name, value = param.eval_metric.get()
        out[f"batch{param.nbatch}:{name}"] = np.array(value, dtype="float64")

    def epoch_end(epoch, sym, args, auxs):
        for k, v in args.items():
            out[f"epoch{epoch}:arg:{k}"] = v.asnumpy()

    mod = mx.mod.Module(symbol(), data_names=["data"], label_names=["softmax_label"])
    mod.fit(train_iter, eval_metric="acc", optimizer="sgd",
            optimizer_params={"learning_rate": 0.5, "momentum": 0.9, "wd": 1e-4},
            arg_params=arg_params, aux_params=aux_params, num_epoch=1,
            batch_end_callback=batch_end, epoch_end_callback=epoch_end)
    args, _ = mod.get_params()
    for k, v in args.items():
        out[f"final:{k}"] = v.asnumpy()
    train_iter.reset()
    for name, value in mod.score(train_iter, "acc"):
        out[f"score:{name}"] = np.array(value, dtype="float64")
    train_iter.reset()
    out["predict"] = mod.predict(train_iter).asnumpy()
    return out
