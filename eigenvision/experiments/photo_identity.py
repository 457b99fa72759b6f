"""Photo to identity: people enrolled from uncropped photos, strangers rejected (open set).

Protocol: IMM people 1-6 are enrolled from their uncropped photos 1-5, the
shipped face finder finding and aligning each face
(``Recognizer(finder=...)``). The threshold is set for 1% false accepts
(:meth:`Recognizer.calibrate_threshold`) on every face the finder finds in
the photos of IMM people 7-9 and in held-out HELEN calibration photos. Test:
photos 6-10 of people 1-6 (genuine: the face whose eyes lie within 0.25
inter-ocular distances of the hand-placed pupils, Jesorsky's criterion for a
found face) and every face the finder finds in the photos of people 10-12
and in held-out HELEN test photos (impostors; so are the other faces the
finder reports in the genuine photos, clutter mostly). A genuine photo whose
face the finder misses counts as rejected.

The reference is the same recognizer on faces cut on the hand-placed pupils
(IMM's and HELEN's landmarks: a perfect finder), on the same people and
photos: the difference is what finding and aligning automatically costs.
"""

from __future__ import annotations

import numpy as np

from .. import datasets
from ..evaluate import auc, eye_error, open_set_roc, rate_at, roc_curve
from ..faces.compare import default_identity_model
from ..faces.crops import align_face
from ..faces.photos import default_finder, helen_split
from ..normalize import to_gray
from ..plot import roc
from ..recognize import Recognizer
from ..transform import DEFAULT_EYE_POSITIONS
from ._common import Run, data_env, parser, steps

NAME = "photo_identity"
FAR = 0.01
#: The recognizers compared: name -> Recognizer parameters (and ``--n-components``).
METHODS = {
    "eigenfaces": {},
    "bayesian": {"method": "bayesian"},
    # virtual views: 8 copies shifted by a pixel (Martinez 2002), for the finder's placement
    "bayesian + views": {"method": "bayesian", "jitter": 1},
    # the shipped identity model (trained on LFW's people) as the background: enrolment only
    "plda": {"method": "plda"},
}
ENROLLED, CALIBRATION, IMPOSTORS = range(1, 7), range(7, 10), range(10, 13)
SHAPE = (56, 46)  # the aligned face, both ways of cutting it


class CachedFinder:
    """A face finder that searches each photo once (every recognizer sees the same faces).

    Photos are told apart by identity: keep them alive while the cache is used.
    """

    def __init__(self, finder):
        self.finder = finder
        self.threshold = finder.threshold
        self._found = {}

    def find(self, photo, *, threshold=None, max_faces=50, return_likeliest=False):
        key = (id(photo), threshold, max_faces)
        if key not in self._found:
            self._found[key] = self.finder.find(
                photo, threshold=threshold, max_faces=max_faces, return_likeliest=True
            )
        faces, likeliest = self._found[key]
        return (faces, likeliest) if return_likeliest else faces


def _groups(limit_helen):
    """IMM photos with person, image number and pupils; HELEN calibration and test photos."""
    imm = datasets.load_imm()
    person = np.array([int(label) for label in imm.labels])
    number = np.array([int(name.split("_")[1].split(".")[0]) for name in imm.names])
    pupils = np.stack([imm.landmarks["left_eye"], imm.landmarks["right_eye"]], axis=1)
    files = datasets.helen_files()
    _, test_ids = helen_split(photo for photo, _, _ in files)
    held = [f for f in files if f[0] in test_ids]
    helen = {}
    for name, chosen in (("calibration", held[-limit_helen:]), ("test", held[:limit_helen])):
        photos, eyes = [], []
        for _, image_path, pts_path in chosen:
            photo, points = datasets.load_helen_photo(image_path, pts_path, max_side=640)
            marks = datasets.face_landmarks(points)
            photos.append(to_gray(photo))
            eyes.append((marks["left_eye"], marks["right_eye"]))
        helen[name] = (photos, np.array(eyes))
    return imm, person, number, pupils, helen


def cut_on(images, eyes, *, shape=SHAPE, eye_positions=DEFAULT_EYE_POSITIONS):
    """Faces cut on given pupils: (n, H, W), the finder's crop from perfect eyes."""
    return np.stack(
        [
            align_face(image, tuple(pair), shape=shape, eye_positions=eye_positions)
            for image, pair in zip(images, eyes, strict=True)
        ]
    )


def _genuine(rec, photos, labels, pupils):
    """Each genuine photo's answer: (score, named correctly); -inf when its face is missed.

    Also the scores of the other faces found in those photos (clutter).
    """
    scores, correct, clutter = [], [], []
    for photo, label, eyes in zip(photos, labels, pupils, strict=True):
        found, named, distances = rec.decide_faces(photo)  # measure() applies the threshold
        errors = [eye_error(face.left_eye, face.right_eye, eyes[0], eyes[1])[0] for face in found]
        hit = int(np.argmin(errors)) if errors and min(errors) <= 0.25 else None
        scores.append(-np.inf if hit is None else -distances[hit])
        correct.append(hit is not None and named[hit] == label)
        clutter += [-distance for k, distance in enumerate(distances) if k != hit]
    return np.array(scores), np.array(correct), np.array(clutter)


def _impostors(rec, photos):
    """Minus the distance of every face found in photos of people not enrolled."""
    return -np.concatenate([rec.decide_faces(photo)[2] for photo in photos])


