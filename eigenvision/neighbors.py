"""Nearest-neighbour search over codes, and the distances recognition uses.

:class:`NearestNeighbor` is the exact k-nearest-neighbour search of a gallery
(in memory, or sharded on Dask); :func:`cell_kneighbors` the approximate one of
a large set against itself, for neighbour graphs. :data:`METRICS` is the one
table of distances between codes: a metric turns codes into vectors whose
Euclidean distance it is a function of, so one exact Euclidean search serves
them all. A new metric is one entry there.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.utils import check_array

from . import dask_engine
from ._base import check_fitted, is_dask_array
from ._errors import refuse_complex
from ._parallel import n_threads, single_threaded_blas
from ._spec import Param, check_params
from .eigenspace import Eigenspace
from .imageset import as_image_set

__all__ = [
    "NearestNeighbor",
    "Metric",
    "METRICS",
    "check_metric",
    "squared_distances",
    "nearest_subspace",
    "cell_kneighbors",
]


@dataclass(frozen=True)
class Metric:
    """A distance between codes, computed as a Euclidean distance between encoded codes.

    Attributes
    ----------
    name : str
    description : str
        One line for menus and ``--help``.
    encode : callable
        ``encode(codes, space) -> codes``: ``(n, k)`` codes of ``space`` to
        the vectors the Euclidean search compares.
    from_euclidean : callable
        ``from_euclidean(distance) -> distance``: the metric's value from the
        Euclidean distance between encoded codes (monotone increasing).
    needs_variances : bool
        Whether ``encode`` reads ``space.explained_variance_`` (eigenspaces).
    """

    name: str
    description: str
    encode: Callable
    from_euclidean: Callable
    needs_variances: bool = False


def _unit_rows(codes, space):
    norms = np.linalg.norm(codes, axis=1, keepdims=True)
    return codes / np.where(norms == 0, 1, norms)


def _whitened(codes, space):
    return codes / np.sqrt(space.explained_variance_).astype(codes.dtype)


def _identity(values, space=None):
    return values


#: The distances between codes, by name.
METRICS = {
    "euclidean": Metric("euclidean", "Euclidean distance between codes", _identity, _identity),
    "cosine": Metric(
        "cosine",
        "1 - cos of the angle between codes",
        _unit_rows,
        lambda distance: distance**2 / 2,  # unit vectors: ||a - b||^2 / 2 = 1 - cos
    ),
    "mahalanobis": Metric(
        "mahalanobis",
        "Euclidean distance between whitened codes (eigenspaces only)",
        _whitened,
        _identity,
        needs_variances=True,
    ),
}


def check_metric(name) -> Metric:
    """The :class:`Metric` called ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`METRICS`.

    Returns
    -------
    Metric

    Examples
    --------
    >>> check_metric("cosine").from_euclidean(2.0)
    2.0
    """
    if name not in METRICS:
        raise ValueError(f"metric must be one of {tuple(METRICS)}, got {name!r}")
    return METRICS[name]


class NearestNeighbor(BaseEstimator):
    """Exact k-nearest-neighbour search over a gallery of codes, in bounded memory.

    :meth:`fit` centres the gallery on its mean (so norms are of the order of
    the distances and the expansion below loses little to cancellation) and
    stores the rows ``[-2 g, ||g||^2]``. For a block of probes ``[p, 1]`` and
    a chunk of the gallery, one BLAS product gives ``||g||^2 - 2 p.g`` (the
    per-probe ``||p||^2`` does not change the ranking). Each probe keeps its
    ``k + 2`` best entries so far; the first chunk's ``k + 2``-th smallest
    score (a value-only partition) is the starting bound, and every chunk
    costs one comparison pass against the bounds: only the few entries below
    them are merged, all rows at once, by one stable sort by (row, score)
    keys. Blocks of probes run on parallel threads (BLAS single-threaded
    inside each), the way a compiled k-selection would use the cores.
    Finally the candidates are re-ranked by distances computed directly in
    float64 from the data as given, and the answer is proven exact: the
    round-off bound of the fast scores must show that no entry left out can
    be nearer than the k-th; probes where it cannot (near-ties) are searched
    again with more candidates. Equal distances go to the lower gallery index.

    Parameters
    ----------
    chunk_size : int, default 1024
        Gallery entries compared at once.
    probe_block : int, default 512
        Probes compared at once. Memory is ``O(n_jobs * probe_block *
        chunk_size)``, whatever the gallery size.
    n_jobs : int or None, default None
        Threads searching probe blocks in parallel; ``None`` uses every core
        this process may run on, ``1`` searches in the calling thread.

    Attributes
    ----------
    raw_gallery_ : (n, q) ndarray
        The gallery as given (the same object, not a copy).
    n_features_in_ : int
        ``q``.
    offset_ : (q,) ndarray
        The gallery mean, subtracted before the expansion.
    scaled_gallery_ : (n, q + 1) ndarray
        ``[-2 (g - offset_), ||g - offset_||^2]``.
    max_centred_norm_ : float
        ``max ||g - offset_||``, for the round-off bound.
    scale_ : float
        1, or, for codes whose squares would overflow or underflow (1e200),
        a power of two near their largest magnitude: the search then runs on
        ``g / scale_`` (exactly) and the distances are multiplied back.
    """

    _MARGIN = 2
    _PARALLEL_SCORES = 1 << 23

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "chunk_size": Param("int", 1),
        "probe_block": Param("int", 1),
        "n_jobs": Param("int", 1, optional=True, also=(-1,)),
    }

    def __init__(self, *, chunk_size: int = 1024, probe_block: int = 512, n_jobs=None):
        self.chunk_size = chunk_size
        self.probe_block = probe_block
        self.n_jobs = n_jobs

    def __repr__(self) -> str:
        return (
            f"NearestNeighbor(chunk_size={self.chunk_size}, probe_block={self.probe_block}, "
            f"n_jobs={self.n_jobs})"
        )

    def fit(self, gallery: np.ndarray, y=None) -> NearestNeighbor:
        """Index ``gallery`` (n, q).

        A Dask array is kept where it lives, chunked by rows (each chunk a
        shard): :meth:`kneighbors` then searches the shards in parallel on
        the active Dask scheduler and merges their lists exactly
        (:func:`eigenvision.dask_engine.kneighbors_sharded`).

        Parameters
        ----------
        gallery : (n, q) ndarray or dask.array.Array
            Codes of the enrolled items, float32 or float64 (others become float64).
        y : ignored
            Present so that the index fits in a scikit-learn pipeline.

        Returns
        -------
        self
        """
        check_params(self)
        if is_dask_array(gallery):
            self.raw_gallery_, _ = dask_engine.as_row_chunked(gallery)
            self.offset_ = self.scaled_gallery_ = None
            self.n_features_in_ = int(self.raw_gallery_.shape[1])
            return self
        if np.shape(gallery)[:1] == (0,):
            raise ValueError("the gallery is empty; enrol at least one image")
        # (n, q) float rows, as given where they are (scikit-learn's messages otherwise)
        gallery = check_array(gallery, dtype=[np.float64, np.float32], ensure_all_finite=False)
        if not np.isfinite(gallery).all():
            rows = np.flatnonzero(~np.isfinite(gallery).all(axis=1))
            raise ValueError(
                f"the gallery holds NaN or infinite values in {len(rows)} row(s) (first: "
                f"{rows[0]}); a non-finite entry would be everyone's nearest neighbour: drop or "
                "recompute it"
            )
        self.raw_gallery_ = gallery
        self.n_features_in_ = gallery.shape[1]
        self.scale_ = _power_of_two_scale(gallery)
        unit = gallery if self.scale_ == 1.0 else gallery * gallery.dtype.type(1 / self.scale_)
        self.offset_ = unit.mean(axis=0, dtype=np.float64).astype(gallery.dtype)
        centred = unit - self.offset_
        squared_norms = np.einsum("ij,ij->i", centred, centred)
        # [-2 g, ||g||^2] so that [p, 1] . row = ||g||^2 - 2 p.g in one product.
        self.scaled_gallery_ = np.hstack([-2 * centred, squared_norms[:, None]])
        self.max_centred_norm_ = float(
            np.sqrt(np.einsum("ij,ij->i", centred, centred, dtype=np.float64).max())
        )
        return self

    def kneighbors(self, probes: np.ndarray, k: int):
        """Return ``(distances, indices)``, each ``(m, k)``, nearest first.

        Parameters
        ----------
        probes : (m, q) ndarray
        k : int, 1 <= k <= n

        Returns
        -------
        distances : (m, k) ndarray of float64, Euclidean (not squared)
        indices : (m, k) ndarray of int64
        """
        check_fitted(self, "scaled_gallery_")
        if self.scaled_gallery_ is None:
            return dask_engine.kneighbors_sharded(probes, self.raw_gallery_, k, _shard_search)
        n, q = self.raw_gallery_.shape
        probes = np.atleast_2d(probes)
        refuse_complex(probes, "the probes")
        if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= n:
            raise ValueError(f"k={k!r} must be an int in [1, gallery size {n}]")
        if probes.ndim != 2 or probes.shape[1] != q:
            raise ValueError(f"probes have shape {probes.shape}, the gallery {q} dimensions")
        if not np.isfinite(probes).all():
            raise ValueError("the probes hold NaN or infinite values; drop or recompute them")
        if self.scale_ != 1.0:  # huge or tiny codes (rare): the search runs at magnitude 1
            if probes.dtype.kind != "f":
                probes = probes.astype(np.float64)
            with np.errstate(over="ignore"):
                unit = probes * probes.dtype.type(1 / self.scale_)
            if not np.isfinite(unit).all():
                raise ValueError(
                    f"the probes reach {np.abs(probes).max():.3g}, beyond what the gallery's "
                    f"scale ({self.scale_:.3g}) can measure: rescale probes and gallery alike"
                )
            probes = unit
        m = len(probes)
        # Threads pay off from about 10M scores (measured: slower at 8M and below, 1.2-1.3x at
        # 1000 probes x 10^4, 1.1-1.2x at 50-100M); below, their start-up dominates.
        threads = n_threads(self.n_jobs)
        workers = min(threads, m) if m * n >= self._PARALLEL_SCORES else 1
        blocks = np.array_split(probes, max(-(-m // self.probe_block), workers))
        if workers == 1:
            results = [self._block_kneighbors(block, k) for block in blocks]
        else:
            with single_threaded_blas(), ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(lambda block: self._block_kneighbors(block, k), blocks))
        return tuple(np.vstack(parts) for parts in zip(*results, strict=True))

    def _block_kneighbors(self, probes, k):
        """:meth:`kneighbors` of one block of probes (one thread's work).

        The candidates' distances are computed again in float64 from the data
        as given, and a probe's answer is accepted only when the round-off
        bound of the fast scores proves that no entry left out can be nearer
        than its k-th (:meth:`_round_off_bound`); the few that are not
        proven (near-ties at the k-th) are searched again with four times the
        candidates, until proven or every entry is a candidate.
        """
        n = len(self.raw_gallery_)
        distances = np.empty((len(probes), k))
        indices = np.empty((len(probes), k), dtype=np.int64)
        pending, keep = np.arange(len(probes)), min(k + self._MARGIN, n)
        while pending.size:
            block = probes[pending]
            candidates, bounds = self._candidates(block, keep)
            diff = self.raw_gallery_[candidates].astype(np.float64)
            if self.scale_ != 1.0:
                diff *= 1 / self.scale_
            diff -= block[:, None, :]
            squared = np.einsum("ijk,ijk->ij", diff, diff)
            order = np.lexsort((candidates, squared), axis=1)[:, :k]
            squared, found = (np.take_along_axis(a, order, axis=1) for a in (squared, candidates))
            if keep == n:
                proven = np.ones(len(pending), dtype=bool)
            else:
                # Scores are ||p - g||^2 - ||p - offset||^2; every entry left out scored >= bound.
                centred_norms = np.sum((block - self.offset_.astype(np.float64)) ** 2, axis=1)
                kth_score = squared[:, -1] - centred_norms
                slack = 1e-12 * (squared[:, -1] + centred_norms)  # float64 round-off, generously
                proven = kth_score + slack < bounds - self._round_off_bound(centred_norms)
            distances[pending[proven]] = np.sqrt(squared[proven]) * self.scale_
            indices[pending[proven]] = found[proven]
            pending, keep = pending[~proven], min(4 * keep, n)
        return distances, indices

    def _round_off_bound(self, centred_norms):
        """Largest possible error of a probe's fast scores (float64, one per probe).

        A score is a dot product of length ``K = q + 1`` of rounded data, so
        ``|error| <= gamma_K sum_i |a_i b_i| <= gamma_K (2 ||p|| G + G^2)``
        (Higham 2002, eq. 3.5, any summation order) with ``G`` the largest
        centred gallery norm; the factor 4 and ``K + 2`` cover the rounding of
        the centred data and of the stored squared norms.
        """
        unit = np.finfo(self.scaled_gallery_.dtype).eps / 2
        terms = self.scaled_gallery_.shape[1] + 2
        largest = self.max_centred_norm_
        return 4 * terms * unit * (2 * np.sqrt(centred_norms) * largest + largest**2)

    def _candidates(self, probes, keep):
        """Indices of the ``keep`` smallest ``||g||^2 - 2 p.g`` for each probe (unordered), and
        each probe's ``keep``-th smallest score: every entry left out scored at least that."""
        gallery = self.scaled_gallery_
        m, n = len(probes), len(gallery)
        augmented = np.ones((m, gallery.shape[1]), dtype=gallery.dtype)
        augmented[:, :-1] = probes - self.offset_
        chunk = max(self.chunk_size, keep)
        best_d = np.full((m, keep), np.inf, dtype=gallery.dtype)
        best_i = np.zeros((m, keep), dtype=np.int64)
        bound = None
        # One score and one mask buffer for every chunk (fresh ones cost page faults).
        score_buffer = np.empty((m, min(chunk, n)), dtype=gallery.dtype)
        mask_buffer = np.empty(score_buffer.shape, dtype=bool)
        for start in range(0, n, chunk):
            part = gallery[start : start + chunk]
            scores = np.matmul(augmented, part.T, out=score_buffer[:, : len(part)])
            if bound is None:  # the first chunk's keep-th smallest: >= keep entries reach it
                bound = np.nextafter(np.partition(scores, keep - 1, axis=1)[:, keep - 1], np.inf)
            below = np.less(scores, bound[:, None], out=mask_buffer[:, : len(part)])
            hits = np.flatnonzero(below)
            if hits.size == 0:
                continue
            hit_rows, hit_cols = np.divmod(hits, scores.shape[1])
            counts = np.bincount(hit_rows, minlength=m)
            rows = np.flatnonzero(counts)
            # Merge each hit row's list with its hits: one stable sort by (row, score) keeps
            # the current entries (lower indices) first among equal scores.
            counts = counts[rows] + keep
            merged_rows = np.concatenate([np.repeat(rows, keep), hit_rows])
            merged_d = np.concatenate([best_d[rows].ravel(), scores.ravel()[hits]])
            merged_i = np.concatenate([best_i[rows].ravel(), hit_cols + start])
            order = _row_value_order(merged_rows, merged_d)
            take = order[(np.cumsum(counts) - counts)[:, None] + np.arange(keep)]
            best_d[rows], best_i[rows] = merged_d[take], merged_i[take]
            bound[rows] = best_d[rows, -1]
        return best_i, best_d[:, -1].astype(np.float64)


def _power_of_two_scale(values):
    """1, or the power of two nearest the largest magnitude of ``values`` where their squares
    would overflow or underflow the dtype (scaling by it is exact)."""
    largest = float(np.abs(values).max(initial=0.0))
    info = np.finfo(values.dtype)
    if largest == 0.0 or float(info.tiny) ** 0.25 < largest < float(info.max) ** 0.25:
        return 1.0
    return float(2.0 ** np.round(np.log2(largest)))


def _row_value_order(rows, values):
    """Stable order of entries by ``rows`` (< 2**31), then ``values``.

    Float32 values take one sort of uint64 keys (much faster than
    ``lexsort``): float32 bits read as unsigned integers sort like the floats
    once negative numbers have all their bits flipped and positive ones their
    sign bit. Float64 values keep ``lexsort``.
    """
    if values.dtype != np.float32:
        return np.lexsort((values, rows))
    bits = values.view(np.uint32)
    flip = (bits.view(np.int32) >> 31).view(np.uint32) | np.uint32(0x80000000)
    keys = (rows.astype(np.uint64) << np.uint64(32)) | (bits ^ flip)
    return np.argsort(keys, kind="stable")


def _shard_search(probes, shard, k):
    """The exact in-memory search of one shard (what the Dask engine runs on each worker)."""
    return NearestNeighbor(n_jobs=1).fit(shard).kneighbors(probes, k)


def cell_kneighbors(codes, k, *, probes=8, seed=0):
    """Each row's ``k`` nearest rows of the same set, searched only in nearby cells.

    An inverted file (Sivic & Zisserman 2003; Jégou, Douze & Schmid 2011):
    the rows are split into ``sqrt(n)`` cells by k-means (fitted on a sample
    of the rows), and the rows of each cell are searched exactly
    (:class:`NearestNeighbor`) among the members of the ``probes`` cells
    whose centres are nearest its own. Time grows as ``n^1.5`` and memory as
    ``n k``, where the exact search of a set against itself grows as
    ``n^2``; a row whose true neighbour sits in a cell not probed gets the
    next one instead (``tests/test_neighbors.py`` measures the recall against the exact search).

    Parameters
    ----------
    codes : (n, d) ndarray
    k : int
        Neighbours of each row, the row itself among them (as
        ``NearestNeighbor().fit(codes).kneighbors(codes, k)``).
    probes : int, default 8
        Cells searched for each row, its own first.
    seed : int, default 0
        The k-means sample and start.

    Returns
    -------
    distances : (n, k) ndarray
        Euclidean, ascending along each row.
    indices : (n, k) int ndarray

    References
    ----------
    J. Sivic and A. Zisserman (2003), Video Google: a text retrieval approach
    to object matching in videos, ICCV. H. Jégou, M. Douze and C. Schmid
    (2011), Product quantization for nearest neighbor search, IEEE TPAMI 33(1).
    """
    codes = np.asarray(codes, dtype=np.float64)
    n = len(codes)
    k = int(k)
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, {n}], got {k}")
    cells = max(1, int(np.sqrt(n)))
    rng = np.random.default_rng(seed)
    sample = codes[rng.choice(n, size=min(n, 30 * cells), replace=False)]
    centres = KMeans(cells, n_init=1, max_iter=10, random_state=seed).fit(sample).cluster_centers_
    index = NearestNeighbor().fit(centres)
    cell = index.kneighbors(codes, 1)[1][:, 0]
    nearby = index.kneighbors(centres, min(probes, cells))[1]
    order = np.argsort(cell, kind="stable")
    bounds = np.searchsorted(cell[order], np.arange(cells + 1))
    distances, indices = np.empty((n, k)), np.empty((n, k), dtype=np.int64)
    short = []  # rows whose nearby cells hold fewer than k rows: searched against all
    for own in range(cells):
        rows = order[bounds[own] : bounds[own + 1]]
        if not len(rows):
            continue
        candidates = np.concatenate([order[bounds[c] : bounds[c + 1]] for c in nearby[own]])
        if len(candidates) < k:
            short.append(rows)
            continue
        found, at = NearestNeighbor(n_jobs=1).fit(codes[candidates]).kneighbors(codes[rows], k)
        distances[rows], indices[rows] = found, candidates[at]
    if short:
        rows = np.concatenate(short)
        distances[rows], indices[rows] = NearestNeighbor().fit(codes).kneighbors(codes[rows], k)
    return distances, indices


