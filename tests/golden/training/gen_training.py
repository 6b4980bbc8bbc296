"""Run the MXNet training scripts of tests/training/ in MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/training/gen_training.py [name ...]

For each script: ``init(HERE)`` saves the seeded initial parameters (``<name>_init.params``,
the model-zoo script also its head), then ``run`` records the trajectory into ``<name>.npz``.
save_load_states also keeps MXNet's ``states_<case>.states`` and ``states_<case>_step2.params``
(written by ``first``) and records ``first`` and ``resume`` as well; the run checks that resuming
from MXNet's own files gives the uninterrupted run's parameters. Deterministic: data come from
fixed-seed numpy RandomState streams, initial parameters from fixed mx.random seeds.
"""
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "training")
sys.path.insert(0, SCRIPTS)

NAMES = ["mlp_sgd", "lenet_bn_adam", "lstm_lm", "optimizers", "grad_add", "save_load_states",
         "module_fit", "finetune_zoo", "lenet_accuracy"]


def generate(name):
    module = __import__(name)
    module.init(HERE)
    if name == "finetune_zoo":
        with tempfile.TemporaryDirectory() as tmp:
            out = module.run(HERE, tmp)
    elif name == "save_load_states":
        out = module.run(HERE)
        out.update(module.first(HERE, HERE))
        out.update(module.resume(HERE))
        for key in [k for k in out if ":resume:" in k]:
            straight = out[key.replace(":resume:", ":straight:")]
            np.testing.assert_allclose(out[key], straight, rtol=1e-6, atol=1e-7, err_msg=key)
    else:
        out = module.run(HERE)
    np.savez_compressed(os.path.join(HERE, name + ".npz"), **out)
    return len(out)


def main():
    for name in sys.argv[1:] or NAMES:
        print(name, generate(name), "arrays")


if __name__ == "__main__":
    main()
