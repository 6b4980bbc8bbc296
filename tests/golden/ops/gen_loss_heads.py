"""Generate MXNet 1.9.1 goldens for the loss heads' backward rules (issue 14).

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_loss_heads.py

The loss heads (SoftmaxOutput, the regression outputs, SVMOutput, MakeLoss) have MXNet's own
backward: the head gradient is ignored (unless ``out_grad``) and the gradient is the loss's
derivative scaled by ``grad_scale`` and ``normalization``. The op case rows hold one setting
each; this file crosses the settings (normalization x ignore_label/use_ignore x multi_output /
preserve_shape x smooth_alpha x out_grad, labels that hit the ignored class). For each case the
op runs under ``autograd.record()`` and ``backward`` with a fixed head gradient;
``loss_heads.npz`` holds ``<case>/data``, ``<case>/label``, ``<case>/hg``, ``<case>/grad``.
Deterministic: re-running gives the same file.
"""
import os

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# name, op, data shape, label shape, classes (label values 0..classes-1; -1 marks an ignored
# row where the case uses ignore_label=-1), attrs
CASES = [
    ("so_batch", "SoftmaxOutput", (4, 5), (4,), 5, {"normalization": "batch"}),
    ("so_valid_ignore", "SoftmaxOutput", (5, 4), (5,), 4,
     {"normalization": "valid", "use_ignore": True, "ignore_label": 2}),
    ("so_valid_no_use_ignore", "SoftmaxOutput", (5, 4), (5,), 4,
     {"normalization": "valid", "ignore_label": 2}),
    ("so_ignore_null", "SoftmaxOutput", (5, 4), (5,), 4, {"use_ignore": True, "ignore_label": 0,
                                                          "grad_scale": 0.5}),
    ("so_smooth_batch", "SoftmaxOutput", (3, 6), (3,), 6,
     {"smooth_alpha": 0.2, "normalization": "batch"}),
    ("so_smooth_ignore", "SoftmaxOutput", (4, 6), (4,), 6,
     {"smooth_alpha": 0.1, "use_ignore": True, "ignore_label": 1}),
    ("so_out_grad", "SoftmaxOutput", (3, 4), (3,), 4, {"out_grad": True, "grad_scale": 3.0}),
    ("so_multi_null", "SoftmaxOutput", (2, 3, 4), (2, 4), 3, {"multi_output": True}),
    ("so_multi_batch", "SoftmaxOutput", (2, 3, 2, 2), (2, 4), 3,
     {"multi_output": True, "normalization": "batch"}),
    ("so_multi_valid_ignore", "SoftmaxOutput", (2, 3, 5), (2, 5), 3,
     {"multi_output": True, "normalization": "valid", "use_ignore": True, "ignore_label": 1}),
    ("so_multi_smooth_ignored", "SoftmaxOutput", (2, 3, 4), (2, 4), 3,
     {"multi_output": True, "smooth_alpha": 0.3}),
    ("so_preserve_batch", "SoftmaxOutput", (2, 3, 4), (2, 3), 4,
     {"preserve_shape": True, "normalization": "batch"}),
    ("so_preserve_valid_ignore", "SoftmaxOutput", (2, 3, 4), (2, 3), 4,
     {"preserve_shape": True, "normalization": "valid", "use_ignore": True,
      "ignore_label": 3}),
    ("so_flat_3d", "SoftmaxOutput", (2, 3, 2), (2, 3), 6, {"normalization": "batch"}),
    ("so_prob_label", "SoftmaxOutput", (3, 4), (3, 4), 0, {"grad_scale": 2.0}),
    ("so_prob_label_out_grad", "SoftmaxOutput", (3, 4), (3, 4), 0, {"out_grad": True}),
    ("linear_scale", "LinearRegressionOutput", (3, 4), (3, 4), 0, {"grad_scale": 2.0}),
    ("linear_col", "LinearRegressionOutput", (4, 1), (4,), 0, {}),
    ("mae_3d", "MAERegressionOutput", (2, 3, 2), (2, 3, 2), 0, {"grad_scale": 0.5}),
    ("logistic", "LogisticRegressionOutput", (3, 2), (3, 2), 0, {}),
    ("svm_l2", "SVMOutput", (4, 3), (4,), 3, {"margin": 0.5, "regularization_coefficient": 2.0}),
    ("svm_l1", "SVMOutput", (4, 3), (4,), 3, {"use_linear": True}),
    ("make_loss_batch", "MakeLoss", (4, 3), None, 0, {"normalization": "batch",
                                                      "grad_scale": 2.0}),
    ("make_loss_valid", "MakeLoss", (4, 3), None, 0, {"normalization": "valid",
                                                      "valid_thresh": 0.3}),
]


def main():
    out = {}
    for k, (name, op, dshape, lshape, classes, attrs) in enumerate(CASES):
        rng = np.random.RandomState(200 + k)
        data = rng.uniform(-2, 2, dshape).astype("float32")
        if lshape is None:
            label = None
        elif classes:
            label = rng.randint(0, classes, lshape).astype("float32")
        elif op == "SoftmaxOutput":  # probability labels
            label = rng.dirichlet(np.ones(dshape[-1]), dshape[:-1]).astype("float32")
        else:
            label = rng.uniform(-1, 1, lshape).astype("float32")
        hg = rng.standard_normal(dshape).astype("float32")
        x = mx.nd.array(data)
        x.attach_grad()
        args = [x] if label is None else [x, mx.nd.array(label)]
        with mx.autograd.record():
            y = getattr(mx.nd, op)(*args, **attrs)
        y.backward(mx.nd.array(hg))
        out[f"{name}/data"] = data
        if label is not None:
            out[f"{name}/label"] = label
        out[f"{name}/hg"] = hg
        out[f"{name}/grad"] = x.grad.asnumpy()
    np.savez(os.path.join(HERE, "loss_heads.npz"), **out)
    print(f"wrote {len(out)} arrays")


if __name__ == "__main__":
    main()
