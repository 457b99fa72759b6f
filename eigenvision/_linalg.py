"""Eigen-solvers of the package: every fit of an eigenspace ends in one :class:`Spectrum`.

The solvers (Gram matrix, covariance, SVD, randomized SVD), the top-``k``
symmetric eigensolver, the shifted moments and scatter that streaming and
the Dask engine accumulate, the incremental SVD of Ross et al. (2008), the
generalized symmetric eigenproblem of Fisherfaces and the sign rule that
makes them deterministic. Nothing here knows about estimators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, eigsh
from sklearn.utils.extmath import randomized_svd

__all__ = [
    "Spectrum",
    "solve",
    "components_to_solve",
    "scatter_spectrum",
    "top_eigh",
    "shifted_moments",
    "symmetric_scatter",
    "IncrementalSVD",
    "generalized_eigh",
    "numerical_rank",
    "working_precision",
    "sign_flip",
    "SOLVERS",
]

#: The in-memory solvers :func:`solve` knows.
SOLVERS = ("svd", "gram", "covariance", "randomized")


@dataclass(frozen=True)
class Spectrum:
    """What every eigenspace solver returns: singular values and directions of centred data.

    Attributes
    ----------
    singular : (m,) ndarray of float64
        Singular values of the centred data, largest first (``m`` may be
        fewer than ``min(n, d)`` when only the top ones were computed).
    components : (r, d) ndarray
        Unit directions, at least as many as the caller asked for.
    total_ss : float
        The total sum of squares of the centred data (the trace of the scatter).
    mean : (d,) ndarray of float64
        The mean subtracted (zeros without centring).
    n_samples : int
    solver : str
        Which solver produced it.
    """

    singular: np.ndarray
    components: np.ndarray
    total_ss: float
    mean: np.ndarray
    n_samples: int
    solver: str


def solve(X, mean, solver, k, seed=0) -> Spectrum:
    """The spectrum of ``X - mean`` by one of :data:`SOLVERS`.

    Parameters
    ----------
    X : (n, d) ndarray of float32 or float64
    mean : (d,) ndarray of float64
    solver : {"svd", "gram", "covariance", "randomized"}
    k : int
        Directions needed (``"svd"`` gives all of them).
    seed : int, default 0
        ``"randomized"`` only.

    Returns
    -------
    Spectrum

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]])
    >>> spectrum = solve(X, X.mean(axis=0), "gram", 1)
    >>> spectrum.singular.round(4)[:1], spectrum.total_ss
    (array([4.]), 16.0)
    """
    if solver == "gram":
        singular, components, total_ss = _gram_solver(X, mean, k)
    elif solver == "covariance":
        singular, components, total_ss = _covariance_solver(X, mean, k)
    elif solver == "svd":
        singular, components, total_ss = _svd_solver(X, mean)
    elif solver == "randomized":
        singular, components, total_ss = _randomized_solver(X, mean, k, seed)
    else:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    return Spectrum(
        singular.astype(np.float64),
        components,
        float(total_ss),
        np.asarray(mean, dtype=np.float64),
        len(X),
        solver,
    )


def scatter_spectrum(n, shift, shifted_sum, shifted_upper, *, center, k, solver) -> Spectrum:
    """The spectrum from the count, sum and upper-triangle scatter of ``X - shift``: exact.

    Parameters
    ----------
    n : int
    shift : (d,) ndarray of float64
    shifted_sum : (d,) ndarray of float64
    shifted_upper : (d, d) ndarray
        Summed :func:`shifted_moments` scatters (upper triangle).
    center : bool
    k : int
        Directions needed.
    solver : str
        The name recorded in the spectrum.

    Returns
    -------
    Spectrum
    """
    d = len(shift)
    scatter = symmetric_scatter(n, shifted_sum, shifted_upper, center)
    mean = shift + shifted_sum / n if center else np.zeros(d)
    values, vectors = top_eigh(scatter, k)
    singular = np.sqrt(np.clip(values, 0.0, None))
    return Spectrum(singular, vectors.T, float(np.trace(scatter)), mean, int(n), solver)


def _gram_solver(X, mean, k):
    """Snapshot method: eigenvectors of the n x n Gram matrix (Turk & Pentland 1991).

    The Gram matrix is accumulated in float64. Its eigenvalues carry an
    absolute error of about ``eps * lambda_1``, so singular values below
    ``sqrt(n eps) s_1`` are round-off: their directions are treated as null
    space. Components whose singular value is below ``1e-4 s_1`` are
    re-orthonormalised against the leading ones, where the division by a
    small singular value amplifies round-off.
    """
    centred64 = X.astype(np.float64)
    centred64 -= mean
    gram = centred64 @ centred64.T  # symmetric rank-k update in float64
    total_ss = float(np.trace(gram))
    if total_ss == 0.0:  # identical samples: no direction to find (the caller says so)
        return np.zeros(k), np.zeros((k, X.shape[1]), dtype=X.dtype), 0.0
    values, vectors = top_eigh(gram, k)
    singular = np.sqrt(np.clip(values, 0.0, None))
    resolution = singular[0] * np.sqrt(len(X) * np.finfo(np.float64).eps) * 10
    usable = max(1, min(k, int(np.sum(singular > resolution))))
    singular[usable:] = np.where(singular[usable:] > resolution, singular[usable:], 0.0)
    work = centred64 if X.dtype == np.float64 else centred64.astype(X.dtype)
    components = (vectors[:, :usable].T.astype(work.dtype) @ work) / singular[:usable, None]
    well_conditioned = max(1, int(np.sum(singular[:usable] > 1e-4 * singular[0])))
    if well_conditioned < k:
        components = _orthonormal_tail(components, well_conditioned, k)
    return singular, components, total_ss


def _covariance_solver(X, mean, k):
    """Eigenvectors of the d x d scatter matrix.

    The scatter is formed in the data's dtype after centring (float32 data:
    a float32 product, twice as fast, relative accuracy about 1e-6 on the
    leading eigenpairs) and decomposed in float64.
    """
    centred = X - mean.astype(X.dtype)
    scatter = (centred.T @ centred).astype(np.float64, copy=False)
    values, vectors = top_eigh(scatter, k)
    return np.sqrt(np.clip(values, 0.0, None)), vectors.T, float(np.trace(scatter))


def top_eigh(matrix, k):
    """At least the ``k`` largest eigenpairs of a symmetric matrix, largest first.

    The dense path returns all of them (the solvers keep the whole spectrum
    for ``eigenvalues_``); slice ``[:k]`` where exactly ``k`` are wanted.

    LAPACK's divide and conquer (all eigenpairs) is fastest for small
    matrices or large ``k``; otherwise ARPACK's Lanczos iteration on the
    formed matrix, run to machine precision (``tol=0``) from a fixed start
    vector, is several times faster than LAPACK's subset drivers at the
    same accuracy. Only the
    top ``k`` eigenvalues come back from ARPACK.

    Parameters
    ----------
    matrix : (m, m) ndarray of float64
        Symmetric.
    k : int

    Returns
    -------
    values : (r,) ndarray
        ``r >= k`` eigenvalues, largest first.
    vectors : (m, r) ndarray
        The matching unit eigenvectors as columns.
    """
    size = len(matrix)
    if not np.any(matrix):  # ARPACK fails on a zero matrix ("starting vector is zero")
        return np.zeros(size), np.eye(size)
    if size <= 512 or 4 * k >= size:
        # numpy's eigh (LAPACK syevd; the matrix is float64 already) rather than scipy's:
        # scipy's copy of OpenBLAS spends far longer waking threads for a small scatter
        # (the digits' 64 x 64) than numpy takes to decompose it.
        values, vectors = np.linalg.eigh(matrix)
        return values[::-1], vectors[:, ::-1]
    start = np.random.default_rng(0).normal(size=size)
    try:
        values, vectors = eigsh(matrix, k=k, which="LA", v0=start, tol=0)
    except ArpackNoConvergence:
        values, vectors = linalg.eigh(
            matrix, subset_by_index=[size - k, size - 1], driver="evx", check_finite=False
        )
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def shifted_moments(X, shift):
    """``(count, sum, scatter)`` of ``X - shift``; the sum in float64.

    The scatter is a BLAS ``syrk`` in ``X``'s dtype (float32 BLAS for float32
    data; half the work of a matrix product, 1.5x faster at ``d = 4096``)
    and only its **upper triangle** is filled: sum such scatters in float64,
    then :func:`symmetric_scatter`. Shifting by a sample near the data (the first
    image) keeps the later subtraction of ``n m m^T`` from cancelling digits.

    Parameters
    ----------
    X : (b, d) ndarray of float32 or float64
    shift : (d,) ndarray of float64

    Returns
    -------
    count : int
    sum : (d,) ndarray of float64
    scatter : (d, d) ndarray of X's dtype, Fortran order, upper triangle
    """
    centred = X - shift.astype(X.dtype)
    syrk = linalg.blas.ssyrk if centred.dtype == np.float32 else linalg.blas.dsyrk
    upper = syrk(1.0, centred.T, trans=0)  # centred.T is Fortran-ordered: no copy
    return len(X), centred.sum(axis=0, dtype=np.float64), upper


def symmetric_scatter(n, shifted_sum, shifted_upper, center=True):
    """The centred ``d x d`` scatter from summed :func:`shifted_moments`.

    ``S = U + triu(U, 1)^T - n o o^T`` with ``o = shifted_sum / n`` (the
    last term only when centring), built in place in one float64 copy of
    ``U`` (row blocks; no ``d x d`` temporaries beyond it).

    Parameters
    ----------
    n : int
        Samples summed.
    shifted_sum : (d,) ndarray of float64
    shifted_upper : (d, d) ndarray
        Upper triangle of the summed shifted scatter.
    center : bool, default True

    Returns
    -------
    (d, d) ndarray of float64
    """
    d = len(shifted_sum)
    root_n_offset = shifted_sum / np.sqrt(n)  # sqrt(n) o: a_i a_j = a_j a_i keeps S symmetric
    # One float64 copy of U; its lower triangle is overwritten by the mirror.
    scatter = np.array(shifted_upper, dtype=np.float64, order="C")
    for start in range(0, d, 256):
        rows = slice(start, start + 256)
        scatter[rows, :start] = scatter[:start, rows].T
        diagonal = scatter[rows, rows]
        diagonal[:] = np.triu(diagonal) + np.triu(diagonal, 1).T
    if center:
        for start in range(0, d, 256):
            rows = slice(start, start + 256)
            scatter[rows] -= root_n_offset[rows, None] * root_n_offset
    return scatter


class IncrementalSVD:
    """Rank-``r`` SVD of the centred data seen so far, updated batch by batch.

    The update of Ross, Lim, Lin & Yang (2008), Incremental learning for
    robust visual tracking, IJCV 77: the SVD of ``[diag(s) V; B - m_B;
    sqrt(n b / (n + b)) (m - m_B)]`` gives the SVD of all centred rows seen,
    exactly as long as their rank stays within ``r``; beyond that each update
    discards the variance below the ``r``-th singular value, so the subspace
    is approximate (measured in ``tests/test_eigenspace.py``). The mean and
    the total sum of squares are updated exactly.

    Parameters
    ----------
    rank : int
        Directions kept, ``r``.
    center : bool
        Centre on the running mean.
    """

    def __init__(self, rank: int, center: bool):
        self.rank, self.center = rank, center
        self.n, self.total_ss = 0, 0.0
        self.mean = self.singular = self.components = None

    def update(self, X):
        """Take in a batch.

        Parameters
        ----------
        X : (b, d) ndarray

        Returns
        -------
        None
            ``singular``, ``components``, ``mean``, ``total_ss`` and ``n`` are updated.
        """
        X = X.astype(np.float64)
        b = len(X)
        batch_mean = X.mean(axis=0) if self.center else np.zeros(X.shape[1])
        centred = X - batch_mean
        batch_ss = float(np.einsum("ij,ij->", centred, centred))
        if self.n == 0:
            stack, mean, total = centred, batch_mean, batch_ss
        else:
            n = self.n + b
            correction = np.sqrt(self.n * b / n) * (self.mean - batch_mean)
            stack = np.vstack([self.singular[:, None] * self.components, centred, correction])
            mean = self.mean + (b / n) * (batch_mean - self.mean)
            total = self.total_ss + batch_ss + float(correction @ correction)
        _, singular, vt = linalg.svd(stack, full_matrices=False, check_finite=False)
        r = min(self.rank, len(singular))
        self.singular, self.components = singular[:r], vt[:r]
        self.mean, self.total_ss, self.n = mean, total, self.n + b


def _svd_solver(X, mean):
    centred = X - mean.astype(X.dtype)
    _, singular, vt = linalg.svd(centred, full_matrices=False, check_finite=False)
    return singular, vt, float(np.sum(singular.astype(np.float64) ** 2))


def _randomized_solver(X, mean, k, seed):
    centred = X - mean.astype(X.dtype)
    total_ss = float(np.einsum("ij,ij->", centred, centred, dtype=np.float64))
    _, singular, vt = randomized_svd(
        centred, k, n_oversamples=10, n_iter=7, random_state=seed, flip_sign=False
    )
    return singular, vt, total_ss


def _orthonormal_tail(components, start, k):
    """Keep ``components[:start]``; make rows ``start..k`` orthonormal to them and each other.

    Rows ``start:`` that exist are kept as starting directions (their span
    order survives the QR); missing rows up to ``k`` are seeded random
    directions, a valid choice for directions of zero variance, e.g. the
    n-th component of n centred samples.
    """
    head = components[:start].astype(np.float64)
    tail = components[start:k].astype(np.float64)
    missing = k - start - len(tail)
    if missing > 0:
        rng = np.random.default_rng(0)
        tail = np.vstack([tail, rng.normal(size=(missing, components.shape[1]))])
    for _ in range(2):  # twice is enough for orthogonality to round-off
        tail -= (tail @ head.T) @ head
    q, r = linalg.qr(tail.T, mode="economic")
    q *= np.where(np.diag(r) < 0, -1.0, 1.0)
    return np.vstack([head, q.T]).astype(components.dtype)


def generalized_eigh(a, b):
    """Eigenpairs of ``a v = w b v`` (symmetric ``a``, positive definite ``b``), ascending.

    LAPACK's ``sygv`` reduction done with numpy: ``b = L L^T``, the symmetric
    ``C = L^-1 a L^-T`` is decomposed and ``v = L^-T y``. numpy rather than
    ``scipy.linalg.eigh(a, b)``: scipy carries its own OpenBLAS, whose threads
    keep spinning after a call and slow the numpy products that follow on the
    same cores (measured in ``docs/architecture.md``, "Why the fast paths").

    Parameters
    ----------
    a : (m, m) ndarray
        Symmetric.
    b : (m, m) ndarray
        Symmetric positive definite.

    Returns
    -------
    values : (m,) ndarray
        Ascending.
    vectors : (m, m) ndarray
        ``b``-orthonormal eigenvectors as columns.
    """
    lower = np.linalg.cholesky(b)
    half = np.linalg.solve(lower, a)  # L^-1 a
    reduced = np.linalg.solve(lower, half.T)  # L^-1 a L^-T (a symmetric)
    values, vectors = np.linalg.eigh((reduced + reduced.T) / 2)
    return values, np.linalg.solve(lower.T, vectors)


def working_precision(solver: str, dtype):
    """The floating-point type a solver's products ran in: the scatter solvers form float32
    data's scatter in float32; the Gram solver works in float64 whatever the data.

    Parameters
    ----------
    solver : str
        A :class:`Spectrum`'s ``solver``.
    dtype : numpy dtype
        The data's.

    Returns
    -------
    numpy dtype
    """
    scatter_solvers = ("covariance", "stream", "dask-covariance")
    return np.dtype(dtype) if solver in scatter_solvers else np.dtype(np.float64)


def numerical_rank(singular, n: int, d: int, dtype=np.float64) -> int:
    """How many singular values (largest first) stand above round-off.

    Solvers that square the data (Gram, scatter) resolve singular values
    down to about ``s_1 sqrt(eps)``; below ``s_1 sqrt(max(n, d) eps)`` a
    "component" is round-off, with ``eps`` of the precision the products ran in:
    numpy's ``matrix_rank`` bound ``s_1 max(n, d) eps`` on the squared values.

    Parameters
    ----------
    singular : (m,) ndarray
        Singular values (or anything proportional to them), largest first.
    n, d : int
        The data's shape.
    dtype : numpy dtype, default float64
        The precision the solver's products ran in (:func:`working_precision`).

    Returns
    -------
    int
    """
    singular = np.asarray(singular, dtype=np.float64)
    eps = np.finfo(dtype if np.dtype(dtype).kind == "f" else np.float64).eps
    tolerance = singular[0] * np.sqrt(max(n, d) * eps)
    return int(np.sum(singular > tolerance))


def sign_flip(components: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of every row positive (scikit-learn's ``svd_flip`` rule).

    Deterministic output whatever sign the solver returned.

    Parameters
    ----------
    components : (k, d) ndarray

    Returns
    -------
    (k, d) ndarray
        The rows, some negated; same dtype.

    Examples
    --------
    >>> sign_flip(np.array([[1.0, -3.0], [2.0, 1.0]]))
    array([[-1.,  3.],
           [ 2.,  1.]])
    """
    if components.size == 0:
        return components
    pivots = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(len(components)), pivots])
    signs[signs == 0] = 1
    return components * signs[:, None].astype(components.dtype)


