"""Descriptors of aligned faces: local binary patterns, HOG and DAISY, scikit-image's.

The front end of the identity models (:class:`~eigenvision.IdentityModel`):
a grid of histograms of uniform local binary patterns at several radii
(Ahonen, Hadid & Pietikainen 2006), histograms of oriented gradients
(Dalal & Triggs 2005) and dense DAISY gradient histograms (Tola, Lepetit &
Fua 2010, a dense SIFT), each computed by scikit-image, square-rooted (their
Hellinger map: histograms compared by the Euclidean distance of their roots)
and concatenated.
"""

from __future__ import annotations

import numpy as np
from skimage.feature import daisy, hog, local_binary_pattern
from skimage.transform import rescale

from . import normalize
from ._parallel import n_threads, run_on_row_parts
from ._spec import Param, check_params

__all__ = [
    "lbp_histograms",
    "hog_descriptor",
    "daisy_descriptor",
    "face_descriptors",
    "FaceDescriptionMixin",
    "DESCRIPTORS",
]

#: The descriptors :func:`face_descriptors` knows.
DESCRIPTORS = ("pixels", "lbp", "hog", "lbp+hog", "daisy", "lbp+hog+daisy")

_CELLS = Param("int", 2, 64)
#: Crops a thread describes at least: under twice this many, :meth:`FaceDescriptionMixin.describe`
#: runs on the calling thread (describing a crop costs far more than handing it to a thread).
_CROPS_PER_THREAD = 8


def lbp_histograms(image, *, cells=(8, 8), radii=(1, 2), points=8):
    """Histograms of uniform local binary patterns over a grid of cells, at several radii.

    Parameters
    ----------
    image : (H, W) ndarray
    cells : (rows, cols), default (8, 8)
        The grid; each cell's histogram is normalised to sum 1.
    radii : sequence of int, default (1, 2)
    points : int, default 8
        Neighbours sampled on each circle (``points + 2`` uniform codes).

    Returns
    -------
    (len(radii) * rows * cols * (points + 2),) ndarray of float64

    References
    ----------
    T. Ahonen, A. Hadid and M. Pietikainen (2006), Face description with local
    binary patterns, IEEE TPAMI 28(12).
    """
    rows, cols = (int(v) for v in cells)
    if not (_CELLS.accepts(rows) and _CELLS.accepts(cols)):
        raise ValueError(f"cells must be two ints in [2, 64], got {cells!r}")
    image = np.asarray(image)
    if image.dtype.kind == "f":
        # patterns compare neighbours only, so a float crop is stretched to 8 bits first
        # (scikit-image's advice for its LBP: float round-off flips comparisons of equals)
        low, high = float(image.min()), float(image.max())
        scale = 255 / (high - low) if high > low else 1.0
        image = np.round((image - low) * scale).astype(np.uint8)
    bins = points + 2
    row_edges = np.linspace(0, image.shape[0], rows + 1).astype(int)
    col_edges = np.linspace(0, image.shape[1], cols + 1).astype(int)
    cell_row = np.searchsorted(row_edges, np.arange(image.shape[0]), side="right") - 1
    cell_col = np.searchsorted(col_edges, np.arange(image.shape[1]), side="right") - 1
    cell = cell_row[:, None] * cols + cell_col[None, :]  # each pixel's cell
    histograms = []
    for radius in radii:
        codes = local_binary_pattern(image, points, radius, method="uniform").astype(np.int64)
        counts = np.bincount((cell * bins + codes).ravel(), minlength=rows * cols * bins)
        counts = counts.reshape(rows * cols, bins).astype(np.float64)
        histograms.append(counts / np.maximum(counts.sum(axis=1, keepdims=True), 1))
    return np.concatenate([h.ravel() for h in histograms])


def hog_descriptor(image, *, cell=8, orientations=9):
    """Histograms of oriented gradients (scikit-image's ``hog``, L2-Hys blocks of 2 x 2 cells).

    Parameters
    ----------
    image : (H, W) ndarray
    cell : int, default 8
        Cell side, pixels.
    orientations : int, default 9

    Returns
    -------
    (m,) ndarray of float64

    References
    ----------
    N. Dalal and B. Triggs (2005), Histograms of oriented gradients for human
    detection, CVPR.
    """
    return hog(
        np.asarray(image, dtype=np.float64),
        orientations=orientations,
        pixels_per_cell=(cell, cell),
        cells_per_block=(2, 2),
        block_norm="L2-Hys",
        feature_vector=True,
    )


def daisy_descriptor(image, *, step=8, radius=15):
    """Dense DAISY descriptors on a grid (scikit-image's ``daisy``), each point's summing to 1.

    Two rings of six histograms of eight gradient orientations around each
    grid point (and one at it): a SIFT-like description of the local shape
    every ``step`` pixels.

    Parameters
    ----------
    image : (H, W) ndarray
    step : int, default 8
        Grid spacing, pixels.
    radius : int, default 15
        Radius of the outer ring, pixels.

    Returns
    -------
    (P * Q * 104,) ndarray of float64
        ``P x Q`` grid points at least ``radius`` from the border.

    References
    ----------
    E. Tola, V. Lepetit and P. Fua (2010), DAISY: an efficient dense descriptor
    applied to wide-baseline stereo, IEEE TPAMI 32(5).
    """
    described = daisy(
        np.asarray(image, dtype=np.float64),
        step=step,
        radius=radius,
        rings=2,
        histograms=6,
        orientations=8,
        normalization="l1",
    )
    return described.ravel()


