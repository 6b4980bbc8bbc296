"""Golden files for Python custom operators, made with the real MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/custom_op/gen_custom_op.py

Writes ``custom-symbol.json`` / ``custom-0000.params`` (save_checkpoint of custom_ops.py's
build_symbol, with the auxiliary state), ``net-symbol.json`` / ``net-0000.params`` (Gluon export
of custom_ops.Net), ``net.params`` (its save_parameters) and ``golden.npz`` (inputs, MXNet's outputs, the imperative nd.Custom
outputs).
"""
import os
import sys

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import custom_ops  # noqa: E402


def main():
    rng = np.random.RandomState(7)
    gold = {}
    sym = custom_ops.build_symbol()
    shape = (2, 3, 5, 4)
    arg_shapes, _, aux_shapes = sym.infer_shape(data=shape)
    args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in
            zip(sym.list_arguments(), arg_shapes) if n != "data"}
    auxs = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in
            zip(sym.list_auxiliary_states(), aux_shapes)}
    mx.model.save_checkpoint(os.path.join(HERE, "custom"), 0, sym, args, auxs)
    x = rng.uniform(-1, 1, shape).astype("float32")
    exe = sym.bind(mx.cpu(), args={"data": mx.nd.array(x), **args}, aux_states=auxs)
    outs = exe.forward(is_train=False)
    gold["custom_data"] = x
    for name, o in zip(sym.list_outputs(), outs):
        gold["custom_" + name] = o.asnumpy()
    gold["list_outputs"] = np.array(sym.list_outputs())
    gold["list_arguments"] = np.array(sym.list_arguments())
    gold["list_auxiliary_states"] = np.array(sym.list_auxiliary_states())

    # imperative: nd.Custom on the input itself (3 channels)
    gamma, offset = rng.uniform(0.5, 1.5, 3), rng.uniform(-0.5, 0.5, 3)
    o, norm = mx.nd.Custom(mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(offset),
                           op_type="l2norm_scale", eps=1e-6)
    gold["nd_gamma"], gold["nd_offset"] = gamma.astype("float32"), offset.astype("float32")
    gold["nd_output"], gold["nd_norm"] = o.asnumpy(), norm.asnumpy()

    mx.random.seed(3)
    net = custom_ops.Net()
    net.initialize(mx.init.Xavier())
    xn = mx.nd.array(rng.uniform(-1, 1, (2, 3, 6, 6)))
    gold["net_imperative"] = net(xn).asnumpy()
    net.hybridize()
    gold["net_hybridized"] = net(xn).asnumpy()
    gold["net_data"] = xn.asnumpy()
    net.export(os.path.join(HERE, "net"), 0)
    net.save_parameters(os.path.join(HERE, "net.params"))
    np.savez(os.path.join(HERE, "golden.npz"), **gold)
    print({k: v.shape for k, v in gold.items()})


if __name__ == "__main__":
    main()
