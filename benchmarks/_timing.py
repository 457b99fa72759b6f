"""Timing shared by the benchmark scripts (run them as ``python benchmarks/<script>.py``)."""

import json
import os
import platform
import time
from pathlib import Path

import numpy as np


def median_time(run, repeats):
    """Median wall time of ``repeats`` calls of ``run()``, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def interleaved_medians(runs, repeats, pause=0.1, cpu=None):
    """``{name: (median wall time, last result)}`` of the callables in ``runs``, timed in turn
    within each repeat, so a busy spell on a shared machine slows every contender alike.
    With a dict ``cpu``, each contender's median CPU time (the process's, every thread's)
    goes into it too: what a call costs the machine, beside how long it takes.

    Each call starts ``pause`` seconds after the previous one ends: thread pools that
    spin-wait after a call (OpenMP in scikit-learn, OpenBLAS, OpenCV) otherwise keep
    the cores busy into the next contender's time (measured: our 10^4 gallery search
    right after scikit-learn's took 18.9 ms, 13.0 ms after a 50 ms pause).
    """
    times = {name: [] for name in runs}
    cpu_times = {name: [] for name in runs}
    results = {}
    for _ in range(repeats):
        for name, run in runs.items():
            time.sleep(pause)
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = run()
            times[name].append(time.perf_counter() - start)
            cpu_times[name].append(time.process_time() - start_cpu)
    if cpu is not None:
        cpu.update({name: float(np.median(cpu_times[name])) for name in runs})
    return {name: (float(np.median(times[name])), results[name]) for name in runs}


def run_meta(args, **versions):
    """What a run was made on, for its ``results.json``: the date, the machine, its cores,
    Python's and numpy's versions, ``versions`` (e.g. ``scipy=scipy.__version__``) and the
    script's arguments (an ``argparse.Namespace``)."""
    return {
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        **versions,
        "args": vars(args),
    }


def rows_against(timed, ours, **measures):
    """A benchmark's table from :func:`interleaved_medians`' ``timed``: each contender's median
    seconds, how many times ``ours``'s they are, and each of ``measures`` (``key=function``
    of the contender's result)."""
    ours_seconds = timed[ours][0]
    return [
        {
            "contender": name,
            "seconds": seconds,
            "ours_faster": seconds / ours_seconds,
            **{key: measure(result) for key, measure in measures.items()},
        }
        for name, (seconds, result) in timed.items()
    ]


def write_results(out, **results):
    """``results`` as ``out/results.json`` (the folder made if need be)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
