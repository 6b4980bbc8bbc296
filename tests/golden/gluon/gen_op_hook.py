"""Run op_hook_script.py in MXNet 1.9.1 (the oracle) and record what its op hook saw:

    ~/.cache/gluonport-oracle/bin/python tests/golden/gluon/gen_op_hook.py

Writes ``op_hook_golden.npz`` (the arrays, ``<mode>/<index>``) and ``op_hook_golden.json``
(``<mode>/names``: [name, op, shape] per callback, in order). Deterministic: fixed seeds.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_hook_script  # noqa: E402


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MXNet warns 'experimental with static_alloc' always
        out = op_hook_script.run()
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in out.items() if k not in arrays}
    np.savez_compressed(os.path.join(HERE, "op_hook_golden.npz"), **arrays)
    with open(os.path.join(HERE, "op_hook_golden.json"), "w") as f:
        json.dump(rest, f, indent=0, sort_keys=True)
    for key in sorted(rest):
        print(key)
        for row in rest[key]:
            print("   ", row)


if __name__ == "__main__":
    main()
