"""Timing shared by the benchmark scripts (run them as ``python benchmarks/<script>.py``)."""

import time

import numpy as np


def median_time(run, repeats):
    """Median wall time of ``repeats`` calls of ``run()``, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result
