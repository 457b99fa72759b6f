"""The Dask engine: eigenspaces and gallery search over data that does not fit one machine.

Everything here runs on whatever Dask scheduler is active: the threads of
this process by default, or a cluster once a ``distributed.Client`` exists
(``Client("tcp://scheduler:8786")``, or ``Client(LocalCluster())`` for the
cores of one machine). Nothing is gathered to the caller but the small
results: ``d x d`` scatters, ``k x d`` components, ``m x k`` neighbour lists.

Reached through ``Eigenspace(backend="dask")`` / ``Eigenspace().fit(dask_array)``
and ``NearestNeighbor().fit(dask_gallery)``. The engine returns plain results
(a :class:`~eigenvision._linalg.Spectrum`, merged neighbour lists) and imports
no estimator: the estimators call it. :func:`read_npy_shards` turns
``.npy`` files on a shared file system into a gallery without reading them.
Needs the ``dask`` extra: ``pip install "eigenvision[dask]"``.
"""

from __future__ import annotations

from functools import partial, reduce
from pathlib import Path

import numpy as np

from ._errors import EigenvisionError, refuse_complex
from ._linalg import Spectrum, check_magnitude, scatter_spectrum, shifted_moments
from .imageset import ImageSet

__all__ = ["spectrum", "kneighbors_sharded", "read_npy_shards", "as_row_chunked", "shared"]

_FAN_IN = 8  # partial results combined per task in the tree reductions


def import_dask():
    try:
        import dask
        import dask.array as da
    except ImportError as error:  # pragma: no cover - exercised without the extra
        raise ImportError("the Dask backend needs dask: pip install 'eigenvision[dask]'") from error
    return dask, da


def shared(*objects):
    """Objects every task reads (a model), sent to the workers once.

    With an active ``distributed`` client they are scattered to every worker
    (a model of a few MB embedded in the task graph would travel with it, and
    the scheduler warns about large graphs); without one, ``dask.delayed``
    wraps them so the graph holds each once.

    Parameters
    ----------
    *objects
        Anything picklable.

    Returns
    -------
    list
        Futures or delayed objects, to pass to delayed tasks in their place.
    """
    dask, _ = import_dask()
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):  # no distributed, or no client: the local scheduler
        return [dask.delayed(one) for one in objects]
    return [client.scatter(one, broadcast=True) for one in objects]


def as_row_chunked(X, chunk_rows="auto"):
    """A 2-D Dask array of float32/float64 rows, one chunk across the features.

    Parameters
    ----------
    X : (n, d) or (n, H, W) Dask array, ndarray or ImageSet
    chunk_rows : int or "auto"
        Rows per chunk when ``X`` is converted from memory.

    Returns
    -------
    X : (n, d) dask.array.Array
    image_shape : (H, W) tuple or None
    """
    _, da = import_dask()
    if isinstance(X, ImageSet):
        X = X.images
    if not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X), chunks=(chunk_rows,) + (-1,) * (np.ndim(X) - 1))
    if any(np.isnan(size) for size in X.shape):
        raise ValueError(
            "the Dask array has unknown chunk sizes; call X.compute_chunk_sizes() first"
        )
    image_shape = None
    if X.ndim == 3:
        image_shape = tuple(int(s) for s in X.shape[1:])
        X = X.rechunk({1: -1, 2: -1}).reshape(X.shape[0], -1)
    if X.ndim != 2:
        raise ValueError(f"X must be (n, d) or (n, H, W), got a {X.ndim}-d Dask array")
    _check_dense_numbers(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1}), image_shape


def _check_dense_numbers(X):
    """Refuse Dask arrays a fit cannot use as they are: sparse, complex, not numbers, empty."""
    if type(getattr(X, "_meta", None)).__module__.split(".")[0] in ("scipy", "sparse", "cupyx"):
        raise TypeError(
            "the Dask array holds sparse chunks, but dense data is required: "
            "X.map_blocks(lambda block: block.toarray()) converts it"
        )
    refuse_complex(X, "X")
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"X of dtype {X.dtype} holds no numbers the fit can use: pass a numeric Dask array "
            "(X.astype(float))"
        )
    if X.shape[1] == 0:
        raise ValueError(f"X has 0 features per sample (shape {X.shape}); at least 1 is needed")


