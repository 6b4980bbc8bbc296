"""Record what loss_grad_script.py gives in MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/loss/gen_loss_grad.py

Writes ``loss_grad_golden.npz``.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import loss_grad_script  # noqa: E402


def main():
    out = loss_grad_script.run()
    np.savez(os.path.join(HERE, "loss_grad_golden.npz"), **out)
    print(len(out), "arrays")


if __name__ == "__main__":
    main()
