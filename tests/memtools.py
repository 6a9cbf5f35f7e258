"""The tests' one way to measure a call's memory: in a fresh interpreter, by the benchmarks' measure.

A fresh process, because ``tracemalloc`` traces every thread of the test process (the HTTP server of
the browser tests' ``site`` fixture, Playwright's), not the call alone. The measure itself is
:func:`attention_graph.bench.memory.peak`, the same one the benchmark records use.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def traced_peak(setup: str, call: str) -> int:
    """Bytes ``tracemalloc`` saw at the peak of ``call`` (an expression), after running ``setup``.

    The inputs made in ``setup`` are not counted: only the call's temporaries and its result.
    """
    code = "\n".join([
        textwrap.dedent(setup),
        "from attention_graph.bench.memory import peak",
        f"print(peak(lambda: {call}).traced_bytes)",
    ])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"the measured call failed in the fresh interpreter:\n{run.stderr}")
    return int(run.stdout.split()[-1])
