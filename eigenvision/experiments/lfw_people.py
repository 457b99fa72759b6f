"""scikit-learn's LFW example, its people: eigenfaces + SVM against the identity model's codes.

scikit-learn's "Faces recognition example using eigenfaces and SVMs" names
the LFW people with at least 70 photos; those of them in ``lfw_train`` are
taken here, split 75 / 25 by photo and stratified by person as the example
does (``--seed``). Contenders, on the same split: the example's recipe (PCA
with 150 whitened components, an RBF SVM with its C and gamma chosen by
5-fold grid search on the training photos) on the example's fixed crop of
each photo (its slice of the face, reduced to 50 x 37) and on the eye-aligned
crops; and the identity model's recipe with a background fitted on every
*other* LFW person (never these), its PLDA codes of the training photos and a
linear SVM on them (C chosen by the same grid search).

    eigenvision experiment lfw_people --eyes EYES.npz --out experiments/figures/lfw_people
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC

from ..identity import IdentityModel
from ..plot import confusion
from ..transform import resize
from ._common import Run, add_eyes_option, data_env, lfw_crops, parser

NAME = "lfw_people"
MIN_PHOTOS = 70  # scikit-learn's example: fetch_lfw_people(min_faces_per_person=70)


def _example_crop(image):
    """The example's part of a photo: rows 70:195, columns 78:172 of LFW's 250 x 250 frames
    (here scaled to the 150 x 150 copies), reduced by 0.4 of the original: 50 x 37."""
    scale = image.shape[0] / 250
    rows = slice(round(70 * scale), round(195 * scale))
    cols = slice(round(78 * scale), round(172 * scale))
    return resize(image[rows, cols], (50, 37))


def _svm_recipe(X_train, y_train, X_test, seed):
    """PCA(150, whiten) + RBF SVC, C and gamma by 5-fold grid search (the example's grid)."""
    grid = {"svc__C": [1e3, 5e3, 1e4, 5e4, 1e5], "svc__gamma": [1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 0.1]}
    pipeline = make_pipeline(
        PCA(150, whiten=True, svd_solver="randomized", random_state=seed),
        SVC(kernel="rbf", class_weight="balanced"),
    )
    search = GridSearchCV(pipeline, grid, cv=5).fit(X_train, y_train)
    return search.predict(X_test), search.best_params_


def _identity_recipe(codes_train, y_train, codes_test):
    """A linear SVM on the identity model's PLDA codes, C by 5-fold grid search."""
    grid = {"C": [1e-3, 1e-2, 0.1, 1.0, 10.0]}
    search = GridSearchCV(LinearSVC(class_weight="balanced"), grid, cv=5).fit(codes_train, y_train)
    return search.predict(codes_test), search.best_params_


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    add_eyes_option(command)
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    model = IdentityModel()
    lfw, eyes, crops = lfw_crops(args, model)
    people, counts = np.unique(lfw.labels, return_counts=True)
    chosen = people[counts >= MIN_PHOTOS]
    rows = np.flatnonzero(np.isin(lfw.labels, chosen))
    train, test = train_test_split(
        rows, test_size=0.25, stratify=lfw.labels[rows], random_state=args.seed
    )
    y_train, y_test = lfw.labels[train], lfw.labels[test]

    background = ~np.isin(lfw.labels, chosen)
    model.fit(crops[background], lfw.labels[background])
    codes = model.transform(crops[rows])
    where = {row: i for i, row in enumerate(rows)}
    identity_predicted, identity_params = _identity_recipe(
        codes[[where[r] for r in train]], y_train, codes[[where[r] for r in test]]
    )

    example = np.stack([_example_crop(lfw.images[r]) for r in rows]).reshape(len(rows), -1)
    aligned = np.stack([resize(crops[r], (50, 40)) for r in rows]).reshape(len(rows), -1)
    results = {
        "people": {str(p): int(c) for p, c in zip(people, counts, strict=True) if p in chosen}
    }
    predictions = {}
    for name, X in (("example crop", example), ("aligned crop", aligned)):
        predicted, params = _svm_recipe(
            X[[where[r] for r in train]], y_train, X[[where[r] for r in test]], args.seed
        )
        predictions[f"eigenfaces + SVM ({name})"] = predicted
        results[f"eigenfaces + SVM ({name})"] = {"best_params": params}
    predictions["identity model codes + linear SVM"] = identity_predicted
    results["identity model codes + linear SVM"] = {"best_params": identity_params}
    for name, predicted in predictions.items():
        results[name]["accuracy"] = float(np.mean(predicted == y_test))
    results["train_photos"], results["test_photos"] = len(train), len(test)
    best = "identity model codes + linear SVM"
    matrix = confusion_matrix(y_test, predictions[best], labels=chosen)
    run.figure(
        confusion(
            matrix,
            [str(p) for p in chosen],
            title=f"identity model codes + linear SVM: {100 * results[best]['accuracy']:.1f}%",
        )
    )
    run.results = results
    example_rate = results["eigenfaces + SVM (example crop)"]["accuracy"]
    return run.finish(
        f"{len(chosen)} people with >= {MIN_PHOTOS} photos, {len(test)} test photos: identity "
        f"model codes + linear SVM {100 * results[best]['accuracy']:.1f}%, scikit-learn's "
        f"eigenfaces + SVM {100 * example_rate:.1f}% (example crop), "
        f"{100 * results['eigenfaces + SVM (aligned crop)']['accuracy']:.1f}% (aligned crop)"
    )


if __name__ == "__main__":
    main()
