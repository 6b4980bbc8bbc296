"""An MXNet 1.x evaluation script: mx.metric over a table of cases, and Module.score.

Written for MXNet (``import mxnet as mx``). gen_metric.py runs it in MXNet 1.9.1 and stores what
``run()`` returns; tests/test_metric.py execs it with only that import changed and compares.
Each case builds a metric and runs steps on it: ``u`` update(labels, preds) (lists of arrays, or
a bare array), ``ud`` update_dict, ``g``/``gg`` get/get_global, ``nv``/``gnv`` their name-value
lists, ``rl``/``r`` reset_local/reset, ``s`` str(metric), ``c`` get_config(), ``n`` num_inst.
A step (or the construction) that raises records the exception's class and its bases.
Inputs come from numpy's legacy RandomState, whose streams do not change between versions.
"""
import json
import os

import numpy as np

import mxnet as mx

RS = np.random.RandomState(20240601)


def probs(n, c):
    x = RS.rand(n, c).astype(np.float32) + 0.05
    return (x / x.sum(axis=1, keepdims=True)).astype(np.float32)


def classes(n, c):
    return RS.randint(0, c, size=n).astype(np.float32)


def values(*shape):
    return RS.randn(*shape).astype(np.float32)


def binary_batch(n):
    return [classes(n, 2)], [probs(n, 2)]


def cls_batch(n, c):
    return [classes(n, c)], [probs(n, c)]


def mae_fn(label, pred):
    return np.abs(label - pred.reshape(label.shape)).mean()


def sum_and_count(label, pred):
    return float(np.abs(label - pred.reshape(label.shape)).sum()), label.size


def mean_true_prob(label, pred):
    return float(pred[np.arange(label.shape[0]), label.astype(np.int64)].mean())


def upd(batch):
    return ("u",) + tuple(batch)


READS = [("g",), ("gg",), ("nv",), ("gnv",)]
LOCAL = [("rl",), ("g",), ("gg",)]


def accuracy_cases():
    b = [cls_batch(8, 3) for _ in range(3)]
    pred4 = probs(24, 5).reshape(2, 3, 4, 5).transpose(0, 3, 1, 2).copy()
    return [
        ("acc_basic", lambda: mx.metric.create("acc"), [upd(x) for x in b] + READS + [("s",)]),
        ("acc_reset_local", lambda: mx.metric.Accuracy(),
         [upd(b[0]), upd(b[1])] + LOCAL + [upd(b[2])] + READS + [("r",), ("g",), ("gg",)]),
        ("acc_label_column", lambda: mx.metric.Accuracy(),
         [("u", [classes(8, 4).reshape(8, 1)], [probs(8, 4)]), ("g",), ("n",)]),
        ("acc_class_axis_squeezed", lambda: mx.metric.Accuracy(),
         [("u", [classes(24, 5).reshape(2, 3, 4)], [pred4]), ("g",), ("n",)]),
        ("acc_axis_last", lambda: mx.metric.Accuracy(axis=-1),
         [("u", [classes(12, 3).reshape(4, 3)], [probs(12, 3).reshape(4, 3, 3)]), ("g",)]),
        ("acc_class_index_preds", lambda: mx.metric.Accuracy(),
         [("u", [np.array([0, 1, 2, 2, 1], np.float32)],
           [np.array([0, 1.7, 2.2, 0.9, 1], np.float32)]), ("g",)]),
        ("acc_two_outputs", lambda: mx.metric.Accuracy(),
         [("u", b[0][0] + b[1][0], b[0][1] + b[2][1]), ("g",), ("n",), ("c",)]),
        ("acc_count_mismatch", lambda: mx.metric.Accuracy(),
         [("u", b[0][0], b[0][1] + b[1][1]), ("g",)]),
        ("acc_size_mismatch", lambda: mx.metric.Accuracy(),
         [("u", [classes(6, 3)], [probs(8, 3)]), ("g",)]),
        ("acc_bare_arrays", lambda: mx.metric.Accuracy(),
         [("u", classes(6, 3), probs(6, 3)), ("g",)]),
        ("acc_bare_label_list_pred", lambda: mx.metric.Accuracy(),
         [("u", classes(6, 3), [probs(6, 3)]), ("g",)]),
        ("acc_empty", lambda: mx.metric.Accuracy(), READS + [("s",)]),
        ("acc_update_dict", lambda: mx.metric.Accuracy(output_names=["b_output"],
                                                       label_names=["lab"]),
         [("ud", {"lab": b[0][0][0], "other": b[1][0][0]},
           {"a_output": b[1][1][0], "b_output": b[0][1][0]}), ("g",)]),
    ]


