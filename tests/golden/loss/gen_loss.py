"""Oracle generator for tests/gluon/test_loss.py: runs the REAL MXNet 1.9.1's gluon.loss.

Run from the repository root (deterministic; rewrites the files below):

    ~/.cache/gluonport-oracle/bin/python tests/golden/loss/gen_loss.py

Writes into tests/golden/loss/:
  loss_golden.npz   per case: its inputs (``<case>/in<i>``), MXNet's imperative output
                    (``<case>/imperative``) and hybridized output (``<case>/hybrid``); the
                    script's results (``script/<name>``)
  loss_golden.json  the case table as run (loss class, constructor kwargs, which inputs are
                    None, the exception MXNet raised in each mode, if any), reprs, constructor and
                    hybrid_forward signatures, ``__all__``, and the script's non-array results

Inputs come from numpy RandomState seeded by the case name (crc32), so re-running gives the same
bytes. A case MXNet rejects records the exception type instead of an output.
"""

import inspect
import json
import os
import sys
import types
import zlib

import numpy as np

import mxnet as mx
from mxnet.gluon import loss as gloss

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.dirname(HERE)

# Input specs: ("n", shape[, scale]) normal; ("u", shape) uniform [0, 1); ("p", shape, lo, hi)
# uniform [lo, hi); ("cls", shape, classes) integer classes; ("sign", shape) -1/1; ("bin", shape)
# 0/1; ("count", shape, lam[, offset]) Poisson counts; ("dist", shape, axis) a probability
# distribution along axis; ("const", values); None: argument left out (None).
CASES = [
    # name, loss class, constructor kwargs, input specs
    ("l2_basic", "L2Loss", {}, [("n", (4, 3)), ("n", (4, 3))]),
    ("l2_weight_flat_label", "L2Loss", {"weight": 2.5}, [("n", (4, 3)), ("n", (12,))]),
    ("l2_sample_weight", "L2Loss", {}, [("n", (4, 3)), ("n", (4, 3)), ("u", (4, 1))]),
    ("l2_batch_axis1", "L2Loss", {"batch_axis": 1},
     [("n", (3, 4, 2)), ("n", (3, 4, 2)), ("u", (1, 4, 1))]),
    ("l2_4d", "L2Loss", {}, [("n", (2, 3, 2, 2)), ("n", (2, 3, 2, 2))]),
    ("l1_basic", "L1Loss", {}, [("n", (4, 3)), ("n", (4, 3))]),
    ("l1_weight_full_sw", "L1Loss", {"weight": 0.5},
     [("n", (4, 3)), ("n", (4, 3)), ("u", (4, 3))]),
    ("l1_batch_axis1", "L1Loss", {"batch_axis": 1}, [("n", (3, 5)), ("n", (15,))]),
    ("bce_logits", "SigmoidBinaryCrossEntropyLoss", {}, [("n", (4, 5)), ("bin", (4, 5))]),
    ("bce_logits_soft", "SigmoidBinaryCrossEntropyLoss", {}, [("n", (4, 5), 3), ("u", (4, 5))]),
    ("bce_logits_large", "SigmoidBinaryCrossEntropyLoss", {},
     [("n", (4, 5), 40), ("bin", (4, 5))]),
    ("bce_pos_weight", "SigmoidBinaryCrossEntropyLoss", {},
     [("n", (4, 5)), ("bin", (4, 5)), None, ("p", (1, 5), 0.5, 3)]),
    ("bce_pos_weight_sw", "SigmoidBinaryCrossEntropyLoss", {"weight": 1.5},
     [("n", (4, 5)), ("bin", (4, 5)), ("u", (4, 1)), ("p", (1, 5), 0.5, 3)]),
    ("bce_from_sigmoid", "SigmoidBinaryCrossEntropyLoss", {"from_sigmoid": True},
     [("p", (4, 5), 0.01, 0.99), ("bin", (4, 5))]),
    ("bce_from_sigmoid_pos_weight", "SigmoidBinaryCrossEntropyLoss", {"from_sigmoid": True},
     [("p", (4, 5), 0.01, 0.99), ("u", (4, 5)), None, ("p", (1, 5), 0.5, 3)]),
    ("bce_alias_batch_axis1", "SigmoidBCELoss", {"weight": 0.3, "batch_axis": 1},
     [("n", (3, 6)), ("bin", (3, 6))]),
    ("sce_sparse", "SoftmaxCrossEntropyLoss", {}, [("n", (4, 5)), ("cls", (4,), 5)]),
    ("sce_sparse_label_column", "SoftmaxCrossEntropyLoss", {},
     [("n", (4, 5)), ("cls", (4, 1), 5)]),
    ("sce_axis1", "SoftmaxCrossEntropyLoss", {"axis": 1},
     [("n", (2, 4, 3)), ("cls", (2, 3), 4)]),
    ("sce_dense", "SoftmaxCrossEntropyLoss", {"sparse_label": False},
     [("n", (4, 5)), ("dist", (4, 5), -1)]),
    ("sce_dense_flat_label", "SoftmaxCrossEntropyLoss", {"sparse_label": False},
     [("n", (4, 5)), ("dist", (20,), -1)]),
    ("sce_from_logits", "SoftmaxCrossEntropyLoss", {"from_logits": True},
     [("n", (4, 5)), ("cls", (4,), 5)]),
    ("sce_sample_weight", "SoftmaxCrossEntropyLoss", {},
     [("n", (4, 5)), ("cls", (4,), 5), ("u", (4, 1))]),
    ("sce_sample_weight_1d", "SoftmaxCrossEntropyLoss", {},
     [("n", (4, 5)), ("cls", (4,), 5), ("u", (4,))]),
    ("sce_weight_batch_axis1", "SoftmaxCrossEntropyLoss", {"weight": 2.0, "batch_axis": 1},
     [("n", (3, 4, 5)), ("cls", (3, 4), 5)]),
    ("sce_alias_axis0", "SoftmaxCELoss", {"axis": 0, "batch_axis": 1},
     [("n", (5, 4)), ("cls", (4,), 5)]),
    ("kl_from_logits", "KLDivLoss", {}, [("n", (4, 5)), ("dist", (4, 5), -1)]),
    ("kl_softmax", "KLDivLoss", {"from_logits": False}, [("n", (4, 5)), ("dist", (4, 5), -1)]),
    ("kl_softmax_axis1", "KLDivLoss", {"from_logits": False, "axis": 1},
     [("n", (2, 4, 3)), ("dist", (2, 4, 3), 1)]),
    ("kl_sample_weight", "KLDivLoss", {"weight": 0.5},
     [("n", (4, 5)), ("dist", (4, 5), -1), ("u", (4, 1))]),
    ("kl_batch_axis1", "KLDivLoss", {"batch_axis": 1}, [("n", (3, 4)), ("dist", (3, 4), 0)]),
    ("ctc_ntc", "CTCLoss", {},
     [("n", (2, 6, 4)), ("const", [[0, 1, -1], [2, 2, 1]])]),
    ("ctc_tnc_tn", "CTCLoss", {"layout": "TNC", "label_layout": "TN"},
     [("n", (6, 2, 4)), ("const", [[0, 2], [1, 2], [-1, 1]])]),
    ("ctc_lengths_sw", "CTCLoss", {"weight": 2.0},
     [("n", (2, 6, 4)), ("const", [[0, 1, 0], [2, 2, 1]]), ("const", [6, 4]),
      ("const", [2, 3]), ("u", (2,))]),
    ("huber_basic", "HuberLoss", {}, [("n", (4, 3), 2), ("n", (4, 3))]),
    ("huber_rho_sw", "HuberLoss", {"rho": 0.5},
     [("n", (4, 3)), ("n", (4, 3)), ("u", (4, 1))]),
    ("huber_batch_axis1", "HuberLoss", {"rho": 2, "batch_axis": 1, "weight": 3},
     [("n", (3, 5), 3), ("n", (3, 5))]),
    ("hinge_basic", "HingeLoss", {}, [("n", (4, 3)), ("sign", (4, 3))]),
    ("hinge_margin_sw", "HingeLoss", {"margin": 2, "weight": 0.5},
     [("n", (4, 3)), ("sign", (4, 3)), ("u", (4, 1))]),
    ("sqhinge_basic", "SquaredHingeLoss", {}, [("n", (4, 3)), ("sign", (4, 3))]),
    ("sqhinge_margin_batch_axis1", "SquaredHingeLoss", {"margin": 0.5, "batch_axis": 1},
     [("n", (3, 4)), ("sign", (12,))]),
    ("logistic_signed", "LogisticLoss", {}, [("n", (4, 3), 3), ("sign", (4, 3))]),
    ("logistic_binary", "LogisticLoss", {"label_format": "binary"},
     [("n", (4, 3), 3), ("bin", (4, 3))]),
    ("logistic_sw_batch_axis1", "LogisticLoss", {"batch_axis": 1, "weight": 2},
     [("n", (3, 4)), ("sign", (3, 4)), ("u", (1, 4))]),
    ("triplet_basic", "TripletLoss", {}, [("n", (4, 3)), ("n", (4, 3)), ("n", (4, 3))]),
    ("triplet_margin_weight", "TripletLoss", {"margin": 0.2, "weight": 3},
     [("n", (4, 3), 0.3), ("n", (12,), 0.3), ("n", (4, 3), 0.3)]),
    ("triplet_batch_axis1", "TripletLoss", {"batch_axis": 1},
     [("n", (2, 5)), ("n", (2, 5)), ("n", (2, 5))]),
    ("poisson_logits", "PoissonNLLLoss", {}, [("n", (4, 3)), ("count", (4, 3), 2)]),
    ("poisson_probs", "PoissonNLLLoss", {"from_logits": False},
     [("p", (4, 3), 0.1, 3), ("count", (4, 3), 2)]),
    ("poisson_full", "PoissonNLLLoss", {"compute_full": True},
     [("n", (4, 3)), ("count", (4, 3), 3, 1)]),
    ("poisson_full_zero_target_nan", "PoissonNLLLoss", {"compute_full": True},
     [("n", (4, 3)), ("const", [[0, 1, 2], [3, 4, 5], [1, 1, 2], [6, 2, 1]])]),
    ("poisson_sw_weight", "PoissonNLLLoss", {"weight": 2, "from_logits": False},
     [("p", (4, 3), 0.1, 3), ("count", (12,), 2), ("u", (4, 1))]),
    ("cosine_basic", "CosineEmbeddingLoss", {},
     [("n", (4, 3)), ("n", (4, 3)), ("sign", (4,))]),
    ("cosine_margin", "CosineEmbeddingLoss", {"margin": 0.3},
     [("n", (5, 4)), ("n", (5, 4)), ("sign", (5,))]),
    ("cosine_sw_weight_flat", "CosineEmbeddingLoss", {"weight": 2},
     [("n", (12,)), ("n", (4, 3)), ("sign", (4,)), ("u", (4, 1))]),
    ("cosine_zero_row", "CosineEmbeddingLoss", {},
     [("const", [[0, 0, 0], [1, 2, 3]]), ("n", (2, 3)), ("const", [1, -1])]),
    ("sdml_basic", "SDMLLoss", {}, [("n", (4, 3)), ("n", (4, 3))]),
    ("sdml_smoothing", "SDMLLoss", {"smoothing_parameter": 0.1, "weight": 5},
     [("n", (5, 2)), ("n", (5, 2))]),
    ("sdml_pairs", "SDMLLoss", {}, [("n", (2, 6), 0.5), ("n", (2, 6), 0.5)]),
    # inputs MXNet rejects: the tests expect a GluonportError in the same modes
    ("bad_l2_label_size", "L2Loss", {}, [("n", (4, 3)), ("n", (4, 2))]),
    ("bad_l1_sample_weight", "L1Loss", {}, [("n", (4, 3)), ("n", (4, 3)), ("u", (3, 1))]),
    ("bad_sce_label_shape", "SoftmaxCrossEntropyLoss", {}, [("n", (4, 5)), ("cls", (3,), 5)]),
    ("bad_sce_dense_label", "SoftmaxCrossEntropyLoss", {"sparse_label": False},
     [("n", (4, 5)), ("dist", (4, 4), -1)]),
    ("bad_bce_pos_weight", "SigmoidBinaryCrossEntropyLoss", {},
     [("n", (4, 5)), ("bin", (4, 5)), None, ("p", (1, 4), 0.5, 3)]),
    ("bad_kl_label", "KLDivLoss", {}, [("n", (4, 5)), ("dist", (4, 4), -1)]),
    ("bad_triplet_negative", "TripletLoss", {}, [("n", (4, 3)), ("n", (4, 3)), ("n", (4, 2))]),
    ("bad_cosine_label", "CosineEmbeddingLoss", {},
     [("n", (4, 3)), ("n", (4, 3)), ("sign", (3,))]),
    ("bad_sdml_batch", "SDMLLoss", {}, [("n", (4, 3)), ("n", (3, 3))]),
]

