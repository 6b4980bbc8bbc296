"""Fuzz the symbol JSON reader: damaged text and mutated objects raise only GluonportError.

Starting points are real files (MXNet-saved and legacy goldens). Whatever loads must also write
and load back to the same graph. Bounded: a few hundred examples, a few seconds in all. The
20,000-input campaign that also runs what loads (issue 12) is ``test_symbol_json_campaign.py``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gluonport.errors import GluonportError
from gluonport.formats import symbol_json as sj
from gluonport.formats.validate import validate_symbol_json

from .test_symbol_json import input_names, read

SEEDS = [
    "mlp-symbol.json",
    "multi_output-symbol.json",
    "foreach-symbol.json",
    "var_attrs-symbol.json",
    "legacy/handwritten_v0_8-symbol.json",
    "legacy/handwritten_v0_9_3-symbol.json",
]
TEXTS = {name: read(name) for name in SEEDS}
FUZZ = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])

# Characters that matter to JSON and to the reader, plus some that do not.
_ALPHABET = st.sampled_from(list('{}[]",:0123456789-.eE \n\t\\tnulfrsa') + ["\u00e9", "\ud800"])


def _load_or_refuse(text: str) -> sj.Graph | None:
    try:
        return sj.loads(text, path="fuzz-symbol.json", input_names=input_names)
    except GluonportError:
        return None


def _check_round_trip(graph: sj.Graph) -> None:
    text = sj.dumps(graph)
    again = sj.loads(text, input_names=input_names)
    assert again.nodes == graph.nodes
    assert again.heads == graph.heads
    assert again.arg_nodes == graph.arg_nodes
    assert again.attrs == graph.attrs
    assert sj.dumps(again) == text


@st.composite
def damaged_text(draw: Any) -> str:
    text = TEXTS[draw(st.sampled_from(SEEDS))]
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "cut"]))
        char = draw(_ALPHABET)
        if kind == "delete":
            text = text[:pos] + text[pos + 1:]
        elif kind == "insert":
            text = text[:pos] + char + text[pos:]
        elif kind == "replace":
            text = text[:pos] + char + text[pos + 1:]
        else:
            text = text[:pos]
    return text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**33) | st.floats(allow_nan=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=3),
    max_leaves=8,
)
_KEYS = st.sampled_from(["op", "name", "attrs", "attr", "param", "inputs", "control_deps",
                         "subgraphs", "nodes", "heads", "arg_nodes", "node_row_ptr",
                         "mxnet_version", "is_np_shape", "backward_source_id", "x"])


@st.composite
def mutated_object(draw: Any) -> Any:
    obj = json.loads(TEXTS[draw(st.sampled_from(SEEDS))])
    for _ in range(draw(st.integers(1, 3))):
        parent, key = obj, None
        for _depth in range(draw(st.integers(0, 6))):
            children = list(parent) if isinstance(parent, dict) else list(range(len(parent))) \
                if isinstance(parent, list) else []
            if not children:
                break
            key = draw(st.sampled_from(children))
            if not isinstance(parent[key], (dict, list)):
                break
            parent = parent[key]
        if not isinstance(parent, (dict, list)):
            continue
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "add":
            new_key = draw(_KEYS) if isinstance(parent, dict) else len(parent)
            if isinstance(parent, list):
                parent.append(draw(json_values))
            else:
                parent[new_key] = draw(json_values)
        elif key is not None and key in (parent if isinstance(parent, dict)
                                         else range(len(parent))):
            if action == "delete":
                del parent[key]
            else:
                parent[key] = draw(json_values)
    return obj


@FUZZ
@given(damaged_text())
def test_damaged_text_raises_only_gluonport_errors(text):
    graph = _load_or_refuse(text)
    if graph is not None:
        _check_round_trip(graph)


@FUZZ
@given(mutated_object())
def test_mutated_objects_raise_only_gluonport_errors(obj):
    graph = _load_or_refuse(json.dumps(obj))
    if graph is not None:
        _check_round_trip(graph)
    # The schema plus the reader's checks accept exactly what the reader accepts.
    try:
        validate_symbol_json(obj, "fuzz-symbol.json")
    except GluonportError:
        assert graph is None
    else:
        assert graph is not None


@FUZZ
@given(st.binary(max_size=64) | st.text(max_size=64))
def test_arbitrary_input_raises_only_gluonport_errors(data):
    graph = _load_or_refuse(data)
    assert graph is None or isinstance(graph, sj.Graph)
