"""Turned heads: the finder against OpenCV Haar and dlib HOG, by a head turn read from landmarks.

Held-out HELEN photos (every 5th photo id, never seen in training) at
``--max-side`` pixels, given to each detector at its default: the shipped
finder, OpenCV's Haar cascade from the same smallest face
(``wild_detection.peer_min_sizes``) and dlib's HOG detector upsampled once. A
detection finds the face as ``wild_detection`` counts it. Each face's turn
(yaw) is read from its 68 landmarks (:func:`rough_yaw`): in the frame of the
eye line, how far the nose tip sits from the middle of the jaw's two ends,
over half the jaw's width, as the sine of the turn. A rough measure (the nose
stands out of the face, so it reads a turn larger than the head's), enough to
sort the faces into bands. Reported: the share of faces found in each band of
turn, on two halves of the photos split by photo id (``tuning``, where a
change to the finder would be chosen, and ``report``); on each half, for all
photos and for those of heads turned 20 degrees or more, the finder's ROC (its
candidates at threshold 0) beside the peers' operating points, and its rate at
their false alarms per photo (:func:`~eigenvision.experiments.small_faces.operating_curves`).

Run: ``eigenvision experiment turned_faces`` (needs ``$EIGENVISION_DATA`` with
``helen_train/``; OpenCV and dlib from the ``bench`` and ``deep`` extras, each
left out when missing).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .. import datasets
from ..faces.photos import annotated_helen_photo, default_finder, helen_split
from ..plot import rate_curves
from . import _dlib
from ._common import Run, data_env, parser, steps
from .small_faces import detections, operating_curves, roc_figure, summary
from .wild_detection import cascades, haar_faces, peer_min_sizes

NAME = "turned_faces"

#: The bands of turn (degrees, either way) the rates are reported in.
BANDS = ((0.0, 10.0), (10.0, 20.0), (20.0, 30.0), (30.0, 90.0))

#: The turn (degrees) from which issue 78 counts a head as turned.
TURNED = 20.0

#: The detector the others' times are divided by.
SHIPPED = "eigenvision (shipped)"


def rough_yaw(points) -> float:
    """A face's turn, degrees, from its 68 landmarks (iBUG 300-W): positive when the nose tip
    is to the image's right of the jaw's middle.

    The landmarks are turned so the eye line is level; the sine of the turn is the nose tip's
    distance from the middle of the jaw's two ends (points 0 and 16) over half their distance.

    Parameters
    ----------
    points : (68, 2) array-like

    Returns
    -------
    float

    Examples
    --------
    >>> points = np.zeros((68, 2))
    >>> points[0], points[16], points[30] = (0.0, 50.0), (100.0, 50.0), (75.0, 60.0)
    >>> points[36:42], points[42:48] = (25.0, 40.0), (75.0, 40.0)
    >>> round(rough_yaw(points), 6)
    30.0
    """
    points = np.asarray(points, dtype=float)
    marks = datasets.face_landmarks(points)
    dx, dy = np.subtract(marks["right_eye"], marks["left_eye"])
    angle = np.arctan2(dy, dx)
    along = np.array([np.cos(angle), np.sin(angle)])  # the eye line's direction
    left, right, nose = (float(points[i] @ along) for i in (0, 16, 30))
    sine = (2 * nose - left - right) / (right - left)
    return float(np.degrees(np.arcsin(np.clip(sine, -1.0, 1.0))))


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument(
        "--limit", type=int, default=170, help="held-out photos (default 170, all)"
    )
    command.add_argument("--max-side", type=int, default=640, help="photo size (default 640)")
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    finder = default_finder()
    detectors = {SHIPPED: finder.find}
    every = {SHIPPED: partial(finder.find, threshold=0.0)}
    _, haar, _ = cascades()
    if haar is not None:
        size = peer_min_sizes(finder)["OpenCV Haar"]
        detectors["OpenCV Haar"] = lambda image: [
            (box, 1.0) for box, _ in haar_faces(haar, image, size)
        ]
    hog = _dlib.hog_detector()
    if hog is not None:
        detectors["dlib HOG (upsample 1)"] = lambda image: _dlib.hog_faces(hog, image)
    files = datasets.helen_files()
    _, test_ids = helen_split(photo for photo, _, _ in files)
    files = [f for f in files if f[0] in test_ids][: args.limit]
    rows = []
    for index, (photo, image_path, pts_path) in enumerate(steps(files, args, "photos")):
        image, centre, iod, others = annotated_helen_photo(
            image_path, pts_path, max_side=args.max_side
        )
        _, points = datasets.load_helen_photo(image_path, pts_path, max_side=args.max_side)
        row = {
            "photo": photo,
            "half": "tuning" if index < len(files) // 2 else "report",
            "turn": abs(rough_yaw(points)),
            "truth": (centre, iod),
            "others": others,
        }
        row.update(detections(detectors, image, centre, iod, others, scored=every))
        rows.append(row)
    peers = [name for name in detectors if name != SHIPPED]
    turned_rows = [row for row in rows if row["turn"] >= TURNED]
    results = {
        half: summary(rows, half, detectors, "turn", BANDS, SHIPPED)
        | {
            "operating": operating_curves(rows, half, [SHIPPED], peers),
            "operating_turned_20_or_more": operating_curves(turned_rows, half, [SHIPPED], peers),
        }
        for half in ("tuning", "report")
    }
    run.results.update(results)
    run.results["bands"] = [list(band) for band in BANDS]
    report = results["report"]
    run.figure(
        rate_curves(
            [np.mean(band) for band in BANDS[:-1]] + [BANDS[-1][0] + 5],
            {name: report["found_by_band"][name] for name in detectors},
            xlabel="head turn from the landmarks (degrees; band middles, the last from 30)",
            ylabel="faces found at each detector's default",
            title=f"Turned heads, {report['photos']} held-out HELEN photos (report half)",
        )
    )
    turned = {
        half: {name: _turned_rate(rows, half, name) for name in detectors}
        for half in ("tuning", "report")
    }
    run.results["found_turned_20_or_more"] = turned
    count = len([row for row in turned_rows if row["half"] == "report"])
    operating = report["operating_turned_20_or_more"]
    if operating:
        title = f"Heads turned 20 degrees or more, report half ({count} photos)"
        run.figure(roc_figure(operating, title), "roc.png")
    text = (
        f"report half ({report['photos']} photos, {count} faces turned 20 degrees or more): "
        "found "
        + ", ".join(f"{name} {100 * rate:.0f}%" for name, rate in turned["report"].items())
        + "; all faces: "
        + ", ".join(f"{name} {100 * rate:.0f}%" for name, rate in report["found"].items())
    )
    if operating and "OpenCV Haar" in operating["points"]:
        alarms, rate = operating["points"]["OpenCV Haar"]
        ours = operating["at_false_alarms_of"][SHIPPED]["OpenCV Haar"]
        text += (
            f"; turned, at Haar's {alarms:.2f} false alarms/photo {100 * ours:.0f}% "
            f"({100 * rate:.0f}%)"
        )
    return run.finish(text)


def _turned_rate(rows, half, name):
    """The share of one half's faces turned 20 degrees or more that ``name`` found."""
    found = [row[name]["found"] for row in rows if row["half"] == half and row["turn"] >= TURNED]
    return float(np.mean(found)) if found else float("nan")


if __name__ == "__main__":
    main()
