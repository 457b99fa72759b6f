"""Faces grouped by person: LFW people the model never saw, IMM's studio, 9,520 faces at once.

LFW's people with six or more photos are dealt (by ``--seed``) into 30
validation people, 30 tuning people and the rest; an identity model with the
shipped recipe is fitted on the rest only. The cut of :func:`cluster_faces`
(the probability of one person learnt from the set's two kinds of pairs, and the
calibrated probability without) is chosen on
the tuning people and reported on the validation people (6 photos each,
mixed), both on the face near each photo's centre (the eyes the finder's
placer gives, as the model is trained) and through the whole pipeline (the
finder's faces; faces of bystanders are left out of the score). IMM's 12
people, studio photos never used in any choice, show what learning from the
set does under other conditions, with all 12 people and with 2 and 4 of them
(10 photos each: a few people in many photos). The peer, where installed (the
``bench`` extra): dlib's HOG faces, 128-D embeddings and Chinese whispers on the
same photos, each face scored when it is the photo's person (ours: its left
eye within 0.3 eye distances of the placed one; dlib's, which reports no
eyes: its box holds the placed eyes' midpoint). Last, every LFW face at once: the time and memory
of grouping 9,520 faces.

    eigenvision experiment face_clustering --eyes EYES.npz --out experiments/figures/face_clustering
"""

from __future__ import annotations

import resource
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score

from .. import datasets
from ..evaluate import pair_precision_recall
from ..faces.compare import model_crop
from ..faces.groups import cluster_faces, group_crops
from ..faces.photos import default_finder
from ..identity import IdentityModel
from ..plot import rate_curves
from . import _dlib
from ._common import Run, add_eyes_option, data_env, lfw_crops, parser, steps

NAME = "face_clustering"
PROBABILITIES = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
FEW_PEOPLE = (2, 4)  # IMM people grouped alone, 10 photos each


def _quality(truth, labels):
    precision, recall, f = pair_precision_recall(truth, labels)
    return {
        "pairwise_precision": precision,
        "pairwise_recall": recall,
        "pairwise_f": f,
        "ari": float(adjusted_rand_score(truth, labels)),
        "groups": int(labels.max() + 1),
        "people": int(len(np.unique(truth))),
    }


def _sweep(crops, truth, model):
    """Quality at every cut, learnt from the set and by the model's calibration."""
    return {
        adapt_name: {
            str(p): _quality(truth, group_crops(crops, model, threshold=p, adapt=adapt))
            for p in PROBABILITIES
        }
        for adapt_name, adapt in (("learnt from the set", True), ("probability", False))
    }


def _best(sweep):
    return max(sweep, key=lambda cut: sweep[cut]["pairwise_f"])


def _first_photos(labels, people, count=6):
    return np.concatenate([np.flatnonzero(labels == person)[:count] for person in people])


def _through_the_finder(photos, truth, eyes, model, finder, cut):
    """cluster_faces on the photos; each found face scored when it is the central person's."""
    groups = cluster_faces(photos, finder=finder, model=model, threshold=cut)
    labels, owners = [], []
    for number, group in enumerate(groups):
        for index, face in group:
            iod = np.hypot(*np.subtract(*eyes[index]))
            if np.hypot(*np.subtract(face.left_eye, eyes[index][0])) < 0.3 * iod:
                labels.append(number)
                owners.append(index)
    found = len(set(owners))
    faces = sum(len(group) for group in groups)
    result = _quality(truth[owners], _renumbered(np.array(labels)))
    result.update(
        photos=len(photos),
        central_faces_found=found,
        bystanders=faces - len(owners),
    )
    return result


def _dlib_peer(paths, truth, eyes):
    """dlib's HOG faces, embeddings and Chinese whispers on the same photos, scored alike."""
    from PIL import Image

    embedder = _dlib.Embedder()
    vectors, owners, faces = [], [], 0
    start = time.perf_counter()
    for index, path in enumerate(paths):
        with Image.open(path) as opened:
            image = np.asarray(opened.convert("RGB"))
        boxes, found = embedder.faces(image)
        faces += len(boxes)
        centre = np.mean(eyes[index], axis=0)
        for box, vector in zip(boxes, found, strict=True):
            x, y, w, h = box
            if x <= centre[0] <= x + w and y <= centre[1] <= y + h:
                vectors.append(vector)
                owners.append(index)
    seconds = (time.perf_counter() - start) / len(paths)
    labels = _dlib.chinese_whispers(np.array(vectors))
    result = _quality(truth[owners], _renumbered(labels))
    result.update(
        photos=len(paths),
        central_faces_found=len(set(owners)),
        bystanders=faces - len(owners),
        seconds_per_photo=seconds,
    )
    return result


