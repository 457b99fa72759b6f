"""Clustering in component space: group images by their codes, or by a model's own similarity.

The lecture's appendix: cluster in the space of the principal components
rather than in pixel space, and where only a similarity is known, take the
components of the similarity (kernel) matrix: spectral clustering (Ng,
Jordan & Weiss 2002; von Luxburg 2007). The clustering itself is
scikit-learn's; this module chooses the representation, the affinity and,
when it is not given, the number of groups.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import linalg, sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import lobpcg
from scipy.spatial.distance import squareform
from scipy.special import expit
from sklearn.base import clone
from sklearn.cluster import AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.metrics import pairwise_distances
from sklearn.mixture import GaussianMixture

from ._base import flatten_images
from ._spec import Param
from .identity import PLDA, IdentityModel
from .kernel import KernelPCA
from .neighbors import NearestNeighbor, cell_kneighbors

__all__ = [
    "cluster",
    "affinity",
    "LowRankAffinity",
    "nystroem_affinity",
    "neighbour_graph",
    "laplacian_spectrum",
    "spectral_labels",
    "eigengap_groups",
    "average_linkage",
    "condensed_index",
    "pair_mixture",
    "PairMixture",
    "METHODS",
    "EXACT_GRAPH_ROWS",
]

#: The clustering methods :func:`cluster` knows (scikit-learn's algorithms).
METHODS = ("agglomerative", "spectral", "kmeans")

#: The most bytes a dense path (an ``n x n`` affinity or distance matrix and its working copy)
#: may take; beyond it :func:`cluster` refuses before allocating, naming the paths that do not
#: need one (``"kmeans"`` with a count; no count: the sparse spectral path).
DENSE_BUDGET = 4 << 30

#: Beyond this many rows :func:`neighbour_graph` searches nearby cells
#: (:func:`~eigenvision.neighbors.cell_kneighbors`) instead of every row: the exact search of a
#: set against itself grows as n^2.
EXACT_GRAPH_ROWS = 50_000

_METHOD = Param("choice", choices=METHODS)
_NEIGHBOUR = 7  # the self-tuning affinity's local width: the 7th neighbour's distance
_GRAPH_NEIGHBOURS = 10  # each row's neighbours in the sparse graph
_MAX_GROUPS = 100  # the eigengap is looked for among this many eigenvalues at most
_FIRST_WINDOW = 16  # a large sparse graph's spectrum is read this many eigenvalues first
_LOBPCG_TOL = 1e-5
_LOBPCG_ITERATIONS = 1000
_GROUPS = Param("int", 1, 100_000, optional=True)
#: How much lower the two-kinds mixture's BIC must be than one Gaussian's: Kass & Raftery
#: (1995)'s "very strong" evidence.
_STRONG_EVIDENCE = 10.0
_MIXTURE_PAIRS = 200_000  # a larger set's mixture is fitted on this many pairs drawn at random
_HIGH_STARTS = (0.9, 0.99, 0.999, 0.9999)  # quantiles the higher kind starts from


def _as_rows(images_or_codes):
    """``(n, d)`` float rows of images (an ImageSet, ``(n, H, W)``, colour crops
    ``(n, H, W, 3)`` for a learned description) or codes."""
    if isinstance(images_or_codes, np.ndarray) and images_or_codes.ndim == 4:
        images_or_codes = images_or_codes.reshape(len(images_or_codes), -1)
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
    """Rows back to the aligned crops an :class:`~eigenvision.IdentityModel` describes (in
    colour for a model that reads colour)."""
    if model.colour and X.shape[1] == 3 * np.prod(model.shape):
        return X.reshape(len(X), *model.shape, 3)
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
        width = _local_widths(np.sort(distances, axis=1)[:, min(_NEIGHBOUR, len(codes) - 1)])
        similarity = np.exp(-(distances**2) / (width[:, None] * width[None, :]))
    return (similarity + similarity.T) / 2


class LowRankAffinity(NamedTuple):
    """An affinity ``W = F F^T`` held as its factor ``F``: ``O(n r)`` memory, never ``n x n``.

    :func:`laplacian_spectrum`, :func:`eigengap_groups` and
    :func:`spectral_labels` read it as they read a dense or sparse affinity.

    Attributes
    ----------
    factor : (n, r) ndarray
        E.g. Nyström's feature map of a kernel (:func:`nystroem_affinity`).
    """

    factor: np.ndarray

    @property
    def shape(self) -> tuple:
        return (len(self.factor), len(self.factor))

    @property
    def rank(self) -> int:
        return self.factor.shape[1]

    def toarray(self) -> np.ndarray:
        """The ``(n, n)`` affinity itself (for small ``n``: tests, plots).

        Returns
        -------
        (n, n) ndarray
        """
        return self.factor @ self.factor.T


def nystroem_affinity(X, model) -> LowRankAffinity:
    """The kernel of a Nyström :class:`~eigenvision.KernelPCA` between rows, as its factor.

    With ``m`` landmarks ``L`` the model's kernel is
    ``k(x, y) ~ k(x, L) K_LL^-1 k(L, y)`` (the lecture's appendix:
    ``K_G ~ K*^T K^-1 K*``), so the affinity of ``n`` rows is ``F F^T`` with
    ``F = k(X, L) K_LL^-1/2``, the model's own feature map: spectral
    clustering on it costs ``O(n m)`` memory and ``O(n m^2)`` time (Fowlkes,
    Belongie, Chung & Malik 2004) where the exact kernel needs ``n x n``.

    Parameters
    ----------
    X : (n, d) ndarray
        Rows (the model's input).
    model : KernelPCA
        Fitted with ``n_landmarks``.

    Returns
    -------
    LowRankAffinity

    References
    ----------
    C. Fowlkes, S. Belongie, F. Chung and J. Malik (2004), Spectral grouping
    using the Nyström method, IEEE TPAMI 26(2).
    """
    if not isinstance(model, KernelPCA) or model.n_landmarks is None:
        raise ValueError("nystroem_affinity needs a KernelPCA fitted with n_landmarks")
    return LowRankAffinity(model.nystroem_features(np.asarray(X, dtype=np.float64)))


def neighbour_graph(codes, *, n_neighbors=_GRAPH_NEIGHBOURS, exact=None):
    """The sparse self-tuning affinity of each row to its nearest neighbours.

    Each row is joined to its ``n_neighbors`` nearest (the project's exact
    search in blocks, :class:`~eigenvision.neighbors.NearestNeighbor`, or
    beyond :data:`EXACT_GRAPH_ROWS` rows the search of nearby cells,
    :func:`~eigenvision.neighbors.cell_kneighbors`) with
    weight ``exp(-d^2 / (s_i s_j))``, ``s`` a row's distance to its 7th
    nearest neighbour (Zelnik-Manor & Perona 2004); the graph is made
    symmetric by keeping an edge either end chose. Memory is ``O(n k)``: the
    affinity of :func:`affinity` without its ``n x n`` matrix, and without
    its weak links between far-apart rows, which in many dimensions add up
    to more than a group's own (von Luxburg 2007, 2.2).

    Parameters
    ----------
    codes : (n, d) ndarray
    n_neighbors : int, default 10
    exact : bool, optional
        The exact search (True) or the search of nearby cells (False); default
        exact up to :data:`EXACT_GRAPH_ROWS` rows.

    Returns
    -------
    (n, n) scipy.sparse.csr_array
        Symmetric, non-negative, empty diagonal.

    Examples
    --------
    >>> graph = neighbour_graph(np.array([[0.0], [1.0], [2.0], [10.0], [11.0]]), n_neighbors=1)
    >>> graph.toarray().round(2)
    array([[0.  , 0.37, 0.  , 0.  , 0.  ],
           [0.37, 0.  , 0.37, 0.  , 0.  ],
           [0.  , 0.37, 0.  , 0.  , 0.  ],
           [0.  , 0.  , 0.  , 0.  , 0.37],
           [0.  , 0.  , 0.  , 0.37, 0.  ]])
    """
    codes = np.asarray(codes)
    n = len(codes)
    if codes.ndim != 2 or n < 2:
        raise ValueError(f"expected codes (n, d) with n >= 2, got shape {codes.shape}")
    k = min(int(n_neighbors), n - 1)
    if exact is None:
        exact = n <= EXACT_GRAPH_ROWS
    if exact:
        distances, neighbours = NearestNeighbor().fit(codes).kneighbors(codes, k + 1)
    else:
        distances, neighbours = cell_kneighbors(codes, k + 1)
    # each row's own index comes first unless a duplicate ties it: drop the row itself
    itself = neighbours == np.arange(n)[:, None]
    itself[itself.sum(axis=1) == 0, -1] = True
    keep = ~itself
    distances = distances[keep].reshape(n, k)
    neighbours = neighbours[keep].reshape(n, k)
    width = _local_widths(distances[:, min(_NEIGHBOUR, k) - 1])
    weights = np.exp(-(distances**2) / (width[:, None] * width[neighbours]))
    graph = sparse.csr_array(
        (weights.ravel(), neighbours.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n)
    )
    return graph.maximum(graph.T).tocsr()


def _local_widths(kth_distances):
    """The self-tuning affinity's widths: each row's distance to its 7th neighbour, kept from
    0 (a row among copies of itself) by a floor whose square does not underflow."""
    return np.maximum(kth_distances, max(kth_distances.max() * 1e-6, 1e-150))


def laplacian_spectrum(similarity, n_eigenvalues, *, seed=0):
    """The smallest eigenvalues and eigenvectors of an affinity's normalised Laplacian.

    ``L = I - D^-1/2 W D^-1/2`` (Ng, Jordan & Weiss 2002; von Luxburg 2007).
    A dense affinity is solved by LAPACK (``scipy.linalg.eigh``); a sparse
    one by LOBPCG from a random block (Knyazev 2001): a block method, so
    that an eigenvalue repeated as often as a graph has separate parts is
    found as often (a single-vector Krylov method such as ARPACK's from one
    start finds it once, in exact arithmetic).

    Parameters
    ----------
    similarity : (n, n) ndarray, scipy.sparse array or LowRankAffinity
        Symmetric, non-negative (a low-rank one: non-negative degrees).
    n_eigenvalues : int
        How many, ``1 <= n_eigenvalues <= n`` (at most the rank of a
        :class:`LowRankAffinity`).
    seed : int, default 0
        LOBPCG's start.

    Returns
    -------
    values : (n_eigenvalues,) ndarray
        Ascending, in ``[0, 2]``.
    vectors : (n, n_eigenvalues) ndarray
        Orthonormal columns.

    References
    ----------
    A. V. Knyazev (2001), Toward the optimal preconditioned eigensolver: locally
    optimal block preconditioned conjugate gradient method, SIAM J. Sci. Comput. 23(2).
    """
    n = similarity.shape[0]
    m = int(n_eigenvalues)
    if not 1 <= m <= n:
        raise ValueError(f"n_eigenvalues must be in [1, {n}], got {n_eigenvalues}")
    if isinstance(similarity, LowRankAffinity):
        return _low_rank_spectrum(similarity, m)
    degree = np.asarray(similarity.sum(axis=1)).ravel()
    scale = 1 / np.sqrt(np.maximum(degree, 1e-300))
    if not sparse.issparse(similarity) or n <= max(1000, 5 * m):
        dense = similarity.toarray() if sparse.issparse(similarity) else similarity
        laplacian = np.eye(n) - scale[:, None] * dense * scale[None, :]
        return linalg.eigh(laplacian, subset_by_index=[0, m - 1])
    similarity = sparse.csr_array(similarity)
    laplacian = sparse.identity(n, format="csr") - sparse.diags_array(scale) @ similarity @ (
        sparse.diags_array(scale)
    )
    start = np.random.default_rng(seed).standard_normal((n, m))
    values, vectors = lobpcg(
        laplacian, start, largest=False, tol=_LOBPCG_TOL, maxiter=_LOBPCG_ITERATIONS
    )
    order = np.argsort(values)
    return np.clip(values[order], 0.0, 2.0), vectors[:, order]


def _low_rank_spectrum(similarity, m):
    """:func:`laplacian_spectrum` of ``W = F F^T``: with ``G = D^-1/2 F``, the normalised
    affinity ``G G^T`` shares its nonzero eigenvalues with the ``(r, r)`` matrix ``G^T G``."""
    if m > similarity.rank:
        raise ValueError(
            f"n_eigenvalues={m} exceeds the rank {similarity.rank} of the low-rank affinity"
        )
    factor = similarity.factor
    degree = factor @ factor.sum(axis=0)
    scaled = factor / np.sqrt(np.maximum(degree, 1e-300))[:, None]
    values, small = linalg.eigh(scaled.T @ scaled)
    values, small = values[::-1][:m], small[:, ::-1][:, :m]
    vectors = scaled @ (small / np.sqrt(np.maximum(values, 1e-300)))
    return np.clip(1.0 - values, 0.0, 2.0), vectors


def eigengap_groups(similarity, *, max_groups=None, seed=0):
    """The number of groups an affinity shows: the largest gap of its Laplacian's spectrum.

    The ``k`` smallest eigenvalues of the normalised Laplacian
    ``I - D^-1/2 W D^-1/2`` are near 0 for ``k`` well separated groups; ``k``
    is where the gap to the next one is largest (von Luxburg 2007, 8.3).
    A sparse graph in separate parts (a :func:`neighbour_graph` of groups
    apart) is counted part by part, its spectrum being the union of theirs:
    each part's groups by the gap of its own spectrum, the count their sum.
    The spectrum of a large sparse graph is read a window at a time (16
    eigenvalues, then 32, ...) until its largest gap lies inside the window.
    The count is sure where that gap stands out from the others (groups
    apart); where the groups touch (handwritten digits, faces of one person
    in many lights) the gaps are alike and the count is a guess, often short
    of the truth: then give ``n_clusters``.

    Parameters
    ----------
    similarity : (n, n) ndarray, scipy.sparse array or LowRankAffinity
        Symmetric, non-negative: :func:`affinity`, :func:`neighbour_graph`
        or :func:`nystroem_affinity`.
    max_groups : int, optional
        Look for the gap among the first this many eigenvalues (of each
        separate part); default ``min(n // 2, 100)``.
    seed : int, default 0
        The sparse solver's start (:func:`laplacian_spectrum`).

    Returns
    -------
    int

    Examples
    --------
    >>> blocks = np.kron(np.eye(3), np.ones((4, 4)))  # three groups of four
    >>> eigengap_groups(blocks + 0.01)
    3
    """
    return sum(groups for _, groups in _counted_parts(similarity, max_groups, seed))


def spectral_labels(similarity, n_groups, *, seed=0):
    """Groups of an affinity from its Laplacian's first eigenvectors, assigned by a pivoted QR.

    The spectral clustering of the lecture's appendix (Ng, Jordan & Weiss
    2002), with its k-means step replaced by the column-pivoted QR of
    Damle, Minden & Ying (2019): deterministic, and exact where the groups
    are separate parts of the graph (each part then grouped on its own, as
    :func:`eigengap_groups` counts them). Sparse all the way for a
    :func:`neighbour_graph`.

    Parameters
    ----------
    similarity : (n, n) ndarray, scipy.sparse array or LowRankAffinity
    n_groups : int
    seed : int, default 0

    Returns
    -------
    (n,) int ndarray
        Group labels by decreasing size, as :func:`cluster`'s.

    References
    ----------
    A. Damle, V. Minden and L. Ying (2019), Simple, direct and efficient
    multi-way spectral clustering, Information and Inference 8(1).
    """
    parts = _parts(similarity)
    if 1 < len(parts) <= n_groups:
        counted = (
            [(rows, 1) for rows in parts]
            if len(parts) == n_groups
            else _counted_parts(similarity, None, seed)
        )
        if sum(groups for _, groups in counted) == n_groups:
            return _labels_of_parts(similarity, counted, seed)
    return _by_size(_pivoted_qr_labels(similarity, n_groups, seed))


def _parts(similarity):
    """Row indices of each separate part of a sparse graph (one part for a dense affinity)."""
    n = similarity.shape[0]
    if not sparse.issparse(similarity):
        return [np.arange(n)]
    count, part = connected_components(similarity, directed=False)
    if count == 1:
        return [np.arange(n)]
    order = np.argsort(part, kind="stable")
    return np.split(order, np.cumsum(np.bincount(part))[:-1])


def _part_of(similarity, rows):
    return similarity if len(rows) == similarity.shape[0] else similarity[rows][:, rows]


def _counted_parts(similarity, max_groups, seed):
    """``[(rows, groups)]``: each separate part and the groups its own spectrum's gap shows."""
    return [
        (rows, _gap_count(_part_of(similarity, rows), max_groups, seed))
        for rows in _parts(similarity)
    ]


def _gap_count(similarity, max_groups, seed):
    """:func:`eigengap_groups` of one connected graph (or a dense affinity)."""
    n = similarity.shape[0]
    if n < 3:
        return 1
    limit = min(n // 2, _MAX_GROUPS) if max_groups is None else int(max_groups)
    limit = max(2, min(n - 1, limit))
    if isinstance(similarity, LowRankAffinity):
        limit = min(limit, similarity.rank - 1)
        if limit < 2:
            return 1
    window = limit + 1 if not sparse.issparse(similarity) else min(limit + 1, _FIRST_WINDOW)
    while True:
        values, _ = laplacian_spectrum(similarity, window, seed=seed)
        gap = int(np.argmax(np.diff(values)))
        if gap < window - 2 or window == limit + 1:
            return gap + 1
        window = min(2 * window, limit + 1)


def _labels_of_parts(similarity, counted, seed):
    """Labels of a graph's separate parts, each grouped on its own into its count."""
    labels = np.empty(similarity.shape[0], dtype=np.int64)
    first = 0
    for rows, groups in counted:
        part = _part_of(similarity, rows)
        labels[rows] = first + (_pivoted_qr_labels(part, groups, seed) if groups > 1 else 0)
        first += groups
    return _by_size(labels)


def _pivoted_qr_labels(similarity, n_groups, seed):
    """Damle, Minden & Ying's assignment of the Laplacian's first ``n_groups`` eigenvectors."""
    _, vectors = laplacian_spectrum(similarity, n_groups, seed=seed)
    _, _, pivots = linalg.qr(vectors.T, pivoting=True, mode="economic")
    left, _, right = linalg.svd(vectors[pivots[:n_groups]].T)
    return np.abs(vectors @ (left @ right)).argmax(axis=1)


def cluster(
    images_or_codes,
    *,
    model=None,
    method=None,
    n_clusters=None,
    distance_threshold=None,
    seed=0,
):
    """Group images (or codes) in component space; the largest group is 0.

    Parameters
    ----------
    images_or_codes : (n, H, W) or (n, d) ndarray or ImageSet
    model : subspace model, optional
        Where to cluster: its codes (``transform``), or its own similarity
        (:func:`affinity`) where it has one (:class:`~eigenvision.KernelPCA`'s
        kernel, the identity models' probability). A KernelPCA with
        ``n_landmarks`` gives its Nyström kernel (:func:`nystroem_affinity`):
        spectral clustering on it holds ``O(n m)``, never ``n x n``. A fitted model is used as
        it is; an unfitted unsupervised one (:class:`~eigenvision.Eigenspace`,
        :class:`~eigenvision.KernelPCA`, ...) is fitted on the images first.
        Default: the pixels (or codes) themselves.
    method : {"agglomerative", "spectral", "kmeans"}, optional
        scikit-learn's ``AgglomerativeClustering`` (average linkage; for
        the identity models on the probability of two identities, cut at
        even odds), spectral clustering (scikit-learn's ``SpectralClustering``
        on the precomputed affinity when told how many groups, except on a
        Nyström kernel; else :func:`spectral_labels` of the spectrum that
        counted them), or
        ``KMeans`` on the codes. Default: ``"agglomerative"`` when the groups
        are told (``n_clusters``, ``distance_threshold``) or an identity
        model cuts them at even odds; otherwise ``"spectral"``, whose count
        and groups come from one sparse spectrum (memory ``O(n k)``, so that
        a hundred thousand codes group on a laptop).
    n_clusters : int, optional
        The number of groups; default estimated: the identity models'
        even-odds cut for ``"agglomerative"``, else ``distance_threshold``,
        else the eigengap (:func:`eigengap_groups`) of the codes'
        :func:`neighbour_graph` (of the model's own similarity where it has one).
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

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> X, truth = make_blobs(2000, 128, centers=20, cluster_std=4.0, random_state=0)
    >>> len(np.unique(cluster(X)))
    20
    """
    if method is not None and not _METHOD.accepts(method):
        raise ValueError(f"method must be one of {METHODS} or None, got {method!r}")
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
    told = n_clusters is not None or distance_threshold is not None
    if method is None:
        method = "agglomerative" if told or identity else "spectral"
    low_rank = isinstance(model, KernelPCA) and model.n_landmarks is not None
    dense = method == "agglomerative" or (
        method == "spectral" and not low_rank and (n_clusters is not None or _has_similarity(model))
    )
    if dense:
        _check_dense_budget(n, method)
    if method == "agglomerative" and identity and n_clusters is None:
        apart = 1 - affinity(X, model)  # the probability of two identities
        cut = 0.5 if distance_threshold is None else distance_threshold
        return average_linkage(apart, cut)
    if method == "spectral" and n_clusters is not None:
        if low_rank:
            return spectral_labels(nystroem_affinity(X, model), n_clusters, seed=seed)
        labels = SpectralClustering(
            n_clusters, affinity="precomputed", random_state=seed, assign_labels="cluster_qr"
        ).fit_predict(affinity(X, model))
        return _by_size(labels)
    codes = None if method == "spectral" and _has_similarity(model) else _codes(X, model)
    groups = n_clusters
    if not told:
        if low_rank:
            similarity = nystroem_affinity(X, model)
        elif _has_similarity(model):
            similarity = affinity(X, model)
        else:
            similarity = neighbour_graph(codes)
        counted = _counted_parts(similarity, None, seed)
        if method == "spectral":
            return _labels_of_parts(similarity, counted, seed)
        groups = sum(part_groups for _, part_groups in counted)
    if method == "kmeans":
        labels = KMeans(groups, n_init=10, random_state=seed).fit_predict(codes)
    else:
        labels = AgglomerativeClustering(
            n_clusters=groups,
            linkage="average",
            distance_threshold=None if groups is not None else distance_threshold,
        ).fit_predict(codes)
    return _by_size(labels)


def _check_dense_budget(n: int, method: str) -> None:
    """Refuse, before allocating, a dense path of ``n x n`` matrices beyond :data:`DENSE_BUDGET`."""
    needed = 2 * 8 * n * n  # the float64 matrix and the working copy its algorithm makes
    if needed > DENSE_BUDGET:
        raise ValueError(
            f"method={method!r} on {n} items holds {n} x {n} matrices, about "
            f"{needed / 2**30:.1f} GiB, over the {DENSE_BUDGET / 2**30:.0f} GiB budget "
            "(eigenvision.cluster.DENSE_BUDGET): use method='kmeans' with n_clusters, or no "
            "method and no count (the sparse spectral path counts and groups in O(n k) memory); "
            "a KernelPCA model: fit it with n_landmarks (its Nyström kernel holds O(n m))"
        )


def _has_similarity(model):
    """Whether the model has a similarity of its own (:func:`affinity`), not only codes."""
    return isinstance(model, (KernelPCA, PLDA, IdentityModel))


def average_linkage(distances, cut):
    """Groups of average-linkage clustering on precomputed distances, cut at ``cut``.

    Two groups merge while the mean distance between their members is below
    ``cut``: scikit-learn's ``AgglomerativeClustering(linkage="average",
    distance_threshold=cut)``, by the same algorithm (SciPy's ``linkage``
    on the condensed distances), without its ``n x n`` copies: a set's
    condensed distances (``n (n - 1) / 2`` values, SciPy's order) are taken
    as they are.

    Parameters
    ----------
    distances : (n, n) ndarray or (n (n - 1) / 2,) ndarray
        Symmetric and non-negative (the diagonal is ignored), or their upper
        triangle row by row (``scipy.spatial.distance.squareform``'s order).
    cut : float

    Returns
    -------
    (n,) int ndarray
        Group labels by decreasing size, as :func:`cluster`'s.
    """
    distances = np.asarray(distances)
    if distances.ndim == 2:
        n = len(distances)
        if n == 1:
            return np.zeros(1, dtype=np.int64)
        # the upper triangle alone (the diagonal, even where not finite, is never read)
        condensed = squareform(distances.astype(np.float64, copy=False), checks=False)
    else:
        n = _condensed_size(len(distances))
        if n == 1:
            return np.zeros(1, dtype=np.int64)
        condensed = distances.astype(np.float64, copy=False)
    if not np.all(np.isfinite(condensed)):
        raise ValueError("the distances must be finite")
    tree = linkage(condensed, method="average")
    # merges strictly below the cut, as scikit-learn's distance_threshold (a monotone tree)
    labels = fcluster(tree, t=np.nextafter(cut, -np.inf), criterion="distance") - 1
    return _by_size(labels)


def _condensed_size(length: int) -> int:
    """The ``n`` of ``n (n - 1) / 2`` condensed distances, or a ValueError."""
    n = int(round((1 + np.sqrt(1 + 8 * length)) / 2))
    if n * (n - 1) // 2 != length:
        raise ValueError(f"{length} condensed distances are no set's n (n - 1) / 2")
    return n


def condensed_index(rows, cols, n):
    """Where pair ``(i, j)``, ``i != j``, sits among ``n`` items' condensed distances.

    Parameters
    ----------
    rows, cols : int ndarrays
    n : int

    Returns
    -------
    int ndarray

    Examples
    --------
    >>> from scipy.spatial.distance import squareform
    >>> square = np.arange(16.0).reshape(4, 4); square = square + square.T
    >>> np.fill_diagonal(square, 0)
    >>> condensed = squareform(square)
    >>> bool(condensed[condensed_index(np.array([2]), np.array([1]), 4)][0] == square[2, 1])
    True
    """
    i, j = np.minimum(rows, cols), np.maximum(rows, cols)
    return n * i - i * (i + 1) // 2 + (j - i - 1)


class PairMixture(NamedTuple):
    """Two kinds of pairs in a set: their scores ``~ weight N(high, variance) + (1 - weight)
    N(low, variance)`` (:func:`pair_mixture`).

    Attributes
    ----------
    low, high : float
        The two kinds' mean scores, ``low < high``.
    variance : float
        Their common variance.
    weight : float
        The share of the ``high`` kind among the pairs.
    """

    low: float
    high: float
    variance: float
    weight: float

    def probability(self, scores, *, out=None):
        """The probability that each pair is of the ``high`` kind, given its score.

        With one variance the log-odds are linear in the score,
        ``(high - low) / variance * (s - (low + high) / 2) + log(weight / (1 - weight))``:
        a higher score is never less likely the ``high`` kind.

        Parameters
        ----------
        scores : ndarray
        out : ndarray of float64, optional
            Where to write the result; may be ``scores`` itself (a set's ``(n, n)``
            scores, no second matrix as large).

        Returns
        -------
        ndarray
            ``out`` when given.
        """
        slope = (self.high - self.low) / self.variance
        offset = np.log(self.weight / (1 - self.weight)) - slope * (self.low + self.high) / 2
        out = np.multiply(scores, slope, out=out)
        out += offset
        return expit(out, out=out)


def pair_mixture(scores, *, seed=0):
    """The two kinds of pairs of a set, learnt from the set's own pair scores.

    A set of faces of several people holds pairs of one person and pairs of
    two, whatever the conditions that shift every score alike (one studio,
    one camera) and whatever the share of each kind (a few people in many
    photos, many people in a few). A two-component Gaussian mixture with one
    variance (scikit-learn's ``GaussianMixture``, ``covariance_type="tied"``)
    fitted to the scores of every pair learns both kinds where they are in
    this set; :meth:`PairMixture.probability` then gives each pair's
    probability of the higher kind. Where one Gaussian describes the scores
    as well (the mixture's BIC not lower by more than 10, Kass & Raftery
    1995's "very strong" evidence: a set of one person, or of people seen
    once each) there are no two kinds to learn and None is returned.

    Parameters
    ----------
    scores : (n, n) ndarray or (n (n - 1) / 2,) ndarray
        Symmetric, ``n >= 3`` (the diagonal is ignored), or its upper triangle
        condensed (:func:`average_linkage`'s order). Sets of 633 faces or
        more (over 200,000 pairs) are fitted on 200,000 pairs drawn at random.
    seed : int, default 0
        Of that draw.

    Returns
    -------
    PairMixture or None

    References
    ----------
    R. E. Kass and A. E. Raftery (1995), Bayes factors, Journal of the American
    Statistical Association 90(430).
    """
    scores = np.asarray(scores)
    condensed = scores.ndim == 1
    n = _condensed_size(len(scores)) if condensed else len(scores)
    if (not condensed and scores.shape != (n, n)) or n < 3:
        raise ValueError(f"expected the (n, n) scores of a set of n >= 3, got {scores.shape}")
    if n * (n - 1) // 2 <= _MIXTURE_PAIRS:
        pairs = scores if condensed else scores[np.triu_indices(n, 1)]
    else:  # pairs drawn with replacement: a large set's triangle is never copied
        rng = np.random.default_rng(seed)
        rows, offsets = rng.integers(0, n, _MIXTURE_PAIRS), rng.integers(1, n, _MIXTURE_PAIRS)
        cols = (rows + offsets) % n
        pairs = scores[condensed_index(rows, cols, n)] if condensed else scores[rows, cols]
    pairs = pairs.astype(np.float64).reshape(-1, 1)
    if not np.all(np.isfinite(pairs)):
        raise ValueError("the scores must be finite")
    one = GaussianMixture(1).fit(pairs)
    # the pairs of one person are the highest, from one in ten thousand (many people seen a
    # few times each) to half (two people): started from the bulk and the top 10, 1, 0.1 and
    # 0.01 percent, the likeliest fit is kept
    two = max(
        (
            GaussianMixture(
                2,
                covariance_type="tied",
                means_init=np.quantile(pairs, [0.25, top]).reshape(2, 1),
                random_state=seed,
            ).fit(pairs)
            for top in _HIGH_STARTS
        ),
        key=lambda mixture: mixture.score(pairs),
    )
    if one.bic(pairs) - two.bic(pairs) <= _STRONG_EVIDENCE:
        return None
    low, high = np.argsort(two.means_[:, 0])
    return PairMixture(
        float(two.means_[low, 0]),
        float(two.means_[high, 0]),
        float(two.covariances_.item()),
        float(two.weights_[high]),
    )


def _by_size(labels):
    """Labels renumbered by decreasing group size (ties: the group seen first)."""
    values, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))
    renumber = np.empty(len(values), dtype=np.int64)
    renumber[order] = np.arange(len(values))
    return renumber[np.searchsorted(values, labels)]
