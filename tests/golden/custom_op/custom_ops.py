"""Python custom operators written against MXNet 1.x's ``mx.operator`` API, the way research
code of that era wrote them. gen_custom_op.py imports this file in MXNet 1.9.1;
tests/gluon/test_custom_op.py runs the same text with its first import changed to
``import gluonport as mx`` (the porting story: nothing else changes)."""
import mxnet as mx
import numpy as np


@mx.operator.register("l2norm_scale")
class L2NormScaleProp(mx.operator.CustomOpProp):
    """Channel L2 normalisation with a learned per-channel scale (SSD's conv4_3 norm) minus a
    per-channel offset kept as an auxiliary state; also returns the norms."""

    def __init__(self, eps="1e-10", keep_norm="True"):
        super(L2NormScaleProp, self).__init__(need_top_grad=True)
        self.eps = float(eps)
        self.keep_norm = keep_norm in ("True", "1", "true")

    def list_arguments(self):
        return ["data", "gamma"]

    def list_outputs(self):
        return ["output", "norm"]

    def list_auxiliary_states(self):
        return ["offset"]

    def infer_shape(self, in_shape):
        data = in_shape[0]
        channels = [data[1]]
        return [data, channels], [data, [data[0], 1] + list(data[2:])], [channels]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return L2NormScale(self.eps)


class L2NormScale(mx.operator.CustomOp):
    def __init__(self, eps):
        super(L2NormScale, self).__init__()
        self.eps = eps

    def forward(self, is_train, req, in_data, out_data, aux):
        x, gamma = in_data
        norm = mx.nd.sqrt(mx.nd.sum(x * x, axis=1, keepdims=True) + self.eps)
        y = mx.nd.broadcast_div(x, norm)
        y = mx.nd.broadcast_mul(y, gamma.reshape((1, -1, 1, 1)))
        y = mx.nd.broadcast_sub(y, aux[0].reshape((1, -1, 1, 1)))
        self.assign(out_data[0], req[0], y)
        self.assign(out_data[1], req[1], norm)


@mx.operator.register("softsign_np")
class SoftsignProp(mx.operator.CustomOpProp):
    """Everything default (one input 'data', one output of its shape); the compute in numpy."""

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Softsign()


class Softsign(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], mx.nd.array(x / (1.0 + np.abs(x))))


def build_symbol():
    data = mx.sym.Variable("data")
    x = mx.sym.Convolution(data, num_filter=6, kernel=(3, 3), pad=(1, 1), name="conv0")
    normed = mx.sym.Custom(x, op_type="l2norm_scale", eps=1e-6, name="norm0")
    y = mx.sym.Custom(normed[0], op_type="softsign_np", name="soft0")
    y = mx.sym.FullyConnected(y, num_hidden=5, name="fc0")
    return mx.sym.Group([y, normed[1]])


class Net(mx.gluon.HybridBlock):
    """The same ops from Gluon code: F.Custom inside hybrid_forward."""

    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)
        with self.name_scope():
            self.conv = mx.gluon.nn.Conv2D(4, kernel_size=3, padding=1)
            self.dense = mx.gluon.nn.Dense(3)

    def hybrid_forward(self, F, x):
        x = F.Custom(self.conv(x), op_type="softsign_np")
        return self.dense(x)
