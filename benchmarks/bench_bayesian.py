"""Bayesian matching against the direct way: pairs enumerated, scikit-learn PCA, scipy Mahalanobis.

1. Fit: eigenvision's :class:`BayesianSpace` forms the intra- and
   extrapersonal covariances in closed form from class scatters; the direct
   way (Moghaddam, Jebara & Pentland 2000, as written) enumerates every pair
   difference and fits scikit-learn PCA to each set. Same spectra, timed side
   by side.
2. ML search: nearest gallery image by intrapersonal Mahalanobis distance,
   eigenvision's whitened codes + exact search against
   ``scipy.spatial.distance.cdist(metric="mahalanobis")``; same answers.
3. Accuracy on AT&T (1-5 train / 6-10 test) across components and metrics,
   and the OpenCV recognizers' fit/predict times on the same images.

Run:  python benchmarks/bench_bayesian.py --out benchmarks/out/bayesian
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from _timing import interleaved_medians
from scipy.spatial.distance import cdist
from sklearn.decomposition import PCA

import eigenvision as ev
from eigenvision import datasets
from eigenvision.views import resized


def direct_fit(X, y, m, k):
    """The paper's recipe with scikit-learn: PCA, every pair difference, PCA of each set."""
    pca = PCA(m, svd_solver="full").fit(X)
    Z = pca.transform(X)
    i, j = np.triu_indices(len(Z), 1)
    same = y[i] == y[j]
    deltas = Z[i] - Z[j]
    spaces = []
    for mask in (same, ~same):
        both = np.vstack([deltas[mask], -deltas[mask]])  # zero mean, as the model assumes
        spaces.append(PCA(m, svd_solver="full").fit(both))
    return pca, spaces


def fit_side_by_side(X, y, repeats, k=20):
    ours = ev.BayesianSpace(k)
    m = len(X) - len(np.unique(y))
    timed = interleaved_medians(
        {"eigenvision": lambda: ours.fit(X, y), "direct_sklearn": lambda: direct_fit(X, y, m, k)},
        repeats,
    )
    _, (_, (intra, _)) = timed["direct_sklearn"]
    rows = int(np.sum(y[:, None] == y[None]) - len(y))  # ordered same-person pairs: +-d each
    # PCA divides the rows' scatter by rows - 1, the model by rows
    reference = intra.explained_variance_ * (rows - 1) / rows
    agree = np.max(np.abs(ours.intra_variances_[:k] - reference[:k]) / reference[:k])
    row = {
        "images": len(X),
        "pixels": X.shape[1],
        "pairs": len(X) * (len(X) - 1) // 2,
        "eigenvision_s": timed["eigenvision"][0],
        "direct_sklearn_s": timed["direct_sklearn"][0],
        "max_relative_eigenvalue_difference": float(agree),
    }
    row["speedup"] = row["direct_sklearn_s"] / row["eigenvision_s"]
    print("fit", json.dumps(row))
    return row


def search_side_by_side(train, test, repeats, k=20):
    rec = ev.Recognizer(k, method="bayesian").fit(train)
    space = rec.feature_
    Z_train = space.pca_.transform(train.images).astype(np.float64)
    Z_test = space.pca_.transform(test.images).astype(np.float64)
    basis = space.components_.astype(np.float64) @ space.pca_.components_.astype(np.float64).T
    inverse_covariance = basis.T @ basis  # W W^T = Sigma_I^-1 in the PCA step's coordinates
    timed = interleaved_medians(
        {
            "eigenvision": lambda: rec.kneighbors(test, k=1, return_indices=True)[2][:, 0],
            "scipy_cdist": lambda: cdist(
                Z_test, Z_train, "mahalanobis", VI=inverse_covariance
            ).argmin(1),
        },
        repeats,
    )
    ours, theirs = timed["eigenvision"][1], timed["scipy_cdist"][1]
    row = {
        "gallery": len(train),
        "probes": len(test),
        "eigenvision_s": timed["eigenvision"][0],
        "scipy_cdist_s": timed["scipy_cdist"][0],
        "same_answers": float(np.mean(ours == theirs)),
    }
    row["speedup"] = row["scipy_cdist_s"] / row["eigenvision_s"]
    print("search", json.dumps(row))
    return row


def accuracy(train, test):
    rows = []
    for shape in ((28, 23), (56, 46), None):
        for metric in ("euclidean", "cosine"):
            for k in (5, 10, 20, 40, 80, 120):
                rec = ev.Recognizer(k, method="bayesian", metric=metric, shape=shape).fit(train)
                rate = float(rec.score(test, test.labels))
                rows.append({"shape": shape, "metric": metric, "n_components": k, "rate": rate})
                print(f"accuracy shape={shape} {metric:<9} k={k:<3} {rate:.3f}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--out", default="benchmarks/out/bayesian")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    att = datasets.load_att(args.data and Path(args.data) / "att_faces")
    train, test = att.split(5, order="name")
    small_train, small_test = resized(train, (56, 46)), resized(test, (56, 46))
    flat = small_train.images.reshape(len(train), -1).astype(np.float64)
    results = {
        "meta": {
            "date": time.strftime("%Y-%m-%d"),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "eigenvision": ev.__version__,
            "args": vars(args),
        },
        "fit": [
            fit_side_by_side(flat, train.labels, args.repeats),
            fit_side_by_side(
                att.images.reshape(len(att), -1).astype(np.float64), att.labels, args.repeats
            ),
        ],
        "search": search_side_by_side(small_train, small_test, args.repeats),
        "accuracy": accuracy(train, test),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
