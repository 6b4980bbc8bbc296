"""Gradients of Python custom operators, made with the real MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/custom_op/gen_custom_grad.py

Runs custom_grad_ops.run() and writes ``grad_golden.npz``.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import custom_grad_ops  # noqa: E402


def main():
    out = custom_grad_ops.run()
    np.savez(os.path.join(HERE, "grad_golden.npz"), **out)
    print({k: v.shape for k, v in out.items()})


if __name__ == "__main__":
    main()
