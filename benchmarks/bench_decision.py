"""How fast are the face finder's log distances to its face and non-face cluster spaces?

The finder's decision describes every stage-1 candidate of a photo (up to
2,000 per rotation) by its log DFFS and DIFS to 12 cluster eigenspaces
(Sung & Poggio's six face and six non-face clusters). Side by side on the
same windows (the astronaut's stage-1 candidates, as the decision sees
them): ``log_distances`` (every space in one product), each space's own
``Eigenspace.dffs`` and ``difs`` (what the finder did) and scikit-learn's
``PCA`` per space (``transform`` and ``inverse_transform`` for the
residual) with the same components. Also reported: the largest difference
of each from ours, in the logarithm.

Run:  python benchmarks/bench_decision.py --out benchmarks/out/decision
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import interleaved_medians, rows_against, write_results
from sklearn.decomposition import PCA

import eigenvision as ev
from eigenvision.faces.decision import log_distances


def per_space(X, spaces):
    """Each space's own dffs and difs (the finder's code before)."""
    columns = []
    for space in spaces:
        columns += [space.dffs(X), space.difs(X)]
    return np.log(np.maximum(np.stack(columns, axis=1), 1e-12))


def as_sklearn(space):
    """A fitted scikit-learn PCA holding ``space``'s mean, components and variances."""
    pca = PCA(space.n_components_)
    pca.mean_, pca.components_ = space.mean_.astype(float), space.components_.astype(float)
    pca.explained_variance_ = space.explained_variance_.astype(float)
    pca.n_components_, pca.n_features_in_, pca.whiten = space.n_components_, space.mean_.size, False
    return pca


def sklearn_pcas(X, pcas):
    columns = []
    for pca in pcas:
        codes = pca.transform(X)
        residual = X - pca.inverse_transform(codes)
        columns += [
            np.einsum("ij,ij->i", residual, residual),
            np.sum(codes**2 / pca.explained_variance_, axis=1),
        ]
    return np.log(np.maximum(np.stack(columns, axis=1), 1e-12))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/decision")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    finder = ev.faces.photos.default_finder()
    image = ev.normalize.resize(ev.faces.photos.sample_picture("astronaut"), (640, 640))
    candidates = finder.search.candidates(image)
    windows = finder.decision.normalized(finder.decision.windows(image, candidates))
    X = windows.reshape(len(windows), -1)
    spaces = [*finder.decision.face_clusters_.values(), *finder.decision.nonface_clusters_.values()]
    pcas = [as_sklearn(space) for space in spaces]
    runs = {
        "eigenvision log_distances": lambda: log_distances(X, spaces),
        "Eigenspace.dffs / difs per space": lambda: per_space(X, spaces),
        "scikit-learn PCA per space": lambda: sklearn_pcas(X, pcas),
    }
    timed = interleaved_medians(runs, args.repeats)
    ours = timed["eigenvision log_distances"][1]
    rows = rows_against(
        timed,
        "eigenvision log_distances",
        max_log_difference=lambda result: float(np.abs(result - ours).max()),
    )
    print(f"{len(X)} windows of {windows.shape[1:]}, {len(spaces)} spaces")
    for row in rows:
        print(
            f"{row['contender']:34s} {1e3 * row['seconds']:8.1f} ms   ours "
            f"{row['ours_faster']:5.1f}x faster   max |log difference| "
            f"{row['max_log_difference']:.1e}"
        )
    write_results(args.out, windows=len(X), spaces=len(spaces), rows=rows)


if __name__ == "__main__":
    main()
