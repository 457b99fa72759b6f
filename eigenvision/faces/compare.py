"""Two photos, one person? The identity model that ships, its recipe, and one call to compare.

:func:`compare_faces` finds the most confident face of each photo (the
shipped :class:`~eigenvision.FaceFinder`), cuts it on its eyes and asks the
shipped :class:`~eigenvision.IdentityModel` (``data/identity_model.npz``,
trained on LFW's View 1 training people by :func:`build_identity_model`)
for its score of one person (the normalised log-likelihood ratio) and its
probability.
"""

from __future__ import annotations

import copy
import functools
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

from .._errors import EigenvisionError, ImageLoadError, NoFaceError
from ..identity import IdentityModel
from ..identity.deep import DEEP_INSTALL, MissingExtraError, deep_available
from ..imageset import ImageSet
from ..io import load_image
from ..openset import Verification
from ..persist import load
from ..transform import as_float_image
from .crops import check_finder, identity_faces, identity_threshold, model_crop, no_face_advice
from .photos import default_finder

__all__ = [
    "compare_faces",
    "compare_crops",
    "finder_and_model",
    "default_identity_model",
    "default_identity_name",
    "identity_model_name",
    "faces_of_photo",
    "file_scale",
    "identity_crops",
    "likeliest_face",
    "model_crop",
    "DEFAULT_IDENTITY",
    "DEEP_IDENTITY",
]

#: The project's top-level ``data/``, where the trained models ship.
DATA = Path(__file__).resolve().parents[2] / "data"
#: Where the classical identity model ships (LBP, HOG, DAISY and Fisher vectors under PLDA).
DEFAULT_IDENTITY = DATA / "identity_model.npz"
#: Where the learned identity model ships (dlib's embedding under PLDA).
DEEP_IDENTITY = DATA / "identity_deep.npz"
#: The shipped identity models by name.
SHIPPED_IDENTITY = {"deep": DEEP_IDENTITY, "classical": DEFAULT_IDENTITY}


def default_identity_name() -> str:
    """The shipped model ``model=None`` means: ``"deep"`` when its packages are installed
    (``eigenvision[deep]``) and its file ships, else ``"classical"``.

    Returns
    -------
    str
    """
    return "deep" if deep_available() and DEEP_IDENTITY.is_file() else "classical"


def default_identity_model(model=None) -> IdentityModel:
    """A shipped identity model, by name, or one read from a file; read once per process.

    Parameters
    ----------
    model : {"deep", "classical"} or path-like, optional
        ``"deep"``: dlib's learned embedding under PLDA (``data/identity_deep.npz``; needs
        ``eigenvision[deep]``); ``"classical"``: LBP, HOG, DAISY and Fisher vectors under
        PLDA (``data/identity_model.npz``); a path: that file. None:
        :func:`default_identity_name`.

    Returns
    -------
    IdentityModel
        A shallow copy of the model read once (setting its parameters changes no other
        caller's).

    Raises
    ------
    MissingExtraError
        ``"deep"`` without its packages (the message gives the install command).
    EigenvisionError
        No such file, or it holds another kind of model.
    """
    if model is None:
        model = default_identity_name()
    if isinstance(model, str) and model in SHIPPED_IDENTITY:
        if model == "deep" and not deep_available():
            raise MissingExtraError(
                "the 'deep' identity model reads faces with dlib's learned embedding, which is "
                f"not installed: {DEEP_INSTALL} (or use model='classical')"
            )
        path, rebuild = SHIPPED_IDENTITY[model], f"--identity{' --deep' * (model == 'deep')}"
        if not path.is_file():
            raise EigenvisionError(
                f"no trained identity model at {path}; rebuild it with 'eigenvision "
                f"build-models {rebuild}' (needs $EIGENVISION_DATA with lfw_train/)"
            )
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.is_file():
            raise EigenvisionError(
                f"no identity model file at {path}: give 'deep', 'classical' or the path of a "
                "file ev.save wrote"
            )
    else:
        raise TypeError(
            f"model must be 'deep', 'classical' or a model file's path, got {type(model).__name__}"
        )
    status = path.stat()
    return copy.copy(_read_identity(str(path.resolve()), status.st_mtime_ns, status.st_size))


