"""Streaming fit against IncrementalPCA and the in-memory fit: time, peak memory, accuracy.

Times are taken on batches made beforehand (generating them is not timed);
peak memory (tracemalloc) in separate runs fed by the generator.

Run: python benchmarks/bench_streaming.py [--rows 60000 --features 784 --batch 2000]
"""

import argparse
import time
import tracemalloc

import numpy as np
from _timing import median_time
from scipy.linalg import subspace_angles
from sklearn.decomposition import PCA, IncrementalPCA

import eigenvision as ev


def batches(rows, features, batch, seed=0):
    basis = np.random.default_rng(seed).normal(size=(30, features)).astype(np.float32)
    for start in range(0, rows, batch):
        r = np.random.default_rng(seed + 1 + start)
        yield (
            r.normal(size=(batch, 30)).astype(np.float32)
            * np.geomspace(20, 1, 30, dtype=np.float32)
        ) @ basis + 0.1 * r.normal(size=(batch, features)).astype(np.float32)


def measure(run):
    tracemalloc.start()
    start = time.perf_counter()
    model = run()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return model, seconds, peak / 1e6


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--features", type=int, default=784)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("-k", type=int, default=20)
    args = parser.parse_args(argv)
    stream = lambda: batches(args.rows, args.features, args.batch)  # noqa: E731

    def run_ipca(source):
        ipca = IncrementalPCA(args.k, batch_size=args.batch)
        for b in source:
            ipca.partial_fit(b)
        return ipca

    # Peak memory: fed by the generator, one batch alive at a time.
    _, _, m_ours = measure(lambda: ev.Eigenspace(args.k).fit_stream(stream()))
    _, _, m_ipca = measure(lambda: run_ipca(stream()))
    # Time: the same batches, made beforehand, so generating them is timed for neither.
    made = list(stream())
    t_ours, ours = median_time(lambda: ev.Eigenspace(args.k).fit_stream(made), 3)
    t_ipca, ipca = median_time(lambda: run_ipca(made), 1)
    X = np.concatenate(made).astype(np.float64)
    made.clear()
    reference = PCA(args.k, svd_solver="covariance_eigh").fit(X)
    _, t_mem, m_mem = measure(lambda: ev.Eigenspace(args.k).fit(X))
    angle = lambda c: float(np.max(subspace_angles(c.T.astype(float), reference.components_.T)))  # noqa: E731
    print(f"{args.rows} x {args.features}, batches of {args.batch}, k={args.k}")
    print(f"{'':<24}{'seconds':>9}{'peak MB':>9}{'max angle (rad)':>17}")
    print(
        f"{'eigenvision fit_stream':<24}{t_ours:9.2f}{m_ours:9.1f}{angle(ours.components_):17.1e}"
    )
    print(
        f"{'sklearn IncrementalPCA':<24}{t_ipca:9.2f}{m_ipca:9.1f}{angle(ipca.components_):17.1e}"
    )
    print(
        f"{'eigenvision fit (RAM)':<24}{t_mem:9.2f}{m_mem:9.1f}"
        f"{'(X held: %.0f MB)' % (X.nbytes / 1e6):>17}"
    )
    print(f"speed-up over IncrementalPCA: {t_ipca / t_ours:.1f}x")


if __name__ == "__main__":
    main()
