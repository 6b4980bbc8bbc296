"""Python custom operators WITH a backward, written against MXNet 1.x's ``mx.operator`` API.
gen_custom_grad.py runs ``run()`` in MXNet 1.9.1 and records what it returns;
tests/autograd/test_custom_op_backward.py runs the same text with ``import gluonport as mx``.

- ``sigmoid_np``: y = sigmoid(x); backward reads out_data (need_top_grad=True).
- ``softmax_loss_np``: a loss (need_top_grad=False) over (data, label); backward writes
  softmax - onehot(label) into in_grad[0], and declares only label and output as dependencies.
- ``scale_train``: y = x * 2 in training mode, x otherwise, keeps the factor on ``self`` in
  forward and reads it in backward (the same CustomOp object serves both).
"""
import mxnet as mx
import numpy as np


@mx.operator.register("sigmoid_np")
class SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Sigmoid()


class Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], mx.nd.array(1.0 / (1.0 + np.exp(-x))))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        self.assign(in_grad[0], req[0], mx.nd.array(out_grad[0].asnumpy() * y * (1.0 - y)))


@mx.operator.register("softmax_loss_np")
class SoftmaxLossProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1.0"):
        super().__init__(need_top_grad=False)
        self.scale = float(scale)

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return [in_shape[0], [in_shape[0][0]]], [in_shape[0]], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [in_data[1], out_data[0]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return SoftmaxLoss(self.scale)


class SoftmaxLoss(mx.operator.CustomOp):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        e = np.exp(x - x.max(axis=1, keepdims=True))
        self.assign(out_data[0], req[0], mx.nd.array(e / e.sum(axis=1, keepdims=True)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().astype("int64")
        y = out_data[0].asnumpy().copy()
        y[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y * self.scale))
        self.assign(in_grad[1], req[1], mx.nd.zeros(label.shape))


@mx.operator.register("scale_train")
class ScaleTrainProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return ScaleTrain()


class ScaleTrain(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.factor = 2.0 if is_train else 1.0
        self.assign(out_data[0], req[0], in_data[0] * self.factor)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)


def data():
    rs = np.random.RandomState(5)
    x = rs.uniform(-2, 2, (4, 3)).astype("float32")
    w = rs.uniform(-1, 1, (5, 3)).astype("float32")
    head = rs.uniform(-1, 1, (4, 3)).astype("float32")
    label = np.array([0, 4, 2, 1], dtype="float32")
    return x, w, head, label


def run():
    out = {}
    x, w, head, label = data()

    # 1. imperative: custom sigmoid with a head gradient, chained with a built-in op
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(xa * 3.0, op_type="sigmoid_np")
        z = mx.nd.Custom(y, op_type="scale_train")
    z.backward(mx.nd.array(head))
    out["nd_sigmoid_out"] = z.asnumpy()
    out["nd_sigmoid_grad"] = xa.grad.asnumpy()

    # 2. imperative: FullyConnected -> custom softmax loss (need_top_grad=False)
    xa = mx.nd.array(x)
    wa = mx.nd.array(w)
    xa.attach_grad()
    wa.attach_grad()
    with mx.autograd.record():
        fc = mx.nd.FullyConnected(xa, wa, no_bias=True, num_hidden=5)
        prob = mx.nd.Custom(fc, mx.nd.array(label), op_type="softmax_loss_np", scale=0.5)
    prob.backward()
    out["nd_loss_prob"] = prob.asnumpy()
    out["nd_loss_grad_x"] = xa.grad.asnumpy()
    out["nd_loss_grad_w"] = wa.grad.asnumpy()

    # 3. predict mode: scale_train sees is_train=False
    with mx.autograd.record(train_mode=False):
        out["nd_predict_mode"] = mx.nd.Custom(mx.nd.array(x), op_type="scale_train").asnumpy()

    # 4. a symbol through the executor: forward(is_train=True), backward()
    data_v = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data_v, num_hidden=5, name="fc")
    net = mx.sym.Custom(net, op_type="sigmoid_np", name="sig")
    net = mx.sym.Custom(net, mx.sym.Variable("label"), op_type="softmax_loss_np", name="loss")
    exe = net.simple_bind(mx.cpu(), data=(4, 3), label=(4,))
    exe.arg_dict["data"][:] = x
    exe.arg_dict["fc_weight"][:] = w
    exe.arg_dict["fc_bias"][:] = np.linspace(-0.5, 0.5, 5)
    exe.arg_dict["label"][:] = label
    exe.forward(is_train=True)
    exe.backward()
    out["exec_output"] = exe.outputs[0].asnumpy()
    for name in ("data", "fc_weight", "fc_bias"):
        out["exec_grad_" + name] = exe.grad_dict[name].asnumpy()
    return out