@functools.lru_cache(maxsize=4)
def _read_identity(path, modified, size):
    """The model in ``path`` as it was at ``modified`` with ``size`` bytes (a changed file is
    read again), its scoring's derived arrays made once."""
    model = load(path)
    if not isinstance(model, IdentityModel):
        raise EigenvisionError(f"{path} holds a {type(model).__name__}, not an IdentityModel")
    model.prepare()
    return model


def identity_model_name(model) -> str:
    """How answers name an identity model: its shipped name, or the kind of a model of one's own.

    Parameters
    ----------
    model : IdentityModel, str, path-like or None
        As ``model=`` of :func:`compare_faces`.

    Returns
    -------
    str
        ``"deep"`` or ``"classical"`` for the shipped models; ``"deep (given)"`` or
        ``"classical (given)"`` for a fitted model passed in; a file's name for a file.
    """
    if model is None:
        return default_identity_name()
    if isinstance(model, str) and model in SHIPPED_IDENTITY:
        return model
    if isinstance(model, (str, os.PathLike)):
        return Path(model).name
    kind = "deep" if isinstance(model, IdentityModel) and model.colour else "classical"
    return f"{kind} (given)"


def finder_and_model(finder=None, model=None):
    """The finder and identity model to use: the shipped ones where None, others checked.

    Parameters
    ----------
    finder : FaceFinder, optional
    model : IdentityModel, {"deep", "classical"} or path-like, optional
        See :func:`default_identity_model`.

    Returns
    -------
    finder, model

    Raises
    ------
    TypeError
        Either is something else (another model), with the fix.
    """
    finder = default_finder() if finder is None else finder
    check_finder(finder)
    if model is None or isinstance(model, (str, os.PathLike)):
        model = default_identity_model(model)
    if not isinstance(model, IdentityModel):
        raise TypeError(
            f"model must be 'deep', 'classical' or an IdentityModel, got {type(model).__name__}: "
            "use ev.default_identity_model('deep'), or ev.load('identity_model.npz')"
        )
    return finder, model


def _photo(photo, name, max_side):
    """A photo given as an array or a file path, and how messages name it."""
    if isinstance(photo, (str, os.PathLike)):
        return load_image(photo, as_gray=False, max_side=max_side), str(photo)
    as_float_image(photo, allow_colour=True, name=name)  # named here: the finder says "image"
    return photo, name


def likeliest_face(finder, image):
    """The finder's likeliest face of an image that shows one face (threshold 0, one face).

    For images known to hold a face (a dataset's face images): the face is
    taken however unsure the finder is of it, never "no face".

    Parameters
    ----------
    finder : FaceFinder
    image : (H, W) or (H, W, 3) ndarray

    Returns
    -------
    Face
    """
    found = finder.find(image, threshold=0.0, max_faces=1)
    if not found:
        raise NoFaceError(
            f"the finder has no candidate at all in an image of {image.shape[1]}x{image.shape[0]} "
            "pixels: the face may be too small for its search (eyes under 8 pixels apart)"
        )
    return found[0]


def identity_crops(faces: ImageSet, model, *, eyes=None, finder=None) -> ImageSet:
    """Face images cut as the identity model reads them (its crop, or dlib's chip).

    Face crops of another geometry (AT&T's 112 x 92, say) are cut again from
    the images: on ``eyes`` where they are known, else on the eyes of the
    finder's likeliest face of each image (:func:`likeliest_face`).

    Parameters
    ----------
    faces : ImageSet
        One face an image.
    model : IdentityModel
    eyes : (n, 2, 2) array-like, optional
        Each image's left and right eye ``(x, y)``.
    finder : FaceFinder, optional
        Default :func:`~eigenvision.faces.photos.default_finder`.

    Returns
    -------
    ImageSet
        The crops, with ``faces``' labels and names.
    """
    if eyes is None:
        finder = default_finder() if finder is None else finder
        eyes = [
            (face.left_eye, face.right_eye)
            for face in (likeliest_face(finder, image) for image in faces.images)
        ]
    crops = np.stack(
        [model_crop(image, pair, model) for image, pair in zip(faces.images, eyes, strict=True)]
    )
    return ImageSet(crops.astype(np.float32), faces.labels, names=faces.names)


