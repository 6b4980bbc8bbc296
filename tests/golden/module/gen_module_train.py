"""Run module_train_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/module/gen_module_train.py

Writes the seeded initial parameters (``module_train_init.params``,
``module_train_bn_init.params``) when missing, then ``module_train_golden.npz`` (every value
the script returns, strings as numpy string arrays).
"""
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import module_train_script as script  # noqa: E402


def main():
    if not all(os.path.exists(os.path.join(HERE, n)) for n in (script.INIT, script.INIT_BN)):
        script.init(HERE)
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "fit"))
        os.makedirs(os.path.join(work, "steps"))
        out = script.run(HERE, work)
    np.savez(os.path.join(HERE, "module_train_golden.npz"), **out)
    print(len(out), "values;", list(out["fit:log"])[:6])


if __name__ == "__main__":
    main()
