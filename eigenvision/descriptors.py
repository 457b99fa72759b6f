"""Descriptors of aligned faces: local binary patterns, HOG and DAISY, as scikit-image has them.

The front end of the identity models (:class:`~eigenvision.IdentityModel`):
a grid of histograms of uniform local binary patterns at several radii
(Ahonen, Hadid & Pietikainen 2006), histograms of oriented gradients
(Dalal & Triggs 2005) and dense DAISY gradient histograms (Tola, Lepetit &
Fua 2010, a dense SIFT), each computed by scikit-image (HOG by
:func:`hog_descriptors`, scikit-image's steps on a whole stack), square-rooted (their
Hellinger map: histograms compared by the Euclidean distance of their roots)
and concatenated. :class:`FisherVectors` encodes a crop's local DAISY
descriptors, with where they are, by their Gaussian mixture's Fisher vector
(Perronnin, Sanchez & Mensink 2010; Simonyan et al. 2013's Fisher vector faces).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp
from skimage.feature import daisy, local_binary_pattern
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

from . import _compiled
from ._base import check_fitted
from ._parallel import n_threads, run_on_row_parts
from ._spec import Param, State, check_params
from .transform import rescale

__all__ = [
    "lbp_histograms",
    "hog_descriptor",
    "hog_descriptors",
    "daisy_descriptor",
    "face_descriptors",
    "local_daisy",
    "FisherVectors",
    "DESCRIPTORS",
]

#: The descriptors :func:`face_descriptors` knows.
DESCRIPTORS = ("pixels", "lbp", "hog", "lbp+hog", "daisy", "lbp+hog+daisy")
#: Crops a model's :class:`FisherVectors` mixture is fitted on, at most.
FISHER_SAMPLE = 600
#: scikit-image's ``daisy`` layout of :func:`daisy_descriptor` and :func:`local_daisy`: rings
#: of histograms around each point, histograms per ring, orientation bins per histogram.
_DAISY_RINGS, _DAISY_HISTOGRAMS, _DAISY_ORIENTATIONS = 2, 6, 8
#: Values of one DAISY descriptor: the histogram at the point and those of its rings.
DAISY_WIDTH = (1 + _DAISY_RINGS * _DAISY_HISTOGRAMS) * _DAISY_ORIENTATIONS

_CELLS = Param("int", 2, 64)
#: Crops a thread describes at least: under twice this many,
#: :meth:`~eigenvision.identity.FaceDescriber.describe` runs on the calling thread (describing
#: a crop costs far more than handing it to a thread).
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
        :func:`hog_descriptors` of the one image.

    References
    ----------
    N. Dalal and B. Triggs (2005), Histograms of oriented gradients for human
    detection, CVPR.
    """
    image = np.asarray(image, dtype=np.float64)
    if image.ndim != 2:
        raise ValueError(f"image must be one grey (H, W) image, got shape {image.shape}")
    return hog_descriptors(image[None], cell=cell, orientations=orientations)[0]


