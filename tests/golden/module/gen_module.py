"""Run module_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/module/gen_module.py

Writes ``module_golden.npz`` (arrays) and ``module_golden.json`` (everything else).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import module_script  # noqa: E402


def main():
    out = module_script.run(os.path.dirname(HERE))
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in out.items() if k not in arrays}
    np.savez(os.path.join(HERE, "module_golden.npz"), **arrays)
    with open(os.path.join(HERE, "module_golden.json"), "w") as f:
        json.dump(rest, f, indent=1, sort_keys=True)
    print(sorted(arrays), json.dumps(rest)[:600])


if __name__ == "__main__":
    main()
