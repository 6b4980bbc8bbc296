"""Fuzz campaign over parameter files (issue 12): 100,000 mutated inputs, seeded, in one test.

Seeds: every MXNet 1.x golden ``.params`` file, MXNet 2.0-style ``.npz`` zips (stored and
deflated, dense, bfloat16 and sparse folders), ``numpy.savez_compressed`` output and ``.npy``
files of each dtype. Mutations: byte flips, truncation, insertion, an extreme integer written at
a random offset, and damage aimed at the NPY header text (``descr``, ``shape``) and at ZIP size
fields. Each input is loaded from bytes; one in ``SOURCE_EVERY`` also from a path (memory-mapped
and read) and from a file object, the routes a user takes. Must hold, for every input:

* nothing but a :class:`GluonportError` comes out of gluonport;
* it takes under ``MAX_SECONDS``;
* its peak traced memory (``tracemalloc``, on one input in ``TRACE_EVERY``) stays under
  ``MEMORY_FACTOR`` x the input size + ``MEMORY_BUDGET``.

The test prints the run count, the slowest input and the peak memory.
``GLUONPORT_FUZZ_PARAMS_N`` overrides the count (the default is the required 100,000).

Measured (2026-11-26, 2-core machine shared with other jobs, load average ~7): 100,000 inputs in
56.6 s wall (about 16 s of CPU); slowest input 121 ms; peak traced memory 0.12 MiB (a 1,916-byte
input); 25,529 loaded, 74,471 refused. On the pre-fix reader the campaign finds the
``AttributeError`` (``mmap`` has no ``seekable``) and the ``SyntaxError`` (NPY descr) of issue 12
within 20,000 inputs, and it found a 1 GiB allocation from a 393-byte zip.
"""

from __future__ import annotations

import io
import os
import random
import struct
import warnings
from pathlib import Path

import numpy as np

from gluonport.errors import GluonportError
from gluonport.formats import params as P
from gluonport.formats.params import SparseArray
from tests.formats._campaign import Campaign

from .test_params_fuzz import SEED_BYTES

N_INPUTS = int(os.environ.get("GLUONPORT_FUZZ_PARAMS_N", "100000"))
SEED = 12
SOURCE_EVERY = 10
TRACE_EVERY = 20
MAX_SECONDS = 1.0
MEMORY_FACTOR = 16
MEMORY_BUDGET = 8 << 20
EXTREMES = [0, 1, 2, 3, 7, 8, 2**16 - 1, 2**31 - 1, 2**31, 2**32 - 1, 2**40, 2**62, 2**63 - 1,
            2**64 - 1, -1, -2]
DESCR_JUNK = [b"(", b")", b",", b"'", b"[", b"{", b"i8,", b"(2,)", b"O", b"U", b"V", b"b2", b"<",
              b">", b"|", b"f16", b"\\x", b" ", b"0", b"-1", b"99999999999"]


def _numpy_seeds() -> dict[str, bytes]:
    """What numpy itself writes: savez_compressed (the issue's AttributeError), npy per dtype."""
    out = {}
    buf = io.BytesIO()
    np.savez_compressed(buf, w=np.arange(6, dtype="f4").reshape(2, 3), b=np.ones(2, "f8"))
    out["savez_compressed"] = buf.getvalue()
    for dt in ("f4", "f2", "i8", "u1", "?", ">f4"):
        buf = io.BytesIO()
        np.save(buf, np.arange(4).astype(dt).reshape(2, 2))
        out[f"npy-{dt}"] = buf.getvalue()
    return out


SEEDS = {**SEED_BYTES, **_numpy_seeds()}
NAMES = sorted(SEEDS)


def _header_span(raw: bytes) -> tuple[int, int] | None:
    """Where an NPY header's text is, in the file or in its first stored ZIP member."""
    at = raw.find(b"{'descr'")
    if at < 0:
        return None
    end = raw.find(b"}", at)
    return at, (end if end > at else len(raw))


def mutate(rng: random.Random) -> bytes:
    raw = bytearray(SEEDS[NAMES[rng.randrange(len(NAMES))]])
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        kind = rng.random()
        at = rng.randrange(len(raw) + 1)
        if kind < 0.25 and raw:
            raw[min(at, len(raw) - 1)] ^= rng.randrange(1, 256)
        elif kind < 0.35:
            del raw[at:]
        elif kind < 0.45:
            raw[at:at] = rng.randbytes(rng.randrange(1, 17))
        elif kind < 0.7 and len(raw) >= 8:
            fmt = rng.choice(("<Q", "<I", "<i", "<q", "<H"))
            value = rng.choice(EXTREMES)
            with_room = min(at, len(raw) - struct.calcsize(fmt))
            try:
                struct.pack_into(fmt, raw, max(with_room, 0), value)
            except struct.error:
                pass
        elif kind < 0.9:
            span = _header_span(bytes(raw))
            if span:
                pos = rng.randrange(span[0], span[1] + 1)
                raw[pos:pos + rng.randrange(0, 3)] = rng.choice(DESCR_JUNK)
        else:
            for sig in (b"PK\x01\x02", b"PK\x03\x04"):  # ZIP headers: sizes and offsets
                hit = bytes(raw).find(sig)
                if hit >= 0 and hit + 46 <= len(raw):
                    struct.pack_into("<I", raw, hit + rng.choice((18, 20, 22, 24, 42)),
                                     rng.choice(EXTREMES) & 0xFFFFFFFF)
                    break
    return bytes(raw)


def _use(loaded) -> None:
    values = loaded.values() if isinstance(loaded, dict) else loaded
    for arr in values:
        if isinstance(arr, SparseArray) and arr.size < 10**5:
            arr.todense()
        elif isinstance(arr, np.ndarray) and arr.size < 10**5:
            arr.sum()


def exercise(raw: bytes, path: Path | None) -> str:
    """Load ``raw`` from bytes (and from ``path`` when given); raises non-gluonport errors."""
    try:
        loaded = P.load(raw)
        _use(loaded)
    except GluonportError:
        outcome = "refused"
    else:
        outcome = "loaded"
    if path is not None:
        path.write_bytes(raw)
        for load in (lambda: P.load(path), lambda: P.load(path, mmap=False),
                     lambda: P.load(io.BytesIO(raw)), lambda: P.load_with_info(path).data()):
            try:
                _use(load())
            except GluonportError:
                pass
    return outcome


def test_params_campaign(tmp_path):
    warnings.simplefilter("ignore")
    rng = random.Random(SEED)
    counts = {"loaded": 0, "refused": 0}
    path = tmp_path / "fuzz-0000.params"
    campaign = Campaign(TRACE_EVERY, MEMORY_FACTOR, MEMORY_BUDGET)
    for i in range(N_INPUTS):
        raw = mutate(rng)
        outcome = campaign.run(
            i, raw, lambda raw=raw, i=i: exercise(raw, path if i % SOURCE_EVERY == 0 else None))
        if outcome is not None:
            counts[outcome] += 1
    print(campaign.summary("params campaign", counts))
    campaign.check(MAX_SECONDS)
    assert counts["loaded"] > N_INPUTS // 20 and counts["refused"] > N_INPUTS // 5, counts
