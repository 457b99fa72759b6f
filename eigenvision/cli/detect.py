"""``eigenvision detect``: its options and its work."""

from __future__ import annotations

import json
from pathlib import Path

from .._argtypes import probability
from .._base import counted, format_below, progress
from ..faces.photos import (
    default_finder,
)
from ..io import load_image
from ..plot import faces as plot_faces
from ..plot import save_figure
from ._common import face_json, image_paths


def options(parser):
    """The options of ``eigenvision detect``."""
    parser.add_argument("images", nargs="+", help="photo files or folders of them")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--draw", metavar="OUT.png", help="draw the faces found into this file")
    parser.add_argument("--threshold", type=probability, help="smallest probability of a face")
    parser.add_argument("--model", help="a face finder file (default: the one in data/)")


def run(args) -> int:
    args.images = image_paths(args.images)
    finder = default_finder(args.model)
    report = []
    for path in progress(args.images, desc="finding faces", enabled=not args.quiet):
        image = load_image(path, as_gray=False)
        found, likeliest = finder.find(image, threshold=args.threshold, return_likeliest=True)
        report.append({"image": path, "faces": [face_json(face) for face in found]})
        if args.draw:
            target = Path(args.draw)
            if len(args.images) > 1:
                target = target.with_name(f"{Path(path).stem}-{target.name}")
            save_figure(plot_faces(image, found, title=Path(path).name), target)
        if not args.json:
            cells = "; ".join(
                f"box ({f.box[0]:.0f}, {f.box[1]:.0f}, {f.box[2]:.0f}, {f.box[3]:.0f}) eyes "
                f"({f.left_eye[0]:.0f}, {f.left_eye[1]:.0f}) ({f.right_eye[0]:.0f}, "
                f"{f.right_eye[1]:.0f}) p {f.confidence:.2f}"
                for f in found
            )
            threshold = finder.threshold if args.threshold is None else args.threshold
            hint = (
                ""
                if found or likeliest is None
                else (
                    f" (the likeliest has p {format_below(likeliest, threshold)} at most, below "
                    f"the threshold {threshold:.4g}: a lower --threshold may show it)"
                )
            )
            print(f"{path}: {counted(len(found), 'face')}" + (f": {cells}" if found else hint))
    if args.json:
        print(json.dumps(report, indent=2, allow_nan=False))
    return 0
