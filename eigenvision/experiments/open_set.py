"""Open set: eigenfaces, Fisherfaces and Bayesian matching name the enrolled, reject others.

Protocol (AT&T): people 1-20 enrolled with images 1-5; the threshold is set
at 1% false accepts on people 21-30 (all their images); the test probes are
images 6-10 of the enrolled (genuine) and every image of people 31-40
(impostors, never seen). Each method's settings (working resolution,
components, metric) are chosen by 5-fold cross-validation of the rank-1
rate on the enrolled training images alone. Also: the closed set (all 40
people, images 1-5 train, 6-10 test, settings by cross-validation on 1-5),
and verification of same/different pairs of people 21-40 by models trained
on people 1-20. IMM (12 people, crops aligned on the eyes) follows the same
protocol with people 1-6 enrolled, 7-9 calibrating and 10-12 impostors.
Each threshold is also calibrated without the calibration people, on the
enrolled images themselves, each person left out in turn as a stranger to
the others (:meth:`~eigenvision.Recognizer.gallery_as_strangers`): what
:meth:`~eigenvision.Recognizer.calibrate_threshold` does without images for
``plda``, whose model is trained on other people; the other methods fit
their features to the enrolled people, and the figures mark it for ``plda``
alone; and on both, pooled (``calibrate_threshold(..., enrolled=True)``).

``plda``: the shipped identity model as the background
(:func:`~eigenvision.default_identity_model`, trained on LFW: no AT&T or IMM
image trains it, and nothing is chosen), the faces cut as it was trained on
them (:func:`~eigenvision.faces.compare.model_crop`): AT&T on the eyes the
shipped finder places in its likeliest face of each image (every image shows
one face: searched at threshold 0), IMM on its hand-placed pupils.
``plda centred``: the same model with its codes centred on the enrolled
faces' mean (:func:`~eigenvision.identity.centred_on`, unsupervised mean
adaptation to the photos' conditions; the gallery is all it reads).
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from .. import datasets
from ..evaluate import auc, eer, open_set_roc, rate_at, roc_curve
from ..faces.compare import default_identity_model
from ..faces.compare import identity_crops as cut_for_identity
from ..faces.crops import align_face
from ..identity import centred_on
from ..imageset import ImageSet
from ..openset import SCORE_NORMS, threshold_at
from ..plot import roc
from ..recognize import Recognizer
from ._common import Run, data_env, parser, steps

NAME = "open_set"
SHAPES = [(28, 23), (56, 46)]
#: Each entry: the Recognizer preset and the grid cross-validation searches (with SHAPES).
GRIDS = {
    "eigenfaces": (
        "eigenfaces",
        {"n_components": [10, 20, 40, 60], "metric": ["euclidean", "cosine"]},
    ),
    "fisherfaces": ("fisherfaces", {"n_components": [None], "metric": ["euclidean", "cosine"]}),
    "bayesian": ("bayesian", {"n_components": [5, 10, 20, 40], "metric": ["euclidean", "cosine"]}),
    # virtual views (jitter 1 px, Martinez 2002) fixed beforehand: cross-validation within
    # one session's images cannot see what they are for.
    "bayesian + views": (
        "bayesian",
        {"n_components": [10, 20, 40], "metric": ["euclidean", "cosine"], "jitter": [1]},
    ),
}
#: The shipped identity model as background (no grid: nothing is fitted or chosen).
IDENTITY = "plda"
#: The same, its codes centred on the enrolled faces (:func:`~eigenvision.identity.centred_on`).
CENTRED = "plda centred"
#: The methods that read the faces cut for the identity model.
IDENTITIES = (IDENTITY, CENTRED)
FARS = (0.01, 0.001)


def att_groups():
    """AT&T as (person number 1-40, image number 1-10, ImageSet)."""
    faces = datasets.load_att()
    person = np.array([int(label[1:]) for label in faces.labels])
    image = np.array([int(name.split("/")[1].split(".")[0]) for name in faces.names])
    return person, image, faces


@functools.cache
def shipped_identity_model():
    """The shipped identity model, read once per run (a resource: enrolling never refits it)."""
    return default_identity_model()


def identity_crops(faces: ImageSet, eyes=None) -> ImageSet:
    """``faces`` cut for the shipped identity model: on ``eyes``, else on the shipped finder's
    likeliest face of each image (:func:`~eigenvision.faces.compare.identity_crops`)."""
    return cut_for_identity(faces, shipped_identity_model(), eyes=eyes)


def imm_groups(faces: ImageSet, shape=(56, 46)):
    """IMM (:func:`~eigenvision.datasets.load_imm`) cut on its hand-placed pupils: (person 1-12,
    image 1-10, aligned ImageSet)."""
    crops = np.stack(
        [
            align_face(photo, (left, right), shape=shape)
            for photo, left, right in zip(
                faces.images, faces.landmarks["left_eye"], faces.landmarks["right_eye"], strict=True
            )
        ]
    )
    person = np.array([int(label) for label in faces.labels])
    image = np.array([int(name.split("_")[1].split(".")[0]) for name in faces.names])
    return person, image, ImageSet(crops.astype(np.float32), faces.labels, names=faces.names)


def chosen(entry, train: ImageSet, *, folds=5, shapes=SHAPES):
    """The Recognizer of a :data:`GRIDS` entry at its grid point of best cross-validated rank-1.

    Ties (rank-1 is 100% at most grid points of AT&T's training halves) go to
    the better :func:`separation`. :data:`IDENTITY`: the shipped identity model
    enrolling ``train`` (crops cut for it, :func:`identity_crops`), nothing chosen.
    """
    if entry in IDENTITIES:
        model = shipped_identity_model()
        if entry == CENTRED:
            model = centred_on(model, train.images)
        rec = Recognizer(method="plda", feature=model)
        return rec.fit(train.images, train.labels), {}, None
    method, base_grid = GRIDS[entry]
    # the smallest cross-validation fold bounds the components: PCA needs k < n, the
    # intrapersonal model k < n - c.
    smallest = len(train) - int(np.ceil(len(train) / folds))
    largest = smallest - (len(np.unique(train.labels)) if method == "bayesian" else 0) - 1
    sizes = [k for k in base_grid["n_components"] if k is None or k <= largest]
    grid = {**base_grid, "n_components": sizes or [largest], "shape": list(shapes)}
    search = GridSearchCV(
        Recognizer(method=method),
        grid,
        scoring={"rank1": _rank1, "separation": separation},
        refit=_best_rank1_then_separation,
        cv=StratifiedKFold(folds, shuffle=True, random_state=0),
        error_score="raise",
    )
    search.fit(train.images, train.labels)
    best = search.best_index_
    return (
        search.best_estimator_,
        search.best_params_,
        {
            "rank1": float(search.cv_results_["mean_test_rank1"][best]),
            "separation": float(search.cv_results_["mean_test_separation"][best]),
        },
    )


def _rank1(rec, images, labels):
    return rec.score(images, labels)


def separation(rec, images, labels):
    """AUC of each probe's nearest same-person distance against its nearest other-person one.

    Rank-1 on AT&T's training halves is 100% almost everywhere in the grid; this
    continuous score says how well one threshold parts people, the open-set question.
    """
    distances, named = rec.kneighbors(images, k=len(rec.gallery_))
    same = named == np.asarray(labels)[:, None]
    if not (same.any(axis=1).all() and (~same).any(axis=1).all()):
        raise ValueError("every probe needs enrolled images of its own and of other people")
    nearest_same = np.where(same, distances, np.inf).min(axis=1)
    nearest_other = np.where(~same, distances, np.inf).min(axis=1)
    truth = np.r_[np.ones(len(images)), np.zeros(len(images))]
    return auc(*roc_curve(truth, -np.r_[nearest_same, nearest_other])[:2])


def _best_rank1_then_separation(results):
    order = np.lexsort((results["mean_test_separation"], results["mean_test_rank1"]))
    return int(order[-1])


def scores(rec, probes: ImageSet, *, map_score=False):
    """``(score, named)``: confidence of each probe's answer (higher: surer) and that answer."""
    if map_score:
        odds = rec.match_probability(probes, log_odds=True)
        return odds.max(axis=1), rec.classes_[odds.argmax(axis=1)]
    named, distances = rec.decide(probes)
    return -distances, named


def open_set(rec, enrolled, calibration, genuine, impostors, *, map_score=False):
    """The open-set numbers of a fitted recognizer: ROC, calibrated operating point, rank-1.

    Calibrated three times, each for :data:`FARS`' first rate: on the calibration people
    (``calibrated_*``), on the enrolled people as each other's strangers
    (``gallery_calibrated_*``, :meth:`~eigenvision.Recognizer.gallery_as_strangers`) and on
    both (``pooled_calibrated_*``).
    """
    genuine_score, named = scores(rec, genuine, map_score=map_score)
    correct = named == genuine.labels
    impostor_score, _ = scores(rec, impostors, map_score=map_score)
    far, dir_, _ = open_set_roc(genuine_score, correct, impostor_score)
    calibration_score = scores(rec, calibration, map_score=map_score)[0]
    threshold = threshold_at(calibration_score, FARS[0])
    result = {
        "rank1": float(correct.mean()),
        "calibrated_tar": float(np.mean((genuine_score >= threshold) & correct)),
        "calibrated_far": float(np.mean(impostor_score >= threshold)),
        "curve": (far, dir_),
    }
    if not map_score:  # the enrolled as each other's strangers: no calibration people
        enrolled_scores = -rec.gallery_as_strangers()
        for name, pool in (
            ("gallery", enrolled_scores),
            ("pooled", np.concatenate([enrolled_scores, calibration_score])),
        ):
            threshold = threshold_at(pool, FARS[0])
            accepted = genuine_score >= threshold
            result[f"{name}_calibrated_tar"] = float(np.mean(accepted & correct))
            result[f"{name}_calibrated_far"] = float(np.mean(impostor_score >= threshold))
    for target in FARS:
        result[f"tar_at_far_{target:g}"] = rate_at(far, dir_, target)
    result["auc"] = auc(
        *roc_curve(
            np.r_[np.ones(len(genuine_score)), np.zeros(len(impostor_score))],
            np.r_[genuine_score, impostor_score],
        )[:2]
    )
    return result


def verification(rec, faces: ImageSet, *, map_score=False):
    """Same/different on every pair of ``faces`` (people the model never saw): ROC numbers."""
    if map_score:
        similarity = rec.pairwise_log_odds(faces)
    else:
        similarity = -rec.pairwise_distances(faces)
    i, j = np.triu_indices(len(faces), 1)
    same = faces.labels[i] == faces.labels[j]
    fpr, tpr, _ = roc_curve(same, similarity[i, j])
    return {
        "eer": eer(fpr, tpr)[0],
        "auc": auc(fpr, tpr),
        **{f"tar_at_far_{target:g}": rate_at(fpr, tpr, target) for target in FARS},
        "curve": (fpr, tpr),
        "pairs": {"same": int(same.sum()), "different": int((~same).sum())},
    }


def protocol(
    person, image, faces, *, enrolled, calibration, impostors, args, run, dataset, crops=None
):
    """Choose, fit and measure every method on one dataset; returns the results table.

    ``crops``: the faces cut for the identity model (:func:`identity_crops`), which
    :data:`IDENTITIES` read instead of ``faces``.
    """
    enrol = np.isin(person, enrolled) & (image <= 5)
    genuine = np.isin(person, enrolled) & (image > 5)
    calibrate, impostor = np.isin(person, calibration), np.isin(person, impostors)
    table, curves, marks = {}, {}, {}
    for method in steps(args.methods, args, f"{dataset} methods"):
        data = crops if method in IDENTITIES else faces
        closed_train, closed_test = data[image <= 5], data[image > 5]
        rec, params, cv_rate = chosen(method, data[enrol], folds=args.folds)
        variants = [(method, False)] + (
            [(f"{method} MAP", True)]
            if rec.method == "bayesian" and rec.metric == "euclidean"
            else []
        )
        for name, map_score in variants:
            row = open_set(
                rec,
                data[enrol],
                data[calibrate],
                data[genuine],
                data[impostor],
                map_score=map_score,
            )
            far, dir_ = row.pop("curve")
            curves[f"{name} (TAR@1% {100 * row['tar_at_far_0.01']:.0f}%)"] = (far, dir_)
            marks[f"{name} calibrated"] = (row["calibrated_far"], row["calibrated_tar"])
            if method in IDENTITIES:  # the others' features are fitted to the enrolled
                for route, label in (("gallery", "on the enrolled"), ("pooled", "on both")):
                    marks[f"{name} calibrated {label}"] = (
                        row[f"{route}_calibrated_far"],
                        row[f"{route}_calibrated_tar"],
                    )
            row.update(settings=dict(params), cross_validation=cv_rate)
            table[name] = row
        # the same settings, the decision normalised (plda's ratio takes no normalisation)
        for norm in () if method in IDENTITIES else SCORE_NORMS:
            normed = clone(rec).set_params(score_norm=norm).fit(data[enrol])
            row = open_set(normed, data[enrol], data[calibrate], data[genuine], data[impostor])
            row.pop("curve")
            table[f"{method} + {norm}"] = row
        closed_rec, closed_params, _ = chosen(method, closed_train, folds=args.folds)
        table[method]["closed_set"] = float(closed_rec.score(closed_test, closed_test.labels))
        table[method]["closed_settings"] = closed_params
    run.figure(
        roc(
            curves,
            xlabel="false alarms (impostors accepted)",
            ylabel="genuine probes accepted and named correctly",
            title=f"{dataset}: open-set identification",
            xlim=(-0.01, 0.3),
            marks=marks,
        ),
        f"{dataset}_open_set.png",
    )
    return table


def verification_table(person, faces, *, train_people, test_people, args, run, dataset, crops=None):
    """Verification ROC of each method (settings by cross-validation on the training people;
    :data:`IDENTITIES` on ``crops``, as :func:`protocol`)."""
    table, curves = {}, {}
    for method in steps(args.methods, args, f"{dataset} verification"):
        data = crops if method in IDENTITIES else faces
        train = data[np.isin(person, train_people)]
        test = data[np.isin(person, test_people)]
        rec, params, _ = chosen(method, train, folds=args.folds)
        variants = [(method, False)] + (
            [(f"{method} MAP", True)]
            if rec.method == "bayesian" and rec.metric == "euclidean"
            else []
        )
        for name, map_score in variants:
            row = verification(rec, test, map_score=map_score)
            fpr, tpr = row.pop("curve")
            curves[f"{name} (EER {100 * row['eer']:.1f}%)"] = (fpr, tpr)
            row["settings"] = params
            table[name] = row
    run.figure(
        roc(
            curves,
            xlabel="false accepts (different people)",
            ylabel="true accepts (same person)",
            title=f"{dataset}: verification, unseen people",
            xlim=(-0.01, 0.3),
        ),
        f"{dataset}_verification.png",
    )
    return table


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument("--folds", type=int, default=5, help="cross-validation folds")
    command.add_argument("--no-imm", action="store_true", help="AT&T only")
    methods = [*GRIDS, *IDENTITIES]
    command.add_argument("--methods", nargs="+", choices=methods, default=methods)
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    person, image, faces = att_groups()
    crops = identity_crops(faces) if set(IDENTITIES) & set(args.methods) else None
    results = {
        "att": protocol(
            person,
            image,
            faces,
            enrolled=range(1, 21),
            calibration=range(21, 31),
            impostors=range(31, 41),
            args=args,
            run=run,
            dataset="att",
            crops=crops,
        ),
        "att_verification": verification_table(
            person,
            faces,
            train_people=range(1, 21),
            test_people=range(21, 41),
            args=args,
            run=run,
            dataset="att",
            crops=crops,
        ),
    }
    if not args.no_imm:
        imm = datasets.load_imm()
        person, image, faces = imm_groups(imm)
        crops = None
        if set(IDENTITIES) & set(args.methods):
            marks = imm.landmarks
            eyes = np.stack([marks["left_eye"], marks["right_eye"]], axis=1)
            crops = identity_crops(imm, eyes)
        results["imm"] = protocol(
            person,
            image,
            faces,
            enrolled=range(1, 7),
            calibration=range(7, 10),
            impostors=range(10, 13),
            args=args,
            run=run,
            dataset="imm",
            crops=crops,
        )
    run.results = results
    att = results["att"]
    return run.finish(
        "AT&T open set TAR@FAR1% / rank-1: "
        + ", ".join(
            f"{name} {100 * row['tar_at_far_0.01']:.0f}/{100 * row['rank1']:.0f}%"
            for name, row in att.items()
        )
        + "; closed set: "
        + ", ".join(
            f"{name} {100 * row['closed_set']:.1f}%"
            for name, row in att.items()
            if "closed_set" in row
        )
    )


if __name__ == "__main__":
    main()