def measure(rec, threshold, genuine, correct, impostor_groups):
    """Open-set numbers of one recognizer: ROC, its calibrated operating point, rank-1."""
    impostor = np.concatenate(list(impostor_groups.values()))
    far, dir_, _ = open_set_roc(genuine, correct, impostor)
    found = np.isfinite(genuine)
    accepted = genuine >= -threshold
    row = {
        "threshold": threshold,
        "faces_found": float(found.mean()),
        "rank1_of_found": float(correct[found].mean()) if found.any() else 0.0,
        "tar_at_far_0.01": rate_at(far, dir_, FAR),
        "calibrated_tar": float(np.mean(accepted & correct)),
        "calibrated_far": {
            name: float(np.mean(scores >= -threshold)) if len(scores) else None
            for name, scores in impostor_groups.items()
        },
        "calibrated_far_pooled": float(np.mean(impostor >= -threshold)),
        "impostor_faces": {name: len(scores) for name, scores in impostor_groups.items()},
        "auc": auc(
            *roc_curve(
                np.r_[np.ones(found.sum()), np.zeros(len(impostor))],
                np.r_[genuine[found], impostor],
            )[:2]
        ),
    }
    return row, (far, dir_)


def by_finder(parameters, finder, sets):
    """Enrol, calibrate and probe with photos: the finder finds and aligns every face."""
    rec = Recognizer(finder=finder, aligned_shape=SHAPE, **parameters)
    rec.fit(*sets["enrol"][:2])
    threshold = rec.calibrate_threshold(*sets["calibration"][:2], far=FAR)
    scores, correct, clutter = _genuine(rec, *sets["genuine"])
    groups = {
        "IMM strangers": _impostors(rec, sets["strangers"][0]),
        "HELEN strangers": _impostors(rec, sets["helen"][0]),
        "clutter in genuine photos": clutter,
    }
    return measure(rec, threshold, scores, correct, groups)


def by_pupils(parameters, sets):
    """The same with every face cut on its hand-placed pupils (a perfect finder)."""
    rec = Recognizer(aligned_shape=SHAPE, **parameters)
    shape, eye_positions = rec.crop_geometry()  # as the finder's way cuts them (plda: its own)
    faces = {
        name: cut_on(photos, eyes, shape=shape, eye_positions=eye_positions)
        for name, (photos, *_, eyes) in sets.items()
    }
    rec.fit(faces["enrol"], sets["enrol"][1])
    threshold = rec.calibrate_threshold(faces["calibration"], sets["calibration"][1], far=FAR)
    named, distances = rec.decide(faces["genuine"])
    groups = {
        "IMM strangers": -rec.decide(faces["strangers"])[1],
        "HELEN strangers": -rec.decide(faces["helen"])[1],
    }
    return measure(rec, threshold, -distances, named == sets["genuine"][1], groups)


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument(
        "--helen",
        type=int,
        default=30,
        help="held-out HELEN photos for calibration and for test (default 30)",
    )
    command.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    command.add_argument("--n-components", type=int, default=20, help="of every method (20)")
    command.add_argument(
        "--limit",
        type=int,
        default=5,
        help="photos per person in each role (default 5, all; for quick runs)",
    )
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    imm, person, number, pupils, helen = _groups(args.helen)

    def imm_set(mask):  # (photos, labels, pupils), at most --limit photos per person
        rows = (
            np.flatnonzero(mask & (number % 5 <= args.limit) & (number % 5 > 0))
            if args.limit < 5
            else np.flatnonzero(mask)
        )
        return [imm.images[i] for i in rows], imm.labels[rows], pupils[rows]

    strangers = ["stranger"] * len(helen["calibration"][0])
    calibration = imm_set(np.isin(person, CALIBRATION))
    sets = {
        "enrol": imm_set(np.isin(person, ENROLLED) & (number <= 5)),
        "genuine": imm_set(np.isin(person, ENROLLED) & (number > 5)),
        "calibration": (
            calibration[0] + helen["calibration"][0],
            np.r_[calibration[1], strangers],
            np.concatenate([calibration[2], helen["calibration"][1]]),
        ),
        "strangers": imm_set(np.isin(person, IMPOSTORS)),
        "helen": (helen["test"][0], np.array(strangers[: len(helen["test"][0])]), helen["test"][1]),
    }
    finder = CachedFinder(default_finder())
    table, curves, marks = {}, {}, {}
    for method in steps(list(args.methods), args, "methods"):
        parameters = {**METHODS[method], "n_components": args.n_components}
        if parameters.get("method") == "plda":
            parameters["feature"] = default_identity_model()
        for way, (row, curve) in (
            ("found and aligned by the finder", by_finder(parameters, finder, sets)),
            ("cut on the true pupils", by_pupils(parameters, sets)),
        ):
            name = f"{method}, {way}"
            table[name] = row
            curves[f"{name} (TAR@1% {100 * row['tar_at_far_0.01']:.0f}%)"] = curve
            marks[f"{name}: calibrated"] = (row["calibrated_far_pooled"], row["calibrated_tar"])
    run.figure(
        roc(
            curves,
            xlabel="false alarms (faces of strangers accepted)",
            ylabel="genuine photos: face found, accepted and named correctly",
            title="IMM people from photos, open set",
            xlim=(-0.01, 0.5),
            marks=marks,
        )
    )
    run.results = table
    return run.finish(
        "; ".join(
            f"{name}: found {100 * row['faces_found']:.0f}%, TAR@1% "
            f"{100 * row['tar_at_far_0.01']:.0f}%, calibrated {100 * row['calibrated_tar']:.0f}%"
            for name, row in table.items()
        )
    )


if __name__ == "__main__":
    main()
