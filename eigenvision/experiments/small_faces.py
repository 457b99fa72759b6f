"""Small faces: the finder below its window against OpenCV Haar and dlib HOG, by eye distance.

Held-out HELEN photos (every 5th photo id, never seen in training), each
reduced until its annotated face's eyes lie a distance drawn at random
between ``--smallest`` and ``--largest`` pixels apart (the photo's longer
side at most ``--max-side``), are given to each detector at its default: the
shipped finder as it ships (its search from the window's eye distance, 16
pixels), the same finder searching below its window
(``search__min_iod``, each value of ``--min-iod``: the photo enlarged), OpenCV's
Haar cascade from the same smallest face as each (``wild_detection.peer_min_sizes``)
and dlib's HOG detector upsampled once, as face_recognition calls it. A
detection finds the face as ``wild_detection`` counts it
(:func:`~eigenvision.evaluate.hits_and_alarms`: another person's
unannotated face is neither a hit nor a false alarm). Reported: the share of
faces found in each band of eye distances, the false alarms per photo, each
detector's median time over the shipped finder's, and each finder's ROC (its
candidates at threshold 0) beside the peers' operating points, with its rate at
their false alarms per photo (:func:`operating_curves`). The held-out photos
are split in two by photo id: the first half (``tuning``) is where a value of
``search__min_iod`` would be chosen, the second (``report``) where it is
reported; both halves' numbers are written.

Run: ``eigenvision experiment small_faces [--limit 170]`` (needs
``$EIGENVISION_DATA`` with ``helen_train/``; OpenCV and dlib from the
``bench`` and ``deep`` extras, each left out when missing).
"""

from __future__ import annotations

import copy
import time
from functools import partial

import numpy as np

from .. import datasets, evaluate
from ..faces.photos import annotated_helen_photo, default_finder, helen_split
from ..plot import rate_curves, roc
from ..transform import resize
from . import _dlib
from ._common import Run, data_env, parser, steps
from .wild_detection import cascades, haar_faces, peer_min_sizes, rate_at

NAME = "small_faces"

