"""Eigenfaces: mean face, eigenfaces, reconstructions against r, the top-15 similarity search."""

from __future__ import annotations

import numpy as np

from .. import datasets
from ..eigenspace import Eigenspace
from ..plot import eigenimages, image_grid, reconstructions
from ..recognize import Recognizer
from ._common import Run, data_env, parser

NAME = "eigenfaces"


def face_split(name: str):
    """``(train, test)``: AT&T images 1-5 / 6-10 of each person, or the LFW faces halved."""
    if name == "att":
        faces = datasets.load_att()
        number = np.array([int(n.split("/")[1].split(".")[0]) for n in faces.names])
        return faces[number <= 5], faces[number > 5]
    if name == "lfw":
        faces = datasets.load_lfw_subset()
        faces = faces[faces.labels == "face"]
        faces = faces.replace(labels=np.array([f"face{i}" for i in range(len(faces))]))
        return faces[::2], faces[1::2]
    raise ValueError(f"unknown face dataset {name!r}; use 'att' or 'lfw'")


def main(argv=None):
    command = parser(NAME, __doc__.splitlines()[0])
    command.add_argument(
        "--dataset",
        choices=["att", "lfw"],
        default="att",
        help="AT&T from $EIGENVISION_DATA or the LFW faces built in (default: att)",
    )
    command.add_argument("--n-components", type=int, default=None, help="default: all")
    command.add_argument("--probe", type=int, default=0, help="index of the probe in the test half")
    command.add_argument("--top", type=int, default=15)
    args = command.parse_args(argv)
    data_env(args)
    run = Run(NAME, args)
    train, test = face_split(args.dataset)
    space = Eigenspace(args.n_components).fit(train)
    run.figure(eigenimages(space, n=15, ncols=8), "figure.png")
    ranks = [r for r in (5, 10, 20, 50, 100, 199) if r <= space.n_components_]
    run.figure(reconstructions(space, test.images[:3], ranks), "reconstructions.png")
    flat = test.images.reshape(len(test), -1)
    errors = {}
    codes = space.transform(flat)
    for r in ranks:
        truncated = np.zeros_like(codes)
        truncated[:, :r] = codes[:, :r]
        residual = flat - space.inverse_transform(truncated)
        errors[r] = float(
            np.mean(np.sum(residual**2, axis=1))
            / np.mean(np.sum((flat - space.mean_) ** 2, axis=1))
        )
    recognizer = Recognizer(space.n_components_).fit(train)
    probe = test[args.probe : args.probe + 1]
    distances, labels, nearest = recognizer.kneighbors(probe, k=args.top, return_indices=True)
    nearest = nearest[0]
    cells = [probe.images[0], *train.images[nearest]]
    titles = [f"probe {probe.labels[0]}"] + [
        f"{train.labels[i]}: {d:.2f}" for i, d in zip(nearest, distances[0], strict=True)
    ]
    run.figure(image_grid(cells, titles=titles, ncols=8), "similar.png")
    same = float(np.mean(labels[0] == probe.labels[0]))
    run.results = {
        "n_train": len(train),
        "image_shape": space.image_shape_,
        "explained_variance_ratio": space.explained_variance_ratio_,
        "relative_reconstruction_error": errors,
        "top": {"labels": labels[0], "distances": distances[0], "same_person": same},
    }
    k90 = int(np.searchsorted(np.cumsum(space.explained_variance_ratio_), 0.9) + 1)
    return run.finish(
        f"{len(train)} {args.dataset} faces: {k90} eigenfaces hold 90% of the variance; "
        f"{100 * same:.0f}% of the top {args.top} are the probe's person"
    )


if __name__ == "__main__":
    main()