def face_descriptors(crops, *, kind="lbp+hog", cells=(8, 8), radii=(1, 2), hog_cell=8):
    """Descriptors of aligned face crops, one row each.

    Parameters
    ----------
    crops : (n, H, W) ndarray
        Aligned faces (e.g. :func:`~eigenvision.align_face`), photometrically
        normalised or not.
    kind : {"pixels", "lbp", "hog", "lbp+hog", "daisy", "lbp+hog+daisy"}, default "lbp+hog"
        The pixels as they are, or the square roots of the histograms (their
        Hellinger map), concatenated.
    cells : (rows, cols), default (8, 8)
        :func:`lbp_histograms`' grid.
    radii : sequence of int, default (1, 2)
        :func:`lbp_histograms`' radii.
    hog_cell : int, default 8
        :func:`hog_descriptor`'s cell side, pixels.

    Returns
    -------
    (n, m) ndarray of float32
        Single precision, as images are: the models fitted on them keep float32
        components (half the size of the shipped model file).
    """
    if kind not in DESCRIPTORS:
        raise ValueError(f"kind must be one of {DESCRIPTORS}, got {kind!r}")
    crops = np.asarray(crops, dtype=np.float64)
    if crops.ndim != 3 or len(crops) == 0:
        raise ValueError(f"crops must be a non-empty (n, H, W) stack, got shape {crops.shape}")
    if kind == "pixels":
        return crops.reshape(len(crops), -1).astype(np.float32)
    rows = []
    for crop in crops:
        parts = []
        if "lbp" in kind:
            parts.append(np.sqrt(lbp_histograms(crop, cells=cells, radii=radii)))
        if "hog" in kind:
            parts.append(np.sqrt(hog_descriptor(crop, cell=hog_cell)))
        if "daisy" in kind:
            parts.append(np.sqrt(daisy_descriptor(crop)))
        rows.append(np.concatenate(parts))
    return np.stack(rows).astype(np.float32)


class FaceDescriptionMixin:
    """:meth:`describe` of :class:`~eigenvision.IdentityModel`: aligned crops described once
    per description, side by side.

    Reads the model's ``shape``, ``descriptor``, ``illumination``, ``descriptor_scales``,
    ``lbp_cells``, ``lbp_radii``, ``hog_cell`` and ``mirror``.
    """

    def describe(self, crops):
        """Descriptor rows of aligned crops ``(n, H, W)`` at ``shape``.

        Parameters
        ----------
        crops : (n, H, W) ndarray

        Returns
        -------
        (n, m) ndarray
        """
        crops = np.asarray(crops, dtype=np.float64)
        if crops.ndim == 2:
            crops = crops[None]
        if crops.ndim != 3 or crops.shape[1:] != tuple(self.shape) or len(crops) == 0:
            raise ValueError(
                f"crops must be (n, {self.shape[0]}, {self.shape[1]}) aligned faces, n >= 1, got "
                f"shape {crops.shape}; cut them with "
                f"align_face(photo, face, shape={tuple(self.shape)})"
            )
        parts = max(1, min(n_threads(), len(crops) // _CROPS_PER_THREAD))
        # the crops in parts, one per core: the descriptors' filtering runs outside the GIL
        return run_on_row_parts(
            lambda rows: np.concatenate(self._described(crops[rows]), axis=1), len(crops), parts
        )

    def _described(self, crops):
        """Each description's rows of checked crops, in :meth:`descriptions` order."""
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
                    [_rescaled(crop, scale) for crop in seen[normalised, 1]]
                )
            return seen[normalised, scale]

        blocks = []
        for kind, normalised, scales in self.descriptions():
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
        >>> from eigenvision import IdentityModel
        >>> IdentityModel(descriptor=("daisy", "lbp+hog"), illumination="both").descriptions()
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
                f"IdentityModel: the description {repeated[0]} comes twice in {found} (two "
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
        sample = np.random.default_rng(0).random((1, *self.shape))
        return [block.shape[1] for block in self._described(sample)]


#: Each descriptor's scales when ``IdentityModel(descriptor_scales=None)`` (default (1.0,)).
_DEFAULT_SCALES = {"daisy": (0.7,)}


def _check_pairing(name, count, other, expected):
    """Item-by-item parameters of :class:`FaceDescriptionMixin`: one item per ``other``."""
    if count != expected:
        raise ValueError(
            f"IdentityModel: {name} must pair with the {other}s item by item, got {count} "
            f"items for {expected} {other}s"
        )


def _rescaled(crop, scale):
    """``crop`` resized by ``scale`` (bilinear, Gaussian anti-aliasing where it shrinks)."""
    return rescale(crop, float(scale), order=1, anti_aliasing=True)
