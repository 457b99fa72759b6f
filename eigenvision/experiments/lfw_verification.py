"""LFW verification: same person or not, 10 folds by person on LFW's View 1 training pairs.

Every photo of ``lfw_train`` is cut on the eyes the shipped finder places
(:func:`~eigenvision.faces.recipes.lfw_eyes`). The people are dealt into 10
folds; the pairs of ``pairsDevTrain.txt`` whose first person is in a fold
are scored by models fitted on every other person (nobody in a test pair is
ever in training). Accuracy at each model's own threshold, ROC, TAR at FAR
1% and 0.1%, pooled over the folds, for: eigenfaces (cosine) and PLDA on the
pixels (crops reduced to 40 rows), and the shipped recipe (Tan & Triggs,
the identity model's descriptor, PLDA, calibration); where installed (the
``bench`` extra), dlib's 128-D embeddings as face_recognition computes them
(a network trained on other people, at its default tolerance 0.6) as the peer.

The recipe's Fisher-vector mixture learns from faces without their names:
for each half of the folds (0-4, 5-9) it is fitted on people in none of
that half's test pairs (:meth:`~eigenvision.IdentityModel.fit_description`),
and those folds' crops are described with it.

The shipped recipe's settings (crop, descriptor, LBP radii, cells) were
chosen on the pairs of folds 0-4 only; its rates on folds 5-9 alone, which no choice
saw, are reported beside the pooled ones.

    eigenvision experiment lfw_verification --out experiments/figures/lfw_verification
"""

from __future__ import annotations

import copy
import time

import numpy as np

from .. import datasets
from ..eigenspace import Eigenspace
from ..evaluate import auc, roc_curve
from ..faces.recipes import recipe_model
from ..identity import IdentityModel
from ..identity.deep import deep_available
from ..identity.describe import FaceDescriber
from ..plot import roc
from ..transform import resize
from . import _dlib
from ._common import (
    Run,
    add_embeddings_option,
    add_eyes_option,
    data_env,
    lfw_crops,
    lfw_deep_rows,
    parser,
    steps,
)

NAME = "lfw_verification"
DLIB = "dlib embeddings (peer, trained elsewhere)"
DEEP = "learned model (dlib embedding of dlib's chip on our eyes; PLDA + distance)"
DLIB_TOLERANCE = 0.6  # face_recognition's default


def _folds(people, n_folds, seed):
    """Each person's fold, dealt at random."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(people))
    return dict(zip(np.asarray(people)[order], np.arange(len(people)) % n_folds, strict=True))


def _rates(scores, same, threshold):
    """Accuracy at ``threshold``, TAR at FAR 1% and 0.1%, AUC and the ROC."""
    fpr, tpr, _ = roc_curve(same, scores)
    at = {far: float(tpr[np.searchsorted(fpr, far, side="right") - 1]) for far in (0.01, 0.001)}
    accuracy = float(np.mean((scores >= threshold) == same))
    return {
        "accuracy": accuracy,
        "tar_at_far_1%": at[0.01],
        "tar_at_far_0.1%": at[0.001],
        "auc": auc(fpr, tpr),
    }, (fpr, tpr)


def _best_threshold(scores, same):
    """The threshold of highest accuracy on (training) pairs."""
    candidates = np.unique(scores)
    accuracy = [np.mean((scores >= t) == same) for t in candidates]
    return float(candidates[int(np.argmax(accuracy))])


def recipe_name(model):
    """The method's name in the results: the descriptors of ``model``'s descriptions, once each.

    >>> recipe_name(IdentityModel())
    'shipped recipe (DAISY, LBP+HOG, FISHER; PLDA)'
    """
    kinds = dict.fromkeys(kind.upper() for kind, *_ in model.descriptions())
    return f"shipped recipe ({', '.join(kinds)}; PLDA)"


def _dlib_pairs(names, a_rows, b_rows):
    """dlib's embeddings of each photo's most central face: the pairs' scores (minus the
    Euclidean distance) and decisions at face_recognition's default tolerance, 0.6."""
    from PIL import Image

    folder = datasets.find_datasets()["lfw_train"] / "images"
    embedder = _dlib.Embedder()
    vectors, missing = {}, 0
    start = time.perf_counter()
    for row in sorted(set(a_rows) | set(b_rows)):
        with Image.open(folder / names[row]) as opened:
            image = np.asarray(opened.convert("RGB"))
        boxes, found = embedder.faces(image)
        if not boxes:
            missing += 1
            continue
        centre = np.array(image.shape[1::-1]) / 2
        nearest = np.argmin(
            [np.hypot(*(np.add(b[:2], np.divide(b[2:], 2)) - centre)) for b in boxes]
        )
        vectors[row] = found[nearest]
    seconds = (time.perf_counter() - start) / (len(vectors) + missing)
    distance = np.array(
        [
            np.linalg.norm(vectors[a] - vectors[b]) if a in vectors and b in vectors else np.inf
            for a, b in zip(a_rows, b_rows, strict=True)
        ]
    )
    unseen = ~np.isfinite(distance)  # a photo without a face: the least alike of all pairs
    distance[unseen] = distance[~unseen].max() + 1
    extra = {"photos_without_a_face": missing, "pairs_without_a_face": int(unseen.sum())}
    extra["seconds_per_photo"] = seconds
    return -distance, distance <= DLIB_TOLERANCE, extra


