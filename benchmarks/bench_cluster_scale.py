"""How do time and memory grow with n when grouping codes without being told how many groups?

``ev.cluster(X)`` without a count: each code's nearest neighbours (the project's exact
search in blocks), a sparse self-tuning affinity, the eigengap of its normalised Laplacian
by LOBPCG, and the groups from the same eigenvectors (pivoted QR). Then the lecture
appendix's kernel route: a KernelPCA with 1,000 Nyström landmarks (``gamma=1e-3``), whose
kernel is grouped from its ``(n, m)`` factor without a count. Beside them on the same data:
scikit-learn's average linkage told the count, with and without a k-nearest-neighbour
connectivity graph, and HDBSCAN (no count). Data: ``--groups`` Gaussian blobs of 128
dimensions (scikit-learn's ``make_blobs``, ``cluster_std=4``), n from 2,000 up. Each run is
a fresh process: its peak resident memory beyond the data (``ru_maxrss``), its wall time,
the groups found and the adjusted Rand index. Peers stop where they would take more than
``--peer-limit`` points (their memory grows as n^2). The growth exponents are least-squares
slopes of log(time) and log(memory) against log(n).

Run:  python benchmarks/bench_cluster_scale.py --out benchmarks/out/cluster_scale
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import resource
import time
from pathlib import Path

import numpy as np


def _blobs(n, groups):
    from sklearn.datasets import make_blobs

    return make_blobs(n, 128, centers=groups, cluster_std=4.0, random_state=0)


def _run(method, n, groups, queue):
    """One method on one n, in its own process: (seconds, peak MB over the data, groups, ARI)."""
    from sklearn.metrics import adjusted_rand_score

    X, truth = _blobs(n, groups)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if method == "eigenvision (no count)":
        import eigenvision as ev

        labels = ev.cluster(X)
    elif method.startswith("eigenvision Nystr"):
        import eigenvision as ev

        labels = ev.cluster(X, model=ev.KernelPCA(10, gamma=1e-3, n_landmarks=1000))
    elif method.startswith("scikit-learn average linkage"):
        from sklearn.cluster import AgglomerativeClustering
        from sklearn.neighbors import kneighbors_graph

        graph = kneighbors_graph(X, 10) if "connectivity" in method else None
        labels = AgglomerativeClustering(groups, linkage="average", connectivity=graph).fit_predict(
            X
        )
    else:
        from sklearn.cluster import HDBSCAN

        labels = HDBSCAN().fit_predict(X)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # kB on Linux
    queue.put(
        (seconds, peak / 1024, int(len(np.unique(labels))), adjusted_rand_score(truth, labels))
    )


def measure(method, n, groups):
    queue = multiprocessing.get_context("spawn").Queue()
    process = multiprocessing.get_context("spawn").Process(
        target=_run, args=(method, n, groups, queue)
    )
    process.start()
    result = queue.get()
    process.join()
    return result


def slope(ns, values):
    return float(np.polyfit(np.log(ns), np.log(np.maximum(values, 1e-9)), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/cluster_scale")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 20000, 50000, 100000]
    )
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--peer-limit", type=int, default=20000)
    args = parser.parse_args(argv)
    methods = (
        "eigenvision (no count)",
        "eigenvision Nystroem kernel, 1,000 landmarks (no count)",
        "scikit-learn average linkage (told the count)",
        "scikit-learn average linkage, connectivity (told the count)",
        "scikit-learn HDBSCAN (no count)",
    )
    rows = {method: [] for method in methods}
    for n in args.sizes:
        for method in methods:  # each size's methods in turn, on the same data
            if not method.startswith("eigenvision") and n > args.peer_limit:
                continue
            seconds, megabytes, found, ari = measure(method, n, args.groups)
            rows[method].append(
                {"n": n, "seconds": seconds, "peak_mb": megabytes, "groups": found, "ari": ari}
            )
            print(
                f"{method:62s} n={n:>7,d} {seconds:8.1f} s {megabytes:8.0f} MB "
                f"groups {found:4d} ARI {ari:.4f}",
                flush=True,
            )
    growth = {
        method: {
            "time_exponent": slope([r["n"] for r in runs], [r["seconds"] for r in runs]),
            "memory_exponent": slope([r["n"] for r in runs], [r["peak_mb"] for r in runs]),
        }
        for method, runs in rows.items()
        if len(runs) >= 2
    }
    results = {
        "dimensions": 128,
        "groups": args.groups,
        "machine": platform.platform(),
        "cpus": multiprocessing.cpu_count(),
        "rows": rows,
        "growth": growth,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(growth, indent=1))


if __name__ == "__main__":
    main()