def topk_cases():
    b = [cls_batch(10, 10) for _ in range(2)]
    return [
        ("topk_3", lambda: mx.metric.TopKAccuracy(top_k=3),
         [upd(b[0]), upd(b[1])] + READS + LOCAL + [("c",)]),
        ("topk_create_alias", lambda: mx.metric.create("top_k_accuracy", top_k=2),
         [upd(b[0]), ("g",)]),
        ("topk_create_acc_alias", lambda: mx.metric.create("top_k_acc", top_k=5),
         [upd(b[1]), ("g",)]),
        ("topk_1_refused", lambda: mx.metric.create("top_k_accuracy"), [("g",)]),
        ("topk_1d_preds", lambda: mx.metric.TopKAccuracy(top_k=2),
         [("u", [np.array([3, 1, 4, 1, 5, 2], np.float32)], [values(6)]), ("g",), ("gg",)]),
        ("topk_3d_refused", lambda: mx.metric.TopKAccuracy(top_k=2),
         [("u", [classes(4, 3)], [probs(12, 3).reshape(4, 3, 3)]), ("g",)]),
        ("topk_k_above_classes", lambda: mx.metric.TopKAccuracy(top_k=5),
         [("u", [classes(4, 3)], [probs(4, 3)]), ("g",)]),
    ]


def binary_cases():
    b = [binary_batch(12) for _ in range(4)]
    negative = ([np.zeros(5, np.float32)], [np.tile(np.array([[0.9, 0.1]], np.float32), (5, 1))])
    out = []
    for cls, name in ((mx.metric.F1, "f1"), (mx.metric.MCC, "mcc")):
        for avg in ("macro", "micro"):
            steps = [upd(b[0]), upd(b[1]), ("u", b[2][0] + b[3][0], b[2][1] + b[3][1])]
            steps += READS + LOCAL + [upd(b[3])] + READS + [("r",), ("g",)]
            out.append(("%s_%s" % (name, avg),
                        (lambda c=cls, a=avg: c(average=a)), steps))
        out.append(("%s_all_negative" % name, cls, [upd(negative), ("g",)]))
        out.append(("%s_not_binary" % name, cls, [("u", [classes(9, 3)], [probs(9, 3)]),
                                                   ("g",)]))
    return out


def perplexity_cases():
    lab = classes(10, 4)
    lab[[1, 5]] = -1
    zero = np.array([[0.0, 1.0], [0.5, 0.5]], np.float32)
    return [
        ("perp_none", lambda: mx.metric.Perplexity(ignore_label=None),
         [upd(cls_batch(8, 5)), upd(cls_batch(8, 5))] + READS + LOCAL),
        ("perp_ignore_minus1", lambda: mx.metric.Perplexity(ignore_label=-1),
         [("u", [lab], [probs(10, 4)]), ("g",), ("n",)]),
        ("perp_ignore_0", lambda: mx.metric.Perplexity(0), [upd(cls_batch(9, 3)), ("g",)]),
        ("perp_axis_1", lambda: mx.metric.create("perplexity", None, axis=1),
         [upd(cls_batch(6, 3)), ("g",), ("c",)]),
        ("perp_label_column", lambda: mx.metric.Perplexity(None),
         [("u", [classes(6, 3).reshape(6, 1)], [probs(6, 3)]), ("g",)]),
        ("perp_zero_prob", lambda: mx.metric.Perplexity(None),
         [("u", [np.array([0, 1], np.float32)], [zero]), ("g",)]),
        ("perp_clips_labels", lambda: mx.metric.Perplexity(None),
         [("u", [np.array([-1, 3, 1], np.float32)], [probs(3, 3)]), ("g",)]),
        ("perp_bare_arrays", lambda: mx.metric.Perplexity(None),
         [("u", classes(4, 3), probs(4, 3)), ("g",)]),
        ("perp_mismatch", lambda: mx.metric.Perplexity(None),
         [("u", [classes(5, 3)], [probs(6, 3)]), ("g",)]),
        ("perp_3d_preds", lambda: mx.metric.Perplexity(None),
         [("u", [classes(6, 3).reshape(2, 3)], [probs(6, 3).reshape(2, 3, 3)]), ("g",)]),
    ]


