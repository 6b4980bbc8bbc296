"""Record what ufunc_script.py gives in MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ufunc/gen_ufunc.py

Writes ``ufunc_golden.npz`` (arrays) and ``ufunc_golden.json`` (the symbol JSON texts).
"""
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ufunc_script  # noqa: E402


def main():
    cwd = os.getcwd()
    os.chdir(tempfile.mkdtemp())
    try:
        out = ufunc_script.run()
    finally:
        os.chdir(cwd)
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    texts = {k: v for k, v in out.items() if isinstance(v, str)}
    np.savez(os.path.join(HERE, "ufunc_golden.npz"), **arrays)
    with open(os.path.join(HERE, "ufunc_golden.json"), "w") as f:
        json.dump(texts, f, indent=1, sort_keys=True)
    print(len(arrays), "arrays,", len(texts), "texts")


if __name__ == "__main__":
    main()
