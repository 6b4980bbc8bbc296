"""Write ``var_attrs_golden.json``: MXNet 1.9.1's ``tojson()`` for each case of
``var_attrs_script.py``. Run with the oracle interpreter from the repository root::

    /root/.cache/gluonport-oracle/bin/python tests/golden/compose/gen_var_attrs.py
"""
import json
import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    cases = runpy.run_path(os.path.join(HERE, "var_attrs_script.py"))["cases"]()
    with open(os.path.join(HERE, "var_attrs_golden.json"), "w") as f:
        json.dump(cases, f, indent=1, sort_keys=True)
        f.write("\n")
