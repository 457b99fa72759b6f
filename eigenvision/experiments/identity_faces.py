"""Which faces can identity work vouch for? Held-out detections, face or clutter, by P(face).

Every detection at probability 0.1 or more on held-out HELEN photos
(:func:`~eigenvision.faces.photos.helen_split`) and LFW photos of held-out
people (:func:`~eigenvision.faces.photos.lfw_split`) is a **face** when it
finds the annotated face, a face HELEN lists unannotated, or one that dlib's
CNN or HOG detector finds (referees for the faces no one annotated);
**clutter** when it covers less than a quarter of every such face's box (a
sign, a badge, a building); otherwise a **misplaced face** (a box across a
face, found but badly placed). The photos are split in two by photo: the
tuning part (HELEN's 60 calibration photos, every other LFW photo) on which
the identity threshold was checked, and the report part, never used for a
choice. For each threshold: clutter per photo, misplaced faces and the share
of the faces found at the detection threshold that identity work keeps.
Needs dlib (``eigenvision[deep]``).
"""

from __future__ import annotations

import numpy as np

from .. import datasets
from ..evaluate import face_found, finds_a_face_of
from ..faces.crops import identity_threshold
from ..faces.photos import annotated_helen_photo, default_finder, helen_split, lfw_face, lfw_split
from ..identity.deep import DEEP_INSTALL, MissingExtraError, deep_available
from ..io import load_image
from ..plot import rate_curves
from . import _dlib
from ._common import Run, data_env, parser, steps

NAME = "identity_faces"
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
_LOWEST = 0.1  # detections searched down to this probability
_COVERED = 0.25  # a detection covering less of every face box than this is clutter


def covered(box, faces) -> float:
    """The largest share of ``box``'s area that one of ``faces`` (``(x, y, w, h)``) covers."""
    x, y, w, h = box
    best = 0.0
    for fx, fy, fw, fh in faces:
        across = max(0.0, min(x + w, fx + fw) - max(x, fx))
        down = max(0.0, min(y + h, fy + fh) - max(y, fy))
        best = max(best, across * down / (w * h))
    return best


def label_detections(found, centre, iod, faces):
    """``[(probability, kind)]`` of a photo's detections: kind 'face', 'misplaced' or 'clutter'.

    Parameters
    ----------
    found : list of Face
    centre : (x, y) or None
        The annotated face's centre (None: no face annotated).
    iod : float
    faces : list of (x, y, w, h)
        Every other face the photo holds (unannotated, or found by the referees).
    """
    kinds = []
    annotated = [] if centre is None else [(centre[0] - iod, centre[1] - iod, 2 * iod, 2 * iod)]
    for face in found:
        if (centre is not None and face_found(face.box, centre, iod)) or finds_a_face_of(
            face.box, faces
        ):
            kind = "face"
        elif covered(face.box, annotated + list(faces)) < _COVERED:
            kind = "clutter"
        else:
            kind = "misplaced"
        kinds.append((face.confidence, kind))
    return kinds


def _tally(rows, photos, detection):
    """Per threshold: clutter per photo, misplaced faces, the share of faces kept."""
    probability = np.array([p for p, _ in rows])
    kind = np.array([k for _, k in rows])
    faces_at_detection = max(1, int(np.sum((kind == "face") & (probability >= detection))))
    return {
        f"{t:g}": {
            "clutter_per_photo": float(np.sum((kind == "clutter") & (probability >= t)) / photos),
            "clutter": int(np.sum((kind == "clutter") & (probability >= t))),
            "misplaced": int(np.sum((kind == "misplaced") & (probability >= t))),
            "faces_kept": float(np.sum((kind == "face") & (probability >= t)) / faces_at_detection),
        }
        for t in sorted({*THRESHOLDS, detection})
    }


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument("--helen", type=int, default=170, help="held-out HELEN photos (all)")
    command.add_argument("--lfw", type=int, default=1200, help="LFW photos of held-out people")
    args = command.parse_args(argv)
    data_env(args)
    if not deep_available():
        raise MissingExtraError(f"{NAME} needs dlib's face detectors as referees: {DEEP_INSTALL}")
    run = Run(NAME, args)
    finder = default_finder()
    referee = _dlib.Referee()
    rows = {"tuning": [], "report": []}
    photos = {"tuning": 0, "report": 0}
    files = datasets.helen_files()
    _, held = helen_split(photo for photo, _, _ in files)
    helen = [f for f in files if f[0] in held]
    calibration = {path for _, path, _ in helen[-60:]}  # the detection threshold's photos
    for _, image_path, pts_path in steps(helen[: args.helen], args, "HELEN photos"):
        image, centre, iod, others = annotated_helen_photo(image_path, pts_path)
        found = finder.find(image, threshold=_LOWEST, max_faces=20)
        part = "tuning" if image_path in calibration else "report"
        rows[part] += label_detections(found, centre, iod, list(others) + referee.boxes(image, 0))
        photos[part] += 1
    lfw = datasets.lfw_files()
    _, people = lfw_split(person for person, _ in lfw)
    chosen = [path for person, path in lfw if person in people]
    order = np.sort(np.random.default_rng(args.seed + 1).permutation(len(chosen))[: args.lfw])
    centre, iod = lfw_face()
    for number, index in enumerate(steps(order, args, "LFW photos")):
        image = load_image(chosen[index])
        found = finder.find(image, threshold=_LOWEST, max_faces=20)
        part = "tuning" if number % 2 == 0 else "report"
        rows[part] += label_detections(found, centre, iod, referee.boxes(image, 1))
        photos[part] += 1
    detection, identity = finder.threshold, identity_threshold(finder)
    tallies = {part: _tally(rows[part], max(1, photos[part]), detection) for part in rows}
    run.figure(_figure(tallies, detection, identity))
    run.results = {
        "photos": photos,
        "detection_threshold": detection,
        "identity_threshold": identity,
        "detections": {
            part: {
                kind: sum(k == kind for _, k in rows[part])
                for kind in ("face", "misplaced", "clutter")
            }
            for part in rows
        },
        "by_threshold": tallies,
    }
    report = tallies["report"]
    at_detection, at_identity = report[f"{detection:g}"], report[f"{identity:g}"]
    return run.finish(
        f"report photos ({photos['report']}): clutter {at_detection['clutter_per_photo']:.4f} "
        f"-> {at_identity['clutter_per_photo']:.4f} a photo from P(face) {detection:g} to "
        f"{identity:g}, faces kept {100 * at_identity['faces_kept']:.1f}%"
    )


def _figure(tallies, detection, identity):
    thresholds = [float(t) for t in tallies["report"]]
    curves = {}
    for part, tally in tallies.items():
        curves[f"faces kept ({part})"] = [tally[f"{t:g}"]["faces_kept"] for t in thresholds]
        curves[f"clutter a photo x 10 ({part})"] = [
            10 * tally[f"{t:g}"]["clutter_per_photo"] for t in thresholds
        ]
    figure = rate_curves(
        thresholds,
        curves,
        xlabel="smallest P(face) identity work takes",
        ylabel="share of faces kept; clutter a photo x 10",
        title="Faces for identity work, held-out photos",
    )
    axes = figure.axes[0]
    for value, what in ((detection, "detection"), (identity, "identity")):
        axes.axvline(value, ls=":", color="grey")
        axes.text(value, 0.5, f" {what} {value:g}", rotation=90, fontsize=8, color="grey")
    return figure
