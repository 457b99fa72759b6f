"""Clustering in component space: digits and faces grouped in pixels, eigenspaces, kernel PCA.

The lecture's appendix: cluster in the space of the principal components
rather than in pixel space. Digits (scikit-learn's 1,797, ten groups known):
adjusted Rand index and time of average-linkage, spectral and k-means
clustering on the pixels, on eigenspace codes of growing r and on kernel-PCA
codes. Faces (AT&T people 21-40, never seen; models fitted on people 1-20):
the number of people estimated by PLDA's even-odds cut, against eigenspaces
told the number.

    eigenvision experiment clustering --out experiments/figures/clustering
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.metrics import adjusted_rand_score

from .. import datasets
from ..cluster import METHODS, cluster
from ..eigenspace import Eigenspace
from ..evaluate import pair_precision_recall
from ..identity import PLDA
from ..kernel import KernelPCA
from ..plot import rate_curves
from ._common import Run, data_env, parser, steps

NAME = "clustering"


def _scored(truth, run):
    """Adjusted Rand index, pairwise F-measure, groups and seconds of one clustering."""
    start = time.perf_counter()
    labels = run()
    seconds = time.perf_counter() - start
    return {
        "ari": float(adjusted_rand_score(truth, labels)),
        "pairwise_f": pair_precision_recall(truth, labels)[2],
        "groups": int(labels.max() + 1),
        "seconds": seconds,
    }


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument("--ranks", type=int, nargs="+", default=[2, 5, 10, 20, 40])
    command.add_argument("--no-faces", action="store_true", help="digits only (no AT&T)")
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    digits = datasets.load_digits()
    X, truth = digits.images.reshape(len(digits), -1), digits.labels
    digit_results = {}
    for method in steps(METHODS, args, "methods"):
        rows = {"pixels": _scored(truth, lambda m=method: cluster(X, method=m, n_clusters=10))}
        for r in args.ranks:
            rows[f"eigenspace r={r}"] = _scored(
                truth,
                lambda m=method, r=r: cluster(X, model=Eigenspace(r), method=m, n_clusters=10),
            )
        rows["kernel PCA r=20"] = _scored(
            truth, lambda m=method: cluster(X, model=KernelPCA(20), method=m, n_clusters=10)
        )
        digit_results[method] = rows
    curves = {
        method: [rows[f"eigenspace r={r}"]["ari"] for r in args.ranks]
        for method, rows in digit_results.items()
    }
    references = {
        f"{method} on pixels": rows["pixels"]["ari"] for method, rows in digit_results.items()
    }
    run.figure(
        rate_curves(
            args.ranks,
            curves,
            references=references,
            ylabel="adjusted Rand index",
            title="scikit-learn digits: 10 groups, in r eigenspace components",
        )
    )
    run.results = {"digits": digit_results}
    summary = "digits ARI, pixels / eigenspace r=20: " + ", ".join(
        f"{method} {rows['pixels']['ari']:.3f} / {rows['eigenspace r=20']['ari']:.3f}"
        for method, rows in digit_results.items()
        if "eigenspace r=20" in rows
    )
    if not args.no_faces:
        faces = datasets.load_att()
        names = np.unique(faces.labels)
        train = np.isin(faces.labels, names[:20])
        F = faces.images.reshape(len(faces), -1)
        truth = faces.labels[~train]
        plda = PLDA(19, pca_components=60).fit(F[train], faces.labels[train])
        space = Eigenspace(60).fit(F[train])
        face_results = {
            "PLDA, even odds (not told)": _scored(truth, lambda: cluster(F[~train], model=plda)),
            "PLDA, spectral (eigengap)": _scored(
                truth, lambda: cluster(F[~train], model=plda, method="spectral")
            ),
            "eigenspace r=60, told 20": _scored(
                truth, lambda: cluster(F[~train], model=space, n_clusters=20)
            ),
            "pixels, told 20": _scored(truth, lambda: cluster(F[~train], n_clusters=20)),
        }
        run.results["att_people_21_40"] = face_results
        best = face_results["PLDA, even odds (not told)"]
        summary += (
            f"; AT&T 20 unseen people: PLDA {best['groups']} groups, pairwise F "
            f"{best['pairwise_f']:.2f} (eigenspace told 20: "
            f"{face_results['eigenspace r=60, told 20']['pairwise_f']:.2f})"
        )
    return run.finish(summary)


if __name__ == "__main__":
    main()
