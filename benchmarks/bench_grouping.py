"""How much memory and time does grouping a large set of faces take, once they are described?

``cluster_faces`` scores every pair of faces with the identity model
(PLDA's ratio summed over the descriptions, normalised against the cohort),
learns the set's two kinds of pairs (``cluster.pair_mixture``: a mixture fitted
on 200,000 pairs drawn at random), turns each score into the probability of one
person and cuts scikit-learn's average linkage. Side by side on the same codes
(``--faces`` faces drawn from the shipped model's own PLDA, five of each
person): the library's path (the cross term a block of rows at a time, the
rest in place, the linkage on the scores' upper triangle), and the same
formulae written plainly (each description's scores, their sum, the
normalisation's terms and the probabilities as whole matrices, the linkage on
a copy). Reported: the peak of the memory numpy allocates (tracemalloc) in
units of the ``(n, n)`` score matrix, the median time, and whether the groups
agree.

Run:  python benchmarks/bench_grouping.py --out benchmarks/out/grouping
"""

from __future__ import annotations

import argparse
import json
import tracemalloc
from pathlib import Path

import numpy as np
from _timing import interleaved_medians
from sklearn.cluster import AgglomerativeClustering
from sklearn.metrics import adjusted_rand_score

import eigenvision as ev
from eigenvision.cluster import pair_mixture
from eigenvision.faces.groups import LEARNT_CUT, group_codes


def library(model, codes):
    """The grouping of ``cluster_faces`` from the faces' codes."""
    return group_codes(codes, model)


def plain(model, codes):
    """The same formulae on whole matrices."""
    blocks = list(model.plda_.models_.values())
    cuts = np.cumsum([0] + [part.identity_loadings_.shape[0] for part in blocks])
    raw = []
    for part, start, end in zip(blocks, cuts[:-1], cuts[1:], strict=True):
        a = codes[:, start:end]
        own = np.einsum("ij,ij->i", a @ part.quadratic_, a)
        raw.append(own[:, None] + own[None, :] + a @ part.cross_ @ a.T + part.offset_)
    raw = sum(raw)
    mean, std = model.cohort_statistics(codes)
    scores = ((raw - mean[:, None]) / std[:, None] + (raw - mean) / std) / 2
    distances = 1 - pair_mixture(scores).probability(scores)
    np.fill_diagonal(distances, 0.0)
    return AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=1 - LEARNT_CUT
    ).fit_predict(distances)


def drawn_codes(model, faces, rng, per_person=5):
    """``faces`` codes drawn from the model's own PLDA, ``per_person`` faces of each person:
    ``F h + e`` in each description, ``h ~ N(0, I)`` per person, ``e ~ N(0, S_w)`` per face."""
    person = np.arange(faces) // per_person
    blocks = []
    for part in model.plda_.models_.values():
        loadings, within = part.identity_loadings_, part.within_covariance_
        identity = rng.normal(size=(person[-1] + 1, loadings.shape[1])) @ loadings.T
        noise = rng.normal(size=(faces, len(within))) @ np.linalg.cholesky(within).T
        blocks.append(identity[person] + noise)
    return np.hstack(blocks)


def peak_of(function, *args):
    """``function(*args)`` and the peak of the memory allocated meanwhile, in bytes."""
    tracemalloc.start()
    try:
        result = function(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/out/grouping")
    parser.add_argument("--faces", type=int, default=9520, help="faces grouped (default 9,520)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    model = ev.default_identity_model("classical")  # PLDA fused over its descriptions
    rng = np.random.default_rng(0)
    codes = drawn_codes(model, args.faces, rng)
    matrix = args.faces**2 * 8
    rows = {}
    for name, function in (("eigenvision", library), ("plain formulae", plain)):
        labels, peak = peak_of(function, model, codes)
        rows[name] = {"peak_matrices": peak / matrix, "peak_gb": peak / 1e9, "labels": labels}
    seconds = interleaved_medians(
        {
            name: (lambda f=f: f(model, codes))
            for name, f in (("eigenvision", library), ("plain formulae", plain))
        },
        args.repeats,
    )
    labels = [row["labels"] for row in rows.values()]
    same = bool(adjusted_rand_score(*labels) == 1.0)  # one partition, numbered alike or not
    results = {
        "faces": args.faces,
        "score_matrix_gb": matrix / 1e9,
        "same_groups": same,
        "groups": int(rows["eigenvision"]["labels"].max() + 1),
        "rows": {
            name: {
                "peak_matrices": row["peak_matrices"],
                "peak_gb": row["peak_gb"],
                "seconds": seconds[name][0],
            }
            for name, row in rows.items()
        },
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print(f"{args.faces} faces (a score matrix of {matrix / 1e9:.2f} GB), same groups: {same}")
    for name, row in results["rows"].items():
        print(
            f"  {name:15} peak {row['peak_matrices']:.2f} matrices ({row['peak_gb']:.2f} GB), "
            f"{row['seconds']:.2f} s"
        )


if __name__ == "__main__":
    main()
