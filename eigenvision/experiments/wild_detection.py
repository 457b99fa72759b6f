"""Faces in the wild: the face finder against OpenCV Haar, scikit-image's LBP cascade and dlib HOG.

Held-out HELEN photos (every 5th photo id, never seen in training), each
reduced to at most ``--max-side`` pixels and given to every detector: Haar
and LBP searching from the same smallest face as the finder
(:func:`peer_min_sizes`), dlib's HOG detector as face_recognition calls it
(upsampled once; from the ``bench`` extra).
A detection finds the annotated face when its box centre lies within 0.5
IOD of the 68 landmarks' centre and its width within a factor 1.5 of the
face box's; a detection of another person's face, unannotated in the crop
(:data:`~eigenvision.datasets.HELEN_OTHER_FACES`, labelled by eye; the same
rule), is neither a hit nor a false alarm; every other detection is a false
alarm. The strict count (every detection but the annotated face's a false
alarm, as before 2026-11-26) is reported too. Eyes:
Jesorsky's e from the true face box (placed as the finder places them,
:meth:`~eigenvision.FaceFinder.place`, and by the locator whose confidences
its checks read, alone), from the finder's own box, and OpenCV's eye
cascade in the same regions; how well the locator's eye confidence (the
smaller of the two eyes') tells its hits (e <= 0.10) from its misses, as
an ROC. LFW photos of held-out people (``--lfw``): the face at their
centre found by each detector at its default (the finder's misses drawn).
On both sets, the finder's stages in turn: the windows its first test
scores and keeps (the upright search), and the share of faces still held by
the candidates of stage 1, by the candidates examined after the decision
and by those reported (the recall each stage loses). Pictures without a
face that no detector was trained on (scikit-image's, scikit-learn's and
matplotlib's sample pictures, :func:`non_face_pictures`): how many show a
face, to each detector at its default.

Run: ``eigenvision experiment wild_detection [--limit 40]`` (needs
``$EIGENVISION_DATA`` with ``helen_train/``; OpenCV from the ``bench`` extra).
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np

from .. import datasets, evaluate
from ..faces.candidates import cascade_map, reduced, search_space
from ..faces.geometry import FACE_WINDOW, HalfOctaves, face_box
from ..faces.photos import default_finder, helen_split, lfw_face, lfw_split, sample_picture
from ..io import load_image
from ..plot import image_grid, rate_curves, roc, sample_data_folder
from ..search import pyramid_scales
from . import _dlib
from ._common import Run, data_env, parser, steps
from .feature_detection_roc import haar_eye_cascade, haar_eyes

NAME = "wild_detection"

#: Each peer's box width in inter-ocular distances: the median over its hits on the 170 held-out
#: HELEN photos at 640 pixels, searched from 26-pixel boxes (Haar 149 hits, LBP 153; on the 40
#: test photos alone 2.70 and 2.26). The finder's box is 2.15 (:func:`~eigenvision.face_box`).
PEER_BOX_IN_IODS = {"OpenCV Haar": 2.69, "scikit-image LBP": 2.36}


def cascades():
    """OpenCV's frontal-face Haar cascade and scikit-image's LBP cascade, the peers.

    Returns
    -------
    cv2 : module or None
        OpenCV, None when it is not installed (the ``bench`` extra).
    haar : cv2.CascadeClassifier or None
    lbp : skimage.feature.Cascade
    """
    try:
        import cv2
    except ImportError:
        cv2 = None
    haar = None
    if cv2 is not None:
        haar = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_frontalface_default.xml")
    from skimage.data import lbp_frontal_face_cascade_filename
    from skimage.feature import Cascade

    return cv2, haar, Cascade(lbp_frontal_face_cascade_filename())


def peer_min_sizes(finder):
    """The smallest box each peer searches: the one it draws around the finder's smallest face.

    Issue 18 compares the detectors at the same smallest face. The finder's
    is the eye distance of its window (or its search's ``min_iod``); a peer's box around
    a face is :data:`PEER_BOX_IN_IODS` times its eye distance.

    Returns
    -------
    dict
        ``{"OpenCV Haar": pixels, "scikit-image LBP": pixels}``.
    """
    smallest = (
        finder.window_[1] / FACE_WINDOW["width"]
        if finder.search.min_iod is None
        else finder.search.min_iod
    )
    return {name: int(round(ratio * smallest)) for name, ratio in PEER_BOX_IN_IODS.items()}


def haar_faces(haar, image, min_size):
    """OpenCV Haar's faces in a photo, as ``wild_detection`` runs it (scale factor 1.1, three
    neighbours), with their level weights as scores.

    Parameters
    ----------
    haar : cv2.CascadeClassifier
    image : (H, W) ndarray
        Grey, in [0, 1].
    min_size : int
        The smallest box searched, pixels (:func:`peer_min_sizes`).

    Returns
    -------
    list of ((x, y, w, h), score)
    """
    grey = np.ascontiguousarray(np.clip(image * 255, 0, 255).astype(np.uint8))
    rects, _, weights = haar.detectMultiScale3(
        grey, scaleFactor=1.1, minNeighbors=3, minSize=(min_size, min_size), outputRejectLevels=True
    )
    return [
        (tuple(float(v) for v in r), float(w))
        for r, w in zip(rects, np.ravel(weights), strict=True)
    ]


def lbp_faces(lbp, image, min_size):
    """scikit-image's LBP cascade's faces in a photo (scale factor 1.2), each scored 1.

    Parameters
    ----------
    lbp : skimage.feature.Cascade
    image, min_size
        As :func:`haar_faces`.

    Returns
    -------
    list of ((x, y, w, h), score)
    """
    found = lbp.detect_multi_scale(
        image,
        scale_factor=1.2,
        step_ratio=1,
        min_size=(min_size, min_size),
        max_size=(max(image.shape), max(image.shape)),
    )
    return [((d["c"], d["r"], d["width"], d["height"]), 1.0) for d in found]


def non_face_pictures() -> dict:
    """Sample pictures without a human face that ship with the installed packages (no download),
    none of them a training background (:data:`~eigenvision.faces.recipes.BACKGROUNDS`): grey,
    in [0, 1].

    Returns
    -------
    dict of str to (H, W) ndarray
    """
    from sklearn.datasets import load_sample_images

    pictures = {
        name: sample_picture(name)
        for name in (
            "immunohistochemistry",
            "colorwheel",
            "shepp_logan_phantom",
            "cell",
            "microaneurysms",
            "retina",
            "checkerboard",
        )
    }
    for path in load_sample_images().filenames:  # china.jpg, flower.jpg
        pictures[Path(path).name] = load_image(path)
    samples = sample_data_folder()
    for name in ("Minduka_Present_Blue_Pack.png", "logo2.png"):  # a gift box, a logo
        pictures[name] = load_image(samples / name)  # transparency on white
    with gzip.open(samples / "s1045.ima.gz") as stream:  # a brain MRI slice
        mri = np.frombuffer(stream.read(), np.uint16).reshape(256, 256).astype(np.float64)
    pictures["s1045.ima (MRI)"] = mri / mri.max()
    with np.load(samples / "jacksboro_fault_dem.npz") as dem:  # elevations, as grey levels
        height = dem["elevation"].astype(np.float64)
    pictures["jacksboro_fault_dem (terrain)"] = (height - height.min()) / np.ptp(height)
    return {name: np.asarray(picture, dtype=np.float64) for name, picture in pictures.items()}


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument("--limit", type=int, default=40, help="held-out photos (default 40)")
    command.add_argument("--max-side", type=int, default=640, help="photo size (default 640)")
    command.add_argument(
        "--lfw",
        type=int,
        default=500,
        help="LFW photos of held-out people searched for the face at their centre (default 500)",
    )
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    finder = default_finder()
    files = datasets.helen_files()
    _, test_ids = helen_split(photo for photo, _, _ in files)
    files = [f for f in files if f[0] in test_ids][: args.limit]
    cv2, haar, lbp = cascades()
    hog = _dlib.hog_detector()
    eye_haar = haar_eye_cascade()
    found = {"eigenvision": [], "OpenCV Haar": [], "scikit-image LBP": [], "dlib HOG": []}
    seconds = {name: [] for name in found}
    truths, errors = (
        [],
        {
            "placer, true box": [],
            "locator, true box": [],
            "finder's own box": [],
            "OpenCV eye cascade": [],
        },
    )
    eye_confidence = []  # the locator's (the checks read it), from the true box
    stages = []  # the finder's stages on each photo (_stages)
    others = []  # the faces the photos hold unannotated
    min_size = peer_min_sizes(finder)
    for _, image_path, pts_path in steps(files, args, "photos"):
        image, points = datasets.load_helen_photo(image_path, pts_path, max_side=args.max_side)
        marks = datasets.face_landmarks(points)
        left, right = marks["left_eye"], marks["right_eye"]
        iod = float(np.linalg.norm(right - left))
        truths.append((points.mean(axis=0), iod))
        others.append(datasets.helen_other_faces(image_path, image.shape))
        faces = finder.find(image, threshold=0.0)  # every candidate's score, for the ROC
        start = time.perf_counter()  # timed as used: at the default threshold (Haar: its own)
        finder.find(image)
        seconds["eigenvision"].append(time.perf_counter() - start)
        found["eigenvision"].append([(f.box, f.score) for f in faces])
        stages.append(
            _stages(finder, image, faces, lambda box: evaluate.face_found(box, *truths[-1]))
        )
        if haar is not None:
            start = time.perf_counter()
            found["OpenCV Haar"].append(haar_faces(haar, image, min_size["OpenCV Haar"]))
            seconds["OpenCV Haar"].append(time.perf_counter() - start)
        start = time.perf_counter()
        found["scikit-image LBP"].append(lbp_faces(lbp, image, min_size["scikit-image LBP"]))
        seconds["scikit-image LBP"].append(time.perf_counter() - start)
        if hog is not None:
            start = time.perf_counter()
            found["dlib HOG"].append(_dlib.hog_faces(hog, image))
            seconds["dlib HOG"].append(time.perf_counter() - start)
        box = face_box(left, right)
        placed = finder.place(image, box)
        located = finder.locator_.locate(image, box=box)
        for name, eyes in (("placer, true box", placed), ("locator, true box", located)):
            errors[name].append(
                float(evaluate.eye_error(eyes["left_eye"], eyes["right_eye"], left, right)[0])
            )
        eye_confidence.append(located.eye_confidence)
        hits = [f for f in faces if evaluate.face_found(f.box, truths[-1][0], iod)]
        errors["finder's own box"].append(
            float(evaluate.eye_error(hits[0].left_eye, hits[0].right_eye, left, right)[0])
            if hits
            else np.inf
        )
        if eye_haar is not None:
            eyes = haar_eyes(eye_haar, finder.locator_, image, box, iod)
            errors["OpenCV eye cascade"].append(
                float(evaluate.eye_error(eyes[0], eyes[1], left, right)[0])
            )
    curves, points, ours_at_haar = _count(found, truths, others)
    strict_curves, strict_points, strict_at_haar = _count(found, truths)
    haar_alarms = points.get("OpenCV Haar", (np.nan, np.nan))[0]
    levels = np.linspace(0, 0.25, 26)
    cdf = {
        name: [float(np.mean(np.asarray(e) <= level)) for level in levels]
        for name, e in errors.items()
        if e
    }
    drawn = {k: v for k, v in curves.items() if len(v[0]) > 2}  # one operating point: a mark
    run.figure(
        roc(
            drawn,
            xlabel="false alarms per photo",
            ylabel="faces found",
            title="held-out HELEN photos",
            marks={k: v for k, v in points.items() if k != "eigenvision"},
            xlim=(0, max(2.0, haar_alarms * 2 if np.isfinite(haar_alarms) else 2)),
        )
    )
    run.figure(
        rate_curves(
            levels,
            cdf,
            references={"e = 0.10": 0.8},
            xlabel="eye error e (IOD)",
            ylabel="fraction of faces",
            title="eye location",
        ),
        "eyes.png",
    )
    hit = np.asarray(errors["locator, true box"]) <= 0.10
    confidence_roc = {"hits": int(hit.sum()), "misses": int((~hit).sum())}
    if 0 < hit.sum() < len(hit):  # with hits only (or misses only) there is no ROC
        fpr, tpr, _ = evaluate.roc_curve(hit, eye_confidence)
        confidence_roc.update(
            auc=evaluate.auc(fpr, tpr), false_positive_rate=fpr, true_positive_rate=tpr
        )
        run.figure(
            roc(
                {f"eye confidence (AUC {confidence_roc['auc']:.3f})": (fpr, tpr)},
                xlabel="misses accepted (e > 0.10)",
                ylabel="hits accepted (e <= 0.10)",
                title="does the locator know when it is right?",
            ),
            "eye_confidence.png",
        )
    non_faces = {}
    for name, picture in steps(non_face_pictures().items(), args, "pictures without a face"):
        shown, likeliest = finder.find(picture, return_likeliest=True)
        by_lbp = lbp_faces(lbp, picture, min_size["scikit-image LBP"])
        non_faces[name] = {
            "eigenvision": len(shown),
            "eigenvision likeliest": likeliest,
            "scikit-image LBP": len(by_lbp),
        }
        if haar is not None:
            non_faces[name]["OpenCV Haar"] = len(haar_faces(haar, picture, min_size["OpenCV Haar"]))
        if hog is not None:
            non_faces[name]["dlib HOG"] = len(_dlib.hog_faces(hog, picture))
    median = {name: float(np.median(s)) for name, s in seconds.items() if s}
    lfw_stages = []
    lfw, misses = _lfw_recall(finder, haar, hog, min_size["OpenCV Haar"], args, lfw_stages)
    if misses:
        run.figure(
            image_grid(misses[:60], ncols=10, suptitle="LFW faces the finder missed"),
            "lfw_misses.png",
        )
    funnel = {"HELEN": _funnel(stages), "LFW": _funnel(lfw_stages)}
    run.results = {
        "lfw": lfw,
        "stages": funnel,
        "photos": len(truths),
        "operating_points": points,
        "eigenvision_rate_at_haar_false_alarms": ours_at_haar,
        "unannotated_faces": int(sum(len(boxes) for boxes in others)),
        "strict_count": {
            "operating_points": strict_points,
            "eigenvision_rate_at_haar_false_alarms": strict_at_haar,
            "curves": _curves(strict_curves),
        },
        "eye_within_0.10": _within(errors, 0.10),
        "eye_within_0.05": _within(errors, 0.05),
        "eye_confidence": confidence_roc,
        "non_face_pictures": non_faces,
        "non_face_pictures_showing_a_face": {
            name: sum(counts[name] > 0 for counts in non_faces.values())
            for name in found
            if (name != "OpenCV Haar" or haar is not None)
            and (name != "dlib HOG" or hog is not None)
        },
        "median_seconds": median,
        "curves": _curves(curves),
    }
    haar_rate = points.get("OpenCV Haar", (np.nan, np.nan))[1]
    eyes = run.results["eye_within_0.10"]
    lfw_rate = lfw["found"]["eigenvision"]
    placed, own = eyes["placer, true box"], eyes["finder's own box"]
    return run.finish(
        f"{len(truths)} photos: at Haar's {haar_alarms:.2f} false alarms/photo eigenvision finds "
        f"{100 * ours_at_haar:.0f}% (Haar {100 * haar_rate:.0f}%); eyes e<=0.10 "
        f"{100 * placed:.0f}% from the true box, {100 * own:.0f}% from its own; "
        f"LFW faces found {100 * lfw_rate:.1f}% of {lfw['photos']}; "
        f"{median['eigenvision'] / median.get('OpenCV Haar', np.nan):.1f}x Haar's time; "
        f"faces on {run.results['non_face_pictures_showing_a_face']['eigenvision']} of "
        f"{len(non_faces)} pictures without one; HELEN faces kept by stage 1 "
        f"{100 * funnel['HELEN']['in_candidates']:.0f}%, examined "
        f"{100 * funnel['HELEN']['in_examined']:.0f}% (the first test keeps "
        f"{100 * funnel['HELEN']['first_test_kept_share']:.2f}% of the upright windows)"
    )


def _lfw_recall(finder, haar, hog, min_size, args, stages):
    """How many LFW photos of held-out people (:func:`~eigenvision.faces.photos.lfw_split`) show
    their face to each detector at its default: a detection that finds the face of
    :data:`~eigenvision.datasets.LFW_EYES` (:func:`~eigenvision.evaluate.face_found`); the
    others are false alarms. Haar searches from ``min_size`` (:func:`peer_min_sizes`). Returns
    the results and the photos the finder missed; each photo's :func:`_stages` are appended to
    ``stages``."""
    files = datasets.lfw_files()
    _, people = lfw_split(person for person, _ in files)
    files = [path for person, path in files if person in people]
    chosen = np.random.default_rng(args.seed).permutation(len(files))[: args.lfw]
    centre, iod = lfw_face()
    detectors = {"eigenvision": lambda im: [(f.box, f.score) for f in finder.find(im)]}
    if haar is not None:
        detectors["OpenCV Haar"] = lambda im: haar_faces(haar, im, min_size)
    if hog is not None:
        detectors["dlib HOG"] = lambda im: _dlib.hog_faces(hog, im)
    found = {name: 0 for name in detectors}
    alarms = dict.fromkeys(detectors, 0)
    seconds = {name: [] for name in detectors}
    misses = []
    for index in steps(sorted(chosen), args, "LFW photos"):
        image = load_image(files[index])
        for name, detect in detectors.items():
            start = time.perf_counter()
            boxes = detect(image)
            seconds[name].append(time.perf_counter() - start)
            hit = [evaluate.face_found(box, centre, iod) for box, _ in boxes]
            found[name] += any(hit)
            alarms[name] += len(hit) - sum(hit)
            if name == "eigenvision" and not any(hit):
                misses.append(image)
        examined = finder.find(image, threshold=0.0)
        stages.append(
            _stages(finder, image, examined, lambda box: evaluate.face_found(box, centre, iod))
        )
    n = len(chosen)
    return {
        "photos": n,
        "found": {name: count / n for name, count in found.items()},
        "false_alarms_per_photo": {name: count / n for name, count in alarms.items()},
        "median_seconds": {name: float(np.median(s)) for name, s in seconds.items()},
    }, misses


def _stages(finder, image, examined, finds):
    """What each of the finder's stages keeps of one photo, and whether its face is still there.

    The first test (the prefilter's linear score on its grid, its 3 x 3 best moved to the best
    window of its cell, :func:`cascade_map`) counted over the upright search's pyramid: the
    windows it scores, the windows it keeps of all; the candidates of stage 1 (their
    :func:`~eigenvision.face_box`); the candidates examined (``examined``: every face at
    threshold 0, after the decision's gate and the moves); those reported at the default
    threshold. ``finds(box)`` says whether a box finds the photo's face."""
    search = finder.search
    small, scale = reduced(image, finder.max_side)
    pyramid = HalfOctaves(small)
    space = search_space(search.face_space_, search.search_components)
    prefilter, gate = search.prefilter(), max(search.min_contrast, 1e-3)
    windows = kept = scored = 0
    stride = prefilter.stride
    # from the window's own size: the smallest face of a finder without min_iod (the shipped)
    for level in pyramid_scales(small.shape, finder.window_, step=search.step):
        size = (int(round(small.shape[0] / level)), int(round(small.shape[1] / level)))
        values = cascade_map(pyramid.resized(size), space, prefilter, min_contrast=gate)
        windows += values.size
        scored += values[::stride, ::stride].size  # the grid's windows
        kept += int(np.isfinite(values).sum())
    candidates = search.candidates(pyramid)
    boxes = [
        face_box(*((np.asarray(eye) + 0.5) / scale[::-1] - 0.5 for eye in c[:2]))
        for c in candidates
    ]
    return {
        "upright_windows": windows,
        "first_test_scored": scored,
        "first_test_kept": kept,
        "candidates": len(candidates),
        "in_candidates": any(finds(box) for box in boxes),
        "examined": len(examined),
        "in_examined": any(finds(face.box) for face in examined),
        "reported": sum(face.confidence >= finder.threshold for face in examined),
        "in_reported": any(
            finds(face.box) for face in examined if face.confidence >= finder.threshold
        ),
    }


def _funnel(stages):
    """Each stage's share of the photos whose face it still holds, and what it passes a photo."""
    mean = {key: float(np.mean([s[key] for s in stages])) for key in stages[0]}
    windows = sum(s["upright_windows"] for s in stages)
    return {
        "photos": len(stages),
        **{key: mean[key] for key in ("in_candidates", "in_examined", "in_reported")},
        "first_test_kept_share": sum(s["first_test_kept"] for s in stages) / windows,
        "per_photo": {
            key: mean[key]
            for key in (
                "upright_windows",
                "first_test_scored",
                "first_test_kept",
                "candidates",
                "examined",
                "reported",
            )
        },
    }


def _count(found, truths, others=None):
    """Each detector's ROC ``{name: (false alarms, rates)}``, its operating point ``{name: (false
    alarms, rate)}`` and eigenvision's rate at Haar's false alarms (0 without Haar); with
    ``others``, detections of the unannotated faces are not counted (issue 18's protocol)."""
    curves, points = {}, {}
    for name, detections in found.items():
        if len(detections) != len(truths):
            continue
        alarms, rate, _ = evaluate.face_detection_roc(detections, truths, others)
        curves[name] = (alarms, rate)
        points[name] = (float(alarms[-1]), float(rate[-1]))
    haar_alarms = points.get("OpenCV Haar", (np.nan, np.nan))[0]
    return curves, points, rate_at(*curves["eigenvision"], haar_alarms)


def _curves(curves):
    """ROCs as ``results.json`` holds them."""
    return {name: {"false_alarms": a, "detection_rate": r} for name, (a, r) in curves.items()}


def _within(errors, level):
    return {name: float(np.mean(np.asarray(e) <= level)) for name, e in errors.items() if e}


def rate_at(alarms, rate, limit):
    """The best detection rate of an ROC with at most ``limit`` false alarms per photo.

    Parameters
    ----------
    alarms, rate : (m,) ndarray
        :func:`~eigenvision.evaluate.face_detection_roc`'s false alarms per photo and
        detection rates.
    limit : float

    Returns
    -------
    float
        0 where no point of the curve is within ``limit``.
    """
    allowed = alarms <= limit + 1e-12
    return float(rate[allowed].max()) if allowed.any() else 0.0


if __name__ == "__main__":
    main()
