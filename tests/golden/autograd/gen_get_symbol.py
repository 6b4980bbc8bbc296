"""Run get_symbol_script.py in MXNet 1.9.1 (the oracle) and record the symbol JSON of each case:

    ~/.cache/gluonport-oracle/bin/python tests/golden/autograd/gen_get_symbol.py

Writes ``get_symbol_golden.json`` ({case: the symbol's JSON, parsed}).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import get_symbol_script  # noqa: E402


def main():
    out = {k: json.loads(v) for k, v in get_symbol_script.run().items()}
    with open(os.path.join(HERE, "get_symbol_golden.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    for k, v in out.items():
        print(k, [(n["op"], n["name"], n.get("attrs")) for n in v["nodes"]], v["heads"])


if __name__ == "__main__":
    main()
