"""A learned face description: dlib's ResNet face embedding of a 150 x 150 face chip.

The network (King 2017, a 29-layer ResNet trained with a metric loss on about
3 million faces of 7,485 people; ``face_recognition_models``) maps an aligned
chip to 128 numbers where one person's faces lie close. It is one more
description of :class:`~eigenvision.IdentityModel` (``descriptor="deep"``):
PLDA, the cohort, the calibration, open-set decisions and grouping read its
rows as they read LBP or DAISY rows (the step from hand-made descriptions to
learned ones under the same statistics, as DeepID2 put Joint Bayesian on a
network's features: Sun, Wang & Tang 2014).

The chip is the one dlib's network was trained on: dlib's 5-point landmarks
found in the box the finder's eyes give (:func:`five_point_chip`) and dlib's
own ``get_face_chip`` (padding 0.25); or cut by eigenvision on the eyes alone,
at the positions where that chip puts the eye centres. Colour is kept. dlib is an optional extra
(``pip install "eigenvision[deep]"``), imported here only, on first use.

References
----------
D. E. King (2009), Dlib-ml: a machine learning toolkit, JMLR 10.
Y. Sun, X. Wang and X. Tang (2014), Deep learning face representation by joint
identification-verification, NIPS.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.utils import gen_batches

from .._errors import EigenvisionError
from ..transform import as_float_image

__all__ = [
    "DEEP_INSTALL",
    "CHIP_SHAPE",
    "CHIP_EYE_POSITIONS",
    "EMBEDDING_WIDTH",
    "FIVE_POINT_BOX",
    "five_point_chip",
    "MissingExtraError",
    "deep_available",
    "embed_chips",
]

#: The command that installs the learned description's packages.
DEEP_INSTALL = 'pip install "eigenvision[deep]"'
#: The network's input: an RGB chip of 150 x 150 pixels.
CHIP_SHAPE = (150, 150)
#: Where dlib's ``get_face_chip(size=150, padding=0.25)`` puts the eye centres (the mean of each
#: eye's two corners), as fractions of the chip's ``(W - 1, H - 1)``: read off dlib's own chips
#: of LFW faces, a dot drawn at each eye centre and found again in the chip (HISTORY.md).
CHIP_EYE_POSITIONS = ((0.3158, 0.3105), (0.6707, 0.3105))
#: The face box dlib's 5-point predictor reads, from a face's eyes: ``(x, y, width, height)``
#: in eye distances from the eyes' midpoint; the medians of dlib's HOG boxes against its own
#: 5-point eye centres on every 40th LFW photo of folds 5-9's people (HISTORY.md).
FIVE_POINT_BOX = (-1.2555, -0.6881, 2.6140, 2.6140)
#: The embedding's length.
EMBEDDING_WIDTH = 128
#: Chips the network describes per call.
_CHIPS_AT_ONCE = 64


class MissingExtraError(EigenvisionError, ImportError):
    """An optional extra's packages are not installed; the message gives the install command."""


