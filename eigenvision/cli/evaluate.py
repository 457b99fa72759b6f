"""``eigenvision evaluate``: its options and its work."""

from __future__ import annotations

import json

import numpy as np

from .. import evaluate
from .._argtypes import count
from ._common import SOURCES_HELP, load_images
from ._recognizers import add_model_options, recognizer


def options(parser):
    """The options of ``eigenvision evaluate``."""
    parser.add_argument("source", help=SOURCES_HELP)
    parser.add_argument(
        "--scheme",
        choices=["kfold", "loo", "first_k_per_class"],
        default="first_k_per_class",
        help="stratified k folds, leave one out, or the first images of each class train and "
        "the rest test (default: %(default)s)",
    )
    parser.add_argument(
        "--folds", type=count(2), default=5, help="with kfold: folds (default: %(default)s)"
    )
    parser.add_argument(
        "--train-per-class",
        type=count(1),
        default=5,
        help="with first_k_per_class: training images per class (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="with kfold: the shuffle's seed (default: %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_model_options(parser)


def run(args) -> int:
    images = load_images(args.source)
    n_train = {  # the training images of one fold
        "first_k_per_class": args.train_per_class * len(np.unique(images.labels)),
        "kfold": len(images) * (args.folds - 1) // args.folds,
        "loo": len(images) - 1,
    }[args.scheme]
    model = recognizer(args, min(n_train, len(images)))
    rates = evaluate.cross_validate(
        model,
        images,
        scheme=args.scheme,
        n_splits=args.folds,
        k=args.train_per_class,
        seed=args.seed,
        progress=not args.quiet,
    )
    summary = {
        "scheme": args.scheme,
        "recognition_rate_mean": float(rates.mean()),
        "recognition_rate_std": float(rates.std()),
        "folds": rates.tolist(),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"{model.method}/{args.metric}, {model.n_components or 'all'} components, "
            f"{args.scheme}: "
            f"recognition rate {rates.mean():.3f}"
            + (
                f" +- {rates.std():.3f} over {len(rates)} folds"
                if len(rates) > 1
                else f" (one split: the first {args.train_per_class} images of each class train)"
            )
        )
    return 0
