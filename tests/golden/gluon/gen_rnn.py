"""Oracle generator for tests/gluon/test_rnn_layers.py: runs the REAL MXNet 1.9.1.

Run from the repository root (deterministic; rewrites the files below):

    ~/.cache/gluonport-oracle/bin/python tests/golden/gluon/gen_rnn.py

The cases are in _rnn_cases.py (shared with the tests). Writes into tests/golden/gluon/:
  rnn_manifest.json.gz  per layer/cell case: parameter names and shapes (before and after the
                        first forward pass), repr, save_parameters keys, the exported
                        ``-symbol.json`` text (layers) or the symbol of a symbolic unroll
                        (cells), and the symbols of layers called on variables
  rnn_outputs.npz       outputs and states: imperative and hybridized (layers), unrolled
                        (cells), for the weights of ``_rnn_cases.weight``
  rnn_<layer>-symbol.json / -0000.params   MXNet's export of the layers in IMPORT_FILES

Every net is built inside a fresh ``mx.name.NameManager()``, so its names are those of a fresh
process (``lstm0_l0_i2h_weight``).
"""

import gzip
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _rnn_cases as C  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet.gluon import rnn  # noqa: E402

TMP = tempfile.mkdtemp()
OUTPUTS = {}


def param_list(block):
    return [[k, list(p.shape)] for k, p in block.collect_params().items()]


def set_weights(block, dtype="float32"):
    for k, p in block.collect_params().items():
        p.set_data(mx.nd.array(C.weight(k, p.shape, dtype), dtype=dtype))


def flat(out):
    """Outputs as a flat list of arrays (output, then states)."""
    if isinstance(out, (list, tuple)):
        return sum([flat(o) for o in out], [])
    return [out.asnumpy()]


def save_keys(block):
    path = os.path.join(TMP, "keys.params")
    block.save_parameters(path)
    return sorted(mx.nd.load(path).keys())


def run_layer(name):
    dtype = C.layer_dtype(name)
    with mx.name.NameManager():
        net = C.build_layer(rnn, name)
    before = param_list(net)
    net.initialize()
    x = mx.nd.array(C.layer_input(name), dtype=dtype)
    states = C.layer_states(name, net)
    if states is not None:
        states = [mx.nd.array(s, dtype=dtype) for s in states]

    def call():
        return net(x) if states is None else net(x, states)

    call()
    set_weights(net, dtype)
    for i, o in enumerate(flat(call())):
        OUTPUTS[f"layer/{name}/imperative{i}"] = o
    net.hybridize()
    for i, o in enumerate(flat(call())):
        OUTPUTS[f"layer/{name}/hybridized{i}"] = o
    prefix = os.path.join(TMP, name)
    net.export(prefix)  # MXNet 1.9.1 returns None
    sym_file, params_file = prefix + "-symbol.json", prefix + "-0000.params"
    with open(sym_file) as f:
        symbol_json = f.read()
    if name in C.IMPORT_FILES:
        shutil.copy(sym_file, os.path.join(HERE, f"rnn_{name}-symbol.json"))
        shutil.copy(params_file, os.path.join(HERE, f"rnn_{name}-0000.params"))
    return {"params_before": before, "params": param_list(net), "repr": repr(net),
            "save_keys": save_keys(net), "symbol_json": symbol_json,
            "export_params": sorted(mx.nd.load(params_file).keys())}


def run_cell(name):
    _, _, layout, merge, _, _ = C.CELLS[name]
    with mx.name.NameManager():
        cell = C.build_cell(rnn, name)
    before = param_list(cell)
    cell.initialize()
    x = mx.nd.array(C.cell_input(name))
    valid = C.cell_valid_length(name)
    valid = None if valid is None else mx.nd.array(valid)
    states = C.cell_states(name, cell)
    states = None if states is None else [mx.nd.array(s) for s in states]

    def unroll():
        return cell.unroll(C.STEPS, x, begin_state=states, layout=layout, merge_outputs=merge,
                           valid_length=valid)

    unroll()
    set_weights(cell)
    outputs, new_states = unroll()
    for i, o in enumerate(flat(outputs)):
        OUTPUTS[f"cell/{name}/out{i}"] = o
    for i, s in enumerate(flat(new_states)):
        OUTPUTS[f"cell/{name}/state{i}"] = s
    return {"params_before": before, "params": param_list(cell), "repr": repr(cell),
            "n_outputs": len(flat(outputs)), "n_states": len(new_states),
            "symbol_json": symbolic_unroll(name)}


def symbolic_unroll(name):
    """The unrolled graph of a fresh cell on variables (``data``, ``valid_length``, ``s<k>``),
    or ``None`` when MXNet fails to build it."""
    try:
        return _symbolic_unroll(name)
    except mx.MXNetError as exc:
        print(f"{name}: symbolic unroll fails in MXNet: {str(exc).splitlines()[0]}")
        return None


def _symbolic_unroll(name):
    _, _, layout, merge, valid, explicit = C.CELLS[name]
    with mx.name.NameManager():
        cell = C.build_cell(rnn, name)
        states = None
        if explicit:
            states = [mx.sym.var(f"s{k}") for k in range(len(cell.state_info()))]
        outputs, new_states = cell.unroll(
            C.STEPS, mx.sym.var("data"), begin_state=states, layout=layout, merge_outputs=merge,
            valid_length=None if valid is None else mx.sym.var("valid_length"))
        outputs = list(outputs) if isinstance(outputs, list) else [outputs]
        return mx.sym.Group(outputs + list(new_states)).tojson()


def run_symbolic_layer(name):
    with mx.name.NameManager():
        return C.symbolic_layer_call(rnn, mx.sym, name).tojson()


def main():
    manifest = {"layers": {n: run_layer(n) for n in C.LAYERS},
                "cells": {n: run_cell(n) for n in C.CELLS},
                "symbolic_layers": {n: run_symbolic_layer(n) for n in C.SYMBOLIC_LAYERS}}
    text = json.dumps(manifest, indent=1, sort_keys=True).encode()
    with gzip.GzipFile(os.path.join(HERE, "rnn_manifest.json.gz"), "wb", mtime=0) as f:
        f.write(text)
    np.savez_compressed(os.path.join(HERE, "rnn_outputs.npz"), **OUTPUTS)
    shutil.rmtree(TMP)
    print(f"{len(C.LAYERS)} layers, {len(C.CELLS)} cells, {len(OUTPUTS)} arrays")


if __name__ == "__main__":
    main()
