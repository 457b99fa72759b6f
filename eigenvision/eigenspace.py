"""Eigenspaces (PCA): fit, project, reconstruct, and the distances from and in feature space.

The model follows Turk & Pentland (1991) for eigenfaces and Moghaddam &
Pentland (1997) for the distances from and in feature space and the
likelihood that combines them. Beyond memory, :meth:`Eigenspace.partial_fit`
and :meth:`Eigenspace.fit_stream` keep the count, sum and scatter of what
they have seen (an incremental SVD, Ross, Lim, Lin & Yang 2008, beyond
``max_scatter_features``), and a Dask array is reduced where it lives by
:mod:`eigenvision.dask_engine`; each ends in the same
:class:`~eigenvision._linalg.Spectrum` as the in-memory fit.
"""

from __future__ import annotations

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import validate_data

from . import dask_engine
from ._base import SubspaceModel, check_fitted, flatten_images, is_dask_array
from ._base import progress as show_progress
from ._errors import EigenvisionError
from ._linalg import (
    SOLVERS,
    IncrementalSVD,
    Spectrum,
    check_magnitude,
    components_to_solve,
    numerical_rank,
    scatter_spectrum,
    shifted_moments,
    sign_flip,
    working_precision,
)
from ._linalg import solve as solve_spectrum
from ._spec import INPUT_STATE, Param, State, check_params

__all__ = ["Eigenspace", "eigenspace_within_rank"]

_SOLVERS = ("auto", *SOLVERS)


