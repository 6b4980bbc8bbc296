"""Generate MXNet 1.9.1 goldens for the AMP cast cases (``AMP_CASES`` in tests/ops/cases_unary.py).

Run with the oracle's Python (never by the test suite):

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_amp.py

MXNet 1.9.1's MKLDNN build fails on ``amp_cast``/``amp_multicast`` of float16 and float64 arrays
("unknown type for MKLDNN"), so this script turns MKLDNN off before importing MXNet and then
builds the cases exactly as gen_ops.py does, writing ``tests/golden/ops/amp.npz``.
Deterministic: re-running gives the same file.
"""
import importlib.util
import os
import sys

os.environ["MXNET_MKLDNN_ENABLED"] = "0"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_ops  # noqa: E402  (imports mxnet, after the environment is set)
import numpy as np  # noqa: E402


def main():
    path = os.path.join(gen_ops.CASES_DIR, "cases_unary.py")
    spec = importlib.util.spec_from_file_location("cases_unary", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    arrays = {}
    for case in mod.AMP_CASES:
        gen_ops.run_case(case, arrays)
    target = os.path.join(HERE, "amp.npz")
    np.savez_compressed(target, **arrays)
    print(f"amp: {len(mod.AMP_CASES)} cases -> {target}")


if __name__ == "__main__":
    main()
