"""Two photos, one person? The identity model that ships, its recipe, and one call to compare.

:func:`compare_faces` finds the most confident face of each photo (the
shipped :class:`~eigenvision.FaceFinder`), cuts it on its eyes and asks the
shipped :class:`~eigenvision.IdentityModel` (``data/identity_model.npz``,
trained on LFW's View 1 training people by :func:`build_identity_model`)
for its score of one person (the normalised log-likelihood ratio) and its
probability.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .. import datasets
from .._base import progress as show_progress
from .._errors import EigenvisionError, NoFaceError
from ..identity import IdentityModel, quantized
from ..io import load_image
from ..openset import Verification
from ..persist import load
from .crops import _check_finder, align_face
from .geometry import face_box
from .photos import default_finder

__all__ = [
    "compare_faces",
    "compare_crops",
    "finder_and_model",
    "default_identity_model",
    "build_identity_model",
    "lfw_eyes",
    "model_crop",
    "DEFAULT_IDENTITY",
    "LFW_EYES",
]

#: Where the trained identity model ships: the project's top-level ``data/``.
DEFAULT_IDENTITY = Path(__file__).resolve().parents[2] / "data" / "identity_model.npz"

#: Typical eye centres of LFW's 150 x 150 photos: where the placer starts.
LFW_EYES = datasets.LFW_EYES
#: Crops :func:`build_identity_model` describes per step of its progress bar.
_DESCRIBED_AT_ONCE = 256


def default_identity_model(path=None) -> IdentityModel:
    """The trained identity model, read from ``data/identity_model.npz`` (or ``path``).

    Parameters
    ----------
    path : path-like, optional

    Returns
    -------
    IdentityModel
    """
    path = DEFAULT_IDENTITY if path is None else Path(path)
    if not path.is_file():
        raise EigenvisionError(
            f"no trained identity model at {path}; rebuild it with 'eigenvision build-models "
            "--identity' (needs $EIGENVISION_DATA with lfw_train/)"
        )
    model = load(path)
    if not isinstance(model, IdentityModel):
        raise EigenvisionError(f"{path} holds a {type(model).__name__}, not an IdentityModel")
    return model


def finder_and_model(finder=None, model=None):
    """The finder and identity model to use: the shipped ones where None, others checked.

    Parameters
    ----------
    finder : FaceFinder, optional
    model : IdentityModel, optional

    Returns
    -------
    finder, model

    Raises
    ------
    TypeError
        Either is something else (a path, another model), with the fix.
    """
    finder = default_finder() if finder is None else finder
    _check_finder(finder)
    model = default_identity_model() if model is None else model
    if not isinstance(model, IdentityModel):
        raise TypeError(
            f"model must be an IdentityModel, got {type(model).__name__}: use "
            "ev.default_identity_model(), or ev.load('identity_model.npz')"
        )
    return finder, model


def _photo(photo, name, max_side):
    """A photo given as an array or a file path, and how messages name it."""
    if isinstance(photo, (str, os.PathLike)):
        return load_image(photo, as_gray=False, max_side=max_side), str(photo)
    return photo, name


def compare_faces(photo_a, photo_b, *, finder=None, model=None) -> Verification:
    """Do two photos show the same person? The most confident face of each, compared.

    Parameters
    ----------
    photo_a, photo_b : (H, W) or (H, W, 3) ndarray, or path
        Photos of any size (files are decoded reduced to the finder's ``max_side``).
    finder : FaceFinder, optional
        Default :func:`~eigenvision.default_finder`.
    model : IdentityModel, optional
        Default :func:`default_identity_model`.

    Returns
    -------
    Verification
        ``accepted``: the model's decision at its calibrated threshold;
        ``distance``: minus the model's score (its log-likelihood ratio,
        normalised against its cohort; smaller: more alike); ``threshold``:
        minus the model's score threshold; ``probability``:
        ``P(same person)``.

    Raises
    ------
    NoFaceError
        A photo shows no face at the finder's threshold (the error names it).

    Notes
    -----
    The threshold and the probability are calibrated on LFW's news photos.
    Two photos taken under one set of conditions (a studio, one camera) look
    likelier one person than they are: for such photos pass a model centred on
    faces of other people taken there,
    ``model=centred_on(default_identity_model(), crops)``
    (:func:`~eigenvision.identity.centred_on`).
    """
    finder, model = finder_and_model(finder, model)
    crops = []
    for photo, name in ((photo_a, "photo_a"), (photo_b, "photo_b")):
        image, name = _photo(photo, name, finder.max_side)
        found = finder.find(image, max_faces=1)
        if not found:
            raise NoFaceError(
                f"{name} shows no face at the finder's threshold {finder.threshold:.3g}: use a "
                "photo with the face large and frontal, or lower finder.threshold"
            )
        crops.append(model_crop(image, found[0], model))
    return compare_crops(*crops, model)


def compare_crops(crop_a, crop_b, model) -> Verification:
    """The model's verdict on two faces already cut for it (:func:`model_crop`).

    Parameters
    ----------
    crop_a, crop_b : (H, W) ndarray
    model : IdentityModel

    Returns
    -------
    Verification
        As :func:`compare_faces`.
    """
    llr = float(model.score_pairs(crop_a[None], crop_b[None])[0])
    return Verification(
        accepted=llr >= model.threshold_,
        distance=-llr,
        threshold=-model.threshold_,
        probability=float(model.probability(llr)),
    )


def lfw_eyes(images, finder, *, progress=False):
    """Eye centres of LFW-style photos (the face near the centre) by the finder's placer.

    The placer starts from the face box of :data:`LFW_EYES` scaled to each
    photo (:meth:`~eigenvision.FaceFinder.place`), the same eyes :func:`compare_faces`
    gets from the finder's faces.

    Parameters
    ----------
    images : (n, H, W) ndarray
    finder : FaceFinder
    progress : bool, default False

    Returns
    -------
    (n, 2, 2) ndarray
        Left and right eye ``(x, y)`` of each photo.
    """
    eyes = np.empty((len(images), 2, 2))
    for i, image in enumerate(show_progress(images, desc="placing eyes", enabled=progress)):
        scale = np.array(image.shape[::-1], dtype=float) / 150.0
        box = face_box(*(np.multiply(eye, scale) for eye in LFW_EYES))
        placed = finder.place(image, box)
        eyes[i] = placed["left_eye"], placed["right_eye"]
    return eyes


def build_identity_model(root=None, *, eyes=None, progress=False, **options) -> IdentityModel:
    """The recipe of the shipped identity model: LFW's View 1 training people, eyes placed by the
    shipped finder, crops aligned on them, an :class:`~eigenvision.IdentityModel` fitted and
    kept in 8 bits (:func:`~eigenvision.identity.quantized`).

    Parameters
    ----------
    root : path-like, optional
        The ``lfw_train`` folder; default ``$EIGENVISION_DATA/lfw_train``.
    eyes : (n, 2, 2) ndarray, optional
        The eyes of :func:`~eigenvision.datasets.load_lfw`'s photos, in its order
        (default placed here by :func:`lfw_eyes`, minutes).
    progress : bool, default False
        Show the eyes being placed and the faces being described (a bar on a terminal, lines
        in a log).
    **options
        :class:`~eigenvision.IdentityModel`'s parameters.

    Returns
    -------
    IdentityModel
        Its large maps in 8 bits.
    """
    lfw = datasets.load_lfw(root)
    if eyes is None:
        eyes = lfw_eyes(lfw.images, default_finder(), progress=progress)
    model = IdentityModel(**options)
    crops = np.stack(
        [model_crop(image, pair, model) for image, pair in zip(lfw.images, eyes, strict=True)]
    )
    # fit's three steps, the description (most of the time) in blocks a progress bar can follow
    model.fit_description(crops)
    blocks = range(0, len(crops), _DESCRIBED_AT_ONCE)
    described = np.concatenate(
        [
            model.describe(crops[start : start + _DESCRIBED_AT_ONCE])
            for start in show_progress(blocks, desc="describing faces", enabled=progress)
        ]
    )
    return quantized(model.fit_descriptors(described, lfw.labels))


def model_crop(photo, face, model):
    """A face cut as ``model`` was trained on: its crop size and eye positions.

    Parameters
    ----------
    photo : (H, W) or (H, W, 3) ndarray
    face : Face or ((x, y), (x, y))
    model : IdentityModel

    Returns
    -------
    (H, W) ndarray
    """
    positions = tuple(tuple(float(v) for v in eye) for eye in model.eye_positions)
    return align_face(photo, face, shape=tuple(model.shape), eye_positions=positions)
