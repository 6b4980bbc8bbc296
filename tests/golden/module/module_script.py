"""A legacy inference script in MXNet 1.x's Module API, the way InsightFace's face_model.py and
MXNet's "predict with a pretrained model" tutorial wrote them. gen_module.py runs it in MXNet
1.9.1 and records what it returns; tests/test_module_api.py runs the same text with only the
import changed to ``import gluonport as mx``."""
import mxnet as mx
import numpy as np


def run(golden_dir):
    out = {}
    # 1. an embedding net cut at an internal output, label_names=None (InsightFace's way)
    prefix = golden_dir + "/insightface/arcface_mbf"
    x = np.load(prefix + "-input.npy")
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 0)
    sym = sym.get_internals()["fc1_output"]
    mod = mx.mod.Module(symbol=sym, context=mx.cpu(), label_names=None)
    mod.bind(data_shapes=[("data", (2, 3, 112, 112))])
    mod.set_params(arg_params, aux_params)
    mod.forward(mx.io.DataBatch(data=(mx.nd.array(x),)), is_train=False)
    out["embedding"] = mod.get_outputs()[0].asnumpy()
    out["output_shapes"] = repr(mod.output_shapes)
    mod.forward(mx.io.DataBatch([mx.nd.array(x[:1])]), is_train=False)  # new batch size
    out["embedding_b1"] = mod.get_outputs()[0].asnumpy()
    out["data_shapes_after"] = [list(d.shape) for d in mod.data_shapes]
    arg, aux = mod.get_params()
    out["param_names"] = [sorted(arg), sorted(aux)]

    # 2. a Module-API classifier ending in SoftmaxOutput, default label_names, predict()
    prefix = golden_dir + "/gluon/legacy_softmax"
    mod = mx.mod.Module.load(prefix, 0)
    mod.bind(data_shapes=[("data", (2, 4))], for_training=False)
    rows = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
    it = mx.io.NDArrayIter(rows, batch_size=2)
    out["predict_pad"] = mod.predict(it).asnumpy()
    out["predict_nd"] = mod.predict(mx.nd.array(rows[:2])).asnumpy()
    out["output_names"] = mod.output_names
    out["label_names"] = mod.label_names

    # 3. NDArrayIter's batches: indices and pads for each last_batch_handle over two passes
    seen = {}
    for handle in ("pad", "discard", "roll_over"):
        it = mx.io.NDArrayIter(np.arange(7, dtype=np.float32).reshape(7, 1), batch_size=3,
                               last_batch_handle=handle)
        passes = []
        for _ in range(2):
            passes.append([(b.data[0].asnumpy().ravel().tolist(), b.pad) for b in it])
            it.reset()
        seen[handle] = passes
    out["iter"] = seen
    out["provide_data"] = [(d.name, list(d.shape)) for d in it.provide_data]
    return out
