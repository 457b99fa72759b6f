"""Calibration: does P(same person) mean what it says on photo sources the model never saw?

Both shipped identity models are trained on LFW's news photos only, and their probabilities
tempered on AT&T (:func:`~eigenvision.faces.recipes.tempered_on_att`): IMM and HELEN are
sources neither step saw, AT&T the one the temperature was chosen on. They are asked about
every pair of faces of the three: IMM (12 people x 10 studio portraits, colour),
AT&T (40 people x 10 grey photos of 92 x 112 pixels, one lab) and HELEN (the first
``--helen`` wild Flickr photos, one annotated face each, no names: two photos are taken as
two people). Faces are cut as the models cut them in use: IMM and AT&T on the eyes of the
shipped finder's likeliest face of each photo, HELEN on its annotated eyes (its photos show
several faces). For each model and source: among different-person pairs, the share stated
``P(same) >= 0.9`` (the goal: at most 5%); among pairs stated ``>= 0.9``, the share that are
one person, on pairs balanced one same to one different as the probability's prior is (the
goal: at least 90%); the expected calibration error and the reliability diagram (balanced
pairs). dlib's own recipe (its detector, 5 points, Euclidean distance at 0.6) states no
probability: its share of different-person pairs accepted is given beside.

    eigenvision experiment calibration --out experiments/figures/calibration
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from .. import datasets
from ..evaluate import calibration
from ..faces.compare import default_identity_model, likeliest_face, model_crop
from ..faces.photos import default_finder
from ..identity.deep import deep_available
from ..io import load_image
from ..plot import reliability
from ..transform import resize_points
from . import _dlib
from ._common import Run, data_env, parser, steps

NAME = "calibration"
CONFIDENT = 0.9
#: The sources no step of either model saw (AT&T chose the temperature).
UNSEEN = ("IMM", "HELEN")


def _sources(args):
    """Each source: (name, colour photos, eyes or None (the finder's), labels or None)."""
    imm = datasets.load_imm(as_gray=False)
    att = datasets.load_att()
    helen_photos, helen_eyes = [], []
    for _, image_path, pts_path in datasets.helen_files()[: args.helen]:
        photo = load_image(image_path, as_gray=False, max_side=800)
        points = datasets.read_pts(pts_path)
        with Image.open(image_path) as header:  # the stored size: the points' frame
            stored = header.size[::-1]
        points = resize_points(points, stored, photo.shape[:2])
        helen_photos.append(photo)
        helen_eyes.append((points[36:42].mean(axis=0), points[42:48].mean(axis=0)))
    return [
        ("IMM", list(imm.images), None, imm.labels),
        ("AT&T", list(att.images), None, att.labels),
        ("HELEN", helen_photos, helen_eyes, None),
    ]


def _finder_eyes(photos, args, name):
    """The eyes of the shipped finder's likeliest face of each photo (threshold 0)."""
    finder, eyes = default_finder(), []
    for photo in steps(photos, args, f"finding faces ({name})"):
        face = likeliest_face(finder, photo)
        eyes.append((face.left_eye, face.right_eye))
    return eyes


def _pairs(labels, n, rng):
    """Upper-triangle pairs: all same-person ones and as many different-person ones (balanced),
    and every different-person pair; with no labels (HELEN), different-person pairs only."""
    rows, cols = np.triu_indices(n, 1)
    same = np.zeros(len(rows), dtype=bool) if labels is None else labels[rows] == labels[cols]
    different = np.flatnonzero(~same)
    positive = np.flatnonzero(same)
    balanced = np.concatenate(
        [positive, rng.choice(different, min(len(positive), len(different)), replace=False)]
    )
    return rows, cols, same, balanced


def _dlib_accepts(photos, rows, cols, same):
    """dlib's own recipe on the photos: the share of different-person pairs within 0.6
    (a photo where it finds no face is compared as no match)."""
    embedder = _dlib.Embedder()
    vectors = []
    for photo in photos:
        image = np.clip(np.rint(np.asarray(photo) * 255), 0, 255).astype(np.uint8)
        if image.ndim == 2:
            image = np.repeat(image[..., None], 3, axis=2)
        boxes, found = embedder.faces(image)
        vectors.append(found[int(np.argmax([w * h for *_, w, h in boxes]))] if boxes else None)
    accepted = np.array(
        [
            vectors[a] is not None
            and vectors[b] is not None
            and np.linalg.norm(vectors[a] - vectors[b]) <= 0.6
            for a, b in zip(rows[~same], cols[~same], strict=True)
        ]
    )
    missing = sum(v is None for v in vectors)
    return float(accepted.mean()), missing


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument("--helen", type=int, default=300, help="HELEN photos (default 300)")
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    rng = np.random.default_rng(args.seed)
    models = {"classical": default_identity_model("classical")}
    if deep_available():
        models["deep"] = default_identity_model("deep")
    results, curves = {}, {}
    for source, photos, eyes, labels in _sources(args):
        eyes = _finder_eyes(photos, args, source) if eyes is None else eyes
        rows, cols, same, balanced = _pairs(labels, len(photos), rng)
        results[source] = {"faces": len(photos), "different_pairs": int((~same).sum())}
        results[source]["same_pairs"] = int(same.sum())
        for name, model in models.items():
            crops = np.stack([model_crop(p, e, model) for p, e in zip(photos, eyes, strict=True)])
            codes = model.encode(crops)
            probability = model.probability(model.pairwise_log_odds(codes, codes))[rows, cols]
            entry = {
                "different_stated_confident": float(np.mean(probability[~same] >= CONFIDENT)),
                "different_mean_probability": float(probability[~same].mean()),
            }
            if labels is not None:
                fit = calibration(same[balanced], probability[balanced], confident=CONFIDENT)
                entry.update(
                    confident_right=fit.confident_right,
                    ece=fit.ece,
                    largest_gap=fit.largest_gap,
                    accuracy=float(np.mean((probability[balanced] >= 0.5) == same[balanced])),
                    same_mean_probability=float(probability[same].mean()),
                )
                curves[f"{name}, {source} (ECE {fit.ece:.2f})"] = (
                    fit.stated,
                    fit.observed,
                    fit.counts,
                )
            results[source][name] = entry
        if _dlib.available():
            share, missing = _dlib_accepts(photos, rows, cols, same)
            results[source]["dlib recipe (0.6)"] = {
                "different_accepted": share,
                "photos_without_a_face": missing,
            }
    run.figure(
        reliability(
            curves,
            title="P(same person) off LFW (balanced pairs; AT&T chose the temperature)",
        )
    )
    run.results = results
    for name, model in models.items():
        results[f"{name}_temperature"] = getattr(model, "temperature_", None)
    parts = []
    for name in models:
        worst = max(results[s][name]["different_stated_confident"] for s in UNSEEN)
        right = results["IMM"][name]["confident_right"]
        parts.append(
            f"{name}: different people stated >= {CONFIDENT} at most {100 * worst:.1f}%, "
            f"right where >= {CONFIDENT} {100 * right:.0f}%"
        )
    return run.finish(
        "; ".join(parts) + " (IMM and HELEN, never used; AT&T tempered the probabilities)"
    )


if __name__ == "__main__":
    main()