#: The bands of eye distances (pixels) the rates are reported in: below the window, up to it,
#: and the next band the issue names.
BANDS = ((8.0, 12.0), (12.0, 16.0), (16.0, 20.0))


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument(
        "--limit", type=int, default=170, help="held-out photos (default 170, all)"
    )
    command.add_argument("--max-side", type=int, default=640, help="photo size (default 640)")
    command.add_argument("--smallest", type=float, default=8.0, help="eye distance from (8)")
    command.add_argument("--largest", type=float, default=20.0, help="eye distance to (20)")
    command.add_argument(
        "--min-iod",
        type=float,
        nargs="+",
        default=[8.0, 10.0, 12.0],
        help="search__min_iod values searched below the window (default 8 10 12)",
    )
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    shipped = default_finder()
    finders = {"eigenvision (shipped)": shipped}
    for min_iod in args.min_iod:
        finders[f"eigenvision, min_iod {min_iod:g}"] = copy.copy(shipped).set_params(
            search__min_iod=min_iod
        )
    _, haar, _ = cascades()
    hog = _dlib.hog_detector()
    detectors = {name: finder.find for name, finder in finders.items()}
    every = {name: partial(finder.find, threshold=0.0) for name, finder in finders.items()}
    if haar is not None:
        for finder in finders.values():
            size = peer_min_sizes(finder)["OpenCV Haar"]
            detectors[f"OpenCV Haar from {size} px"] = lambda image, size=size: [
                (box, 1.0) for box, _ in haar_faces(haar, image, size)
            ]
    if hog is not None:
        detectors["dlib HOG (upsample 1)"] = lambda image: _dlib.hog_faces(hog, image)
    files = datasets.helen_files()
    _, test_ids = helen_split(photo for photo, _, _ in files)
    files = [f for f in files if f[0] in test_ids][: args.limit]
    rng = np.random.default_rng(args.seed)
    rows = []
    for index, (photo, image_path, pts_path) in enumerate(steps(files, args, "photos")):
        image, centre, iod, others = annotated_helen_photo(
            image_path, pts_path, max_side=args.max_side
        )
        target = float(rng.uniform(args.smallest, args.largest))
        factor = min(1.0, target / iod)
        shape = tuple(max(1, round(side * factor)) for side in image.shape)
        small = resize(image, shape)
        others = np.asarray(others) * factor
        row = {
            "photo": photo,
            "half": "tuning" if index < len(files) // 2 else "report",
            "iod": iod * factor,
            "truth": (centre * factor, iod * factor),
            "others": others,
        }
        row.update(
            detections(detectors, small, centre * factor, iod * factor, others, scored=every)
        )
        rows.append(row)
    peers = [name for name in detectors if name not in finders]
    results = {
        half: summary(rows, half, detectors, "iod", BANDS, "eigenvision (shipped)")
        | {"operating": operating_curves(rows, half, finders, peers)}
        for half in ("tuning", "report")
    }
    run.results.update(results)
    run.results["bands"] = [list(band) for band in BANDS]
    report = results["report"]
    middles = [np.mean(band) for band in BANDS]
    run.figure(
        rate_curves(
            middles,
            {name: report["found_by_band"][name] for name in detectors},
            xlabel="eye distance (pixels; band middles)",
            ylabel="faces found at each detector's default",
            title=f"Small faces, {report['photos']} held-out HELEN photos (report half)",
        )
    )
    run.figure(
        roc_figure(
            report["operating"],
            f"Small faces (eyes {args.smallest:g}-{args.largest:g} px), report half",
        ),
        "roc.png",
    )
    # the most faces on the tuning half, then the least time
    best = max(
        (name for name in finders if name != "eigenvision (shipped)"),
        key=lambda name: (
            results["tuning"]["found"][name],
            -results["tuning"]["time_over_shipped"][name],
        ),
        default="eigenvision (shipped)",
    )
    haar_names = [name for name in detectors if name.startswith("OpenCV Haar")]
    haar_rate = max((report["found"][name] for name in haar_names), default=np.nan)
    text = (
        f"report half ({report['photos']} photos, eyes {args.smallest:g}-{args.largest:g} px): "
        f"shipped finds {100 * report['found']['eigenvision (shipped)']:.0f}%, {best} (best on "
        f"the tuning half) {100 * report['found'][best]:.0f}% at "
        f"{report['false_alarms_per_photo'][best]:.2f} false alarms/photo in "
        f"{report['time_over_shipped'][best]:.1f}x the shipped time; Haar at best "
        f"{100 * haar_rate:.0f}%, dlib HOG "
        f"{100 * report['found'].get('dlib HOG (upsample 1)', np.nan):.0f}%"
    )
    haar = f"OpenCV Haar from {peer_min_sizes(finders[best])['OpenCV Haar']} px"
    if haar in report["operating"]["points"]:
        alarms, rate = report["operating"]["points"][haar]
        ours = report["operating"]["at_false_alarms_of"][best][haar]
        text += (
            f"; at {haar}'s {alarms:.2f} false alarms/photo {100 * ours:.0f}% ({100 * rate:.0f}%)"
        )
    return run.finish(text)


def detections(detectors, image, centre, iod, others, scored=None):
    """Each detector run on a photo: whether it found the annotated face, its false alarms
    (:func:`~eigenvision.evaluate.hits_and_alarms`), its seconds and its detections.

    Parameters
    ----------
    detectors : dict of str to callable
        ``detect(image)`` -> Faces or ``(box, score)`` pairs.
    image : (H, W) ndarray
    centre, iod, others
        The annotated face's landmarks' centre and eye distance, and the unannotated faces.
    scored : dict of str to callable, optional
        For the detectors that score every candidate: ``detect(image)`` at threshold 0 (their
        ROC, :func:`operating_curves`), untimed.

    Returns
    -------
    dict of str to dict
        ``found``, ``false_alarms``, ``seconds``, ``boxes`` (``(box, score)`` pairs) and, for
        the ``scored`` detectors, ``scored`` (the same at threshold 0).
    """
    row = {}
    for name, detect in detectors.items():
        start = time.perf_counter()
        found = detect(image)
        seconds = time.perf_counter() - start
        boxes = _boxes(found)
        hits, alarms = evaluate.hits_and_alarms(boxes, centre, iod, others)
        row[name] = {
            "found": bool(hits),
            "false_alarms": len(alarms),
            "seconds": seconds,
            "boxes": boxes,
        }
        if scored and name in scored:
            row[name]["scored"] = _boxes(scored[name](image))
    return row


