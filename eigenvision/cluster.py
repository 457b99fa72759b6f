"""Clustering in component space: group images by their codes, or by a model's own similarity.

The lecture's appendix: cluster in the space of the principal components
rather than in pixel space, and where only a similarity is known, take the
components of the similarity (kernel) matrix: spectral clustering (Ng,
Jordan & Weiss 2002; von Luxburg 2007). The clustering itself is
scikit-learn's; this module chooses the representation, the affinity and,
when it is not given, the number of groups.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.special import expit
from sklearn.base import clone
from sklearn.cluster import AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.metrics import pairwise_distances
from sklearn.utils import gen_batches

from ._base import flatten_images
from ._spec import Param
from .identity import PLDA, IdentityModel
from .kernel import KernelPCA

__all__ = [
    "cluster",
    "affinity",
    "eigengap_groups",
    "average_linkage",
    "set_normalized",
    "METHODS",
]

#: The clustering methods :func:`cluster` knows (scikit-learn's algorithms).
METHODS = ("agglomerative", "spectral", "kmeans")

_METHOD = Param("choice", choices=METHODS)
_NEIGHBOUR = 7  # the self-tuning affinity's local width: the 7th neighbour's distance
_GROUPS = Param("int", 1, 100_000, optional=True)
_BLOCK_ROWS = 1024  # rows of a set's (n, n) scores normalised at a time


def _as_rows(images_or_codes):
    """``(n, d)`` float rows of images (an ImageSet, ``(n, H, W)``) or codes."""
    X, _ = flatten_images(images_or_codes)
    X = np.asarray(X)
    if X.ndim != 2 or len(X) == 0:
        raise ValueError(
            f"expected images (n, H, W) or codes (n, d) with n >= 1, got shape {X.shape}"
        )
    if X.dtype.kind not in "fiu" or not np.all(np.isfinite(X)):
        raise ValueError("the images or codes must be finite real numbers")
    return X.astype(np.float64 if X.dtype != np.float32 else np.float32)


def _fitted(model, X):
    """``model`` fitted: as given when it is, else a clone fitted on ``X`` (unsupervised)."""
    if any(key.endswith("_") and not key.startswith("_") for key in vars(model)):
        return model
    if isinstance(model, (PLDA, IdentityModel)):
        raise ValueError(
            f"{type(model).__name__} learns identities from labelled images: fit it on people "
            "first (model.fit(images, labels)), then cluster others"
        )
    return clone(model).fit(X)


def _crops(X, model):
    """Rows back to the aligned crops an :class:`~eigenvision.IdentityModel` describes."""
    if X.shape[1] != np.prod(model.shape):
        raise ValueError(
            f"the identity model takes aligned crops of {tuple(model.shape)}, got rows of "
            f"{X.shape[1]} values; cut them with model_crop(photo, face, model)"
        )
    return X.reshape(len(X), *model.shape)


def _codes(X, model):
    """The rows in the model's component space (the rows themselves without a model)."""
    if model is None:
        return X
    if isinstance(model, IdentityModel):
        return model.transform(_crops(X, model))
    return model.transform(X)


def affinity(X, model=None):
    """The similarity of every pair of rows, in ``[0, 1]``, as the model sees it.

    The kernel of a :class:`~eigenvision.KernelPCA`; the probability of one
    identity for the identity models (:class:`~eigenvision.IdentityModel`'s
    calibrated one; for :class:`~eigenvision.PLDA` the log-likelihood ratio
    through a sigmoid); otherwise a Gaussian of the distance between codes with each
    row's own width, its distance to its 7th nearest neighbour (the
    self-tuning affinity of Zelnik-Manor & Perona 2004).

    Parameters
    ----------
    X : (n, d) ndarray
        Rows (the model's input).
    model : fitted model, optional
        Default: the rows as they are.

    Returns
    -------
    (n, n) ndarray
        Symmetric, ones on the diagonal for the Gaussian and the kernel.
    """
    if isinstance(model, KernelPCA):
        similarity = model._kernel(X, X)
    elif isinstance(model, PLDA):
        similarity = expit(model.pairwise_scores(X))
    elif isinstance(model, IdentityModel):
        similarity = model.pairwise_probability(_crops(X, model))
    else:
        codes = _codes(X, model)
        distances = pairwise_distances(codes)
        width = np.sort(distances, axis=1)[:, min(_NEIGHBOUR, len(codes) - 1)]
        width = np.maximum(width, max(width.max(), 1e-300) * 1e-6)
        similarity = np.exp(-(distances**2) / (width[:, None] * width[None, :]))
    return (similarity + similarity.T) / 2


