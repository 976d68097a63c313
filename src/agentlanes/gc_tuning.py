"""How a serving process sets up Python's garbage collector.

`agentlanes serve` calls :func:`tune_for_serving` once, after start-up; the
conflict benchmark calls it too, so its in-process figures are the server's.
"""

from __future__ import annotations

import gc

# Python's default (700, 10, 10) runs a young collection every 700 net
# allocations of container objects. A check-in answer listing thousands of
# conflicts is then promoted, half built, into the older generations, and a
# full collection (one that walks every live session's index: about 40 ms at
# 1,000 sessions and 110 ms at 10,000 on the benchmark machine) follows every
# few large answers. A young generation of 100,000 lets answers die young;
# cyclic garbage waits a little longer for its turn, which costs a few MB.
THRESHOLDS = (100_000, 20, 10)


def tune_for_serving() -> None:
    """Freeze what start-up loaded (it lives as long as the process) and widen
    the young generation."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
