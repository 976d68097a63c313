"""How a serving process sets up Python's garbage collector.

`agentlanes serve` calls :func:`tune_for_serving` once, after start-up; the
conflict benchmark calls it too, so its in-process figures are the server's.
The scheduled job calls :func:`collect` every ``gc_collect_seconds``.
"""

from __future__ import annotations

import gc
import logging
import time

from prometheus_client import Histogram

log = logging.getLogger("agentlanes.gc")
FULL_COLLECTIONS = Histogram(
    "agentlanes_gc_full_collection_seconds",
    "Pause of each scheduled full garbage collection (gc_collect_seconds)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)

# Python's default (700, 10, 10) runs a young collection every 700 net
# allocations of container objects. A check-in answer listing thousands of
# conflicts is then promoted, half built, into the older generations, and a
# full collection (one that walks every live session's index: about 40 ms at
# 1,000 sessions and 110 ms at 10,000 on the benchmark machine) follows every
# few large answers. A young generation of 100,000 lets answers die young;
# cyclic garbage waits a little longer for its turn, which costs a few MB.
THRESHOLDS = (100_000, 20, 10)


# Whether this process was tuned, and whether what its warm-up built (the
# database pool's type caches, the OpenAPI schema, compiled statements, ...) has
# been frozen too, at the first scheduled collection.
_tuned = False
_warm = False


def tune_for_serving() -> None:
    """Freeze what start-up loaded (it lives as long as the process) and widen
    the young generation."""
    global _tuned
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    _tuned = True


def collect() -> int:
    """One full collection (the ``gc_collect_seconds`` job): with the young generation
    widened, it is what frees cyclic garbage on a clock instead of on allocation counts.
    How many unreachable objects it found."""
    global _warm
    started = time.perf_counter()
    found = gc.collect()
    if _tuned and not _warm:
        # Once, after the first minute: most of what a full pass then walks is
        # warm-up state that lives as long as the process (a full pass over it took
        # 30-40 ms at 200 sessions). Frozen objects are still freed by reference
        # counting; only a cycle that was alive at this moment and dies later is
        # never collected, a bounded one-off.
        gc.freeze()
        _warm = True
    pause = time.perf_counter() - started
    FULL_COLLECTIONS.observe(pause)
    log.debug("collected %d object(s) in %.1f ms", found, pause * 1e3)
    return found
