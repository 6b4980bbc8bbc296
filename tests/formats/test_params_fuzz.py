"""Mutated parameter files: load either succeeds or raises a GluonportError, nothing else.

Mutations of real MXNet files (byte flips, truncation, insertion, a field overwritten with an
extreme value) reach every branch of the reader. Example counts are bounded so the file runs in
a few seconds; the derandomised profile makes failures reproducible. The 100,000-input campaign
(issue 12) is ``test_params_campaign.py``.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gluonport.errors import GluonportError
from gluonport.formats import params as P
from gluonport.formats.params import SparseArray

from .test_params import mx2_npz, npy_bytes, sparse_members

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "formats" / "params"
SEEDS = sorted(p.name for p in GOLDEN.glob("*.params"))


def _npz_seeds() -> dict[str, bytes]:
    """MXNet 2.0-style zips: dense, bfloat16 ('<b2'), csr and row_sparse folders."""
    csr = SparseArray.from_dense(np.array([[0, 2], [3, 0]], "f4"), "csr")
    rsp = SparseArray.from_dense(np.array([[0, 0], [1, 1]], "f8"), "row_sparse")
    members = [("w.npy", npy_bytes(np.arange(6, dtype="f4").reshape(2, 3))),
               ("b.npy", npy_bytes(np.ones(2, "<u2"), "<b2")),
               *sparse_members("c", csr), *sparse_members("r", rsp)]
    return {"npz": mx2_npz(members), "npz-deflated": mx2_npz(members, zipfile.ZIP_DEFLATED),
            "npy": npy_bytes(np.arange(3, dtype="i8"))}


SEED_BYTES = {name: (GOLDEN / name).read_bytes() for name in SEEDS}
SEED_BYTES.update(_npz_seeds())
EXTREMES = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**40, 2**62, 2**63 - 1, 2**64 - 1]
FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def load_or_gluonport_error(raw: bytes) -> None:
    try:
        loaded = P.load(raw)
    except GluonportError:
        return
    for arr in (loaded.values() if isinstance(loaded, dict) else loaded):
        if isinstance(arr, SparseArray) and arr.size < 10**6:
            try:
                arr.todense()
            except GluonportError:
                pass


@st.composite
def mutated(draw) -> bytes:
    raw = bytearray(SEED_BYTES[draw(st.sampled_from(sorted(SEED_BYTES)))])
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "field"]))
        at = draw(st.integers(0, max(len(raw) - 1, 0)))
        if kind == "flip" and raw:
            raw[at] ^= draw(st.integers(1, 255))
        elif kind == "truncate":
            del raw[at:]
        elif kind == "insert":
            raw[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "field" and len(raw) >= at + 8:
            fmt = draw(st.sampled_from(["<Q", "<I", "<i", "<q"]))
            value = draw(st.sampled_from(EXTREMES + [-1, -2]))
            try:
                struct.pack_into(fmt, raw, at, value)
            except struct.error:
                pass
    return bytes(raw)


@FUZZ
@given(mutated())
def test_mutated_files_raise_only_gluonport_errors(raw):
    load_or_gluonport_error(raw)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.binary(max_size=200))
def test_random_bytes_after_a_valid_header(tail):
    load_or_gluonport_error(struct.pack("<QQ", 0x112, 0) + tail)
