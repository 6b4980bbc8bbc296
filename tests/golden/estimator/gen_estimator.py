"""Run estimator_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/estimator/gen_estimator.py

Writes ``estimator_init.params`` (seeded initial parameters) when missing, then
``estimator_golden.npz``.
"""
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import estimator_script as script  # noqa: E402


def main():
    if not os.path.exists(os.path.join(HERE, script.INIT)):
        script.init(HERE)
    with tempfile.TemporaryDirectory() as work:
        out = script.run(HERE, work)
    np.savez(os.path.join(HERE, "estimator_golden.npz"), **out)
    print(len(out), "values")
    for line in out["log"]:
        print(line)
    print(out["files"])


if __name__ == "__main__":
    main()
