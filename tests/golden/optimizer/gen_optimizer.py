"""Run optimizer_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/optimizer/gen_optimizer.py

Writes ``optimizer_golden.npz`` (every array the script returns). Deterministic: inputs come
from fixed-seed legacy RandomState streams.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import optimizer_script  # noqa: E402


def main():
    out = optimizer_script.run()
    np.savez_compressed(os.path.join(HERE, "optimizer_golden.npz"), **out)
    print(len(out), "arrays")


if __name__ == "__main__":
    main()