def _boxes(found):
    """Faces or ``(box, score)`` pairs as ``(box, score)`` pairs."""
    return [(item.box, item.score) if hasattr(item, "box") else item for item in found]


def operating_curves(rows, half, scored, peers):
    """On one half's photos: each scored detector's ROC (its candidates at threshold 0), each
    peer's operating point (its detections at its default), and each scored detector's rate
    at each peer's false alarms per photo.

    Parameters
    ----------
    rows : list of dict
        :func:`detections` of each photo (with ``scored``), with its ``"half"``, ``"truth"``
        (the annotated face's centre and eye distance) and ``"others"``.
    half : str
    scored, peers : iterable of str

    Returns
    -------
    dict
        ``curves`` (``false_alarms``, ``detection_rate`` lists), ``points`` (false alarms,
        rate) and ``at_false_alarms_of`` (``{scored: {peer: rate}}``).
    """
    rows = [row for row in rows if row["half"] == half]
    if not rows:
        return {}
    truths = [row["truth"] for row in rows]
    others = [row["others"] for row in rows]
    points = {}
    for name in peers:
        alarms, rate, _ = evaluate.face_detection_roc(
            [row[name]["boxes"] for row in rows], truths, others
        )
        points[name] = [float(alarms[-1]), float(rate[-1])]
    curves, at = {}, {}
    for name in scored:
        alarms, rate, _ = evaluate.face_detection_roc(
            [row[name]["scored"] for row in rows], truths, others
        )
        curves[name] = {"false_alarms": alarms.tolist(), "detection_rate": rate.tolist()}
        at[name] = {peer: rate_at(alarms, rate, points[peer][0]) for peer in peers}
    return {"curves": curves, "points": points, "at_false_alarms_of": at}


def roc_figure(curves, title):
    """The scored detectors' ROCs, the peers' operating points marked (:func:`operating_curves`).

    Parameters
    ----------
    curves : dict
        :func:`operating_curves` of one half.
    title : str

    Returns
    -------
    Figure
    """
    largest = max([2.0 * x for x, _ in curves["points"].values()] + [0.5])
    return roc(
        {
            name: (curve["false_alarms"], curve["detection_rate"])
            for name, curve in curves["curves"].items()
        },
        xlabel="false alarms per photo",
        ylabel="faces found",
        title=title,
        marks={name: tuple(point) for name, point in curves["points"].items()},
        xlim=(0, largest),
    )


def summary(rows, half, detectors, key, bands, reference):
    """Each detector's share of faces found, in all and by band of ``row[key]``, its false
    alarms per photo and its median time over ``reference``'s, on one half's photos.

    Parameters
    ----------
    rows : list of dict
        :func:`detections` of each photo, with its ``"half"`` and ``key``.
    half : str
    detectors : iterable of str
    key : str
    bands : sequence of (low, high)
    reference : str
        The detector the times are divided by.

    Returns
    -------
    dict
    """
    rows = [row for row in rows if row["half"] == half]
    if not rows:
        return {"photos": 0}
    values = np.array([row[key] for row in rows])
    masks = [(values >= low) & (values < high) for low, high in bands]
    result = {"photos": len(rows), "faces_by_band": [int(mask.sum()) for mask in masks]}
    for name in detectors:
        found = np.array([row[name]["found"] for row in rows])
        seconds = np.array([row[name]["seconds"] for row in rows])
        reference_seconds = np.array([row[reference]["seconds"] for row in rows])
        result.setdefault("found", {})[name] = float(found.mean())
        result.setdefault("found_by_band", {})[name] = [
            float(found[mask].mean()) if mask.any() else float("nan") for mask in masks
        ]
        result.setdefault("false_alarms_per_photo", {})[name] = float(
            np.mean([row[name]["false_alarms"] for row in rows])
        )
        result.setdefault("time_over_shipped", {})[name] = float(
            np.median(seconds / reference_seconds)
        )
    return result


if __name__ == "__main__":
    main()
