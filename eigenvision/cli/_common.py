"""Helpers several commands share: reading images and photos, and options alike."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .. import datasets
from .._argtypes import probability
from ..io import image_entries, load_image_set, load_photos
from ..persist import load


def left_out(where, error) -> None:
    """Say on stderr that a file (unreadable, or a photo without its one face) was left out:
    the ``on_error`` callable of the readers and the photo front end, so that the user hears of
    it whatever the warning filters say."""
    print(f"eigenvision: left out {error}", file=sys.stderr)


def load_images(source: str):
    """An ImageSet from a folder of labelled sub-folders or a dataset name."""
    if source in datasets.REGISTRY and not Path(source).exists():
        return datasets.load(source)
    return load_image_set(source, on_error=left_out)


def load_model(path, cls):
    """A model file's model, refused unless it is a ``cls``."""
    model = load(path)
    if not isinstance(model, cls):
        raise ValueError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
    return model


def labelled_photos(source: str):
    """``(photos, labels, names)`` from a folder of labelled photos of any sizes or a dataset."""
    if source in datasets.REGISTRY and not Path(source).exists():
        faces = datasets.load(source)
        return list(faces.images), faces.labels, faces.names
    return load_photos(source, on_error=left_out)


def image_paths(items) -> list:
    """The image files named on the command line, each folder among them replaced by the images
    it holds (and its sub-folders'), in natural order."""
    paths = []
    for item in items:
        if not Path(item).is_dir():
            paths.append(item)
            continue
        inside = [str(path) for _, path in image_entries(item)]
        if not inside:
            raise ValueError(
                f"{item}: a folder without images; name image files or folders of them"
            )
        paths += inside
    return paths


def refuse_whole_photos(image, model, path):
    """Refuse to squash a photo into the face crops a model was trained on (it would name a cup).

    A probe more than twice the training images' size on a side, or of another shape by more
    than a quarter, is not such a crop.
    """
    height, width = model.image_shape_
    ratio = (image.shape[0] / image.shape[1]) / (height / width)
    if image.shape[0] > 2 * height or image.shape[1] > 2 * width or not 0.75 <= ratio <= 4 / 3:
        raise ValueError(
            f"{path} is {image.shape[1]}x{image.shape[0]} pixels; this model was trained on "
            f"{width}x{height} face crops and would squash the whole picture into one: crop the "
            "face first, or train on photos ('eigenvision train FOLDER --photos'), which finds "
            "and names every face"
        )


def plain(value):
    """A JSON-ready value: numpy scalars as Python ones, non-finite floats as None (null)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def face_json(face):
    point = lambda p: None if p is None else [plain(float(v)) for v in p]  # noqa: E731
    return {
        "box": point(face.box),
        "left_eye": point(face.left_eye),
        "right_eye": point(face.right_eye),
        "nose": point(face.nose),
        "mouth": point(face.mouth),
        "score": plain(face.score),
        "confidence": plain(face.confidence),
        "angle": plain(face.angle),
    }


def add_no_face_option(parser):
    parser.add_argument(
        "--on-no-face",
        choices=["skip", "stop"],
        default="skip",
        help="models on photos: a photo without one face is left out and named "
        "(skip), or stops the command (default: %(default)s)",
    )


def add_face_threshold(parser):
    parser.add_argument(
        "--face-threshold",
        type=probability,
        metavar="P",
        help="models on photos: smallest probability of a face that is named, compared, "
        "grouped or enrolled (default the finder's identity threshold, stricter than "
        "detection's)",
    )


def set_face_threshold(finder, args) -> None:
    """``--face-threshold``: the bar identity work reads (the finder's ``identity_threshold``)."""
    if args.face_threshold is not None:
        finder.identity_threshold = args.face_threshold


def face_threshold_note(threshold: float) -> str:
    """How an identity command's output states which faces it took (``identity_threshold``)."""
    return f"faces taken at P(face) >= {threshold:g} (the identity threshold)"


SOURCES_HELP = (
    "a folder with one sub-folder per label, or a dataset name ('eigenvision info' lists them)"
)


def add_identity_options(parser):
    """``--model`` and ``--finder``: the identity model and the face finder a command uses."""
    parser.add_argument(
        "--model",
        help="deep (dlib's learned embedding; needs eigenvision[deep]), classical (LBP, HOG, "
        "DAISY, Fisher vectors), or an identity model file (default: deep when installed, "
        "else classical)",
    )
    parser.add_argument("--finder", help="a face finder file (default: the one in data/)")