def squared_distances(a, b):
    """``||a_i - b_j||^2`` of every pair of rows, in float64 (the Gram expansion, clipped at 0).

    For all-pairs tables (verification protocols, score normalisation); the
    exact k-nearest search is :class:`NearestNeighbor`.

    Parameters
    ----------
    a : (m, q) array-like
    b : (n, q) array-like

    Returns
    -------
    (m, n) ndarray
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms_a, norms_b = np.einsum("ij,ij->i", a, a), np.einsum("ij,ij->i", b, b)
    return np.maximum(norms_a[:, None] + norms_b - 2 * (a @ b.T), 0.0)


def nearest_subspace(train, images, n_components):
    """The per-class eigenspace classifier: each image goes to the class that reconstructs it best.

    One :class:`Eigenspace` per class of ``train``; an image's label is the
    class with the smallest distance from feature space (DFFS). The
    lecture's "assign to the class whose eigenspace reconstructs best"
    (CLAFIC, Watanabe 1967).

    Parameters
    ----------
    train : ImageSet
        Labelled training images.
    images : (m, H, W) ndarray or ImageSet
    n_components : int
        Components per class (at most the class size minus one).

    Returns
    -------
    labels : (m,) ndarray
    dffs : (m, n_classes) ndarray
        Columns in the order of ``np.unique(train.labels)``.
    """
    stack = as_image_set(images, None, min_images=0).images
    classes = np.unique(train.labels)
    dffs = np.empty((len(stack), len(classes)))
    flat = stack.reshape(len(stack), -1)
    for j, label in enumerate(classes):
        members = train.images[train.labels == label]
        if len(members) < 2:
            raise ValueError(
                f"class {label!r} has {len(members)} image; each class needs two or more"
            )
        dffs[:, j] = Eigenspace(min(n_components, len(members) - 1)).fit(members).dffs(flat)
    return classes[np.argmin(dffs, axis=1)], dffs
