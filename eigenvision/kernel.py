"""Kernel PCA with RBF, polynomial and linear kernels, exact or by Nystroem."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from ._base import SubspaceModel, check_fitted
from ._linalg import sign_flip, top_eigh
from ._spec import INPUT_STATE, Param, State
from .eigenspace import Eigenspace

__all__ = ["KernelPCA"]

_KERNELS = ("rbf", "poly", "linear")


class KernelPCA(SubspaceModel):
    """Kernel PCA: PCA in the feature space of a kernel, through the n x n kernel matrix.

    The centred kernel matrix ``K~ = (I - 1/n) K (I - 1/n)`` has
    eigenpairs ``(lambda_j, a_j)``; a point ``x`` projects to
    ``z_j = sum_i a_ji k~(x, x_i) / sqrt(lambda_j)``, so training points get
    ``sqrt(lambda_j) a_j`` (the lecture notes' projection of new points). With
    ``n_landmarks = m`` the kernel is approximated by Nystroem's method:
    ``phi(x) = k(x, L) K_LL^{-1/2}`` for ``m`` landmarks ``L`` drawn with
    ``seed``, followed by linear PCA of ``phi``; cost ``O(n m^2)`` instead of
    ``O(n^3)``.

    Parameters
    ----------
    n_components : int, optional
        Components kept (default: all with positive eigenvalue).
    kernel : {"rbf", "poly", "linear"}, default "rbf"
        ``exp(-gamma ||x - y||^2)``, ``(gamma x.y + coef0)^degree``, ``x.y``.
    gamma : float, optional
        Default ``1 / d``.
    degree : int, default 3
    coef0 : float, default 1.0
    n_landmarks : int, optional
        Use the Nystroem approximation with this many landmark points.
    seed : int, default 0

    Attributes
    ----------
    eigenvalues_ : (k,) ndarray
        Eigenvalues of the centred kernel matrix (of the Nystroem features'
        scatter with ``n_landmarks``).
    dual_coef_ : (n, k) ndarray
        ``a_j / sqrt(lambda_j)`` (exact kernel only).
    landmarks_ : (m, d) ndarray
        The Nystroem landmarks (only with ``n_landmarks``).

    References
    ----------
    B. Schoelkopf, A. Smola and K.-R. Mueller (1998), Nonlinear component
    analysis as a kernel eigenvalue problem, Neural Comput. 10(5).
    C. Williams and M. Seeger (2001), Using the Nystroem method to speed up
    kernel machines, NIPS 13.
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, optional=True),
        "kernel": Param("choice", choices=_KERNELS),
        "gamma": Param("real", 0, open_low=True, optional=True),
        "degree": Param("int", 1, 100),
        "coef0": Param("real"),
        "n_landmarks": Param("int", 1, optional=True),
        "seed": Param("int", 0, 2**32 - 1, optional=True),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`): the exact fit keeps ``X_fit_`` and
    #: its dual coefficients, the Nyström fit (``n_landmarks``) its landmarks and ``space_``.
    _state = {
        **INPUT_STATE,
        "gamma_": State("real", low=0),
        "eigenvalues_": State(shape=("k",), low=0),
        "n_components_": State("int", dim="k"),
        "components_": State(shape=("k", "*")),
        "X_fit_": State(shape=("n", "d"), optional=True),
        "dual_coef_": State(shape=("n", "k"), optional=True),
        "row_means_": State(shape=("n",), optional=True),
        "total_mean_": State("real", optional=True),
        "landmarks_": State(shape=("l", "d"), optional=True),
        "feature_map_": State(shape=("l", "*"), optional=True),
        "space_": State("model", optional=True),
    }

    def __init__(
        self,
        n_components=None,
        *,
        kernel="rbf",
        gamma=None,
        degree=3,
        coef0=1.0,
        n_landmarks=None,
        seed=0,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_landmarks = n_landmarks
        self.seed = seed

    def _kernel(self, A, B):
        if self.kernel == "rbf":
            return rbf_kernel(A, B, gamma=self.gamma_)
        if self.kernel == "poly":
            return polynomial_kernel(A, B, degree=self.degree, gamma=self.gamma_, coef0=self.coef0)
        return linear_kernel(A, B)

    def fit(self, X, y=None):
        """Fit on ``(n, d)`` data or an ``(n, H, W)`` stack.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : ignored

        Returns
        -------
        self
        """
        X = self._validate_fit(X).astype(np.float64)
        n = len(X)
        if self.kernel not in _KERNELS:
            raise ValueError(f"kernel must be one of {_KERNELS}, got {self.kernel!r}")
        self.gamma_ = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        if self.n_landmarks is not None:
            return self._fit_nystroem(X)
        K = self._kernel(X, X)
        row_means = K.mean(axis=0)
        total_mean = row_means.mean()
        centred = K - row_means[:, None] - row_means[None, :] + total_mean
        k = self._n_kept(n)
        values, vectors = top_eigh(centred, k)
        values, vectors = values[:k], vectors[:, :k]
        positive = values > values[0] * 1e-12 if values[0] > 0 else np.zeros(len(values), bool)
        if not positive.any():
            raise ValueError("the centred kernel matrix is zero; change gamma or the kernel")
        values, vectors = values[positive], sign_flip(vectors[:, positive].T).T
        _say_dropped(self.n_components, len(values), "the centred kernel matrix has")
        self.X_fit_ = X
        self.eigenvalues_ = values
        self.dual_coef_ = vectors / np.sqrt(values)
        self.row_means_, self.total_mean_ = row_means, total_mean
        self.n_components_ = len(values)
        self.components_ = self.dual_coef_.T  # so the shared helpers see a fitted model
        return self

    def _n_kept(self, n):
        if self.n_components is None:
            return n
        k = int(self.n_components)
        if not 1 <= k <= n:
            raise ValueError(f"n_components={self.n_components} must lie in [1, n_samples={n}]")
        return k

    def _fit_nystroem(self, X):
        n = len(X)
        m = int(self.n_landmarks)
        if not 1 <= m <= n:
            raise ValueError(f"n_landmarks={m} must lie in [1, n_samples={n}]")
        rng = np.random.default_rng(self.seed)
        landmarks = X[np.sort(rng.choice(n, size=m, replace=False))]
        values, vectors = linalg.eigh(self._kernel(landmarks, landmarks), check_finite=False)
        keep = values > values.max() * 1e-10
        self.landmarks_ = landmarks
        self.feature_map_ = vectors[:, keep] / np.sqrt(values[keep])
        features = self.nystroem_features(X)
        k = min(self._n_kept(n), features.shape[1])
        _say_dropped(self.n_components, k, "the landmarks' kernel has")
        self.space_ = Eigenspace(k).fit(features)
        self.eigenvalues_ = self.space_.eigenvalues_[:k] * (n - 1)
        self.n_components_ = k
        self.components_ = self.space_.components_
        return self

    def nystroem_features(self, X):
        """Nyström's feature map ``phi(x) = k(x, L) K_LL^-1/2`` of ``(n, d)`` rows (fitted
        with ``n_landmarks``): ``phi(x) . phi(y)`` approximates ``k(x, y)``.

        The ``(n, m)`` kernel is made a block of rows at a time, never whole.

        Parameters
        ----------
        X : (n, d) ndarray
            Float64 rows.

        Returns
        -------
        (n, r) ndarray
            ``r <= m``: the landmarks' kernel's directions of positive eigenvalue.
        """
        features = np.empty((len(X), self.feature_map_.shape[1]))
        for start in range(0, len(X), _KERNEL_ROWS):
            block = slice(start, start + _KERNEL_ROWS)
            features[block] = self._kernel(X[block], self.landmarks_) @ self.feature_map_
        return features

    def transform(self, X):
        """Project ``(n, d)`` data or an ``(n, H, W)`` stack: returns ``(n, k)``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n, k) ndarray
        """
        check_fitted(self)
        X = self._validate_transform(X)
        dtype, X = X.dtype, X.astype(np.float64)  # the kernel in float64; codes in X's dtype
        if self.n_landmarks is not None:
            codes = self.space_.transform(self.nystroem_features(X))
            return codes.astype(dtype, copy=False)
        K = self._kernel(X, self.X_fit_)
        centred = K - K.mean(axis=1, keepdims=True) - self.row_means_[None, :] + self.total_mean_
        return (centred @ self.dual_coef_).astype(dtype, copy=False)


_KERNEL_ROWS = 4096  # rows of a Nyström kernel made at once


def _say_dropped(asked, kept, source):
    """Warn when fewer components than asked for have variance (none are invented)."""
    if asked is not None and kept < int(asked):
        warnings.warn(
            f"KernelPCA keeps {kept} of the {int(asked)} components asked for: {source} only "
            f"{kept} of positive variance; n_components_ says how many were kept",
            UserWarning,
            stacklevel=3,
        )
