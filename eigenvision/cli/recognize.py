"""``eigenvision recognize``: its options and its work."""

from __future__ import annotations

import json

from .._argtypes import count, finite
from .._base import counted, format_below, progress
from ..faces.compare import (
    file_scale,
)
from ..faces.crops import identity_threshold
from ..io import load_image
from ..recognize import Recognizer
from ._common import (
    add_face_threshold,
    face_json,
    face_threshold_note,
    image_paths,
    load_model,
    plain,
    refuse_whole_photos,
    set_face_threshold,
)


def options(parser):
    """The options of ``eigenvision recognize``."""
    parser.add_argument("model", help="model file from 'eigenvision train'")
    parser.add_argument(
        "images",
        nargs="+",
        help="image files or folders of them (photos, every face named, for --photos models)",
    )
    parser.add_argument(
        "--top", type=count(1), default=5, help="nearest matches to list (default: %(default)s)"
    )
    parser.add_argument("--threshold", type=finite, help="reject matches farther than this")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_face_threshold(parser)


def run(args) -> int:
    args.images = image_paths(args.images)
    model = load_model(args.model, Recognizer)
    if args.threshold is not None:
        model.threshold = args.threshold
    if model.finder is not None:
        results = _recognize_photos(model, args)
        if args.json:
            print(json.dumps(results, indent=2, allow_nan=False))
        return 0
    if args.face_threshold is not None:
        raise ValueError("--face-threshold is for models trained on photos (train --photos)")
    results = []
    for path in progress(args.images, desc="recognising", enabled=not args.quiet):
        image = load_image(path)
        refuse_whole_photos(image, model, path)
        distances, labels = model.kneighbors(image, k=args.top)
        predicted = model.predict(image)[0]
        # P(same person) of the nearest match, where the method has one (bayesian)
        same_person = model.verify(image, labels[0, 0]).probability
        results.append(
            {
                "image": path,
                "label": plain(predicted),
                "probability": same_person,
                "matches": [
                    {"label": plain(label), **_how_near(model, distance)}
                    for label, distance in zip(labels[0], distances[0], strict=True)
                ],
            }
        )
    if args.json:
        print(json.dumps(results, indent=2, allow_nan=False))
    else:
        for result in results:
            matches = ", ".join(f"{m['label']} ({_shown(m)})" for m in result["matches"])
            sure = "" if result["probability"] is None else f" (P same {result['probability']:.3f})"
            print(f"{result['image']}: {result['label']}{sure}    nearest: {matches}")
    return 0


def _recognize_photos(model, args) -> list:
    """Every face of each photo with its name (a model trained with ``--photos``)."""
    set_face_threshold(model.finder, args)
    results = []
    for path in progress(args.images, desc="recognising", enabled=not args.quiet):
        image = load_image(path, as_gray=False, max_side=model.finder.max_side)
        named = model.identify(image)
        to_file = file_scale(path, image)  # decoded reduced: faces in the file's pixels
        results.append(
            {
                "image": path,
                "face_threshold": identity_threshold(model.finder),
                "faces": [
                    {
                        **face_json(face.scaled(to_file)),
                        "label": plain(label),
                        **_how_near(model, distance),
                    }
                    for face, label, distance in named
                ],
            }
        )
    if not args.json:
        for result in results:
            cells = "; ".join(
                f"{face['label']} ({_shown(face)}) at box "
                + " ".join(f"{v:.0f}" for v in face["box"])
                for face in result["faces"]
            )
            print(
                f"{result['image']}: {counted(len(result['faces']), 'face')}"
                + (cells and f": {cells}")
            )
        print(face_threshold_note(identity_threshold(model.finder)))
    return results


def _how_near(model, distance) -> dict:
    """A match as users read it: ``{"probability": P(same person)}`` for the identity model
    (its decisions are minus scores, negative for good matches), else ``{"distance": d}``."""
    same = model.same_person([distance])
    if same is None:
        return {"distance": plain(float(distance))}
    return {"probability": float(same[0])}


def _shown(match) -> str:
    """:func:`_how_near`'s match in a line of text."""
    if "probability" in match:  # 0.99996 is not shown as a certain 1.000
        probability = match["probability"]
        return "P same " + (format_below(probability, 1.0) if probability < 1 else "1")
    return f"{match['distance']:.4g}"
