"""Eigenspaces of more images than memory holds: batches streamed in, or a Dask array.

:class:`OutOfCoreMixin` holds :class:`~eigenvision.Eigenspace`'s fits that
never hold the data at once: :meth:`~OutOfCoreMixin.partial_fit` and
:meth:`~OutOfCoreMixin.fit_stream` keep the count, sum and scatter of what
they have seen (an incremental SVD, Ross, Lim, Lin & Yang 2008, beyond
``max_scatter_features``), and a Dask array is reduced where it lives by
:mod:`eigenvision.dask_engine`. Each ends in the same
:class:`~eigenvision._linalg.Spectrum` as the in-memory fit.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils.validation import validate_data

from . import dask_engine
from ._base import flatten_images, is_dask_array
from ._base import progress as show_progress
from ._linalg import (
    IncrementalSVD,
    Spectrum,
    check_magnitude,
    components_to_solve,
    scatter_spectrum,
    shifted_moments,
)
from ._spec import check_params

__all__ = ["OutOfCoreMixin"]


class OutOfCoreMixin:
    """Streaming and Dask fits of :class:`~eigenvision.Eigenspace` (the in-memory fit's
    checks and attributes, other solvers for the data).

    Reads the eigenspace's parameters and its ``_set_spectrum`` and
    ``_requested_components``.
    """

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
