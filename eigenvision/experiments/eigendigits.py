"""Eigen-digits: the mean and first eigenvectors of one digit, and the grid m + z1 v1 + z2 v2.

The lecture fits the 658 USPS threes; v1 lengthens the lower part of the 3,
v2 changes its thickness. Default data: scikit-learn's 8x8 digits.
"""

from __future__ import annotations

import numpy as np

from ..eigenspace import Eigenspace
from ..plot import eigenimages, mode_grid
from ._common import Run, add_digit_options, data_env, digits_split, parser

NAME = "eigendigits"


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    add_digit_options(command, digit=True)
    command.add_argument("--n-components", type=int, default=10)
    command.add_argument(
        "--steps",
        type=float,
        nargs="+",
        default=[-2, -1, 0, 1, 2],
        help="z values in standard deviations (default: -2 -1 0 1 2)",
    )
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    train, _ = digits_split(args.dataset)
    digits = train[train.labels == args.digit]
    space = Eigenspace(args.n_components).fit(digits)
    run.figure(mode_grid(space, components=(0, 1), steps=args.steps), "figure.png")
    run.figure(eigenimages(space, n=min(9, space.n_components_), ncols=5), "eigendigits.png")
    run.results = {
        "n_images": len(digits),
        "image_shape": space.image_shape_,
        "eigenvalues": space.eigenvalues_[: space.n_components_],
        "explained_variance_ratio": space.explained_variance_ratio_,
        "cumulative_variance": np.cumsum(space.explained_variance_ratio_),
    }
    first_two = 100 * space.explained_variance_ratio_[:2].sum()
    return run.finish(
        f"{len(digits)} {args.digit}s of {args.dataset}: v1 and v2 explain "
        f"{first_two:.1f}% of the variance"
    )


if __name__ == "__main__":
    main()