# Constructor arguments for the repr table (MXNet's format: Name(batch_axis=.., w=..)).
REPRS = [("L2Loss", {}), ("L1Loss", {"weight": 2}), ("SoftmaxCELoss", {}),
         ("SigmoidBCELoss", {"batch_axis": 1}), ("KLDivLoss", {"weight": 0.5}),
         ("CTCLoss", {"label_layout": "TN"}), ("HuberLoss", {}), ("TripletLoss", {}),
         ("PoissonNLLLoss", {}), ("CosineEmbeddingLoss", {}), ("SDMLLoss", {})]


def make_input(spec, rs):
    """One float32 input array from its spec (None stays None)."""
    if spec is None:
        return None
    kind, shape = spec[0], spec[1]
    if kind == "n":
        scale = spec[2] if len(spec) > 2 else 1.0
        return (rs.randn(*shape) * scale).astype("float32")
    if kind == "u":
        return rs.rand(*shape).astype("float32")
    if kind == "p":
        return rs.uniform(spec[2], spec[3], shape).astype("float32")
    if kind == "cls":
        return rs.randint(0, spec[2], shape).astype("float32")
    if kind == "sign":
        return (rs.randint(0, 2, shape) * 2 - 1).astype("float32")
    if kind == "bin":
        return rs.randint(0, 2, shape).astype("float32")
    if kind == "count":
        offset = spec[3] if len(spec) > 3 else 0
        return (rs.poisson(spec[2], shape) + offset).astype("float32")
    if kind == "dist":
        e = np.exp(rs.randn(*shape))
        return (e / e.sum(axis=spec[2], keepdims=True)).astype("float32")
    if kind == "const":
        return np.array(shape, dtype="float32")
    raise ValueError("unknown input spec %r" % (spec,))