def _tree_reduce(parts, combine):
    """Combine delayed partial results ``_FAN_IN`` at a time until one is left."""
    dask, _ = import_dask()
    while len(parts) > 1:
        parts = [
            dask.delayed(reduce)(combine, parts[i : i + _FAN_IN])
            for i in range(0, len(parts), _FAN_IN)
        ]
    return parts[0]


# --------------------------------------------------------------- eigenspaces
# Overflow is let through here: check_magnitude refuses such data once the pass is done.
def _block_moments(block, shift):
    with np.errstate(over="ignore", invalid="ignore"):
        return (*shifted_moments(block, shift), float(np.abs(block).max(initial=0.0)))


def _add_moments(a, b):
    with np.errstate(over="ignore", invalid="ignore"):
        return a[0] + b[0], a[1] + b[1], np.add(a[2], b[2], dtype=np.float64), max(a[3], b[3])


def spectrum(X, *, solver, center, k, seed=0) -> Spectrum:
    """The spectrum of a row-chunked Dask array, reduced where its chunks live.

    Solvers: ``"covariance"`` accumulates the count, sum and scatter of
    ``X - x_0`` blockwise (:func:`~eigenvision._linalg.shifted_moments`,
    float64) in a tree reduction and solves the ``d x d`` eigenproblem on
    the caller: exactly a batch fit's subspace. ``"svd"``: Dask's tsqr SVD of
    the centred data (Benson, Gleich & Demmel 2013), exact, for any ``d``
    whose ``d x d`` triangular factors fit a worker. ``"randomized"``: Dask's
    ``svd_compressed`` (Halko et al. 2011; 7 QR-orthonormalised power
    iterations, 10 extra samples), approximate.

    Parameters
    ----------
    X : (n, d) dask.array.Array
        From :func:`as_row_chunked`.
    solver : {"covariance", "svd", "randomized"}
    center : bool
    k : int
        Directions needed.
    seed : int, default 0
        ``"randomized"`` only.

    Returns
    -------
    Spectrum
    """
    dask, da = import_dask()
    if solver not in ("covariance", "svd", "randomized"):
        raise ValueError(
            f"solver={solver!r} is not available with the Dask backend; use 'covariance' "
            "(exact), 'svd' (tsqr, exact, also for wide data) or 'randomized'"
        )
    n, d = (int(s) for s in X.shape)
    dtype = np.dtype(X.dtype)
    if solver == "covariance":
        shift = X[0].compute().astype(np.float64) if center else np.zeros(d)
        shift_task = dask.delayed(shift)
        parts = [dask.delayed(_block_moments)(block, shift_task) for block in X.to_delayed()[:, 0]]
        count, shifted_sum, scatter, largest = _tree_reduce(parts, _add_moments).compute()
        _check_finite(shifted_sum)
        check_magnitude(largest, dtype, (n, d))
        return scatter_spectrum(
            count, shift, shifted_sum, scatter, center=center, k=k, solver="dask-covariance"
        )
    # one pass: the mean, a NaN check and the largest value
    column_sums, largest = dask.compute(X.sum(axis=0, dtype=np.float64), abs(X).max())
    _check_finite(column_sums)
    check_magnitude(float(largest), dtype, (n, d))
    mean = column_sums / n if center else np.zeros(d)
    centred = X - mean.astype(dtype)
    total_ss = (centred.astype(np.float64) ** 2).sum()
    if solver == "svd":
        if n < d:  # wide data: dask's SVD transposes, which needs one chunk down the rows
            centred = centred.rechunk({0: -1, 1: "auto"})
        _, singular, vt = da.linalg.svd(centred)
    else:
        rank = min(int(k) + 10, min(n, d))
        # QR between power iterations: plain powers overflow float32 (s_1^15 > 3e38)
        _, singular, vt = da.linalg.svd_compressed(
            centred, rank, iterator="QR", n_power_iter=7, seed=seed, compute=False
        )
    singular, vt, total_ss = dask.compute(singular, vt, total_ss)
    return Spectrum(singular.astype(np.float64), vt, float(total_ss), mean, n, f"dask-{solver}")


def _check_finite(values):
    if not np.all(np.isfinite(values)):
        raise ValueError("X contains NaN or infinite values; clean or impute them first")


