"""Seeded fuzz campaign over optimizer ``.states`` pickles (``Trainer.load_states``,
``Updater.set_states``, ``Module.load_optimizer_states`` all read them through
``optimizer.updater.loads_states``): MXNet 1.9.1's own ``.states`` files and gluonport's, mutated
(byte flips, truncations, insertions, splices, random bytes). Every input ends in a loaded
state or a GluonportError -- never a raw exception, never code run (the marker file stays
absent), no input slower than 1 s, traced memory bounded (``tests/formats/_campaign.py``)."""

from __future__ import annotations

import collections
import os
import random

import numpy as np

import gluonport as mx
from gluonport.errors import GluonportError
from tests.formats._campaign import Campaign

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "training")
N_INPUTS = 4000
TRACE_EVERY = 50
MEMORY_FACTOR, MEMORY_BUDGET = 64, 8 * 2**20
MAX_SECONDS = 1.0


def _seeds() -> list[bytes]:
    seeds = []
    for name in ("states_sgd.states", "states_adam.states"):  # written by MXNet 1.9.1
        with open(os.path.join(HERE, name), "rb") as f:
            seeds.append(f.read())
    for opt, kw in (("sgd", {"momentum": 0.9}), ("adam", {}), ("rmsprop", {"centered": True})):
        updater = mx.optimizer.get_updater(mx.optimizer.create(opt, **kw))
        for i in range(2):
            w = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
            updater(i, mx.nd.ones((2, 3)), w)
        seeds += [updater.get_states(dump_optimizer=True), updater.get_states()]
    return seeds


def _mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    data = bytearray(rng.choice(seeds))
    kind = rng.randrange(6)
    if kind == 0:  # flip bytes
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:  # truncate
        data = data[:rng.randrange(len(data))]
    elif kind == 2:  # insert
        at = rng.randrange(len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    elif kind == 3:  # splice two seeds
        other = rng.choice(seeds)
        data = data[:rng.randrange(len(data))] + other[rng.randrange(len(other)):]
    elif kind == 4:  # a length or count field made large
        at = rng.randrange(max(1, len(data) - 4))
        big = (b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff\xff\xff\xff")
        data[at:at + 4] = rng.choice(big)
    else:  # random bytes after the protocol header
        data = bytearray(b"\x80" + bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))))
    return bytes(data)


def test_states_campaign(tmp_path):
    rng = random.Random(20261126)
    seeds = _seeds()
    marker = tmp_path / "ran"
    counts: collections.Counter = collections.Counter()
    campaign = Campaign(TRACE_EVERY, MEMORY_FACTOR, MEMORY_BUDGET)
    for i in range(N_INPUTS):
        raw = _mutate(rng, seeds)
        updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))

        def call(raw=raw, updater=updater) -> str:
            try:
                updater.set_states(raw)
            except GluonportError as exc:
                return type(exc).__name__
            assert isinstance(updater.states, dict)
            return "loaded"

        counts[campaign.run(i, raw, call)] += 1
    print(campaign.summary("states campaign", counts))
    campaign.check(MAX_SECONDS)
    assert not marker.exists()
    assert counts["loaded"] > 0 and counts["FormatError"] > 0  # both outcomes were reached


def test_allocation_bombs_are_refused_before_allocating():
    """Two ways a small pickle could make the unpickler allocate gigabytes: a huge memo index
    (CPython grows its memo table to it) and bytearray(n) with an integer n."""
    import pytest

    from gluonport.errors import FormatError

    memo_bomb = b"\x80\x04}\x94(K\x00N\x8c\x01x\x94r\x94\x0c\xd2EsK." + b"\x00" * 8
    int_bomb = (b"\x80\x04}\x94K\x00\x8c\x08builtins\x94\x8c\tbytearray\x94\x93\x94"
                b"J\x00\x00\x00\x80\x85\x94R\x94s.")
    for blob, match in ((memo_bomb, "memo index"), (int_bomb, "bytearray only on bytes")):
        updater = mx.optimizer.get_updater(mx.optimizer.create("sgd"))
        with pytest.raises(FormatError, match=match):
            updater.set_states(blob)
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd", momentum=0.9))
    updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    updater.set_states(updater.get_states())  # real states still load
    assert set(updater.states) == {0}