def regression_cases():
    lab, pred = values(6), values(6, 1)
    out = []
    for name in ("mae", "mse", "rmse"):
        out.append(("%s_two_batches" % name, (lambda n=name: mx.metric.create(n)),
                    [("u", [lab], [pred]), ("u", [values(4, 2)], [values(4, 2)])]
                    + READS + LOCAL + [("s",)]))
        out.append(("%s_broadcast_column" % name, (lambda n=name: mx.metric.create(n)),
                    [("u", [values(5)], [values(5, 3)]), ("g",)]))
        out.append(("%s_two_outputs" % name, (lambda n=name: mx.metric.create(n)),
                    [("u", [values(3, 2), values(4)], [values(3, 2), values(4)]), ("g",),
                     ("n",)]))
        out.append(("%s_count_mismatch" % name, (lambda n=name: mx.metric.create(n)),
                    [("u", [lab], [pred, pred]), ("g",)]))
        out.append(("%s_no_broadcast" % name, (lambda n=name: mx.metric.create(n)),
                    [("u", [values(5, 2)], [values(5, 3)]), ("g",)]))
    return out


def logloss_cases():
    lab = classes(7, 4)
    return [
        ("ce_basic", lambda: mx.metric.create("ce"),
         [upd(cls_batch(8, 4)), upd(cls_batch(5, 4))] + READS + LOCAL + [("c",)]),
        ("ce_label_column", lambda: mx.metric.CrossEntropy(),
         [("u", [lab.reshape(7, 1)], [probs(7, 4)]), ("g",)]),
        ("ce_eps", lambda: mx.metric.create("crossentropy", eps=1e-3),
         [("u", [np.array([0, 1], np.float32)], [np.array([[0, 1], [1, 0]], np.float32)]),
          ("g",)]),
        ("ce_negative_label_wraps", lambda: mx.metric.CrossEntropy(),
         [("u", [np.array([-1, 0, -3], np.float32)], [probs(3, 3)]), ("g",)]),
        ("ce_mismatch", lambda: mx.metric.CrossEntropy(),
         [("u", [classes(5, 3)], [probs(6, 3)]), ("g",)]),
        ("ce_label_out_of_range", lambda: mx.metric.CrossEntropy(),
         [("u", [np.array([0, 3], np.float32)], [probs(2, 3)]), ("g",)]),
        ("nll_basic", lambda: mx.metric.create("nll_loss"),
         [upd(cls_batch(8, 4)), upd(cls_batch(8, 4))] + READS),
        ("nll_eps_kwarg", lambda: mx.metric.NegativeLogLikelihood(eps=1e-6),
         [upd(cls_batch(6, 2)), ("g",), ("c",)]),
    ]


def correlation_cases():
    pcc_grow = ([np.array([0, 1, 2, 3, 1], np.float32)], [probs(5, 4)])
    return [
        ("pearson_macro", lambda: mx.metric.create("pearsonr"),
         [("u", [values(10)], [values(10)]), ("u", [values(4, 3)], [values(4, 3)])]
         + READS + LOCAL),
        ("pearson_micro", lambda: mx.metric.PearsonCorrelation(average="micro"),
         [("u", [values(10)], [values(10)]), ("u", [values(4, 3)], [values(4, 3)]),
          ("u", [values(7)], [values(7)])] + READS + LOCAL),
        ("pearson_shape_mismatch", lambda: mx.metric.PearsonCorrelation(),
         [("u", [values(4, 3)], [values(12)]), ("g",)]),
        ("pcc_basic", lambda: mx.metric.PCC(),
         [upd(cls_batch(12, 3)), upd(cls_batch(12, 3))] + READS + LOCAL),
        ("pcc_grows", lambda: mx.metric.create("pcc"),
         [upd(binary_batch(8)), ("u",) + pcc_grow, ("g",), ("gg",)]),
        ("pcc_class_indices", lambda: mx.metric.PCC(),
         [("u", [np.array([0, 1, 1, 2, 0], np.float32)], [np.array([0, 1, 2, 2, 1], np.float32)]),
          ("g",)]),
        ("pcc_label_column", lambda: mx.metric.PCC(),
         [("u", [classes(9, 3).reshape(9, 1)], [probs(9, 3)]), ("g",)]),
    ]


