"""``eigenvision locate``: its options and its work."""

from __future__ import annotations

import json

from .._argtypes import finite
from .._base import progress
from ..faces.features import FeatureDetector
from ..io import load_image
from ._common import image_paths, load_model, plain


def options(parser):
    """The options of ``eigenvision locate``."""
    parser.add_argument("model", help="model file from 'eigenvision features'")
    parser.add_argument(
        "images", nargs="+", help="face images or folders of them (brows to chin, or use --box)"
    )
    parser.add_argument(
        "--box",
        type=finite,
        nargs=4,
        metavar=("X", "Y", "W", "H"),
        help="where the face lies in every image (default: the whole image)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args) -> int:
    args.images = image_paths(args.images)
    detector = load_model(args.model, FeatureDetector)
    report = {}
    for path in progress(args.images, desc="locating", enabled=not args.quiet):
        found = detector.locate(load_image(path, as_gray=True), box=args.box)
        report[path] = {
            f: {
                key: plain(float(value))
                for key, value in (
                    ("x", x),
                    ("y", y),
                    ("score", found.scores[f]),
                    ("confidence", found.confidence[f]),
                )
            }
            for f, (x, y) in found.positions.items()
        }
        if not args.json:
            cells = "  ".join(
                f"{f} ({x:.1f}, {y:.1f}) conf {found.confidence[f]:.2f}"
                for f, (x, y) in found.positions.items()
            )
            print(f"{path}: {cells}")
    if args.json:
        print(json.dumps(report, indent=2, allow_nan=False))
    return 0