def run_loss(name, kwargs, arrays, hybridize):
    """MXNet's output for one case, or the name of the exception it raised."""
    loss = getattr(gloss, name)(**kwargs)
    if hybridize:
        loss.hybridize()
    args = [None if a is None else mx.nd.array(a) for a in arrays]
    try:
        return loss(*args).asnumpy(), None
    except Exception as exc:  # noqa: BLE001 - the oracle records whatever MXNet raises
        return None, type(exc).__name__


def run_cases(arrays_out):
    table = []
    for case, loss, kwargs, specs in CASES:
        rs = np.random.RandomState(zlib.crc32(case.encode()))
        inputs = [make_input(s, rs) for s in specs]
        row = {"name": case, "loss": loss, "kwargs": kwargs,
               "inputs": [a is not None for a in inputs]}
        for i, a in enumerate(inputs):
            if a is not None:
                arrays_out["%s/in%d" % (case, i)] = a
        for mode in ("imperative", "hybrid"):
            out, err = run_loss(loss, kwargs, inputs, mode == "hybrid")
            row[mode + "_error"] = err
            if out is not None:
                arrays_out["%s/%s" % (case, mode)] = out
        table.append(row)
    return table


def _jsonable(value):
    if value is inspect.Parameter.empty:
        return "<required>"
    return value


