"""Record what autograd_script.py gives in MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/autograd/gen_autograd.py

Writes ``autograd_golden.npz`` (arrays) and ``autograd_golden.json`` (the rest).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import autograd_script  # noqa: E402


def main():
    out = autograd_script.run()
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in out.items() if k not in arrays}
    np.savez(os.path.join(HERE, "autograd_golden.npz"), **arrays)
    with open(os.path.join(HERE, "autograd_golden.json"), "w") as f:
        json.dump(rest, f, indent=1)
    print(sorted(arrays), rest)


if __name__ == "__main__":
    main()
