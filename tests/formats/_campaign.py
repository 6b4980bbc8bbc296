"""The loop shared by the seeded fuzz campaigns (``test_params_campaign``,
``test_symbol_json_campaign``): each input runs once; anything but a GluonportError escaping is a
failure (recorded once per raising line), and every ``trace_every``-th input's traced peak
memory must stay under ``memory_factor x input bytes + memory_budget``."""

from __future__ import annotations

import time
import traceback
import tracemalloc
from collections.abc import Callable
from typing import Any

__all__ = ["Campaign"]


class Campaign:
    def __init__(self, trace_every: int, memory_factor: int, memory_budget: int):
        self.trace_every = trace_every
        self.memory_factor = memory_factor
        self.memory_budget = memory_budget
        self.failures: dict[tuple, tuple[int, str, bytes]] = {}
        self.slowest = (0.0, -1)  # (seconds, input number)
        self.peak = (0, 0, -1)  # (peak bytes, input bytes, input number)
        self.over: list[tuple[int, int, int]] = []
        self.count = 0
        self.start = time.perf_counter()

    def run(self, i: int, raw: bytes, call: Callable[[], Any]) -> Any:
        """``call()`` for input number ``i`` (its bytes ``raw``); its result, or None if it
        raised something that is not a GluonportError (``call`` handles those itself)."""
        traced = i % self.trace_every == 0
        if traced:
            tracemalloc.start()
        t = time.perf_counter()
        result = None
        try:
            result = call()
        except Exception as exc:  # noqa: BLE001 - the point: anything else is a failure
            where = traceback.extract_tb(exc.__traceback__)[-1]
            key = (type(exc).__name__, where.filename, where.lineno)
            self.failures.setdefault(key, (i, f"{type(exc).__name__}: {exc}", raw[:400]))
        elapsed = time.perf_counter() - t
        if traced:
            used = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            self.peak = max(self.peak, (used, len(raw), i))
            if used > self.memory_factor * len(raw) + self.memory_budget:
                self.over.append((i, used, len(raw)))
        self.slowest = max(self.slowest, (elapsed, i))
        self.count += 1
        return result

    def summary(self, title: str, counts: Any) -> str:
        return (f"\n{title}: {self.count} inputs in {time.perf_counter() - self.start:.1f} s; "
                f"slowest input {self.slowest[1]} {self.slowest[0] * 1000:.1f} ms; peak traced "
                f"memory {self.peak[0] / 2**20:.2f} MiB (input {self.peak[2]}, {self.peak[1]} "
                f"bytes); {dict(counts)}")

    def check(self, max_seconds: float) -> None:
        """No raw exception, no input slower than ``max_seconds``, none over the memory cap."""
        assert not self.failures, "raw exceptions:\n" + "\n".join(
            f"input {i} ({key[1]}:{key[2]}): {msg}\n  {raw[:300]!r}"
            for key, (i, msg, raw) in self.failures.items())
        assert self.slowest[0] < max_seconds, \
            f"input {self.slowest[1]} took {self.slowest[0]:.2f} s"
        assert not self.over, \
            f"(input, peak bytes, input bytes) over the memory cap: {self.over[:5]}"