def five_point_chip(photo, face):
    """dlib's own chip of a face: its 5-point landmarks, found in the box the eyes give.

    The box is :data:`FIVE_POINT_BOX` of the eyes (where dlib's detector
    would put it); dlib's shape predictor places the eye corners and the
    nose in it, and ``get_face_chip`` (150 pixels, padding 0.25) cuts the
    chip by the similarity transform that fits those five points, the
    alignment the network was trained on.

    Parameters
    ----------
    photo : (H, W) or (H, W, 3) ndarray
        8- or 16-bit, or float in [0, 1]; a grey photo is read as three equal channels.
    face : Face or ((x, y), (x, y))
        A found face (its ``left_eye`` and ``right_eye``) or its eye centres.

    Returns
    -------
    (150, 150, 3) ndarray of float64
        In [0, 1], as :func:`~eigenvision.align_face`'s crops.

    Raises
    ------
    MissingExtraError
        dlib or its models are not installed.
    """
    dlib = _modules()[0]
    left, right = (face.left_eye, face.right_eye) if hasattr(face, "left_eye") else face
    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    distance = float(np.hypot(*(right - left)))
    photo = np.asarray(photo)
    if photo.ndim not in (2, 3) or (photo.ndim == 3 and photo.shape[2] != 3):
        raise ValueError(f"photo must be (H, W) or (H, W, 3), got shape {photo.shape}")
    if not np.isfinite(distance) or distance <= 0:
        raise ValueError(f"the eyes must be two distinct finite points, got {left} and {right}")
    if photo.dtype != np.uint8:  # 16-bit and float photos through [0, 1], as everywhere
        light = as_float_image(photo, allow_colour=True, name="photo")
        photo = np.clip(np.rint(light.astype(np.float64) * 255), 0, 255).astype(np.uint8)
    if photo.ndim == 2:
        photo = np.repeat(photo[..., None], 3, axis=2)
    x, y = (left + right) / 2 + np.multiply(FIVE_POINT_BOX[:2], distance)
    width, height = np.multiply(FIVE_POINT_BOX[2:], distance)
    box = dlib.rectangle(*(int(round(v)) for v in (x, y, x + width, y + height)))
    photo = np.ascontiguousarray(photo)
    chip = dlib.get_face_chip(photo, _five_points()(photo, box), CHIP_SHAPE[0], 0.25)
    return np.asarray(chip, dtype=np.float64) / 255  # as align_face's crops: [0, 1]


def deep_available() -> bool:
    """Whether the learned description's packages (``dlib``, ``face_recognition_models``) import.

    Returns
    -------
    bool
    """
    try:
        _modules()
    except MissingExtraError:
        return False
    return True


def _modules():
    try:
        import dlib
        import face_recognition_models
    except ImportError as error:
        raise MissingExtraError(
            f"the learned face description needs dlib and its trained models ({error}); "
            f"install them with: {DEEP_INSTALL}"
        ) from None
    return dlib, face_recognition_models


@functools.cache
def _five_points():
    """dlib's 5-point shape predictor, read once per process."""
    dlib, models = _modules()
    return dlib.shape_predictor(models.pose_predictor_five_point_model_location())


@functools.cache
def _network():
    """dlib's face recognition network, read once per process."""
    dlib, models = _modules()
    return dlib.face_recognition_model_v1(models.face_recognition_model_location())


def embed_chips(chips, *, mirror=False):
    """dlib's 128-d embeddings of face chips.

    Parameters
    ----------
    chips : (n, 150, 150, 3) or (n, 150, 150) ndarray
        Faces aligned as :data:`CHIP_EYE_POSITIONS` puts the eyes, RGB (grey chips are
        repeated over the three channels), values in [0, 1] or 8-bit.
    mirror : bool, default False
        Describe each chip by the mean of its embedding and its mirror image's.

    Returns
    -------
    (n, 128) ndarray of float64

    Raises
    ------
    MissingExtraError
        dlib or its models are not installed (the message gives :data:`DEEP_INSTALL`).
    """
    network = _network()
    chips = np.asarray(chips)
    if chips.ndim == 3:
        chips = np.repeat(chips[..., None], 3, axis=3)
    if chips.ndim != 4 or chips.shape[1:] != (*CHIP_SHAPE, 3):
        raise ValueError(
            f"chips must be (n, 150, 150, 3) RGB faces cut with "
            f"align_face(photo, face, shape=(150, 150), eye_positions=CHIP_EYE_POSITIONS, "
            f"as_gray=False), got shape {chips.shape}"
        )
    if chips.dtype != np.uint8:
        chips = np.clip(np.rint(np.asarray(chips, dtype=np.float64) * 255), 0, 255)
        chips = chips.astype(np.uint8)
    out = np.empty((len(chips), EMBEDDING_WIDTH))
    for rows in gen_batches(len(chips), _CHIPS_AT_ONCE):
        batch = [np.ascontiguousarray(chip) for chip in chips[rows]]
        out[rows] = np.asarray(network.compute_face_descriptor(batch))
        if mirror:
            flipped = [np.ascontiguousarray(chip[:, ::-1]) for chip in chips[rows]]
            out[rows] += np.asarray(network.compute_face_descriptor(flipped))
            out[rows] /= 2
    return out
