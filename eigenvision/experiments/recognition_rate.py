"""Digit recognition rate against r: 1-NN in component space and the per-class DFFS classifier.

The line to beat is 1-NN on raw pixels (scikit-learn's digits, first 898
train / last 899 test: about 3.9% error; USPS: about 5.6%).
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import KNeighborsClassifier

from ..neighbors import nearest_subspace
from ..plot import rate_curves
from ..recognize import Recognizer
from ._common import Run, add_digit_options, data_env, digits_split, parser, steps

NAME = "recognition_rate"


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    add_digit_options(command)
    command.add_argument(
        "--ranks", type=int, nargs="+", default=[1, 2, 3, 5, 8, 10, 15, 20, 30, 40]
    )
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    train, test = digits_split(args.dataset)
    flat_train = train.images.reshape(len(train), -1)
    flat_test = test.images.reshape(len(test), -1)
    pixels = KNeighborsClassifier(1).fit(flat_train, train.labels).score(flat_test, test.labels)
    ranks = [r for r in args.ranks if r < flat_train.shape[1]]
    nearest, per_class = [], []
    for r in steps(ranks, args, "ranks"):
        recognizer = Recognizer(r).fit(train)
        nearest.append(float(np.mean(recognizer.predict(test) == test.labels)))
        predicted, _ = nearest_subspace(train, test, r)
        per_class.append(float(np.mean(predicted == test.labels)))
    figure = rate_curves(
        ranks,
        {"1-NN in component space": nearest, "per-class eigenspace (min DFFS)": per_class},
        references={f"1-NN on pixels ({100 * pixels:.1f}%)": pixels},
        title=f"{args.dataset}: {len(train)} train / {len(test)} test",
    )
    run.figure(figure)
    best = int(np.argmax(per_class))
    run.results = {
        "ranks": ranks,
        "nearest_neighbour": nearest,
        "per_class_dffs": per_class,
        "pixels_1nn": pixels,
        "pixels_1nn_error": 1 - pixels,
    }
    return run.finish(
        f"1-NN pixels {100 * (1 - pixels):.1f}% error; component 1-NN best "
        f"{100 * max(nearest):.1f}%, per-class DFFS best {100 * per_class[best]:.1f}% "
        f"at r={ranks[best]}"
    )


if __name__ == "__main__":
    main()
