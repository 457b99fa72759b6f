"""Faces grouped by person: LFW people the model never saw, IMM's studio, 9,520 faces at once.

LFW's people with six or more photos are dealt (by ``--seed``) into 30
validation people, 30 tuning people and the rest; an identity model with the
shipped recipe is fitted on the rest only. The cut of :func:`cluster_faces`
(the probability of one person learnt from the set's two kinds of pairs, and the
calibrated probability without) is chosen on the tuning people, over
``DRAWS`` draws of 6 photos of each, and the same draws show whether one cut
carries across sets of other shapes (``SET_SHAPES``: fewer people, fewer
photos, a mix of counts). The validation people are reported at that cut and
at the library's default (6 photos each, mixed: their first six and the same
number of random draws), both on the face near each photo's centre (the eyes
the finder's placer gives, as the model is trained) and through the whole
pipeline at the default (the finder's faces; faces of bystanders are left out
of the score). IMM's 12 people, studio photos never used in any choice, show
what learning from the set does under other conditions, with all 12 people
and with 2 and 4 of them (10 photos each: a few people in many photos). The
peer, where installed (the ``bench`` extra): dlib's HOG faces, 128-D
embeddings and Chinese whispers on the same photos, each face scored when it
is the photo's person (ours: its left eye within 0.3 eye distances of the
placed one; dlib's, which reports no eyes: its box holds the placed eyes'
midpoint). Last, every LFW face at once: the time and memory of grouping
9,520 faces.

    eigenvision experiment face_clustering --eyes EYES.npz --out experiments/figures/face_clustering
"""

from __future__ import annotations

import resource
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score
from sklearn.utils import gen_batches

from .. import datasets
from ..evaluate import pair_precision_recall
from ..faces.compare import model_crop
from ..faces.groups import CALIBRATED_CUT, LEARNT_CUT, cluster_faces, group_codes
from ..faces.photos import default_finder
from ..faces.recipes import RECIPES, recipe_model
from ..plot import rate_curves
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

NAME = "face_clustering"
PROBABILITIES = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
FEW_PEOPLE = (2, 4)  # IMM people grouped alone, 10 photos each
DRAWS = 12  # random draws of each set's photos
#: (people, photos of each) of the tuning people's sets; "2-6": 2 to 6 photos each, at random
SET_SHAPES = ((30, 6), (30, 3), (10, 6), (5, 6), (30, "2-6"))


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


def _sweep(codes, truth, model):
    """Quality at every cut, learnt from the set and by the model's calibration."""
    return {
        adapt_name: {
            str(p): _quality(truth, group_codes(codes, model, threshold=p, adapt=adapt))
            for p in PROBABILITIES
        }
        for adapt_name, adapt in (("learnt from the set", True), ("probability", False))
    }


def _mean_sweep(sweeps):
    """The sweeps of several draws, each number averaged over the draws."""
    return {
        adapt: {
            cut: {key: float(np.mean([s[adapt][cut][key] for s in sweeps])) for key in by_cut[cut]}
            for cut in by_cut
        }
        for adapt, by_cut in sweeps[0].items()
    }


def _drawn(labels, people, shape, rng):
    """Rows of a random set of ``shape`` = (people, photos of each) from ``people``."""
    n_people, photos = shape
    rows = []
    for person in rng.permutation(people)[:n_people]:
        count = rng.integers(2, 7) if photos == "2-6" else photos
        rows.append(rng.permutation(np.flatnonzero(labels == person))[:count])
    return np.concatenate(rows)


def _drawn_sweep(codes, labels, model, people, shape, rng):
    """The mean sweep over ``DRAWS`` random sets of one shape."""
    sweeps = []
    for _ in range(DRAWS):
        rows = _drawn(labels, people, shape, rng)
        sweeps.append(_sweep(codes[rows], labels[rows], model))
    return _mean_sweep(sweeps)


def _shape_name(shape):
    return f"{shape[0]} people x {shape[1]} photos"


def _best(sweep):
    return max(sweep, key=lambda cut: sweep[cut]["pairwise_f"])


def _first_photos(labels, people, count=6):
    return np.concatenate([np.flatnonzero(labels == person)[:count] for person in people])


