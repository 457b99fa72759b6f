"""Is it a 3? One digit's eigenspace scores every test digit by DFFS, DIFS, likelihood: ROC, AUC."""

from __future__ import annotations

import numpy as np

from ..eigenspace import Eigenspace
from ..evaluate import auc, roc_curve
from ..neighbors import nearest_subspace
from ..plot import confusion, roc
from ._common import Run, add_digit_options, data_env, digits_split, parser

NAME = "novelty_roc"


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    add_digit_options(command, digit=True)
    command.add_argument("--n-components", type=int, default=10)
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    train, test = digits_split(args.dataset)
    space = Eigenspace(args.n_components).fit(train[train.labels == args.digit])
    flat = test.images.reshape(len(test), -1)
    positive = test.labels == args.digit
    scores = {
        "DFFS": -space.dffs(flat),
        "DIFS": -space.difs(flat),
        "likelihood": space.score_samples(flat),
    }
    curves, areas = {}, {}
    for name, score in scores.items():
        fpr, tpr, _ = roc_curve(positive, score)
        areas[name] = auc(fpr, tpr)
        curves[f"{name} (AUC {areas[name]:.3f})"] = (fpr, tpr)
    run.figure(
        roc(curves, title=f"{args.dataset}: is it a {args.digit}? (r = {args.n_components})")
    )
    predicted, _ = nearest_subspace(train, test, args.n_components)
    classes = np.unique(train.labels)
    matrix = np.array(
        [[np.sum((test.labels == a) & (predicted == b)) for b in classes] for a in classes]
    )
    accuracy = float(np.trace(matrix) / matrix.sum())
    run.figure(
        confusion(
            matrix,
            classes,
            title=f"per-class eigenspaces (r = {args.n_components}): {100 * accuracy:.1f}% correct",
        ),
        "confusion.png",
    )
    run.results = {
        "auc": areas,
        "n_positive": int(positive.sum()),
        "n_test": len(test),
        "confusion": matrix,
        "per_class_accuracy": accuracy,
        "scores": {k: v for k, v in scores.items()},
        "labels": test.labels,
    }
    return run.finish(
        ", ".join(f"{k} AUC {v:.3f}" for k, v in areas.items())
        + f"; per-class classifier {100 * accuracy:.1f}%"
    )


if __name__ == "__main__":
    main()
