"""Singular values of the digits against column-permuted copies, and the rank chosen."""

from __future__ import annotations

import numpy as np

from ..plot import spectrum
from ..rank import select_rank
from ._common import Run, add_digit_options, data_env, digits_split, parser

NAME = "spectrum"


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    add_digit_options(command)
    command.add_argument("--digit", type=int, default=None, help="one digit only (default: all)")
    command.add_argument("--n-permutations", type=int, default=20)
    command.add_argument("--show", type=int, default=40, help="singular values shown")
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    train, _ = digits_split(args.dataset)
    if args.digit is not None:
        train = train[train.labels == args.digit]
    X = train.images.reshape(len(train), -1).astype(np.float64)
    chosen = select_rank(
        X, method="permutation", n_permutations=args.n_permutations, seed=args.seed
    )
    gap = select_rank(X, method="gap", max_rank=args.show)
    variance = select_rank(X, method="variance", fraction=0.95)
    shown = min(args.show, len(chosen.spectrum))
    figure = spectrum(
        chosen.spectrum[:shown],
        reference=chosen.reference[:, :shown],
        rank=chosen.rank,
        labels=("digits", f"column-permuted ({args.n_permutations} copies)"),
        title=f"{args.dataset}: permutation rank {chosen.rank}, eigengap rank {gap.rank}",
    )
    figure.axes[0].axvline(
        gap.rank + 0.5, color="C2", ls=":", lw=1.5, label=f"eigengap rank {gap.rank}"
    )
    figure.axes[0].legend()
    run.figure(figure)
    run.results = {
        "n_images": len(X),
        "singular_values": chosen.spectrum,
        "permuted_95th_percentile": chosen.threshold,
        "rank_permutation": chosen.rank,
        "rank_gap": gap.rank,
        "rank_95pct_variance": variance.rank,
    }
    return run.finish(
        f"rank {chosen.rank} by permutation, {gap.rank} by eigengap, "
        f"{variance.rank} for 95% of the variance ({len(X)} images)"
    )


if __name__ == "__main__":
    main()
