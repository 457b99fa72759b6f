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


def interleaved_medians(runs, repeats):
    """``{name: (median wall time, last result)}`` of the callables in ``runs``, timed in turn
    within each repeat, so a busy spell on a shared machine slows every contender alike."""
    times = {name: [] for name in runs}
    results = {}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            results[name] = run()
            times[name].append(time.perf_counter() - start)
    return {name: (float(np.median(times[name])), results[name]) for name in runs}
