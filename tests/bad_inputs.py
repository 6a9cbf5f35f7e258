"""Bad and valid inputs that many chapters' bad-input rows share (``BAD`` in ``tests/test_<stem>.py``).

A row is ``(function name, call, error type, message fragment)``: ``call()`` must raise ``error``
with a message matching ``fragment`` (tests/test_validation.py gathers every chapter's rows).
"""

from __future__ import annotations

import numpy as np

ok = np.ones((3, 2))  # (n, d), a valid Q, K or V
nan = np.array([[0.0, np.nan], [1.0, 1.0], [2.0, 2.0]])
inf = np.array([[0.0, 1.0], [np.inf, 1.0], [2.0, 2.0]])
cplx = np.ones((3, 2), dtype=complex)
strs = np.full((3, 2), "a")
objs = np.full((3, 2), None, dtype=object)
all_true = np.ones((3, 3), dtype=bool)
path = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # (n, n), a path on 3 nodes
I2, I3 = np.eye(2), np.eye(3)  # identity projections, d_model = 2 and 3
empty_row = np.array([[True, True, True], [False, False, False], [True, False, False]])