def eigengap_groups(similarity, *, max_groups=None):
    """The number of groups an affinity shows: the largest gap of its Laplacian's spectrum.

    The ``k`` smallest eigenvalues of the normalised Laplacian
    ``I - D^-1/2 W D^-1/2`` are near 0 for ``k`` well separated groups; ``k``
    is where the gap to the next one is largest (von Luxburg 2007, 8.3).

    Parameters
    ----------
    similarity : (n, n) ndarray
        Symmetric, non-negative.
    max_groups : int, optional
        Look for the gap among the first this many eigenvalues; default ``n // 2``.

    Returns
    -------
    int

    Examples
    --------
    >>> blocks = np.kron(np.eye(3), np.ones((4, 4)))  # three groups of four
    >>> eigengap_groups(blocks + 0.01)
    3
    """
    n = len(similarity)
    if n < 3:
        return 1
    degree = np.maximum(similarity.sum(axis=1), 1e-300)
    scale = 1 / np.sqrt(degree)
    laplacian = np.eye(n) - scale[:, None] * similarity * scale[None, :]
    limit = max(2, min(n - 1, n // 2 if max_groups is None else int(max_groups)))
    values = linalg.eigh(laplacian, eigvals_only=True, subset_by_index=[0, limit])
    return int(np.argmax(np.diff(values))) + 1


def cluster(
    images_or_codes,
    *,
    model=None,
    method="agglomerative",
    n_clusters=None,
    distance_threshold=None,
    seed=0,
):
    """Group images (or codes) in component space; the largest group is 0.

    Parameters
    ----------
    images_or_codes : (n, H, W) or (n, d) ndarray or ImageSet
    model : subspace model, optional
        Where to cluster: its codes (``transform``), or for ``"spectral"`` its
        own similarity (:func:`affinity`). A fitted model is used as it is;
        an unfitted unsupervised one (:class:`~eigenvision.Eigenspace`,
        :class:`~eigenvision.KernelPCA`, ...) is fitted on the images first.
        Default: the pixels (or codes) themselves.
    method : {"agglomerative", "spectral", "kmeans"}, default "agglomerative"
        scikit-learn's ``AgglomerativeClustering`` (average linkage; for
        the identity models on the probability of two identities, cut at
        even odds), ``SpectralClustering`` on the precomputed affinity, or
        ``KMeans`` on the codes.
    n_clusters : int, optional
        The number of groups; default estimated: the identity models'
        even-odds cut for ``"agglomerative"``, else ``distance_threshold``,
        else the affinity's eigengap (:func:`eigengap_groups`).
    distance_threshold : float, optional
        ``"agglomerative"``: merge no further than this average distance
        between codes (instead of ``n_clusters``); for the identity models the
        distance is ``1 - P(same person)``, cut by default at 0.5 (even odds).
    seed : int, default 0

    Returns
    -------
    (n,) int ndarray
        Group labels ``0 .. g - 1``, by decreasing size (ties: first appearance).

    References
    ----------
    L. Zelnik-Manor and P. Perona (2004), Self-tuning spectral clustering, NIPS.
    A. Ng, M. Jordan and Y. Weiss (2002), On spectral clustering: analysis and
    an algorithm, NIPS. U. von Luxburg (2007), A tutorial on spectral
    clustering, Statistics and Computing 17(4).
    """
    if not _METHOD.accepts(method):
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not _GROUPS.accepts(n_clusters):
        raise ValueError(f"n_clusters must be a positive int or None, got {n_clusters!r}")
    X = _as_rows(images_or_codes)
    n = len(X)
    if n_clusters is not None and n_clusters > n:
        raise ValueError(f"n_clusters={n_clusters} exceeds the {n} images given")
    if n == 1:
        return np.zeros(1, dtype=np.int64)
    model = None if model is None else _fitted(model, X)
    identity = isinstance(model, (PLDA, IdentityModel))
    if method == "agglomerative":
        if identity and n_clusters is None:
            apart = 1 - affinity(X, model)  # the probability of two identities
            cut = 0.5 if distance_threshold is None else distance_threshold
            return average_linkage(apart, cut)
        else:
            codes = _codes(X, model)
            groups = n_clusters
            if groups is None and distance_threshold is None:
                groups = eigengap_groups(affinity(X, model))
            labels = AgglomerativeClustering(
                n_clusters=groups,
                linkage="average",
                distance_threshold=None if groups is not None else distance_threshold,
            ).fit_predict(codes)
    else:
        similarity = affinity(X, model)
        groups = eigengap_groups(similarity) if n_clusters is None else n_clusters
        if method == "spectral":
            labels = SpectralClustering(
                groups, affinity="precomputed", random_state=seed, assign_labels="cluster_qr"
            ).fit_predict(similarity)
        else:
            codes = _codes(X, model)
            labels = KMeans(groups, n_init=10, random_state=seed).fit_predict(codes)
    return _by_size(labels)


def average_linkage(distances, cut):
    """Groups of average-linkage clustering on precomputed distances, cut at ``cut``.

    Two groups merge while the mean distance between their members is below
    ``cut`` (scikit-learn's ``AgglomerativeClustering``).

    Parameters
    ----------
    distances : (n, n) ndarray
        Symmetric, non-negative; the diagonal is ignored.
    cut : float

    Returns
    -------
    (n,) int ndarray
        Group labels by decreasing size, as :func:`cluster`'s.
    """
    distances = np.asarray(distances, dtype=np.float64)
    if len(distances) == 1:
        return np.zeros(1, dtype=np.int64)
    # scikit-learn reads the upper triangle alone: no copy of a large set's matrix, except
    # where a diagonal it would refuse (not finite) must be cleared first
    if not np.isfinite(np.diagonal(distances)).all():
        distances = distances.copy()
        np.fill_diagonal(distances, 0.0)
    labels = AgglomerativeClustering(
        n_clusters=None, metric="precomputed", linkage="average", distance_threshold=cut
    ).fit_predict(distances)
    return _by_size(labels)


def set_normalized(scores, *, out=None):
    """Scores normalised against the set they come from (symmetric s-norm, the set as cohort).

    Each score ``s(a, b)`` becomes ``((s - m_a) / d_a + (s - m_b) / d_b) / 2`` where
    ``m_a``, ``d_a`` are the mean and standard deviation of ``a``'s scores with
    every other member of the set. Most pairs of a set of several people are
    of two people, so the result says how far a pair stands out from the
    set's typical pair, whatever the conditions that shift every score of
    the set alike (studio light, one camera).

    Parameters
    ----------
    scores : (n, n) ndarray
        Symmetric, ``n >= 3``; the diagonal is ignored.
    out : (n, n) ndarray of float64, optional
        Where to write the result; may be ``scores`` itself (a large set's
        scores normalised with no second matrix as large).

    Returns
    -------
    (n, n) ndarray
        ``out`` when given.

    References
    ----------
    P. Kenny (2010), Bayesian speaker verification with heavy-tailed priors,
    Odyssey (symmetric score normalisation).
    """
    scores = np.asarray(scores, dtype=np.float64)
    n = len(scores)
    if n < 3:
        raise ValueError(f"set normalisation needs at least 3 members, got {n}")
    if out is None:
        out = np.empty_like(scores)
    elif out.shape != scores.shape or out.dtype != np.float64:
        raise ValueError(f"out must be a float64 array of shape {scores.shape}")
    # a block of rows at a time: the temporaries stay a block's size, not the set's
    mean, spread = np.empty(n), np.empty(n)
    for rows in gen_batches(n, _BLOCK_ROWS):
        block = scores[rows]
        others = np.ones(block.shape, dtype=bool)
        others[np.arange(len(block)), np.arange(n)[rows]] = False
        row_scores = block[others].reshape(len(block), n - 1)
        mean[rows], spread[rows] = row_scores.mean(axis=1), row_scores.std(axis=1)
    spread = np.maximum(spread, 1e-12)
    for rows in gen_batches(n, _BLOCK_ROWS):
        block = scores[rows]  # read whole before ``out`` (maybe ``scores``) is written
        by_row = block - mean[rows, None]
        by_row /= spread[rows, None]
        by_column = block - mean
        by_column /= spread
        by_row += by_column
        by_row /= 2
        out[rows] = by_row
    return out


def _by_size(labels):
    """Labels renumbered by decreasing group size (ties: the group seen first)."""
    values, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))
    renumber = np.empty(len(values), dtype=np.int64)
    renumber[order] = np.arange(len(values))
    return renumber[np.searchsorted(values, labels)]
