"""The recognizer a command trains: its options, its method and its component count."""

from __future__ import annotations

from .._argtypes import count, finite
from ..faces.compare import (
    default_identity_model,
)
from ..faces.features import FeatureDetector
from ..recognize import Recognizer
from ..views import view_count
from ._common import load_model


def component_count(args, n_images):
    """``--n-components``, else 40 where the images give plenty (80 views), else all they give."""
    if args.n_components is not None:
        return args.n_components
    views = view_count(n_images, jitter=args.jitter, mirror=args.mirror)
    return 40 if views >= 80 else None


def chosen_method(args) -> str:
    """``--method``, by default ``plda`` for photos (the shipped identity model: enrolment
    only, one photo per person works) and ``eigenfaces`` for face images."""
    if args.method is not None:
        return args.method
    return "plda" if getattr(args, "photos", False) else "eigenfaces"


def recognizer(args, n_images, **options):
    """The Recognizer the model options of ``train`` and ``evaluate`` describe."""
    method = chosen_method(args)
    detector = None
    if method in ("modular", "combined"):
        if not args.detector:
            raise ValueError(
                f"--method {method} needs --detector FEATURES.npz "
                "(make one with 'eigenvision features -o features.npz')"
            )
        detector = load_model(args.detector, FeatureDetector)
    if method == "plda":
        if args.n_components is not None:
            raise ValueError(
                "--n-components sizes an eigenspace; --method plda (the default for --photos) "
                "uses the shipped identity model: leave it out, or pass --method eigenfaces"
            )
        # the shipped identity model is the background: training only enrols
        chosen = getattr(args, "identity_model", None)
        options = {"feature": default_identity_model(chosen), **options}
        if options.get("finder") is None and options.get("shape") is None:
            options["shape"] = tuple(options["feature"].shape)
    return Recognizer(
        n_components=component_count(args, n_images),
        method=method,
        metric=args.metric,
        mirror=args.mirror,
        jitter=args.jitter,
        detector=detector,
        face_box=tuple(args.face_box) if args.face_box else None,
        **options,
    )


def add_model_options(parser):
    methods = Recognizer._params["method"].choices
    parser.add_argument(
        "--method",
        choices=methods,
        help="the feature: whole-face eigenspace, Fisherfaces, Bayesian intra/extra-personal, "
        "eigenfeatures, both, or the shipped identity model (plda: trained on LFW, training "
        "only enrols) (default: plda for --photos, else eigenfaces)",
    )
    parser.add_argument("--detector", help="FeatureDetector model file (modular, combined)")
    parser.add_argument(
        "--face-box",
        type=finite,
        nargs=4,
        metavar=("X", "Y", "W", "H"),
        help="where the face lies in every image, for locating features",
    )
    parser.add_argument(
        "--n-components",
        type=count(1),
        help="eigenspace components (fisherfaces: discriminant directions; bayesian: "
        "intrapersonal components; default: 40, or all the training images give when they "
        "are fewer than 80)",
    )
    metrics = Recognizer._params["metric"].choices
    parser.add_argument(
        "--metric",
        choices=metrics,
        default="euclidean",
        help="distance between codes (default: %(default)s)",
    )
    parser.add_argument(
        "--mirror", action="store_true", help="also use mirrored images (twice the views)"
    )
    parser.add_argument(
        "--jitter",
        type=count(0),
        default=0,
        metavar="PIXELS",
        help="also use copies shifted by this many pixels (8 per image; try 2 with --mirror)",
    )
