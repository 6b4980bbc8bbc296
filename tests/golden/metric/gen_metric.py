"""Run metric_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/metric/gen_metric.py

Writes ``metric_golden.json``: per case, what each step returned (or the exception MXNet raised),
and the results of ``Module.score`` on tests/golden/gluon/legacy_softmax. Deterministic: the
inputs come from fixed-seed legacy RandomState streams.
"""
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import metric_script  # noqa: E402


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # corrcoef of constant input, registry overrides
        out = metric_script.run(os.path.dirname(HERE))
    with open(os.path.join(HERE, "metric_golden.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    errors = sorted(k for k, v in out.items()
                    if isinstance(v, list) and any(isinstance(s, dict) and "error" in s for s in v))
    print(len(out), "cases; raising in MXNet:", errors)


if __name__ == "__main__":
    main()