def signatures():
    """{class: {"init": [[arg, default]...], "forward": [...]}} for every loss class."""
    out = {}
    for name in gloss.__all__:
        cls = getattr(gloss, name)
        entry = {}
        for key, fn in (("init", cls.__init__), ("forward", cls.hybrid_forward)):
            params = list(inspect.signature(fn).parameters.values())[1:]
            entry[key] = [[p.name, _jsonable(p.default)] for p in params
                          if p.kind is not inspect.Parameter.VAR_KEYWORD]
        out[name] = entry
    return out


def run_script(arrays_out):
    module = types.ModuleType("loss_script")
    path = os.path.join(HERE, "loss_script.py")
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), module.__dict__)
    results = module.run()
    rest = {}
    for key, value in results.items():
        if isinstance(value, np.ndarray):
            arrays_out["script/" + key] = value
        elif isinstance(value, (float, np.floating)):
            arrays_out["script/" + key] = np.array(value, dtype="float64")
        else:
            rest[key] = value
    return rest


def main():
    arrays = {}
    facts = {
        "all": list(gloss.__all__),
        "aliases": {"SigmoidBCELoss": gloss.SigmoidBCELoss.__name__,
                    "SoftmaxCELoss": gloss.SoftmaxCELoss.__name__},
        "cases": run_cases(arrays),
        "reprs": [[n, kw, repr(getattr(gloss, n)(**kw))] for n, kw in REPRS],
        "signatures": signatures(),
        "script": run_script(arrays),
    }
    np.savez_compressed(os.path.join(HERE, "loss_golden.npz"), **arrays)
    with open(os.path.join(HERE, "loss_golden.json"), "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote %d arrays, %d cases" % (len(arrays), len(facts["cases"])), file=sys.stderr)


if __name__ == "__main__":
    main()