# ------------------------------------------------------------ gallery search
def _shard_top_k(probes, shard, k, start, search):
    distances, indices = search(probes, np.asarray(shard), k)
    return distances, indices + start


def _merge_top_k(a, b, k):
    """The ``k`` best of two exact neighbour lists (ties broken by index, as in memory)."""
    distances = np.hstack([a[0], b[0]])
    indices = np.hstack([a[1], b[1]])
    order = np.lexsort((indices, distances), axis=1)[:, :k]
    return np.take_along_axis(distances, order, axis=1), np.take_along_axis(indices, order, axis=1)


def kneighbors_sharded(probes, gallery, k, search):
    """Exact k nearest gallery rows of each probe, the gallery a row-chunked Dask array.

    Each chunk (shard) is searched where it lives by ``search`` (the
    in-memory exact search of :class:`~eigenvision.NearestNeighbor`) for its
    own ``k`` best; the lists are merged in a tree of tasks. The global ``k``
    best are among the shards' ``k`` best, so the result is the in-memory
    search's, ties broken by the lower index.

    Parameters
    ----------
    probes : (m, q) ndarray
        Sent to every shard; keep ``m`` to what a worker holds (batch larger
        probe sets).
    gallery : (n, q) Dask array
    k : int, 1 <= k <= n
    search : callable
        ``search(probes, shard, k) -> (distances, indices)``, exact, ties to
        the lower index; a module-level function (it travels to the workers).

    Returns
    -------
    distances : (m, k) ndarray of float64, Euclidean
    indices : (m, k) ndarray of int64, rows of the whole gallery
    """
    dask, _ = import_dask()
    probes = np.atleast_2d(np.asarray(probes))
    gallery, _ = as_row_chunked(gallery)
    n, q = (int(s) for s in gallery.shape)
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must lie in [1, gallery size {n}]")
    if probes.ndim != 2 or probes.shape[1] != q:
        raise ValueError(f"probes have shape {probes.shape}; the gallery rows have {q} dimensions")
    probes_task = dask.delayed(probes)
    starts = np.concatenate([[0], np.cumsum(gallery.chunks[0])])
    parts = [
        dask.delayed(_shard_top_k)(probes_task, block, min(k, size), int(start), search)
        for block, start, size in zip(
            gallery.to_delayed()[:, 0], starts[:-1], gallery.chunks[0], strict=True
        )
        if size > 0
    ]
    return _tree_reduce(parts, partial(_merge_top_k, k=k)).compute()


_HEADER_READERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}


def _load_shard(path):
    return np.load(path, mmap_mode="r", allow_pickle=False)


def read_npy_shards(paths):
    """A lazy gallery from ``.npy`` files, one chunk per file, in the order given.

    Only the headers are read here (shapes and dtypes checked to agree);
    each worker memory-maps its file when it searches it, so the files must
    be reachable at the same paths from every worker (a shared file system).

    Parameters
    ----------
    paths : sequence of str or Path
        ``.npy`` files of float32/float64 codes, each ``(n_i, q)``.

    Returns
    -------
    (sum n_i, q) dask.array.Array
    """
    dask, da = import_dask()
    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError("no shard files given")
    shards = []
    for path in paths:
        try:
            with open(path, "rb") as handle:
                version = np.lib.format.read_magic(handle)
                read_header = _HEADER_READERS.get(version)
                if read_header is None:
                    raise ValueError(f"unsupported .npy format version {version}")
                shape, _, dtype = read_header(handle)
        except (OSError, ValueError) as error:
            raise EigenvisionError(f"{path} is not a readable .npy file: {error}") from error
        if len(shape) != 2 or dtype not in (np.float32, np.float64):
            raise EigenvisionError(
                f"{path} holds a {dtype} array of shape {shape}; shards must be 2-D float32 or "
                "float64 codes"
            )
        if shards and shape[1] != shards[0].shape[1]:
            raise EigenvisionError(
                f"{path} has {shape[1]} columns, {paths[0]} has {shards[0].shape[1]}"
            )
        shards.append(da.from_delayed(dask.delayed(_load_shard)(str(path)), shape, dtype=dtype))
    return da.concatenate(shards)
