"""Record what tape_script.py gives in MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/autograd/gen_tape.py

Writes ``tape_golden.npz`` (arrays) and ``tape_golden.json`` (messages and flags).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tape_script  # noqa: E402


def main():
    out = tape_script.run()
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in out.items() if k not in arrays}
    np.savez(os.path.join(HERE, "tape_golden.npz"), **arrays)
    with open(os.path.join(HERE, "tape_golden.json"), "w") as f:
        json.dump(rest, f, indent=1, sort_keys=True)
    print(sorted(arrays), rest)


if __name__ == "__main__":
    main()
