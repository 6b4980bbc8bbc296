"""Run bn_relu_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/bn_relu/gen_bn_relu.py

Writes ``bn_relu_golden.npz`` (arrays) and ``bn_relu_golden.json`` (everything else).
Deterministic: the script's inputs and weights come from fixed numpy seeds.
"""
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bn_relu_script  # noqa: E402


def main():
    out = bn_relu_script.run(tempfile.mkdtemp())
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in out.items() if k not in arrays}
    np.savez(os.path.join(HERE, "bn_relu_golden.npz"), **arrays)
    with open(os.path.join(HERE, "bn_relu_golden.json"), "w") as f:
        json.dump(rest, f, indent=1, sort_keys=True)
    print(sorted(arrays), sorted(rest))


if __name__ == "__main__":
    main()