def _through_the_finder(photos, truth, eyes, model, finder):
    """cluster_faces on the photos as a user calls it; each found face scored when it is the
    central person's."""
    groups = cluster_faces(photos, finder=finder, model=model)
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
    add_embeddings_option(command)
    command.add_argument("--people", type=int, default=30, help="validation people (default 30)")
    command.add_argument(
        "--model",
        choices=sorted(RECIPES),
        default="classical",
        help="the recipe of the identity model fitted (default classical)",
    )
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    model = recipe_model(args.model)
    lfw, eyes, crops = lfw_crops(args, model)
    people, counts = np.unique(lfw.labels, return_counts=True)
    dealt = np.random.default_rng(args.seed).permutation(people[counts >= 6])
    validation, tuning = dealt[: args.people], dealt[args.people : 2 * args.people]
    held_out = np.isin(lfw.labels, dealt[: 2 * args.people])
    start = time.perf_counter()
    # every face described once: the fit, the held-out codes and the 9,520 faces read the rows
    if model.colour:
        described = lfw_deep_rows(args, eyes, model)
    else:
        model.fit_description(crops[~held_out])
        described = np.concatenate(
            [model.describe(crops[rows]) for rows in gen_batches(len(crops), 256)]
        )
    model.fit_descriptors(described[~held_out], lfw.labels[~held_out])
    fit_seconds = time.perf_counter() - start

    results = {"fit_seconds": fit_seconds, "trained_people": int(len(people) - 2 * args.people)}
    codes, labels = model.encode_descriptors(described[held_out]), lfw.labels[held_out]
    rng = np.random.default_rng(args.seed)
    shapes = {
        _shape_name(shape): _drawn_sweep(codes, labels, model, tuning, shape, rng)
        for shape in steps(SET_SHAPES, args, "tuning sets")
    }
    sweeps = {"tuning": shapes[_shape_name(SET_SHAPES[0])]}
    first = _first_photos(labels, validation)
    sweeps["validation"] = _sweep(codes[first], labels[first], model)
    sweeps["validation, drawn"] = _drawn_sweep(
        codes, labels, model, validation, (args.people, 6), rng
    )
    cut = float(_best(sweeps["tuning"]["learnt from the set"]))
    probability = float(_best(sweeps["tuning"]["probability"]))
    imm = datasets.load_imm(as_gray=False)
    imm_eyes = [[imm.landmarks[e][i] for e in ("left_eye", "right_eye")] for i in range(len(imm))]
    imm_codes = model.encode(
        np.stack([model_crop(im, e, model) for im, e in zip(imm.images, imm_eyes, strict=True)])
    )
    sweeps["IMM"] = _sweep(imm_codes, imm.labels, model)
    for count in FEW_PEOPLE:
        few = np.isin(imm.labels, np.unique(imm.labels)[:count])
        sweeps[f"IMM, {count} people"] = _sweep(imm_codes[few], imm.labels[few], model)
    results["sweeps"] = sweeps
    results["tuning_set_shapes"] = shapes
    results["chosen_on_tuning"] = {"learnt from the set": cut, "probability": probability}
    results["library_default"] = {"learnt from the set": LEARNT_CUT, "probability": CALIBRATED_CUT}
    for name in ("validation", "validation, drawn", "IMM"):
        for at, cuts in (("chosen", (cut, probability)), ("default", (LEARNT_CUT, CALIBRATED_CUT))):
            results[f"{name} at {at}"] = {
                adapt: sweeps[name][adapt][str(value)]
                for adapt, value in zip(("learnt from the set", "probability"), cuts, strict=True)
            }

    rows = _first_photos(lfw.labels, validation)
    folder = datasets.find_datasets()["lfw_train"] / "images"
    paths = [folder / name for name in lfw.names[rows]]  # the files, in colour, as users give
    start = time.perf_counter()
    results["validation_through_the_finder"] = _through_the_finder(
        paths, lfw.labels[rows], eyes[rows], model, default_finder()
    )
    results["validation_through_the_finder"]["seconds_per_photo"] = (
        time.perf_counter() - start
    ) / len(paths)

    if _dlib.available():
        results["dlib_chinese_whispers"] = _dlib_peer(paths, lfw.labels[rows], eyes[rows])

    start = time.perf_counter()
    labels = group_codes(model.encode_descriptors(described), model)
    results["all_faces"] = {
        "faces": int(len(crops)),
        "seconds": time.perf_counter() - start,
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **_quality(lfw.labels, labels),
    }

    names = ("tuning", "validation", "validation, drawn", "IMM")
    curves = {
        f"{name}, learnt from the set": [
            sweeps[name]["learnt from the set"][str(p)]["pairwise_f"] for p in PROBABILITIES
        ]
        for name in (*names, *(f"IMM, {n} people" for n in FEW_PEOPLE))
    }
    references = {
        f"{name}, probability at {probability}": results[f"{name} at chosen"]["probability"][
            "pairwise_f"
        ]
        for name in ("validation", "IMM")
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
    run.figure(
        rate_curves(
            PROBABILITIES,
            {
                name: [sweep["learnt from the set"][str(p)]["pairwise_f"] for p in PROBABILITIES]
                for name, sweep in shapes.items()
            },
            xlabel="cut (the probability of one person at which merging stops)",
            ylabel=f"pairwise F-measure (mean of {DRAWS} draws)",
            title="one cut across sets of the tuning people, learnt from the set",
        ),
        "set_shapes.png",
    )
    run.results = results
    chosen, default = results["validation at chosen"], results["validation at default"]
    drawn = results["validation, drawn at default"]["learnt from the set"]
    learnt = {name: sweep["learnt from the set"][str(LEARNT_CUT)] for name, sweep in sweeps.items()}
    few = ", ".join(
        f"{n} people {learnt[f'IMM, {n} people']['pairwise_f']:.3f}" for n in FEW_PEOPLE
    )
    finder = results["validation_through_the_finder"]
    return run.finish(
        f"{args.model} model: {args.people} unseen LFW people x 6, learnt from the set: pairwise F "
        f"{default['learnt from the set']['pairwise_f']:.3f} "
        f"({default['learnt from the set']['groups']} groups) at the default {LEARNT_CUT}, "
        f"{drawn['pairwise_f']:.3f} over {DRAWS} draws, "
        f"{chosen['learnt from the set']['pairwise_f']:.3f} at {cut} (chosen on {DRAWS} draws "
        f"of 30 others); through the finder {finder['pairwise_f']:.3f}; by probability "
        f"{chosen['probability']['pairwise_f']:.3f} at {probability}; IMM 12 people: "
        f"{learnt['IMM']['pairwise_f']:.3f} ({few}); "
        + (
            f"dlib Chinese whispers on the same photos "
            f"{results['dlib_chinese_whispers']['pairwise_f']:.3f}; "
            if "dlib_chinese_whispers" in results
            else ""
        )
        + f"9,520 faces grouped in {results['all_faces']['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
