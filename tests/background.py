"""The session's background runs give the CPU to the tests first.

The package's tests run in one process, one test after another: they are the longest path of a
``make test`` session. Chromium's tour (``tour.py``) and the reader's notebooks (``reader.py``) run
beside them and should take only the CPU the tests leave, so their processes are lowered with
:func:`lower`.

Lowering a process's nice value is not enough on Linux with autogroups (``sched_autogroup_enabled``,
on by default): a process that starts a session of its own is scheduled in a group of its own, at
the group's nice value, 0 unless told. Chromium (Playwright launches it detached) and every Jupyter
kernel (jupyter_client starts a new session) do so. For those the group's value is lowered too, in
``/proc/PID/autogroup``; a process of the tests' own session only gets its nice value, so the tests'
group is never touched. Where a value cannot be changed, nothing changes.

Used by ``tour.py`` and ``reader.py``, and copied beside the reader's notebook runner (outside the
checkout), which lowers each kernel it starts.
"""

from __future__ import annotations

import os

NICE = 10  # how much lower than the tests the background runs' priority is
# Chromium's tour is one chain of visits, so it cannot use a second core; the reader's two runners
# can. The tour is lowered less, so it is not the last to finish: the notebooks take what it leaves.
# (Chromium's processes share one group, while every kernel is a group of its own: at equal values
# the tour would get a third of the core the tests leave, the two kernels two thirds.)
NICE_TOUR = 5


def lower(pid: int, by: int = NICE) -> None:
    """Lower process ``pid`` to ``by`` below the tests, and its autogroup if it leads a session of its
    own. A process that inherited a lower priority keeps it: the values do not add up."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, max(os.getpriority(os.PRIO_PROCESS, pid), by))
        if os.getsid(pid) != os.getsid(0):
            with open(f"/proc/{pid}/autogroup", "w") as f:
                f.write(str(by))
    except (AttributeError, OSError):
        pass


def descendants(pid: int) -> list[int]:
    """The processes started by ``pid``, and by them, now (read from ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
