"""Descriptions of an aligned face crop for the identity models: LBP, HOG, DAISY, Fisher
vectors (:mod:`eigenvision.descriptors`) and a learned embedding (:mod:`.deep`).

:class:`FaceDescriber` is the front end :class:`~eigenvision.IdentityModel` composes: one
block of columns per description, each read by a PLDA model of its own.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from .. import descriptors, normalize
from .._base import NotFittedError
from .._parallel import run_on_row_parts
from .._spec import Param, State, check_model, check_params
from ..descriptors import (
    DESCRIPTORS,
    FisherVectors,
    crop_parts,
    face_descriptors,
)
from ..normalize import LUMA
from ..transform import rescale
from .deep import CHIP_SHAPE, EMBEDDING_WIDTH, embed_chips

__all__ = ["FaceDescriber", "IDENTITY_DESCRIPTORS"]

#: The descriptions an :class:`~eigenvision.IdentityModel` knows: :data:`DESCRIPTORS`,
#: ``"fisher"`` (:class:`FisherVectors` fitted with the model) and ``"deep"`` (dlib's
#: learned embedding of a colour chip, :func:`~eigenvision.identity.deep.embed_chips`).
IDENTITY_DESCRIPTORS = (*DESCRIPTORS, "fisher", "deep")


class FaceDescriber(BaseEstimator):
    """Aligned face crops described once per description, the descriptions side by side.

    Parameters
    ----------
    shape : (H, W), default (120, 104)
        The aligned crops' size.
    descriptor : str or tuple of str, default ("daisy", "daisy", "lbp+hog", "fisher")
        What describes a crop (:func:`~eigenvision.descriptors.face_descriptors`:
        ``"pixels"``, ``"lbp"``, ``"hog"``, ``"lbp+hog"``, ``"daisy"`` or
        ``"lbp+hog+daisy"``), or ``"fisher"``: the Fisher vector of the crop's
        local DAISY descriptors (:class:`~eigenvision.descriptors.FisherVectors`,
        its mixture fitted by :meth:`fit` on a sample of the crops, kept as
        ``fisher_``; its own scales and mirror image). A tuple describes each
        crop several times, each description with a PLDA model of its own,
        and a pair's ratio is the sum of theirs (:class:`PLDAFusion`); see
        :meth:`descriptions`.
    lbp_cells : (rows, cols), default (10, 8)
        The grid of LBP histograms (:func:`~eigenvision.descriptors.lbp_histograms`;
        descriptors with ``"lbp"``).
    lbp_radii : sequence of int, default (1, 2, 3)
        The LBP radii, pixels: one histogram grid per radius.
    hog_cell : int, default 12
        HOG's cell side, pixels (:func:`~eigenvision.descriptors.hog_descriptor`;
        descriptors with ``"hog"``).
    fisher_clusters : int, default 128
        Gaussians of the ``"fisher"`` description's mixture.
    descriptor_scales : sequence of float, a tuple of them, or None, default None
        The crop is described at each of these sizes (relative to ``shape``;
        scikit-image's ``rescale`` with its anti-aliasing), the descriptors
        concatenated: the descriptors' cells and radii in pixels cover a
        larger share of a smaller crop. A tuple of sequences gives each
        description its own (:meth:`descriptions`). None: DAISY at 0.7 of
        the crop, the other descriptors at its full size.
    illumination : bool, "both" or tuple of bool, default (True, False, True, True)
        Tan & Triggs' normalisation before the descriptors
        (:func:`~eigenvision.normalize.illumination`), for all descriptions
        or, a tuple, for each ``descriptor`` in turn; ``"both"``: each
        descriptor twice, with it and without it. The normalised crop keeps
        the shape the light hides, the crop as it is keeps the shading the
        normalisation removes.
    mirror : bool, default True
        Describe each crop by the mean of its descriptors and its mirror
        image's (as Simonyan et al. 2013 do): a face and its mirror show one
        person, and the mean depends less on which side the light or a turn
        favours.
    seed : int, default 0
        Which crops the ``"fisher"`` description's mixture is fitted on.

    Attributes
    ----------
    fisher_ : FisherVectors or None
        The ``"fisher"`` description's encoder (:meth:`fit`); None without one.

    References
    ----------
    X. Tan and B. Triggs (2010), Enhanced local texture feature sets for face
    recognition under difficult lighting conditions, IEEE TIP 19(6).
    K. Simonyan, O. Parkhi, A. Vedaldi and A. Zisserman (2013), Fisher vector
    faces in the wild, BMVC (descriptors of the face and its mirror image).

    Notes
    -----
    Crops are grey ``(n, H, W)`` or colour ``(n, H, W, 3)``: the ``"deep"`` description reads
    the colour (grey crops are repeated over three channels), the others the grey.
    """

    _params = {
        "shape": Param("shape", 16, 512),
        "descriptor": Param("choice", choices=IDENTITY_DESCRIPTORS, sequence=True, max_length=8),
        "lbp_cells": Param("shape", 2, 64),
        "lbp_radii": Param("reals", 1, 16, max_length=8),
        "hog_cell": Param("int", 2, 64),
        "fisher_clusters": Param("int", 1, 4096),
        "descriptor_scales": Param("reals", 0.1, 4, max_length=8, sequence=True, optional=True),
        "illumination": Param("bool", also=("both",), sequence=True, max_length=8),
        "mirror": Param("bool"),
        "seed": Param("int", 0, 2**32 - 1),
    }

    #: Each fitted member's kind (:func:`~eigenvision._spec.check_declared_state`).
    _state = {"fisher_": State("model", optional=True)}

    def __init__(
        self,
        *,
        shape=(120, 104),
        descriptor=("daisy", "daisy", "lbp+hog", "fisher"),
        illumination=(True, False, True, True),
        descriptor_scales=None,
        lbp_cells=(10, 8),
        lbp_radii=(1, 2, 3),
        hog_cell=12,
        fisher_clusters=128,
        mirror=True,
        seed=0,
    ):
        self.shape = shape
        self.descriptor = descriptor
        self.illumination = illumination
        self.descriptor_scales = descriptor_scales
        self.lbp_cells = lbp_cells
        self.lbp_radii = lbp_radii
        self.hog_cell = hog_cell
        self.fisher_clusters = fisher_clusters
        self.mirror = mirror
        self.seed = seed

    @property
    def colour(self):
        """Whether a description reads colour (``"deep"``): crops are then cut in colour."""
        return any(kind == "deep" for kind, *_ in self.descriptions())

    def fit(self, crops, y=None):
        """Learn what the descriptions learn from faces: the ``"fisher"`` description's mixture.

        ``fisher_`` becomes a :class:`FisherVectors` fitted on up to
        :data:`~eigenvision.descriptors.FISHER_SAMPLE` of ``crops`` (drawn by ``seed``)
        where a description is ``"fisher"``, else None.

        Parameters
        ----------
        crops : (n, H, W) or (n, H, W, 3) ndarray
            Aligned faces at ``shape``, of many people.
        y : ignored

        Returns
        -------
        self
        """
        check_params(self)
        self.fisher_ = None
        lit = [normalised for kind, normalised, _ in self.descriptions() if kind == "fisher"]
        if not lit:
            return self
        if len(set(lit)) > 1:
            raise ValueError(
                "FaceDescriber: the 'fisher' description may be given once (one mixture)"
            )
        rng = np.random.default_rng(self.seed)
        chosen = np.sort(rng.permutation(len(crops))[: descriptors.FISHER_SAMPLE])
        sample = _grey(np.asarray(crops[chosen], dtype=np.float64))
        if lit[0]:
            sample = np.stack([normalize.illumination(crop) for crop in sample])
        self.fisher_ = FisherVectors(n_clusters=self.fisher_clusters, seed=self.seed).fit(sample)
        return self

    def describe(self, crops):
        """Descriptor rows of aligned crops at ``shape``.

        Parameters
        ----------
        crops : (n, H, W) or (n, H, W, 3) ndarray
            Grey or colour; one crop may come without the first axis.

        Returns
        -------
        (n, m) ndarray
        """
        crops = self._checked(crops)
        parts = crop_parts(len(crops))
        # the crops in parts, one per core: the descriptors' filtering runs outside the GIL
        return run_on_row_parts(
            lambda rows: np.concatenate(self._described(crops[rows]), axis=1), len(crops), parts
        )

    def _described(self, crops, *, skip_deep=False):
        """Each description's rows of checked crops, in :meth:`descriptions` order (the
        ``"deep"`` ones left out with ``skip_deep``)."""
        options = {"cells": tuple(self.lbp_cells), "radii": tuple(self.lbp_radii)}
        options["hog_cell"] = self.hog_cell
        seen = {}  # (normalised, scale): the crops as described, shared by descriptions

        # Not recursive: a closure that calls itself is a reference cycle, which would hold
        # the crops and their copies after the call until the garbage collector ran.
        def crops_at(normalised, scale):
            if (normalised, 1) not in seen:
                seen[normalised, 1] = (
                    np.stack([normalize.illumination(crop) for crop in crops])
                    if normalised
                    else crops
                )
            if (normalised, scale) not in seen:
                seen[normalised, scale] = np.stack(
                    [rescale(crop, scale) for crop in seen[normalised, 1]]
                )
            return seen[normalised, scale]

        deep = crops
        crops = _grey(crops)
        blocks = []
        for kind, normalised, scales in self.descriptions():
            if kind == "deep":  # the network's own input: the colour chip, neither lit nor scaled
                if not skip_deep:
                    blocks.append(embed_chips(deep, mirror=self.mirror))
                continue
            if kind == "fisher":  # a mirror image and its scales are the encoder's own
                blocks.append(self._fisher_encoder().transform(crops_at(normalised, 1)))
                continue
            parts = []
            for scale in scales:
                scaled = crops_at(normalised, scale)
                described = face_descriptors(scaled, kind=kind, **options)
                if self.mirror:
                    described += face_descriptors(scaled[:, :, ::-1], kind=kind, **options)
                    described /= 2
                parts.append(described)
            blocks.append(np.concatenate(parts, axis=1))
        return blocks

    def _fisher_encoder(self):
        encoder = getattr(self, "fisher_", None)
        if encoder is None:
            raise NotFittedError(
                "the 'fisher' description is learned from faces: fit the IdentityModel "
                "(fit(crops, labels)) before describing crops with it"
            )
        return encoder

    def descriptions(self):
        """Each description of a crop, one PLDA model each: its descriptor, whether it
        normalises the illumination first and the scales it describes the crop at.

        ``descriptor``, ``illumination`` and ``descriptor_scales`` pair item by item: a
        single value (a descriptor, True or False, a sequence of scales) serves every
        description, a tuple gives each its own; ``illumination="both"`` describes with
        each descriptor twice, normalised then not.

        Returns
        -------
        list of (str, bool, tuple of float)

        Examples
        --------
        >>> FaceDescriber(descriptor=("daisy", "lbp+hog"), illumination="both").descriptions()
        ... # doctest: +NORMALIZE_WHITESPACE
        [('daisy', True, (0.7,)), ('daisy', False, (0.7,)),
         ('lbp+hog', True, (1.0,)), ('lbp+hog', False, (1.0,))]
        """
        kinds = [self.descriptor] if isinstance(self.descriptor, str) else list(self.descriptor)
        light = self.illumination
        if isinstance(light, str):  # "both"
            pairs = [(kind, normalised) for kind in kinds for normalised in (True, False)]
        elif not isinstance(light, (tuple, list)):
            pairs = [(kind, bool(light)) for kind in kinds]
        else:
            kinds = kinds * len(light) if len(kinds) == 1 else kinds
            _check_pairing("illumination", len(light), "descriptor", len(kinds))
            pairs = [(kind, bool(lit)) for kind, lit in zip(kinds, light, strict=True)]
        scales = self.descriptor_scales
        if scales is None:
            found = [(kind, lit, _DEFAULT_SCALES.get(kind, (1.0,))) for kind, lit in pairs]
        elif not isinstance(scales[0], (tuple, list)):
            found = [(kind, lit, tuple(scales)) for kind, lit in pairs]
        else:
            _check_pairing("descriptor_scales", len(scales), "description", len(pairs))
            found = [(*pair, tuple(each)) for pair, each in zip(pairs, scales, strict=True)]
        repeated = [item for i, item in enumerate(found) if item in found[:i]]
        if repeated:
            raise ValueError(
                f"FaceDescriber: the description {repeated[0]} comes twice in {found} (two "
                "PLDA models of one description count its evidence twice); give each "
                "descriptor its own illumination or scales, e.g. descriptor='daisy', "
                "illumination=True for one description"
            )
        return found

    def description_widths(self):
        """The width of each description's block of :meth:`describe`'s columns.

        Returns
        -------
        list of int
        """
        check_params(self)
        found = self.descriptions()
        sample = np.random.default_rng(0).random((1, *self.shape))
        # the network's width is known without running it
        blocks = iter(self._described(sample, skip_deep=True))
        return [EMBEDDING_WIDTH if kind == "deep" else next(blocks).shape[1] for kind, *_ in found]

    def _checked(self, crops):
        """``crops`` as a float64 stack of grey ``(n, H, W)`` or colour ``(n, H, W, 3)`` faces
        at ``shape``, or a clear error."""
        crops = np.asarray(crops, dtype=np.float64)
        if crops.ndim == 2 or (crops.ndim == 3 and crops.shape[-1] == 3 and self.colour):
            crops = crops[None]
        shape = tuple(self.shape)
        grey = crops.ndim == 3 and crops.shape[1:] == shape
        colour = crops.ndim == 4 and crops.shape[1:] == (*shape, 3)
        if not (grey or colour) or len(crops) == 0:
            raise ValueError(
                f"crops must be (n, {shape[0]}, {shape[1]}) grey or (n, {shape[0]}, {shape[1]}, 3)"
                f" colour aligned faces, n >= 1, got shape {crops.shape}; cut them with "
                f"model_crop(photo, face, model)"
            )
        if self.colour and shape != CHIP_SHAPE:
            raise ValueError(
                f"the 'deep' description reads 150 x 150 chips: shape must be {CHIP_SHAPE}, "
                f"got {shape}"
            )
        return crops

    def _check_relations(self):
        """Its Fisher vectors there exactly when a description reads them, with as many
        Gaussians as ``fisher_clusters`` says (:func:`~eigenvision._spec.check_model`)."""
        check_params(self)
        wanted = any(kind == "fisher" for kind, _, _ in self.descriptions())
        encoder = getattr(self, "fisher_", None)  # unfitted: rows described by its caller
        if wanted != (encoder is not None):
            raise ValueError(
                "FaceDescriber.fisher_ must be a fitted FisherVectors exactly when a "
                f"description is 'fisher' (descriptor={self.descriptor!r}), got "
                f"{type(encoder).__name__}"
            )
        if encoder is not None:
            if not isinstance(encoder, FisherVectors):
                raise ValueError(
                    f"FaceDescriber.fisher_ must be a FisherVectors, got {type(encoder)}"
                )
            check_model(encoder)
            if encoder.n_clusters != self.fisher_clusters:
                raise ValueError(
                    f"FaceDescriber.fisher_ has {encoder.n_clusters} Gaussians, its "
                    f"fisher_clusters says {self.fisher_clusters}"
                )


def _grey(crops):
    """Colour crops ``(n, H, W, 3)`` made grey (:func:`~eigenvision.normalize.to_gray`'s
    weights); grey ones as they are."""
    return crops[..., :3] @ LUMA if crops.ndim == 4 else crops


#: Each descriptor's scales when ``FaceDescriber(descriptor_scales=None)`` (default (1.0,)).
_DEFAULT_SCALES = {"daisy": (0.7,)}


def _check_pairing(name, count, other, expected):
    """Item-by-item parameters of :class:`FaceDescriber`: one item per ``other``."""
    if count != expected:
        raise ValueError(
            f"FaceDescriber: {name} must pair with the {other}s item by item, got {count} "
            f"items for {expected} {other}s; give it one item per {other}, or one value for "
            "them all"
        )
