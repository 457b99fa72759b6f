"""``eigenvision detect``: its options and its work."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._argtypes import probability
from .._base import counted, format_below, progress
from ..faces.photos import default_finder, small_face_finder
from ..io import load_image
from ..plot import faces as plot_faces
from ..plot import save_figure
from ._common import face_json, image_paths


def options(parser):
    """The options of ``eigenvision detect``."""
    parser.add_argument("images", nargs="+", help="photo files or folders of them")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--draw",
        metavar="OUT",
        help="draw the faces found: into this .png file for one photo, into this folder (one "
        "<photo>.png each) for several",
    )
    parser.add_argument("--threshold", type=probability, help="smallest probability of a face")
    parser.add_argument("--model", help="a face finder file (default: the one in data/)")
    parser.add_argument(
        "--small-faces",
        action="store_true",
        help="also search faces smaller than the finder's window, down to eyes 10 pixels apart "
        "for the shipped finder (0.625 of its window's eye distance; the photo enlarged: slower)",
    )


def drawings(draw, paths) -> list:
    """Where ``--draw`` puts each photo's figure: a ``.png`` file for one photo; otherwise a
    folder (existing, ending in a separator, or without a suffix) holding ``<photo>.png`` each
    (numbered where two photos share a name)."""
    target = Path(draw)
    folder = target.is_dir() or draw.endswith(("/", os.sep)) or not target.suffix
    if not folder:
        if target.suffix.lower() != ".png":
            raise ValueError(f"--draw {draw}: name a .png file or a folder to draw into")
        if len(paths) == 1:
            return [target]
        raise ValueError(
            f"--draw {draw} names one file, and there are {len(paths)} photos: name a folder "
            f"instead (--draw {target.with_suffix('')}), which gets one <photo>.png each"
        )
    target.mkdir(parents=True, exist_ok=True)
    stems = [Path(path).stem for path in paths]
    shared = {stem for stem in stems if stems.count(stem) > 1}
    return [
        target / (f"{stem}-{index}.png" if stem in shared else f"{stem}.png")
        for index, stem in enumerate(stems)
    ]


def run(args) -> int:
    args.images = image_paths(args.images)
    drawn = drawings(args.draw, args.images) if args.draw else [None] * len(args.images)
    finder = default_finder(args.model)
    if args.small_faces:
        finder = small_face_finder(finder)
    report = []
    for path, drawing in zip(
        progress(args.images, desc="finding faces", enabled=not args.quiet), drawn, strict=True
    ):
        image = load_image(path, as_gray=False)
        found, likeliest = finder.find(image, threshold=args.threshold, return_likeliest=True)
        report.append({"image": path, "faces": [face_json(face) for face in found]})
        if drawing is not None:
            save_figure(plot_faces(image, found, title=Path(path).name), drawing)
            report[-1]["drawing"] = str(drawing)
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
            if not found and not args.small_faces:
                hint += "; faces with eyes closer than the window's may need --small-faces"
            print(f"{path}: {counted(len(found), 'face')}" + (f": {cells}" if found else hint))
            if drawing is not None:
                print(f"  drawn into {drawing}")
    if args.json:
        print(json.dumps(report, indent=2, allow_nan=False))
    return 0