def loss_and_custom_cases():
    lab, pred = values(6, 1), values(6, 1)
    return [
        ("loss_basic", lambda: mx.metric.create("loss"),
         [("u", None, [values(4)]), ("u", [], [values(2, 3), values(5)])] + READS + LOCAL),
        ("loss_bare_pred", lambda: mx.metric.Loss(), [("u", None, values(7)), ("g",)]),
        ("torch_name", lambda: mx.metric.create("torch"), [("u", None, [values(3)]), ("nv",)]),
        ("caffe_name", lambda: mx.metric.Caffe(), [("u", None, [values(3)]), ("nv",)]),
        ("custom_function", lambda: mx.metric.create(mae_fn),
         [("u", [lab], [pred]), ("u", [values(3)], [values(3)])] + READS + LOCAL),
        ("custom_tuple", lambda: mx.metric.CustomMetric(sum_and_count),
         [("u", [lab], [pred]), ("g",), ("n",)]),
        ("custom_lambda_name", lambda: mx.metric.CustomMetric(lambda x, y: float(x.sum())),
         [("u", [lab], [pred]), ("nv",)]),
        ("custom_config_refused", lambda: mx.metric.create(mae_fn), [("c",)]),
        ("custom_count_mismatch", lambda: mx.metric.create(mae_fn),
         [("u", [lab], [pred, pred]), ("g",)]),
        ("np_extra_outputs", lambda: mx.metric.np(mae_fn, name="mine", allow_extra_outputs=True),
         [("u", [lab], [pred, values(2, 2)]), ("nv",)]),
        ("np_default_name", lambda: mx.metric.np(mae_fn), [("u", [lab], [pred]), ("nv",)]),
    ]


def composite_cases():
    b = [binary_batch(10) for _ in range(2)]
    named = {"softmax_label": b[0][0][0]}, {"out": b[0][1][0]}
    child = lambda: [mx.metric.Accuracy(), mx.metric.F1()]  # noqa: E731
    return [
        ("composite_list", lambda: mx.metric.create(["acc", "f1", "ce"]),
         [upd(b[0]), upd(b[1])] + READS + LOCAL + [("s",)]),
        ("composite_class", lambda: mx.metric.CompositeEvalMetric(child()),
         [upd(b[0]), ("ud",) + named, ("g",), ("c",)]),
        ("composite_label_filter",
         lambda: mx.metric.CompositeEvalMetric(child(), label_names=["softmax_label"]),
         [("ud", {"softmax_label": b[1][0][0], "x": b[0][0][0]}, {"out": b[1][1][0]}), ("g",)]),
        ("composite_add", lambda: mx.metric.create("composite"),
         [("add", "mse"), ("add", mx.metric.MAE()), upd(b[0]), ("nv",), ("gnv",)]),
        ("composite_empty", lambda: mx.metric.CompositeEvalMetric(), READS),
        ("composite_bad_child", lambda: mx.metric.create(["acc", "nonexistent"]), [("g",)]),
        ("create_from_config", lambda: mx.metric.create(mx.metric.Accuracy(
            axis=1, name="a1").get_config()), [upd(b[0]), ("nv",)]),
        ("create_from_json", lambda: mx.metric.create('["acc", {"axis": 1}]'),
         [upd(b[1]), ("nv",)]),
        ("create_case_insensitive", lambda: mx.metric.create("RMSE"), [("nv",)]),
        ("create_unknown", lambda: mx.metric.create("nonexistent"), [("g",)]),
        ("create_instance_with_args", lambda: mx.metric.create(mx.metric.Accuracy(), axis=1),
         [("g",)]),
        ("create_list_kwargs", lambda: mx.metric.create(["ce", "nll_loss"], eps=1e-3),
         [upd(b[0]), ("g",)]),
    ]


