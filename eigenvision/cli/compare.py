"""``eigenvision compare``: its options and its work."""

from __future__ import annotations

import json

from ..faces.compare import (
    compare_faces,
)
from ..faces.crops import identity_threshold
from ..faces.photos import (
    default_finder,
)
from ._common import (
    add_face_threshold,
    add_identity_options,
    face_threshold_note,
    plain,
    set_face_threshold,
)


def options(parser):
    """The options of ``eigenvision compare``."""
    parser.add_argument("photo_a", help="a photo (the most confident face is compared)")
    parser.add_argument("photo_b", help="another photo")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_identity_options(parser)
    add_face_threshold(parser)


def run(args) -> int:
    finder = default_finder(args.finder)
    set_face_threshold(finder, args)
    result = compare_faces(args.photo_a, args.photo_b, finder=finder, model=args.model)
    if args.json:
        photos = []
        for face, count in zip(result.faces, result.face_counts, strict=True):
            photos.append({"box": [plain(v) for v in face.box], "faces_in_photo": count})
        print(
            json.dumps(
                {
                    "same_person": bool(result.accepted),
                    "probability": plain(result.probability),
                    "score": plain(-result.distance),
                    "threshold": plain(-result.threshold),
                    "model": result.model,
                    "face_threshold": identity_threshold(finder),
                    "photos": photos,
                }
            )
        )
    else:
        verdict = "the same person" if result.accepted else "two different people"
        print(
            f"{args.photo_a} and {args.photo_b}: {verdict} (P(same) {result.probability:.3f}, "
            f"score {-result.distance:.3g}, threshold {-result.threshold:.3g}; "
            f"{result.model} identity model)"
        )
        for path, count in zip((args.photo_a, args.photo_b), result.face_counts, strict=True):
            if count > 1:
                print(f"{path} shows {count} faces: the most confident was compared")
        print(face_threshold_note(identity_threshold(finder)))
    return 0
