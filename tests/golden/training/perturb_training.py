"""How far MXNet's own training results move when its initial weights move by a few ulps: the
measurement behind the tolerances of tests/training/test_trajectories.py. Run with the oracle
from this folder:

    ~/.cache/gluonport-oracle/bin/python perturb_training.py EPS SEED [name ...]

Copies the golden folder, multiplies every parameter of every ``.params`` file by
``1 +- EPS`` (signs from RandomState(SEED)), reruns the scripts in MXNet and prints, per script,
the worst ratio of |perturbed - golden| to the test's tolerance
``1e-4 * |golden| + 1e-5 * max(1, max |golden|)`` (above 1: the default tolerance would fail),
and for lenet_accuracy the per-epoch accuracies. EPS 1.2e-6 (about 8 ulps) is the figure the
test quotes.
"""
import glob
import os
import shutil
import sys
import tempfile

import gen_training
import mxnet as mx
import numpy as np

HERE = gen_training.HERE


def perturbed_copy(eps, seed):
    folder = tempfile.mkdtemp()
    for path in glob.glob(os.path.join(HERE, "*")):
        shutil.copy(path, folder)
    rs = np.random.RandomState(seed)
    for path in sorted(glob.glob(os.path.join(folder, "*.params"))):
        saved = mx.nd.load(path)
        mx.nd.save(path, {k: mx.nd.array(v.asnumpy() * (1 + eps * rs.choice([-1, 1], v.shape)),
                                         dtype=v.dtype) for k, v in saved.items()})
    return folder


def rerun(name, folder):
    module = __import__(name)
    if name == "finetune_zoo":
        return module.run(folder, tempfile.mkdtemp())
    if name == "save_load_states":
        out = module.run(folder)
        out.update(module.first(folder, tempfile.mkdtemp()))
        out.update(module.resume(folder))
        return out
    return module.run(folder)


def main():
    eps, seed = float(sys.argv[1]), int(sys.argv[2])
    folder = perturbed_copy(eps, seed)
    for name in sys.argv[3:] or gen_training.NAMES:
        out = rerun(name, folder)
        with np.load(os.path.join(HERE, name + ".npz")) as z:
            ref = {k: z[k] for k in z.files}
        worst, where = 0.0, None
        for key, value in out.items():
            r = ref[key]
            if r.dtype.kind != "f" or not r.size:
                continue
            tol = 1e-4 * np.abs(r) + 1e-5 * max(1.0, float(np.abs(r).max()))
            ratio = float(np.max(np.abs(value.astype(np.float64) - r) / tol))
            if ratio > worst:
                worst, where = ratio, key
        print(f"{name}: worst {worst:.3g} of the default tolerance, at {where}")
        if name == "lenet_accuracy":
            print("   ", " ".join(f"{k}={float(out[k]):.3f}/{float(ref[k]):.3f}"
                                  for k in sorted(out) if k.endswith("_acc")))


if __name__ == "__main__":
    main()
