"""The one way the benchmarks measure peak memory: :func:`peak` around one call.

It reports two views of the same call. ``traced_bytes`` is the peak that ``tracemalloc`` saw while
the call ran (NumPy and SciPy report their array allocations to it): the temporaries and the output,
without the inputs. ``rss_bytes`` is the peak resident set of the process during the call, read from
``VmHWM`` in ``/proc/self/status`` (Linux) after the high-water mark was reset to the current size
through ``/proc/self/clear_refs``; ``rss_before_bytes`` is the resident size just before the call.
Run it in a fresh process (:func:`attention_graph.bench.harness.in_subprocess`) so that the resident
size is the benchmark's own. ``resource.getrusage`` is not used: on Linux its ``ru_maxrss`` keeps the
parent's high-water mark through fork and exec.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any, NamedTuple


class Peak(NamedTuple):
    """What :func:`peak` measured around one call, and the call's result."""

    result: Any
    traced_bytes: int
    rss_bytes: int | None
    rss_before_bytes: int | None
    hwm_reset: bool


def _status_bytes(field: str) -> int | None:
    """A memory field of ``/proc/self/status`` in bytes (``VmRSS``, ``VmHWM``), None off Linux."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))
    except (OSError, StopIteration):
        return None


def _reset_hwm() -> bool:
    """Reset the process's resident high-water mark to its current size; False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def process_peak_bytes() -> int | None:
    """The peak resident set of this process so far (``VmHWM``), None off Linux."""
    return _status_bytes("VmHWM")


def peak(fn) -> Peak:
    """Call ``fn()`` once and measure its peak memory two ways (see the module's docstring)."""
    gc.collect()
    before = _status_bytes("VmRSS")
    reset = _reset_hwm()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        result = fn()
        _, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss = _status_bytes("VmHWM") if reset else None
    return Peak(result, int(top - base), rss, before, reset)