def check_magnitude(largest: float, dtype, shape, name: str = "X") -> None:
    """Refuse data whose variances overflow (or whose non-zero variances vanish in) its dtype.

    The eigenvalues are variances, of the order of the squared values: data
    reaching 1e200 has eigenvalues near 1e400, which float64 cannot hold.

    Parameters
    ----------
    largest : float
        The largest absolute value of the data.
    dtype : numpy dtype
        The data's floating dtype.
    shape : (n, d) tuple
        The data's shape.
    name : str, default "X"
        How the message names the data.

    Raises
    ------
    ValueError
        Naming the value reached and the fix (rescale).
    """
    info = np.finfo(dtype)
    # the scatter sums n squares of up to d products: keep it finite with room to spare
    high = np.sqrt(float(info.max) / (4.0 * shape[0] * shape[1]))
    low = np.sqrt(float(info.tiny)) * 2**26
    if largest > high or 0.0 < largest < low:
        raise ValueError(
            f"{name} reaches {largest:.3g}: its variances, near 1e{2 * np.log10(largest):.0f}, "
            f"cannot be held in {np.dtype(dtype)}; rescale the data (e.g. divide by its largest "
            "value)"
            + (": the principal directions do not change with the scale" if name == "X" else "")
        )


def components_to_solve(k_request, solver, max_components):
    """The eigenpairs a solver computes: all of them when a variance fraction picks ``k`` after.

    Parameters
    ----------
    k_request : int or float
        The components asked for, or a variance fraction in (0, 1).
    solver : str
    max_components : int
        ``min(n_samples, n_features)``.

    Returns
    -------
    int
    """
    if not isinstance(k_request, float):
        return k_request
    if solver == "randomized":
        raise ValueError(
            "solver='randomized' cannot choose n_components by a variance fraction; "
            "pass an int or use an exact solver"
        )
    return max_components
