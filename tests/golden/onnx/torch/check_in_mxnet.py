"""Check that the MXNet checkpoints gluonport writes for the PyTorch-exported models run in the
real MXNet 1.9.1 and reproduce torch's outputs.

Run from the repository root in two steps (the first with gluonport's Python, the second with
the oracle's):

    python tests/golden/onnx/torch/check_in_mxnet.py write /tmp/torch_in_mxnet
    ~/.cache/gluonport-oracle/bin/python tests/golden/onnx/torch/check_in_mxnet.py check \
        /tmp/torch_in_mxnet

``write`` imports every committed ``.onnx`` file of ``manifest.json`` with
``gluonport.onnx.export_mxnet`` and saves the batch-1 inputs and torch's outputs beside each
checkpoint. ``check`` loads each with ``mx.model.load_checkpoint``, binds it on the inputs and
compares MXNet's outputs with torch's (rtol 1e-4, atol 1e-5), printing one line per model and
exiting 1 if any fails. Deterministic; nothing is committed from it.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write(out_dir):
    from gluonport.onnx import export_mxnet

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(HERE, "manifest.json")) as f:
        manifest = json.load(f)
    done = []
    for name, entry in manifest.items():
        arrays = {f"in_{k}": np.load(os.path.join(HERE, f"{name}.input.{k}.npy"))
                  for k in entry["inputs"]}
        arrays.update({f"out_{i}": np.load(os.path.join(HERE, f"{name}.output.{i}.npy"))
                       for i in range(len(entry["outputs"]))})
        for key, fname in entry["variants"].items():
            prefix = os.path.join(out_dir, f"{name}_{key}")
            export_mxnet(os.path.join(HERE, fname), prefix)
            np.savez(prefix + ".npz", **arrays)
            done.append(f"{name}_{key}")
    with open(os.path.join(out_dir, "models.json"), "w") as f:
        json.dump(done, f)
    print(f"wrote {len(done)} checkpoints to {out_dir}")


def _run(mx, prefix):
    sym, arg, aux = mx.model.load_checkpoint(prefix, 0)
    z = np.load(prefix + ".npz")
    args = dict(arg)
    args.update({k[3:]: mx.nd.array(z[k], dtype=z[k].dtype) for k in z.files
                 if k.startswith("in_")})
    ex = sym.bind(mx.cpu(), args, aux_states=aux, grad_req="null")
    got = [o.asnumpy() for o in ex.forward(is_train=False)]
    want = [z[f"out_{i}"] for i in range(sum(k.startswith("out_") for k in z.files))]
    return got, want


def check(out_dir):
    import mxnet as mx

    with open(os.path.join(out_dir, "models.json")) as f:
        names = json.load(f)
    failed = 0
    for name in names:
        try:
            got, want = _run(mx, os.path.join(out_dir, name))
            ok = len(got) == len(want) and all(
                g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=1e-5)
                for g, w in zip(got, want))
            err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
            print(f"{name}: {'ok' if ok else 'MISMATCH'} (max abs err {err:.2e})")
        except Exception as exc:  # noqa: BLE001 - report and go on
            ok = False
            lines = [ln for ln in str(exc).splitlines() if "Error" in ln] or [str(exc)]
            print(f"{name}: FAILED {type(exc).__name__}: {lines[-1][:300]}")
        failed += not ok
    print(f"{len(names) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    (write if sys.argv[1] == "write" else check)(sys.argv[2])
