"""The recipes of the shipped identity models: what :command:`eigenvision build-models
--identity` runs.

Both are fitted on LFW's View 1 training people, each photo's face cut on the eyes the shipped
finder places (:func:`lfw_eyes`): the classical model (:data:`CLASSICAL_RECIPE`, the
:class:`~eigenvision.IdentityModel` defaults: DAISY, LBP+HOG and Fisher vectors) and the
learned one (:data:`DEEP_RECIPE`: dlib's embedding of a colour chip), each kept in its
:data:`SHIPPED_FORMS` (the classical one in 8 bits, :func:`~eigenvision.identity.quantized`).
"""

from __future__ import annotations

import numpy as np

from .. import datasets
from .._base import progress as show_progress
from ..identity import IdentityModel, quantized, tempered
from ..identity.deep import CHIP_EYE_POSITIONS, CHIP_SHAPE
from ..io import load_image
from .compare import model_crop
from .geometry import face_box
from .photos import default_finder

__all__ = [
    "build_identity_model",
    "lfw_eyes",
    "CLASSICAL_RECIPE",
    "DEEP_RECIPE",
    "RECIPES",
    "SHIPPED_FORMS",
    "tempered_on_att",
]

#: The classical model's parameters: :class:`~eigenvision.IdentityModel`'s defaults.
CLASSICAL_RECIPE = {}
#: The learned model's parameters: dlib's embedding of the chip dlib's network was trained
#: on (its 5-point landmarks in the box our eyes give), under PLDA fused with the embedding's
#: own distance (chosen on the tuning folds of ``lfw_verification``).
DEEP_RECIPE = {
    "descriptor": "deep",
    "shape": CHIP_SHAPE,
    "eye_positions": CHIP_EYE_POSITIONS,
    "alignment": "five_points",
    "distance_fusion": True,
    "illumination": False,
    "mirror": False,
    "pca_components": 128,
    "lda_components": None,
    "n_components": 100,
    "calibration_share": 0.3,
}
#: The shipped models' recipes by name.
RECIPES = {"classical": CLASSICAL_RECIPE, "deep": DEEP_RECIPE}
#: Each shipped model's file form: the classical maps in 8 bits; the learned model in full
#: precision (its whitening map's large weights cancel one another: rounded to 8 bits or
#: float16 they change the scores beyond use, and the model is small as it is).
SHIPPED_FORMS = {"classical": quantized, "deep": lambda model: model}
#: Typical eye centres of LFW's 150 x 150 photos: where the placer starts.
LFW_EYES = datasets.LFW_EYES
#: Crops :func:`build_identity_model` describes per step of its progress bar.
_DESCRIBED_AT_ONCE = 256


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


def build_identity_model(
    root=None, *, eyes=None, recipe="classical", temper=True, progress=False, **options
):
    """A shipped identity model's recipe: LFW's View 1 training people, eyes placed by the
    shipped finder, crops aligned on them, an :class:`~eigenvision.IdentityModel` fitted and
    kept in its shipped form (:data:`SHIPPED_FORMS`).

    Parameters
    ----------
    root : path-like, optional
        The ``lfw_train`` folder; default ``$EIGENVISION_DATA/lfw_train``.
    eyes : (n, 2, 2) ndarray, optional
        The eyes of :func:`~eigenvision.datasets.load_lfw`'s photos, in its order
        (default placed here by :func:`lfw_eyes`, minutes).
    recipe : {"classical", "deep"}, default "classical"
        Which shipped model (:data:`RECIPES`); ``"deep"`` cuts colour chips from the photos.
    temper : bool, default True
        Temper the probabilities on AT&T (:func:`tempered_on_att`; needs ``att_faces/``).
    progress : bool, default False
        Show the eyes being placed and the faces being described (a bar on a terminal, lines
        in a log).
    **options
        :class:`~eigenvision.IdentityModel`'s parameters, over the recipe's.

    Returns
    -------
    IdentityModel
        In its shipped form (:data:`SHIPPED_FORMS`): the classical model's large maps in 8 bits.
    """
    lfw = datasets.load_lfw(root)
    if eyes is None:
        eyes = lfw_eyes(lfw.images, default_finder(), progress=progress)
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {recipe!r}")
    model = IdentityModel(**{**RECIPES[recipe], **options})
    # a colour model reads each photo again in colour (load_lfw's are grey)
    photos = (
        (load_image(path, as_gray=False) for _, path in datasets.lfw_files(root))
        if model.colour
        else lfw.images
    )
    crops = np.stack(
        [model_crop(image, pair, model) for image, pair in zip(photos, eyes, strict=True)]
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
    model = SHIPPED_FORMS[recipe](model.fit_descriptors(described, lfw.labels))
    return tempered_on_att(model, progress=progress) if temper else model


def tempered_on_att(model, *, finder=None, progress=False):
    """``model`` with its probabilities tempered on another source than its training photos:
    every pair of AT&T's 400 faces (40 people, one lab, grey, 92 x 112), each cut on the eyes
    of the finder's likeliest face (:func:`~eigenvision.identity.tempered`). A model fitted on
    LFW's news photos is overconfident on photos of other kinds; the ``calibration``
    experiment reports the tempered probabilities on sources neither step saw (IMM, HELEN).

    Parameters
    ----------
    model : IdentityModel
    finder : FaceFinder, optional
        Default :func:`~eigenvision.default_finder`.
    progress : bool, default False

    Returns
    -------
    IdentityModel
    """
    finder = default_finder() if finder is None else finder
    att = datasets.load_att()
    crops = []
    for image in show_progress(att.images, desc="tempering on AT&T", enabled=progress):
        face = finder.find(image, threshold=0.0, max_faces=1)[0]  # one face each
        crops.append(model_crop(image, face, model))
    codes = model.encode(np.stack(crops))
    rows, cols = np.triu_indices(len(codes), 1)
    scores = model.pairwise_log_odds(codes, codes)[rows, cols]
    return tempered(model, scores, att.labels[rows] == att.labels[cols])