def file_scale(photo, image) -> float:
    """The file's pixels per pixel of ``image``, its decode (reduced to a ``max_side``): faces
    found in the decode are given in the file's pixels by ``face.scaled(file_scale(...))``.

    Parameters
    ----------
    photo : path-like or ndarray
        The photo as given (an array: 1).
    image : ndarray
        Its decode.

    Returns
    -------
    float
    """
    if not isinstance(photo, (str, os.PathLike)):
        return 1.0
    with Image.open(photo) as opened:  # the longer side: EXIF turns keep it
        return max(opened.size) / max(image.shape[:2])


def faces_of_photo(photo, finder, model, *, name="the photo"):
    """The faces of one photo and their crops for ``model`` (one step of :func:`cluster_faces`).

    Parameters
    ----------
    photo : (H, W) or (H, W, 3) ndarray or path-like
    finder : FaceFinder
    model : IdentityModel
    name : str, default "the photo"
        How messages name an array.

    Returns
    -------
    faces : list of Face
        In the photo's pixels (a file's own, though decoded reduced).
    crops : list of (H, W) ndarray
        Cut by :func:`~eigenvision.faces.compare.model_crop`.
    error : ImageLoadError or None
        The file could not be read (no faces then).
    """
    try:
        image, _ = _photo(photo, name, getattr(finder, "max_side", None))
    except ImageLoadError as exc:
        return [], [], exc
    to_file = file_scale(photo, image)
    found = identity_faces(finder, image)
    faces = [face if to_file == 1.0 else face.scaled(to_file) for face in found]
    return faces, [model_crop(image, face, model) for face in found], None


def compare_faces(photo_a, photo_b, *, finder=None, model=None) -> Verification:
    """Do two photos show the same person? The most confident face of each, compared.

    Parameters
    ----------
    photo_a, photo_b : (H, W) or (H, W, 3) ndarray, or path
        Photos of any size (files are decoded reduced to the finder's ``max_side``).
    finder : FaceFinder, optional
        Default :func:`~eigenvision.default_finder`.
    model : {"deep", "classical"}, IdentityModel or path-like, optional
        The shipped model by name (:func:`default_identity_model`), a fitted one, or a file.
        Default: ``"deep"`` when ``eigenvision[deep]`` is installed, else ``"classical"``.

    Returns
    -------
    Verification
        ``accepted``: the model's decision at its calibrated threshold;
        ``distance``: minus the model's score (its log-likelihood ratio,
        normalised against its cohort; smaller: more alike); ``threshold``:
        minus the model's score threshold; ``probability``:
        ``P(same person)``; ``model``: which model answered
        (:func:`identity_model_name`); ``faces``: the face compared in each photo, in the
        photo's pixels (a file's own, though decoded reduced); ``face_counts``: how many
        faces each photo showed (the most confident was compared).

    Raises
    ------
    NoFaceError
        A photo shows no face at the identity threshold (the error names it).
    MissingExtraError
        ``model="deep"`` without ``eigenvision[deep]``.

    Notes
    -----
    The threshold and the probability are calibrated on LFW's news photos and checked on
    photo sources the model never saw (the ``calibration`` experiment).
    Two photos taken under one set of conditions (a studio, one camera) look
    likelier one person than they are: for such photos pass a model centred on
    faces of other people taken there,
    ``model=centred_on(default_identity_model(), crops)``
    (:func:`~eigenvision.identity.centred_on`).
    """
    name = identity_model_name(model)
    finder, model = finder_and_model(finder, model)
    crops, faces, counts = [], [], []
    for photo, label in ((photo_a, "photo_a"), (photo_b, "photo_b")):
        found, cut, error = faces_of_photo(photo, finder, model, name=label)
        if error is not None:
            raise error
        if not found:
            shown = str(photo) if isinstance(photo, (str, os.PathLike)) else label
            raise NoFaceError(
                f"{shown} shows no face at the identity threshold "
                f"{identity_threshold(finder):g}: {no_face_advice(finder)}"
            )
        crops.append(cut[0])
        faces.append(found[0])
        counts.append(len(found))
    verdict = compare_crops(*crops, model)
    return replace(verdict, model=name, faces=tuple(faces), face_counts=tuple(counts))


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