def _training_pairs(labels, rng, n_pairs=4000):
    """Same- and different-person index pairs among training rows (for eigenfaces' threshold)."""
    rows, cols = [], []
    by_person = {}
    for index, label in enumerate(labels):
        by_person.setdefault(label, []).append(index)
    repeated = [v for v in by_person.values() if len(v) >= 2]
    for _ in range(n_pairs // 2):
        members = repeated[rng.integers(len(repeated))]
        a, b = rng.choice(members, 2, replace=False)
        rows.append(a)
        cols.append(b)
    for _ in range(n_pairs // 2):
        a, b = rng.integers(len(labels), size=2)
        rows.append(a)
        cols.append(b)
    rows, cols = np.array(rows), np.array(cols)
    keep = rows != cols
    return rows[keep], cols[keep], labels[rows[keep]] == labels[cols[keep]]


def _learnt_by_half(crops, labels, a_rows, b_rows, pair_fold, args):
    """Each fold's recipe with its learnt description and the crops described by it (the
    mixture of each half of the folds fitted on people in none of that half's test pairs; one
    recipe for all folds when nothing is learnt), and the seconds describing a crop took."""
    folds = np.arange(args.folds)
    learnt, seconds = {}, []
    for half in (folds[: args.folds // 2], folds[args.folds // 2 :]):
        tested = np.isin(pair_fold, half)
        unseen = ~np.isin(labels, np.concatenate([labels[a_rows[tested]], labels[b_rows[tested]]]))
        model = IdentityModel().fit_description(crops[unseen])
        start = time.perf_counter()
        described = (model, model.describe(crops))
        seconds.append((time.perf_counter() - start) / len(crops))
        if model.describer.fisher_ is None:
            return dict.fromkeys(folds, described), seconds[0]
        learnt.update(dict.fromkeys(half, described))
    return learnt, float(np.mean(seconds))


def _rates_line(name, rates):
    """One method's accuracy and TARs in the summary line."""
    return (
        f"{name} {100 * rates['accuracy']:.1f}%, TAR@FAR1% {100 * rates['tar_at_far_1%']:.1f}%, "
        f"TAR@FAR0.1% {100 * rates['tar_at_far_0.1%']:.1f}%"
    )


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument("--folds", type=int, default=10)
    command.add_argument(
        "--skip-classical",
        action="store_true",
        help="leave out the pixel baselines and the classical recipe (most of the hour the "
        "run takes): the learned model and dlib's recipe alone",
    )
    add_eyes_option(command)
    add_embeddings_option(command)
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    classical = not args.skip_classical
    lfw, eyes, crops = lfw_crops(args, IdentityModel())
    pairs = datasets.lfw_pairs()
    row = {name: i for i, name in enumerate(lfw.names)}
    fold_of = _folds(np.unique(lfw.labels), args.folds, args.seed)
    a_rows = np.array([row[a] for a, _, _ in pairs])
    b_rows = np.array([row[b] for _, b, _ in pairs])
    same = np.array([s for _, _, s in pairs])
    pair_fold = np.array([fold_of[lfw.labels[i]] for i in a_rows])
    recipe = recipe_name(IdentityModel())
    methods, describe_seconds = (), None
    if classical:
        # the pixel baselines at 40 rows: ten PCAs of the full crops would take longer than
        # everything else together
        small = (40, round(40 * crops.shape[2] / crops.shape[1]))
        pixels = np.stack([resize(crop, small) for crop in crops])
        pixels = pixels.reshape(len(crops), -1).astype(np.float32)
        learnt, describe_seconds = _learnt_by_half(
            crops, lfw.labels, a_rows, b_rows, pair_fold, args
        )
        methods += ("eigenfaces (cosine)", "PLDA on pixels", recipe)
    learned = None
    if deep_available():  # the learned description: one more description under the same PLDA
        methods += (DEEP,)
        learned = lfw_deep_rows(args, eyes, recipe_model("deep"))
    scores = {name: np.zeros(len(pairs)) for name in methods}
    decided = {name: np.zeros(len(pairs), dtype=bool) for name in methods}
    rng = np.random.default_rng(args.seed)
    for fold in steps(range(args.folds), args, "folds"):
        test = pair_fold == fold
        test_people = set(lfw.labels[a_rows[test]]) | set(lfw.labels[b_rows[test]])
        train = ~np.isin(lfw.labels, list(test_people))
        a, b = a_rows[test], b_rows[test]
        fitted_models = []
        if classical:
            space = Eigenspace(100).fit(pixels[train])
            codes = space.transform(pixels)
            codes /= np.linalg.norm(codes, axis=1, keepdims=True)
            cosine = np.sum(codes[a] * codes[b], axis=1)
            tr_rows, tr_cols, tr_same = _training_pairs(lfw.labels[train], rng)
            train_codes = codes[train]
            threshold = _best_threshold(
                np.sum(train_codes[tr_rows] * train_codes[tr_cols], 1), tr_same
            )
            scores["eigenfaces (cosine)"][test] = cosine
            decided["eigenfaces (cosine)"][test] = cosine >= threshold
            # the pixels are one description (the recipe's descriptors several, each read by a
            # PLDA model of its own), so one PLDA model reads them
            model, described = learnt[fold]
            on_pixels = IdentityModel(FaceDescriber(descriptor="pixels", illumination=True))
            fitted_models += [
                ("PLDA on pixels", pixels, on_pixels),
                (recipe, described, copy.copy(model)),
            ]
        if learned is not None:
            fitted_models.append((DEEP, learned, recipe_model("deep")))
        for name, X, untrained in fitted_models:
            fitted = untrained.fit_descriptors(X[train], lfw.labels[train])
            # the model's score (PLDA's ratio normalised against its cohort, fused with the
            # distance where the recipe says) as its calibrated log-odds: one scale in all folds
            score = fitted.paired_log_odds(
                fitted.encode_descriptors(X[a]), fitted.encode_descriptors(X[b])
            )
            slope, intercept = fitted.calibration_
            scores[name][test] = slope * score + intercept
            decided[name][test] = score >= fitted.threshold_
    if _dlib.available():
        methods += (DLIB,)
        scores[DLIB], decided[DLIB], results_dlib = _dlib_pairs(lfw.names, a_rows, b_rows)
    results, curves = {}, {}
    for name in methods:
        rates, curve = _rates(scores[name], same, np.inf)
        rates["accuracy"] = float(np.mean(decided[name] == same))
        results[name] = rates
        curves[f"{name} (AUC {rates['auc']:.3f})"] = curve
    run.figure(
        roc(
            curves,
            xlabel="false accepts (different people called the same)",
            ylabel="true accepts",
            title=f"LFW View 1 training pairs, {args.folds} folds by person",
        )
    )
    if DLIB in results:
        results[DLIB].update(results_dlib)
    unseen = pair_fold >= args.folds // 2
    for name in (recipe, DEEP, DLIB):
        if name not in results:
            continue
        rates, _ = _rates(scores[name][unseen], same[unseen], np.inf)
        rates["accuracy"] = float(np.mean(decided[name][unseen] == same[unseen]))
        results[name]["folds_unseen_by_the_choice"] = rates
    run.results = {"methods": results, "pairs": int(len(pairs))}
    if describe_seconds is not None:
        run.results["describe_ms_per_crop"] = 1000 * describe_seconds
    parts = []
    if recipe in results:
        best = results[recipe]
        unseen_rates = best["folds_unseen_by_the_choice"]
        parts.append(
            f"shipped recipe accuracy {100 * best['accuracy']:.1f}%, TAR@FAR1% "
            f"{100 * best['tar_at_far_1%']:.1f}% (folds {args.folds // 2}-{args.folds - 1}, "
            f"unseen by the recipe's choice: {100 * unseen_rates['accuracy']:.1f}%, "
            f"{100 * unseen_rates['tar_at_far_1%']:.1f}%) (PLDA on pixels "
            f"{100 * results['PLDA on pixels']['accuracy']:.1f}%, eigenfaces "
            f"{100 * results['eigenfaces (cosine)']['accuracy']:.1f}%)"
        )
    if DEEP in results:
        parts.append(_rates_line("learned model", results[DEEP]))
    if DLIB in results:
        parts.append(_rates_line("dlib's own recipe (peer)", results[DLIB]))
    return run.finish(f"{len(pairs)} pairs, {args.folds} folds by person: " + "; ".join(parts))


if __name__ == "__main__":
    main()