def hog_descriptors(images, *, cell=8, orientations=9, transform_sqrt=False):
    """scikit-image's ``hog`` of each image of a stack, all at once.

    scikit-image describes one image a call and normalises its blocks one by
    one in Python; the finder describes hundreds of crops a photo. The same
    steps on the whole stack, in two compiled passes over it
    (:func:`~eigenvision._compiled.hog_cells`,
    :func:`~eigenvision._compiled.hog_blocks`; no temporary the size of the
    stack): central differences (zero on the border rows and columns), each
    pixel's gradient magnitude counted in the bin of its unsigned orientation
    (compared with the bins' edges by cross products; the few pixels on an
    edge binned by numpy's arctangent, as scikit-image bins them), the
    cells' means (the pixels past the last whole cell left out), blocks of 2
    x 2 cells normalised by L2-Hys (Dalal & Triggs 2005).

    Parameters
    ----------
    images : (n, H, W) ndarray
        Grey; ``H`` and ``W`` at least two cells.
    cell : int, default 8
        Cell side, pixels.
    orientations : int, default 9
        Bins over 0-180 degrees.
    transform_sqrt : bool, default False
        Square roots of the grey levels first (non-negative images), as
        scikit-image's ``transform_sqrt``.

    Returns
    -------
    (n, m) ndarray of float64
        scikit-image's ``hog(image, orientations, (cell, cell), (2, 2),
        "L2-Hys")`` rows, to about 1e-7: it keeps its cells' sums in single
        precision, these are double.

    References
    ----------
    N. Dalal and B. Triggs (2005), Histograms of oriented gradients for human
    detection, CVPR.
    """
    images = np.asarray(images)
    cell, bins = int(cell), int(orientations)
    if images.ndim != 3:
        raise ValueError(f"images must be an (n, H, W) stack of grey images, got {images.shape}")
    if cell < 1 or bins < 1:
        raise ValueError(f"cell and orientations must be positive, got {cell} and {bins}")
    n, height, width = images.shape
    rows, cols = height // cell, width // cell
    if rows < 2 or cols < 2:
        raise ValueError(
            f"images of {height} x {width} pixels hold under 2 x 2 cells of {cell} pixels: "
            f"pass larger images or a smaller cell"
        )
    edges = (180.0 / bins) * np.arange(bins)  # scikit-image's
    radians = np.deg2rad(edges)
    cells, doubtful = _compiled.hog_cells(
        np.ascontiguousarray(images),
        cell,
        np.cos(radians),
        np.sin(radians),
        bool(transform_sqrt),
        np.empty((n, rows, cols, bins)),
    )
    if len(doubtful):
        image, row, col = doubtful[:, :3].astype(np.intp).T
        g_row, g_col = doubtful[:, 3], doubtful[:, 4]
        angle = np.rad2deg(np.arctan2(g_row, g_col)) % 180
        which = np.searchsorted(edges, angle, side="right") - 1
        np.add.at(cells, (image, row // cell, col // cell, which), np.hypot(g_col, g_row))
    cells /= cell * cell
    return _compiled.hog_blocks(cells, np.empty((n, (rows - 1) * (cols - 1) * 4 * bins)))


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
    (P * Q * DAISY_WIDTH,) ndarray of float64
        ``P x Q`` grid points at least ``radius`` from the border.

    References
    ----------
    E. Tola, V. Lepetit and P. Fua (2010), DAISY: an efficient dense descriptor
    applied to wide-baseline stereo, IEEE TPAMI 32(5).
    """
    return _dense_daisy(np.asarray(image, dtype=np.float64), step, radius).ravel()


def _dense_daisy(image, step, radius):
    """scikit-image's DAISY of ``image`` in this module's layout: ``(P, Q, DAISY_WIDTH)``."""
    return daisy(
        image,
        step=step,
        radius=radius,
        rings=_DAISY_RINGS,
        histograms=_DAISY_HISTOGRAMS,
        orientations=_DAISY_ORIENTATIONS,
        normalization="l1",
    )


def local_daisy(image, *, step=4, radius=10, scales=(1.0, 0.7), mirror=True, location_weight=4.0):
    """A crop's dense DAISY descriptors, square-rooted, each with where it is.

    Parameters
    ----------
    image : (H, W) ndarray
        An aligned face.
    step : int, default 4
        Grid spacing, pixels (of each scale).
    radius : int, default 10
        Radius of DAISY's outer ring, pixels.
    scales : sequence of float, default (1.0, 0.7)
        The crop is described at each of these sizes.
    mirror : bool, default True
        Also describe the mirror image, each of its points placed where it
        lies on the crop (its ``x`` negated): a mirrored patch beside the
        patch itself, as a face's two halves are alike.
    location_weight : float, default 4.0
        The point's ``x`` and ``y`` (from -0.5 to 0.5 across the crop) and
        its scale (less the scales' mean) are appended times this.

    Returns
    -------
    (m, 107) ndarray of float32
        :data:`DAISY_WIDTH` square-rooted DAISY values, then ``x``, ``y`` and the scale.

    References
    ----------
    J. Sanchez, F. Perronnin, T. Mensink and J. Verbeek (2013), Image
    classification with the Fisher vector: theory and practice, IJCV 105
    (descriptors augmented with their location).
    """
    image = np.asarray(image, dtype=np.float64)
    _check_daisy_size(image.shape, radius, scales)
    middle = float(np.mean(scales))
    rows = []
    for scale in scales:
        scaled = image if scale == 1.0 else rescale(image, scale)
        for flipped in (False, True) if mirror else (False,):
            described = _dense_daisy(scaled[:, ::-1] if flipped else scaled, step, radius)
            p, q, width = described.shape
            y, x = np.mgrid[0:p, 0:q]
            x = (x + 0.5) / q - 0.5
            where = np.column_stack(
                [-x.ravel() if flipped else x.ravel(), (y + 0.5).ravel() / p - 0.5]
            )
            where = np.column_stack([where, np.full(p * q, scale - middle)]) * location_weight
            rows.append(np.column_stack([np.sqrt(described.reshape(p * q, width)), where]))
    return np.concatenate(rows).astype(np.float32)


class FisherVectors(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Fisher vectors of aligned faces: local DAISY descriptors encoded by a Gaussian mixture.

    Each crop's local descriptors (:func:`local_daisy`: DAISY values reduced
    by a whitening PCA to ``n_components``, with the point's location and
    scale) are soft-assigned to the ``n_clusters`` diagonal Gaussians of a
    mixture fitted on training faces; the crop is described by the mean
    gradient of their log-likelihood with respect to each Gaussian's mean
    and deviation (the improved Fisher vector: normalised by the Fisher
    information, signed square root, unit length). Faces are then compared
    as wholes of many local parts, wherever those parts moved a little,
    which a grid of histograms cannot do.

    Parameters
    ----------
    n_clusters : int, default 128
        Gaussians of the mixture.
    n_components : int, default 64
        DAISY values kept by the whitening PCA.
    step, radius, scales, mirror, location_weight
        Of :func:`local_daisy`.
    sample_size : int, default 250_000
        Local descriptors the mixture is fitted on, drawn at random, an equal
        share from each crop given to :meth:`fit`.
    max_iter : int, default 40
        EM iterations of the mixture (scikit-learn's ``GaussianMixture``).
    seed : int, default 0

    Attributes
    ----------
    pca_mean_ : (DAISY_WIDTH,) ndarray
    pca_map_ : (n_components, DAISY_WIDTH) ndarray
        The whitening PCA: ``(d - pca_mean_) @ pca_map_.T``.
    means_, variances_ : (n_clusters, n_components + 3) ndarray
    weights_ : (n_clusters,) ndarray

    References
    ----------
    F. Perronnin, J. Sanchez and T. Mensink (2010), Improving the Fisher
    kernel for large-scale image classification, ECCV. K. Simonyan, O. M.
    Parkhi, A. Vedaldi and A. Zisserman (2013), Fisher vector faces in the
    wild, BMVC.

    Examples
    --------
    >>> import numpy as np
    >>> from eigenvision.descriptors import FisherVectors
    >>> crops = np.random.default_rng(0).random((4, 48, 40))
    >>> encoder = FisherVectors(n_clusters=2, n_components=8, sample_size=500).fit(crops)
    >>> encoder.transform(crops).shape  # 2 x 2 Gaussians x (8 + 3) values
    (4, 44)
    """

    _params = {
        "n_clusters": Param("int", 1, 4096),
        "n_components": Param("int", 1, DAISY_WIDTH),
        "step": Param("int", 1, 64),
        "radius": Param("int", 1, 64),
        "scales": Param("reals", 0.1, 4, max_length=8),
        "mirror": Param("bool"),
        "location_weight": Param("real", 0, 1e3),
        "sample_size": Param("int", 1, 100_000_000),
        "max_iter": Param("int", 1, 10_000),
        "seed": Param("int", 0, 2**32 - 1),
    }

    _state = {
        "pca_mean_": State(shape=(DAISY_WIDTH,)),
        "pca_map_": State(shape=("c", DAISY_WIDTH)),
        "means_": State(shape=("k", "d")),
        "variances_": State(shape=("k", "d"), positive=True),
        "weights_": State(shape=("k",), low=0),
    }

    def __init__(
        self,
        *,
        n_clusters=128,
        n_components=64,
        step=4,
        radius=10,
        scales=(1.0, 0.7),
        mirror=True,
        location_weight=4.0,
        sample_size=250_000,
        max_iter=40,
        seed=0,
    ):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.step = step
        self.radius = radius
        self.scales = scales
        self.mirror = mirror
        self.location_weight = location_weight
        self.sample_size = sample_size
        self.max_iter = max_iter
        self.seed = seed

    def _local(self, crop):
        return local_daisy(
            crop,
            step=self.step,
            radius=self.radius,
            scales=tuple(self.scales),
            mirror=self.mirror,
            location_weight=self.location_weight,
        )

    def fit(self, crops, y=None):
        """Fit the whitening PCA and the mixture on the crops' local descriptors.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces (a few hundred of many people will do).
        y : ignored
            Present for scikit-learn's pipelines (the description is unsupervised).

        Returns
        -------
        self
        """
        check_params(self)
        crops = _checked_crops(crops)
        # an equal share of the sample from each crop, drawn as it is described: the crops'
        # descriptors together would take hundreds of megabytes
        share = -(-self.sample_size // len(crops))

        def drawn(rows):
            parts = []
            for i in rows:
                local = self._local(crops[i])
                if len(local) > share:
                    rng = np.random.default_rng([self.seed, i])
                    local = local[np.sort(rng.choice(len(local), share, replace=False))]
                parts.append(local)
            return np.concatenate(parts)

        local = run_on_row_parts(drawn, len(crops), crop_parts(len(crops)))
        if len(local) <= self.n_clusters:
            raise ValueError(
                f"FisherVectors: {len(local)} local descriptors cannot fit {self.n_clusters} "
                f"Gaussians; give more or larger crops"
            )
        if len(local) > self.sample_size:
            rng = np.random.default_rng(self.seed)
            local = local[np.sort(rng.choice(len(local), self.sample_size, replace=False))]
        pca = PCA(self.n_components, whiten=True, random_state=self.seed)
        pca.fit(local[:, :DAISY_WIDTH])
        self.pca_mean_ = pca.mean_.astype(np.float64)
        self.pca_map_ = pca.components_ / np.sqrt(pca.explained_variance_)[:, None]
        mixture = GaussianMixture(
            self.n_clusters,
            covariance_type="diag",
            max_iter=self.max_iter,
            reg_covar=1e-3,
            random_state=self.seed,
        )
        with warnings.catch_warnings():  # max_iter is a budget: the mixture as it stands then
            warnings.simplefilter("ignore", ConvergenceWarning)
            mixture.fit(self._projected(local))
        self.means_, self.variances_ = mixture.means_, mixture.covariances_
        self.weights_ = mixture.weights_
        return self

    def _projected(self, local):
        """Local descriptors as the mixture reads them: whitened DAISY values, the location."""
        daisy_part = (local[:, :DAISY_WIDTH] - self.pca_mean_) @ self.pca_map_.T
        return np.column_stack([daisy_part, local[:, DAISY_WIDTH:]])

    def posteriors(self, points):
        """Each point's probability of coming from each Gaussian of the mixture.

        Parameters
        ----------
        points : (m, n_components + 3) ndarray
            Projected local descriptors.

        Returns
        -------
        (m, n_clusters) ndarray
            Rows sum to 1 (scikit-learn's ``GaussianMixture.predict_proba``).
        """
        check_fitted(self, "means_")
        precision = 1.0 / self.variances_
        log_density = -0.5 * (
            (points * points) @ precision.T
            - 2.0 * points @ (self.means_ * precision).T
            + np.sum(self.means_**2 * precision, axis=1)
            + np.sum(np.log(2.0 * np.pi * self.variances_), axis=1)
        )
        log_density += np.log(self.weights_)
        return np.exp(log_density - logsumexp(log_density, axis=1, keepdims=True))

    def encode_points(self, points):
        """The Fisher vector of one crop's projected local descriptors.

        Parameters
        ----------
        points : (m, n_components + 3) ndarray

        Returns
        -------
        (2 * n_clusters * (n_components + 3),) ndarray
            The gradients for the means, then for the deviations; signed
            square root, unit length.
        """
        gamma = self.posteriors(points)
        m = len(points)
        deviation = np.sqrt(self.variances_)
        counts = gamma.sum(axis=0)[:, None]
        first = gamma.T @ points
        second = gamma.T @ (points * points)
        for_means = (first - counts * self.means_) / deviation
        for_means /= m * np.sqrt(self.weights_)[:, None]
        spread = second - 2.0 * self.means_ * first + counts * self.means_**2
        for_deviations = (spread / self.variances_ - counts) / (
            m * np.sqrt(2.0 * self.weights_)[:, None]
        )
        vector = np.concatenate([for_means.ravel(), for_deviations.ravel()])
        vector = np.sign(vector) * np.sqrt(np.abs(vector))
        return vector / max(np.linalg.norm(vector), 1e-12)

    @property
    def _n_features_out(self):
        """:meth:`transform`'s width: ``2 * n_clusters * (n_components + 3)``."""
        return 2 * self.n_clusters * (self.n_components + 3)

    def transform(self, crops):
        """Fisher vectors of aligned crops.

        Parameters
        ----------
        crops : (n, H, W) ndarray

        Returns
        -------
        (n, 2 * n_clusters * (n_components + 3)) ndarray of float32
        """
        check_fitted(self, "means_")
        crops = _checked_crops(crops)
        return run_on_row_parts(
            lambda rows: np.stack(
                [self.encode_points(self._projected(self._local(crops[i]))) for i in rows]
            ).astype(np.float32),
            len(crops),
            crop_parts(len(crops)),
        )

    def _check_relations(self):
        """The PCA's and the mixture's shapes agree with each other and the parameters; the
        weights are a distribution and the variances positive
        (:func:`~eigenvision._spec.check_model`)."""
        kept, width = self.pca_map_.shape[0], self.means_.shape[1]
        if kept != self.n_components or width != kept + 3:
            raise ValueError(
                f"FisherVectors: pca_map_ must have n_components ({self.n_components}) rows and "
                f"the means that many columns and 3 more; got {kept} rows and {width} columns"
            )
        if len(self.means_) != self.n_clusters or len(self.weights_) != self.n_clusters:
            raise ValueError(
                f"FisherVectors: means_, variances_ and weights_ must hold n_clusters "
                f"({self.n_clusters}) Gaussians, got {len(self.means_)} and {len(self.weights_)}"
            )
        if not (np.all(self.variances_ > 0) and abs(float(self.weights_.sum()) - 1.0) < 1e-6):
            raise ValueError("FisherVectors: variances_ must be positive and weights_ sum to 1")


def crop_parts(count):
    """How many parts ``count`` crops are described in, one per core (:data:`_CROPS_PER_THREAD`)."""
    return max(1, min(n_threads(), count // _CROPS_PER_THREAD))


def _check_daisy_size(shape, radius, scales):
    """DAISY needs a ring of ``radius`` around its points in the crop at every scale."""
    needed = int(np.ceil((2 * radius + 1) / min(scales)))
    if len(shape) != 2 or min(shape) < needed:
        raise ValueError(
            f"a crop of shape {tuple(shape)} is too small for DAISY's radius {radius} at scale "
            f"{min(scales)}: give crops at least {needed} pixels a side, or a smaller radius"
        )


def _checked_crops(crops):
    crops = np.asarray(crops, dtype=np.float64)
    if crops.ndim != 3 or len(crops) == 0 or not np.isfinite(crops).all():
        raise ValueError(
            f"crops must be a non-empty (n, H, W) stack of finite aligned faces, got shape "
            f"{crops.shape}"
        )
    return crops


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
    parts = []
    if "lbp" in kind:
        parts.append([np.sqrt(lbp_histograms(crop, cells=cells, radii=radii)) for crop in crops])
    if "hog" in kind:
        parts.append(np.sqrt(hog_descriptors(crops, cell=hog_cell)))
    if "daisy" in kind:
        parts.append([np.sqrt(daisy_descriptor(crop)) for crop in crops])
    return np.hstack([np.asarray(part) for part in parts]).astype(np.float32)