class MyAccuracy(mx.metric.Accuracy):
    """A user metric registered the MXNet way."""

    def __init__(self, name="my_accuracy", **kwargs):
        super(MyAccuracy, self).__init__(name=name, **kwargs)


def registry_cases():
    mx.metric.register(mx.metric.alias("my_acc_alias")(MyAccuracy))
    b = cls_batch(6, 3)
    return [
        ("register_by_class_name", lambda: mx.metric.create("MyAccuracy"), [upd(b), ("nv",)]),
        ("register_by_alias", lambda: mx.metric.create("my_acc_alias"), [upd(b), ("nv",)]),
    ]


def all_cases():
    return (accuracy_cases() + topk_cases() + binary_cases() + perplexity_cases()
            + regression_cases() + logloss_cases() + correlation_cases()
            + loss_and_custom_cases() + composite_cases() + registry_cases())


def nd(x):
    return mx.nd.array(x, dtype=x.dtype)


def arrays(x):
    if x is None or isinstance(x, np.ndarray):
        return None if x is None else nd(x)
    if isinstance(x, dict):
        return {k: nd(v) for k, v in x.items()}
    return [nd(v) for v in x]


def plain(x):
    """JSON-able form of a metric's result."""
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in sorted(x.items())}
    if isinstance(x, (bool, str)) or x is None:
        return x
    return float(x)


def step(metric, op):
    kind = op[0]
    if kind == "u":
        return metric.update(arrays(op[1]), arrays(op[2]))
    if kind == "ud":
        return metric.update_dict(arrays(op[1]), arrays(op[2]))
    if kind == "add":
        return metric.add(op[1])
    reads = {"g": metric.get, "gg": metric.get_global, "nv": metric.get_name_value,
             "gnv": metric.get_global_name_value, "s": lambda: str(metric),
             "c": metric.get_config, "n": lambda: metric.num_inst,
             "rl": metric.reset_local, "r": metric.reset}
    return plain(reads[kind]())


def failure(err):
    return {"error": type(err).__name__, "bases": [c.__name__ for c in type(err).__mro__]}


def run_case(make, steps):
    try:
        metric = make()
    except Exception as err:  # noqa: BLE001 - recorded and compared
        return [failure(err)]
    out = []
    for op in steps:
        try:
            out.append(step(metric, op))
        except Exception as err:  # noqa: BLE001 - recorded and compared
            out.append(failure(err))
    return out


def run_score(golden_dir):
    """Module.score on a SoftmaxOutput checkpoint over a padded NDArrayIter."""
    sym, arg, aux = mx.model.load_checkpoint(os.path.join(golden_dir, "gluon",
                                                          "legacy_softmax"), 0)
    rs = np.random.RandomState(7)
    data = rs.randn(10, 4).astype(np.float32)
    label = rs.randint(0, 3, size=10).astype(np.float32)
    it = mx.io.NDArrayIter(data, label, batch_size=4)  # 3 batches, the last padded by 2
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    mod.set_params(arg, aux)
    seen = []

    def batch_end(p):
        seen.append([p.epoch, p.nbatch, p.eval_metric.get_name_value()])

    def score_end(p):
        seen.append(["end", p.epoch, p.nbatch])

    out = {"score_list": mod.score(it, ["acc", mx.metric.TopKAccuracy(top_k=2), "ce"],
                                   batch_end_callback=batch_end,
                                   score_end_callback=[score_end], epoch=3)}
    out["score_callbacks"] = seen
    acc = mx.metric.Accuracy()
    out["score_instance"] = mod.score(it, acc)
    out["score_instance_num_inst"] = acc.num_inst  # padded samples count, as MXNet counts them
    out["score_num_batch"] = mod.score(it, "acc", num_batch=2)
    out["score_custom"] = mod.score(it, mean_true_prob)
    out["score_no_reset"] = mod.score(it, "acc", reset=False)  # the iterator is spent: NaN
    manual = mx.metric.create(["acc", "ce"])
    it.reset()
    for batch in it:
        mod.forward(batch, is_train=False)
        mod.update_metric(manual, batch.label)
    out["update_metric_loop"] = manual.get_name_value()
    return plain(out)


def run(golden_dir):
    results = {name: run_case(make, steps) for name, make, steps in all_cases()}
    results["module_score"] = run_score(golden_dir)
    return json.loads(json.dumps(results))
