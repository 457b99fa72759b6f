"""Latent semantic analysis (Deerwester et al. 1990), the lecture's example: a general engine."""

from __future__ import annotations

import numpy as np

from .. import plot
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
    figure = plot.term_correlations(full.singular_values_, before, after, terms, args.rank)
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
