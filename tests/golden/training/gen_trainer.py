"""Run trainer_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/training/gen_trainer.py

Writes ``trainer_golden.npz`` (every array the script returns; ``.states`` file bytes as uint8)
and ``trainer_golden.json`` (each error case: MXNet's exception type and message). Deterministic:
values come from fixed-seed legacy RandomState streams.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import trainer_script  # noqa: E402


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrays, messages = trainer_script.run()
    np.savez_compressed(os.path.join(HERE, "trainer_golden.npz"), **arrays)
    with open(os.path.join(HERE, "trainer_golden.json"), "w", encoding="utf-8") as f:
        json.dump(messages, f, indent=1, sort_keys=True)
    print(len(arrays), "arrays,", len(messages), "messages")


if __name__ == "__main__":
    main()