def _renumbered(labels):
    return np.unique(labels, return_inverse=True)[1]


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    add_eyes_option(command)
    command.add_argument("--people", type=int, default=30, help="validation people (default 30)")
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    model = IdentityModel()
    lfw, eyes, crops = lfw_crops(args, model)
    people, counts = np.unique(lfw.labels, return_counts=True)
    dealt = np.random.default_rng(args.seed).permutation(people[counts >= 6])
    validation, tuning = dealt[: args.people], dealt[args.people : 2 * args.people]
    held_out = np.isin(lfw.labels, dealt[: 2 * args.people])
    start = time.perf_counter()
    model.fit(crops[~held_out], lfw.labels[~held_out])
    fit_seconds = time.perf_counter() - start

    results = {"fit_seconds": fit_seconds, "trained_people": int(len(people) - 2 * args.people)}
    sweeps = {}
    for name, group in steps((("tuning", tuning), ("validation", validation)), args, "sets"):
        rows = _first_photos(lfw.labels, group)
        sweeps[name] = _sweep(crops[rows], lfw.labels[rows], model)
    cut = float(_best(sweeps["tuning"]["learnt from the set"]))
    probability = float(_best(sweeps["tuning"]["probability"]))
    imm = datasets.load_imm(as_gray=False)
    imm_eyes = [[imm.landmarks[e][i] for e in ("left_eye", "right_eye")] for i in range(len(imm))]
    imm_crops = np.stack(
        [model_crop(im, e, model) for im, e in zip(imm.images, imm_eyes, strict=True)]
    )
    sweeps["IMM"] = _sweep(imm_crops, imm.labels, model)
    for people in FEW_PEOPLE:
        few = np.isin(imm.labels, np.unique(imm.labels)[:people])
        sweeps[f"IMM, {people} people"] = _sweep(imm_crops[few], imm.labels[few], model)
    results["sweeps"] = sweeps
    results["chosen_on_tuning"] = {"learnt from the set": cut, "probability": probability}
    for name, key in (("validation", "validation_at_chosen"), ("IMM", "IMM_at_chosen")):
        results[key] = {
            "learnt from the set": sweeps[name]["learnt from the set"][str(cut)],
            "probability": sweeps[name]["probability"][str(probability)],
        }

    rows = _first_photos(lfw.labels, validation)
    folder = datasets.find_datasets()["lfw_train"] / "images"
    paths = [folder / name for name in lfw.names[rows]]  # the files, in colour, as users give
    start = time.perf_counter()
    results["validation_through_the_finder"] = _through_the_finder(
        paths, lfw.labels[rows], eyes[rows], model, default_finder(), cut
    )
    results["validation_through_the_finder"]["seconds_per_photo"] = (
        time.perf_counter() - start
    ) / len(paths)

    if _dlib.available():
        results["dlib_chinese_whispers"] = _dlib_peer(paths, lfw.labels[rows], eyes[rows])

    start = time.perf_counter()
    labels = group_crops(crops, model)
    results["all_faces"] = {
        "faces": int(len(crops)),
        "seconds": time.perf_counter() - start,
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **_quality(lfw.labels, labels),
    }

    curves = {
        f"{name}, learnt from the set": [
            sweeps[name]["learnt from the set"][str(p)]["pairwise_f"] for p in PROBABILITIES
        ]
        for name in ("tuning", "validation", "IMM", *(f"IMM, {n} people" for n in FEW_PEOPLE))
    }
    references = {
        f"{name}, probability at {probability}": results[key]["probability"]["pairwise_f"]
        for name, key in (("validation", "validation_at_chosen"), ("IMM", "IMM_at_chosen"))
    }
    if "dlib_chinese_whispers" in results:
        peer = results["dlib_chinese_whispers"]["pairwise_f"]
        references["validation photos, dlib embeddings + Chinese whispers"] = peer
    run.figure(
        rate_curves(
            PROBABILITIES,
            curves,
            references=references,
            xlabel="cut (the probability of one person at which merging stops)",
            ylabel="pairwise F-measure",
            title=f"faces grouped by person ({args.people} LFW people x 6 photos; IMM 12 x 10)",
        )
    )
    run.results = results
    chosen = results["validation_at_chosen"]
    adapted = chosen["learnt from the set"]
    learnt = {name: sweep["learnt from the set"][str(cut)] for name, sweep in sweeps.items()}
    few = ", ".join(
        f"{n} people {learnt[f'IMM, {n} people']['pairwise_f']:.3f}" for n in FEW_PEOPLE
    )
    return run.finish(
        f"{args.people} unseen LFW people x 6: pairwise F {adapted['pairwise_f']:.3f} "
        f"({adapted['groups']} groups) learnt from the set at {cut} (chosen on 30 "
        f"others), {chosen['probability']['pairwise_f']:.3f} by probability at {probability}; "
        f"IMM 12 people: {results['IMM_at_chosen']['learnt from the set']['pairwise_f']:.3f} vs "
        f"{results['IMM_at_chosen']['probability']['pairwise_f']:.3f} ({few}); "
        + (
            f"dlib Chinese whispers on the same photos "
            f"{results['dlib_chinese_whispers']['pairwise_f']:.3f}; "
            if "dlib_chinese_whispers" in results
            else ""
        )
        + f"9,520 faces grouped in "
        f"{results['all_faces']['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
