"""Record what npscalar_script.py gives in MXNet 1.9.1 (the oracle):

    ~/.cache/gluonport-oracle/bin/python tests/golden/npscalar/gen_npscalar.py

Writes ``npscalar_golden.npz`` (NDArray results) and ``npscalar_golden.json`` (result types,
symbol JSON texts, "TypeError" where the operator is refused).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import npscalar_script  # noqa: E402


def main():
    out = npscalar_script.run()
    arrays, texts = {}, {}
    for key, val in out.items():
        if isinstance(val, str):
            texts[key] = val
        elif isinstance(val[1], np.ndarray):
            texts[key] = val[0]
            arrays[key] = val[1]
        else:
            texts[key] = list(val)
    np.savez(os.path.join(HERE, "npscalar_golden.npz"), **arrays)
    with open(os.path.join(HERE, "npscalar_golden.json"), "w") as f:
        json.dump(texts, f, indent=1, sort_keys=True)
    print(len(arrays), "arrays,", len(texts), "texts")


if __name__ == "__main__":
    main()
