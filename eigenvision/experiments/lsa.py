"""Latent semantic analysis (Deerwester et al. 1990), the lecture's example: a general engine."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..datasets import load_lsa_example
from ..eigenspace import Eigenspace
from ._common import Run, parser

NAME = "lsa"


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0], data=False)
    command.add_argument("--rank", type=int, default=2)
    args = command.parse_args(argv)
    run = Run(NAME, args)
    X, terms, titles = load_lsa_example()
    full = Eigenspace(center=False).fit(X)
    space = Eigenspace(args.rank, center=False).fit(X)
    X_hat = space.reconstruct(X)
    before, after = np.corrcoef(X), np.corrcoef(X_hat)
    figure = Figure(figsize=(13, 4.2))
    left, middle, right = figure.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1.4, 1.4]})
    left.bar(np.arange(1, len(full.singular_values_) + 1), full.singular_values_)
    left.set_xlabel("index")
    left.set_ylabel("singular value")
    left.set_title("spectrum of the term x title matrix")
    for ax, matrix, title in (
        (middle, before, "term correlations, raw counts"),
        (right, after, f"term correlations, rank {args.rank}"),
    ):
        shown = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_xticks(range(len(terms)), terms, rotation=90, fontsize=7)
        ax.set_yticks(range(len(terms)), terms, fontsize=7)
        ax.set_title(title)
    figure.colorbar(shown, ax=right, fraction=0.046)
    run.figure(figure)
    index = {t: i for i, t in enumerate(terms)}
    pairs = {
        f"{a}-{b}": (before[index[a], index[b]], after[index[a], index[b]])
        for a, b in (("human", "user"), ("human", "minors"))
    }
    run.results = {
        "singular_values": full.singular_values_,
        "terms": terms,
        "titles": titles,
        "reconstruction": X_hat,
        "correlations": {k: {"raw": v[0], "reduced": v[1]} for k, v in pairs.items()},
    }
    hu = pairs["human-user"]
    return run.finish(
        f"r(human, user) {hu[0]:.2f} raw -> {hu[1]:.2f} at rank {args.rank}; "
        f"singular values {full.singular_values_[0]:.2f} ... {full.singular_values_[-1]:.2f}"
    )


if __name__ == "__main__":
    main()