class Eigenspace(SubspaceModel):
    """Principal component subspace of images or flattened data.

    Parameters
    ----------
    n_components : int, float or None, default None
        Components kept: an int ``k`` with ``1 <= k <= min(n, d)``; a float in
        ``(0, 1)``, the smallest ``k`` whose components explain that fraction
        of the variance; or None, every component of non-zero variance: the
        numerical rank of the (centred) data, at most ``min(n, d)``: singular
        values above ``s_1 sqrt(max(n, d) eps)``, what a solver that squares the
        data resolves, with ``eps`` of float64 (float32 data's scatter is then
        formed in float64; ``solver="svd"`` resolves down to numpy's
        ``matrix_rank`` bound ``s_1 max(n, d) eps``). Directions without variance (the ``n``-th of
        ``n`` centred samples, always-blank pixels) carry no information and
        would divide by zero in whitening, DIFS and the likelihood.
    center : bool, default True
        Subtract the mean. ``center=False`` is the uncentred SVD of latent
        semantic analysis (``mean_`` is then zero).
    whiten : bool, default False
        :meth:`transform` divides each component by ``sqrt(eigenvalue)``.
    solver : {"auto", "svd", "gram", "covariance", "randomized"}, default "auto"
        ``"svd"``: thin SVD of the centred data. ``"gram"``: eigenvectors of
        the ``n x n`` Gram matrix, accumulated in float64 (the snapshot method
        of Turk & Pentland, fastest when ``n < d``). ``"covariance"``: eigh of
        the ``d x d`` scatter matrix (formed in the data's dtype, decomposed
        in float64; fastest when ``d < n``). Both exact eigensolvers compute
        only the top ``k`` eigenpairs with ARPACK when the matrix is larger
        than 512 and ``k`` below a quarter of it. ``"randomized"``: Halko et al.'s randomized SVD
        (scikit-learn's ``randomized_svd``, 7 power iterations, 10 extra
        samples), approximate. ``"auto"``: ``"gram"`` when ``n <= d``,
        ``"covariance"`` otherwise.
    seed : int, default 0
        Seed of the randomized solver.
    backend : {"auto", "numpy", "dask"}, default "auto"
        ``"dask"`` fits with :mod:`eigenvision.dask_engine` (on the current
        ``distributed.Client`` if there is one), converting in-memory input to
        a Dask array chunked by rows; ``"auto"`` does so when ``X`` is a Dask
        array. Dask solvers: ``"covariance"`` (the scatter as a Dask
        reduction; exact), ``"svd"`` (tsqr; exact), ``"randomized"``
        (``svd_compressed``; approximate); ``"auto"`` picks ``"covariance"``
        up to ``max_scatter_features`` features and ``"svd"`` above.

    Attributes
    ----------
    mean_ : (d,) ndarray
    components_ : (k, d) ndarray
        Orthonormal rows, the eigenvectors ("eigenfaces"), largest first. The
        largest-magnitude entry of each row is positive.
    eigenvalues_ : (m,) ndarray
        Variances along every principal axis the solver produced (``m >=
        k``; all ``min(n, d)`` unless only the top ``k`` were computed, by
        ARPACK or the randomized solver), singular values squared over ``n - 1``
        (``/ n`` when ``center=False``). The discarded variance is known in
        every case from the total (``noise_variance_``).
    singular_values_ : (k,) ndarray
        The kept components' singular values (scikit-learn's shape).
    explained_variance_ : (k,) ndarray
        The kept components' variances (a property; see below).
    explained_variance_ratio_ : (k,) ndarray
        Each kept component's share of the total variance.
    noise_variance_ : float
        ``rho``, the mean of the discarded eigenvalues, over ``min(n, d) - k``
        of them (Moghaddam & Pentland 1997; scikit-learn's estimate).
    total_variance_ : float
    n_components_, n_features_in_, n_samples_ : int
    image_shape_ : (H, W) or None
        Set when fitted on an image stack; ``components_`` reshape to it.

    Notes
    -----
    For a sample ``x`` with codes ``z = V (x - m)``:
    ``dffs(x) = ||x - m - V^T z||^2`` (residual, distance from feature space),
    ``difs(x) = sum_i z_i^2 / lambda_i`` (Mahalanobis distance in feature
    space), and :meth:`score_samples` the Gaussian log-likelihood
    ``-(difs + dffs / rho + sum_i log lambda_i + (d - k) log rho
    + d log 2 pi) / 2``, which equals the probabilistic PCA likelihood with
    noise variance ``rho`` (Tipping & Bishop 1999).

    References
    ----------
    M. Turk and A. Pentland (1991), Eigenfaces for recognition, J. Cogn.
    Neurosci. 3(1). B. Moghaddam and A. Pentland (1997), Probabilistic visual
    learning for object representation, IEEE TPAMI 19(7).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]])
    >>> space = Eigenspace(n_components=1).fit(X)
    >>> space.components_.round(4)
    array([[0.7071, 0.7071]])
    >>> space.transform([[3.0, 1.0]]).round(4), space.dffs([[3.0, 1.0]]).round(4)
    (array([[0.]]), array([2.]))
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, optional=True, fraction=True),
        "center": Param("bool"),
        "whiten": Param("bool"),
        "solver": Param("choice", choices=_SOLVERS),
        "seed": Param("int", 0, 2**32 - 1, optional=True),
        "backend": Param("choice", choices=("auto", "numpy", "dask")),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        **INPUT_STATE,
        "mean_": State(shape=("d",)),
        "components_": State(shape=("k", "d")),
        "eigenvalues_": State(shape=("*",), low=0),
        "singular_values_": State(shape=("k",), low=0),
        "total_variance_": State("real", low=0),
        "explained_variance_ratio_": State(shape=("k",), low=0),
        "noise_variance_": State("real", low=0),
        "n_components_": State("int", dim="k"),
        "n_samples_": State("int", low=1),
        "solver_": State("str"),
    }

    def __init__(
        self,
        n_components=None,
        *,
        center=True,
        whiten=False,
        solver="auto",
        seed=0,
        backend="auto",
    ):
        self.n_components = n_components
        self.center = center
        self.whiten = whiten
        self.solver = solver
        self.seed = seed
        self.backend = backend

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Fit the eigenspace.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : ignored

        Returns
        -------
        self
        """
        check_params(self)
        self._stream = None  # a later partial_fit starts a new stream
        if self._use_dask(X):
            return self._fit_dask(X)
        X = self._validate_fit(X)
        n, d = X.shape
        k_request = self._requested_components(min(n, d))
        solver = self._choose_solver(n, d)
        k_solve = components_to_solve(k_request, solver, min(n, d))
        check_magnitude(float(np.abs(X).max(initial=0.0)), X.dtype, X.shape)
        mean = X.mean(axis=0, dtype=np.float64) if self.center else np.zeros(d)
        # the rank is decided on what the solver resolves: a float32 scatter would hide
        # directions whose variance is below about 1e-5 of the largest
        solved = X.astype(np.float64) if self.n_components is None and solver == "covariance" else X
        spectrum = solve_spectrum(solved, mean, solver, k_solve, self.seed)
        return self._set_spectrum(spectrum, d, k_request, X.dtype, precision=solved.dtype)

    def _set_spectrum(self, spectrum: Spectrum, d, k_request, dtype, precision=None):
        """Fitted attributes from any solver's :class:`~eigenvision._linalg.Spectrum`."""
        n = spectrum.n_samples
        ddof = 1 if self.center else 0
        max_components = min(n, d)
        if not spectrum.total_ss > 0.0:
            raise EigenvisionError(
                f"X has zero variance: all {n} samples are identical"
                + ("" if self.center else " zeros")
                + "; an eigenspace needs varied samples"
            )
        eigenvalues = spectrum.singular**2 / (n - ddof)
        total_variance = spectrum.total_ss / (n - ddof)
        if isinstance(k_request, float):
            ratio = np.cumsum(eigenvalues) / total_variance
            k = int(np.searchsorted(ratio, k_request - 1e-12) + 1)
            k = min(k, len(eigenvalues))
        elif self.n_components is None:
            precision = working_precision(spectrum.solver, precision or dtype)
            k = max(1, min(k_request, numerical_rank(spectrum.singular, n, d, precision)))
        else:
            k = k_request
        kept = eigenvalues[:k]
        n_discarded = max_components - k
        tail = max(total_variance - float(kept.sum()), 0.0)
        self.mean_ = spectrum.mean.astype(dtype)
        self.components_ = sign_flip(spectrum.components[:k]).astype(dtype, copy=False)
        self.eigenvalues_ = eigenvalues
        self.singular_values_ = spectrum.singular[:k]
        self.total_variance_ = total_variance
        self.explained_variance_ratio_ = kept / total_variance
        self.noise_variance_ = tail / n_discarded if n_discarded > 0 else 0.0
        self.n_components_ = k
        self.n_samples_ = n
        self.solver_ = spectrum.solver
        return self

    def _requested_components(self, max_components: int):
        value = self.n_components
        if value is None:
            return max_components
        if isinstance(value, Integral) and not isinstance(value, bool):
            if not 1 <= value <= max_components:
                raise ValueError(
                    f"n_components={value} is out of range: it must lie in [1, {max_components}] "
                    f"= [1, min(n_samples, n_features)]"
                )
            return int(value)
        if isinstance(value, Real) and 0.0 < value < 1.0:
            return float(value)
        raise ValueError(
            f"n_components must be an int >= 1, a variance fraction in (0, 1) or None, "
            f"got {value!r}"
        )

    def _use_dask(self, X) -> bool:
        if self.backend == "auto":
            return is_dask_array(X)
        return self.backend == "dask"

    def _choose_solver(self, n: int, d: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "gram" if n <= d else "covariance"

    # ------------------------------------------------------------ projections
    def _fit_dask(self, X):
        """Fit on a Dask array: the engine reduces the data where it lives to a Spectrum."""
        check_params(self)
        if not is_dask_array(X):  # data in memory: the checks of the NumPy backend first
            X = self._validate_fit(X)
            check_magnitude(float(np.abs(X).max(initial=0.0)), X.dtype, X.shape)
            if self.image_shape_ is not None:
                X = X.reshape(-1, *self.image_shape_)
        X, image_shape = dask_engine.as_row_chunked(X)
        n, d = (int(s) for s in X.shape)
        if n < 2:
            raise ValueError(f"an eigenspace needs at least 2 samples, got {n}")
        solver = self.solver
        if solver == "auto":
            solver = "covariance" if d <= self.max_scatter_features else "svd"
        k_request = self._requested_components(min(n, d))
        k_solve = components_to_solve(k_request, solver, min(n, d))
        spectrum = dask_engine.spectrum(
            X, solver=solver, center=self.center, k=k_solve, seed=self.seed
        )
        self.n_features_in_ = d
        self.image_shape_ = image_shape
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self._set_spectrum(spectrum, d, k_request, np.dtype(X.dtype))

    def partial_fit(self, X, y=None):
        """Add a batch to a streaming fit and update the eigenspace.

        Keeps the count, the sum and the scatter of everything seen so far
        (float64, ``d x d``) and re-solves the eigenproblem after each batch:
        exactly the subspace a batch fit of all the data gives. Solving costs
        one eigendecomposition of ``d x d`` per call; :meth:`fit_stream`
        solves once at the end.

        Parameters
        ----------
        X : (b, d) ndarray, (b, H, W) image stack or ImageSet
        y : ignored

        Returns
        -------
        self
        """
        self._accumulate(X)
        return self._solve_stream()

    def fit_stream(self, batches, *, progress=False):
        """Fit from an iterable of batches, holding one batch and the ``d x d`` scatter at a time.

        Parameters
        ----------
        batches : iterable of (b, d) ndarrays or (b, H, W) image stacks
            E.g. :func:`eigenvision.io.iter_image_batches` over a folder,
            slices of a ``numpy.memmap``, or a generator.
        progress : bool, default False
            A progress bar of the batches on stderr (when it is a terminal).

        Returns
        -------
        self

        Notes
        -----
        The scatter of each batch is formed in the batch's dtype around a
        fixed shift (the first image), so float32 batches use float32 BLAS,
        and summed in float64: the same subspace as :meth:`fit` up to
        float32 round-off (float64 batches: to 1e-10 radians).

        Above ``max_scatter_features`` (10,000 features: an 800 MB scatter)
        the fit is an incremental SVD (Ross et al. 2008) that keeps
        ``n_components + max(n_components, incremental_extra_rank)`` (100)
        directions: exact while the data's rank fits in them, approximate
        beyond (the user guide's page on scale gives its angle to the batch
        fit); ``solver_`` is then ``"incremental-svd"``. It needs an int
        ``n_components``. Exact alternatives for such data: :meth:`fit` in
        memory or the Dask backend's tsqr.
        """
        self._stream = None
        seen = 0
        for batch in show_progress(batches, desc="batches", enabled=progress):
            seen += self._accumulate(batch)
        if seen == 0:
            raise ValueError("fit_stream got no batches; give it at least one non-empty batch")
        return self._solve_stream()

    max_scatter_features = 10_000

    incremental_extra_rank = 100

    def _accumulate(self, X) -> int:
        state = getattr(self, "_stream", None)
        first = state is None
        if first:
            check_params(self)
        X, image_shape = flatten_images(X)
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], reset=first, ensure_min_samples=1
        )
        d = X.shape[1]
        if first:
            state = self._stream = {"n": 0, "dtype": X.dtype, "image_shape": image_shape}
            if d <= self.max_scatter_features:
                shift = X[0].astype(np.float64) if self.center else np.zeros(d)
                state.update(shift=shift, sum=np.zeros(d), scatter=np.zeros((d, d), order="F"))
            else:
                state.update(incremental=IncrementalSVD(self._incremental_rank(d), self.center))
        elif image_shape is not None and state["image_shape"] not in (None, image_shape):
            raise ValueError(f"batch images are {image_shape}, earlier ones {state['image_shape']}")
        if "incremental" in state:
            state["incremental"].update(X)
        else:
            _, batch_sum, batch_scatter = shifted_moments(X, state["shift"])
            state["sum"] += batch_sum
            state["scatter"] += batch_scatter
        state["n"] += len(X)
        if X.dtype == np.float64:
            state["dtype"] = np.dtype(np.float64)
        return len(X)

    def _incremental_rank(self, d):
        k = self.n_components
        if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
            raise ValueError(
                f"streaming {d} features (above max_scatter_features={self.max_scatter_features}) "
                f"uses an incremental SVD, which needs an int n_components, got {k!r}"
            )
        return int(k) + max(int(k), self.incremental_extra_rank)

    def _solve_stream(self):
        state = self._stream
        self.image_shape_ = state["image_shape"]
        d = self.n_features_in_
        if "incremental" in state:
            tracker = state["incremental"]
            if self.center and tracker.n < 2:
                raise ValueError("an eigenspace needs at least 2 samples; stream more images")
            spectrum = Spectrum(
                tracker.singular,
                tracker.components,
                tracker.total_ss,
                tracker.mean,
                tracker.n,
                "incremental-svd",
            )
            return self._set_spectrum(
                spectrum, d, self._requested_components(min(tracker.n, d)), state["dtype"]
            )
        n = state["n"]
        if self.center and n < 2:
            raise ValueError("an eigenspace needs at least 2 samples; stream more images")
        k_request = self._requested_components(min(n, d))
        k_solve = components_to_solve(k_request, "stream", min(n, d))
        spectrum = scatter_spectrum(
            n,
            state["shift"],
            state["sum"],
            state["scatter"],
            center=self.center,
            k=k_solve,
            solver="stream",
        )
        return self._set_spectrum(spectrum, d, k_request, state["dtype"])

    @property
    def explained_variance_(self):
        """The kept components' variances ``eigenvalues_[:n_components_]``, shape ``(k,)``.

        scikit-learn's name. Floored at ``eps * eigenvalues_[0]``, so that
        whitening, DIFS and the likelihood stay finite for components asked
        for beyond the data's rank.
        """
        check_fitted(self)
        # Relative floor: a component asked for beyond the data's rank has variance ~0, and
        # dividing by the smallest double (2e-308) gave 1e138 codes and -4e280 likelihoods.
        floor = max(float(self.eigenvalues_[0]), np.finfo(float).tiny) * np.finfo(float).eps
        return np.maximum(self.eigenvalues_[: self.n_components_], floor)

    def log_likelihood(self, difs, dffs):
        """The Moghaddam-Pentland log-likelihood from DIFS and DFFS values (any shape).

        Parameters
        ----------
        difs, dffs : ndarray
            Distances in and from feature space of the same samples or windows.

        Returns
        -------
        ndarray of float64
            ``-(difs + dffs / rho + sum log lambda_i + (d - k) log rho + d log 2 pi) / 2``
            with ``rho = noise_variance_`` (floored at ``1e-12 lambda_1``).
        """
        eigen = self.explained_variance_.astype(np.float64)
        rho = max(self.noise_variance_, 1e-12 * float(eigen[0]))
        d, k = self.n_features_in_, self.n_components_
        log_det = np.sum(np.log(eigen)) + (d - k) * np.log(rho)
        return -0.5 * (difs + dffs / rho + log_det + d * np.log(2 * np.pi))

    def transform(self, X):
        """Project onto the components: ``z = V (x - m)``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        Z : (n, k) ndarray
            Divided by ``sqrt(eigenvalues_)`` when ``whiten=True``.
        """
        Z = self._project(X)[1]
        if self.whiten:
            Z = Z / np.sqrt(self.explained_variance_).astype(Z.dtype)
        return Z

    def inverse_transform(self, Z):
        """Map codes back to pixel space: ``x_hat = m + V^T z``.

        Parameters
        ----------
        Z : (n, k) ndarray

        Returns
        -------
        X_hat : (n, d) ndarray
        """
        check_fitted(self)
        Z = np.asarray(Z)
        if Z.dtype not in (np.float32, np.float64):
            Z = Z.astype(np.float64)
        if Z.ndim != 2 or Z.shape[1] != self.n_components_:
            raise ValueError(
                f"Z must have shape (n, {self.n_components_}), got {Z.shape}; "
                "pass codes from transform()"
            )
        if not np.all(np.isfinite(Z)):
            raise ValueError("Z holds NaN or infinite codes; pass codes from transform()")
        if self.whiten:
            Z = Z * np.sqrt(self.explained_variance_).astype(Z.dtype)
        return Z @ self.components_ + self.mean_

    def reconstruct(self, X):
        """Project and map back: the closest point of the eigenspace, in the input's shape.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        ndarray
            ``m + V^T V (x - m)`` in ``X``'s shape.
        """
        _, image_shape = flatten_images(X)
        X_hat = self.inverse_transform(self.transform(X))
        return X_hat if image_shape is None else X_hat.reshape((-1, *image_shape))

    def dffs(self, X):
        """Distance from feature space: the squared residual ``||x - x_hat||^2``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n,) ndarray, >= 0 and 0 for points of the eigenspace.
        """
        return self._residual_energy(*self._project(X))

    def _residual_energy(self, centred, Z):
        """:meth:`dffs` of rows centred and projected by a caller that made them (unchecked:
        the finder's cascade, whose input checks cost more than the arithmetic)."""
        residual = centred - Z @ self.components_
        return np.einsum("ij,ij->i", residual, residual)

    def difs(self, X):
        """Distance in feature space: ``sum_i z_i^2 / lambda_i`` (Mahalanobis).

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n,) ndarray
        """
        Z = self._project(X)[1]
        return np.einsum("ij,ij->i", Z, Z / self.explained_variance_.astype(Z.dtype))

    def score_samples(self, X):
        """Log-likelihood of each sample under the Moghaddam-Pentland density.

        ``log p(x) = -(difs + dffs / rho + sum log lambda_i + (d - k) log rho
        + d log 2 pi) / 2`` with ``rho = noise_variance_`` (floored at
        ``1e-12 * lambda_1`` when every component is kept).

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n,) ndarray of float64
        """
        centred, Z = self._project(X)
        residual = centred - Z @ self.components_
        dffs = np.einsum("ij,ij->i", residual, residual)
        Z = Z.astype(np.float64)
        difs = np.einsum("ij,ij->i", Z, Z / self.explained_variance_)
        return self.log_likelihood(difs, dffs)

    def score(self, X, y=None):
        """Mean log-likelihood of the samples.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack
        y : ignored

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def leading(self, k):
        """The eigenspace of the first ``k`` components, as ``Eigenspace(k)`` fits the same data.

        PCA's components are nested: the first ``k`` of a larger fit are the
        ``k``-component fit (exactly for the exact solvers, to round-off;
        the randomized solver's best estimate of them). ``noise_variance_``
        is recomputed over the components now discarded. A cheaper model of
        the same data, e.g. for a first, coarse search.

        Parameters
        ----------
        k : int
            ``1 <= k <= n_components_``.

        Returns
        -------
        Eigenspace
            A new fitted eigenspace; this one is unchanged.

        Examples
        --------
        >>> X = np.array([[0.0, 0.0, 1.0], [2.0, 2.0, 0.0], [4.0, 4.0, 2.0], [1.0, 0.0, 0.0]])
        >>> Eigenspace(2).fit(X).leading(1).n_components_
        1
        """
        check_fitted(self)
        if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= self.n_components_:
            raise ValueError(
                f"k must be an int in [1, {self.n_components_}] (the components "
                f"this eigenspace has), got {k!r}"
            )
        k = int(k)
        space = copy.copy(self)
        if getattr(self, "_stream", None) is not None:  # partial_fit goes on in each on its own
            space._stream = copy.deepcopy(self._stream)
        space.n_components = k
        space.n_components_ = k
        space.mean_ = self.mean_.copy()
        space.eigenvalues_ = self.eigenvalues_.copy()
        for name in ("components_", "singular_values_", "explained_variance_ratio_"):
            setattr(space, name, getattr(self, name)[:k].copy())
        n_discarded = min(self.n_samples_, self.n_features_in_) - k
        tail = max(self.total_variance_ - float(self.eigenvalues_[:k].sum()), 0.0)
        space.noise_variance_ = tail / n_discarded if n_discarded > 0 else 0.0
        return space

    @property
    def eigenimages_(self):
        """``components_`` as images ``(k, H, W)`` (needs a fit on an image stack)."""
        check_fitted(self)
        if self.image_shape_ is None:
            raise ValueError("fitted on flattened data: there is no image shape to view with")
        return self.components_.reshape((-1, *self.image_shape_))

    @property
    def mean_image_(self):
        """``mean_`` as an ``(H, W)`` image."""
        check_fitted(self)
        if self.image_shape_ is None:
            raise ValueError("fitted on flattened data: there is no image shape to view with")
        return self.mean_.reshape(self.image_shape_)

    def _check_relations(self):
        """A loaded eigenspace's members agree (:func:`~eigenvision._spec.check_model`)."""
        k = self.n_components_
        if len(self.eigenvalues_) < k:
            raise ValueError(
                f"Eigenspace.eigenvalues_ must hold at least its {k} components' values"
            )


def eigenspace_within_rank(X, most: int, *, whiten: bool = False) -> Eigenspace:
    """The PCA step of a model: at most ``most`` components, and none beyond the data's rank.

    Directions without variance (pixels constant in every image, the
    ``n``-th of ``n`` centred samples) would make the covariances a model
    learns in the step singular. The rank is :class:`Eigenspace`'s own
    (``n_components=None``), so a model and an eigenspace of the same data
    agree on it.

    Parameters
    ----------
    X : (n, d) ndarray
        Validated data.
    most : int
        The most components wanted.
    whiten : bool, default False

    Returns
    -------
    Eigenspace
        Fitted, ``min(most, rank)`` components.
    """
    space = Eigenspace(whiten=whiten).fit(X)
    return space if space.n_components_ <= most else space.leading(most)
