"""Probabilistic PCA fitted by expectation-maximisation, with missing pixels."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from ._base import SubspaceModel, check_fitted
from ._linalg import sign_flip
from ._spec import INPUT_STATE, Param, State
from .eigenspace import Eigenspace

__all__ = ["ProbabilisticPCA"]

_LOG_2PI = np.log(2 * np.pi)


class ProbabilisticPCA(SubspaceModel):
    """Probabilistic PCA (Tipping & Bishop 1999) fitted by EM; NaN marks missing pixels.

    The model is ``x = W z + m + e`` with ``z ~ N(0, I_k)`` and
    ``e ~ N(0, sigma^2 I_d)``. EM alternates the steps of the lecture notes:

    E step: ``M = W^T W + sigma^2 I``, ``E[z_i] = M^{-1} W^T (x_i - m)``,
    ``Cov[z_i] = sigma^2 M^{-1}``.
    M step: ``W = [sum_i (x_i - m) E[z_i]^T] [sum_i E[z_i z_i^T]]^{-1}``, then
    ``sigma^2`` and (with missing data) ``m`` by maximum likelihood.

    With missing pixels every sample has its own ``M_i`` built from its
    observed rows of ``W``, and the M step solves one small regression per
    pixel over the samples that observe it (exact EM for PPCA with missing
    values; Ilin & Raiko 2010). On complete data the fitted subspace is
    PCA's (the maximum-likelihood solution, Tipping & Bishop's theorem).

    Parameters
    ----------
    n_components : int, default 1
    max_iter : int, default 5000
    tol : float, default 1e-9
        Stop when an iteration changes ``W W^T`` by less than ``tol`` times
        its norm (Frobenius).
    init : {"pca", "random"}, default "pca"
        Start from PCA of the (mean-imputed) data, or from a random ``W``.
    seed : int, default 0

    Attributes
    ----------
    mean_ : (d,) ndarray
    components_ : (k, d) ndarray
        Orthonormal basis of ``W``'s column space, along the principal axes.
    W_ : (d, k) ndarray
        The loading matrix, rotated to the principal axes (``U S``).
    eigenvalues_ : (k,) ndarray
        ``S^2 + sigma^2``, the model's variances along the components.
    noise_variance_ : float
        ``sigma^2``.
    n_iter_ : int
    log_likelihood_ : list of float
        Total log-likelihood of the observed data after each E step.

    References
    ----------
    M. Tipping and C. Bishop (1999), Probabilistic principal component
    analysis, J. R. Statist. Soc. B 61(3). A. Ilin and T. Raiko (2010),
    Practical approaches to principal component analysis in the presence of
    missing values, JMLR 11.
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1),
        "max_iter": Param("int", 1),
        "tol": Param("real", 0),
        "init": Param("choice", choices=("pca", "random")),
        "seed": Param("int", 0, 2**32 - 1, optional=True),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        **INPUT_STATE,
        "mean_": State(shape=("d",)),
        "components_": State(shape=("k", "d")),
        "W_": State(shape=("d", "k")),
        "eigenvalues_": State(shape=("k",), low=0),
        "noise_variance_": State("real", low=0),
        "n_components_": State("int", dim="k"),
        "n_iter_": State("int", low=0),
        "log_likelihood_": State("reals"),
    }

    def __init__(self, n_components=1, *, max_iter=5000, tol=1e-9, init="pca", seed=0):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.seed = seed

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def fit(self, X, y=None):
        """Fit by EM; ``NaN`` entries of ``X`` are treated as missing.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : ignored

        Returns
        -------
        self
        """
        X = self._validate_fit(X, allow_nan=True).astype(np.float64)
        n, d = X.shape
        k = self.n_components
        if not (isinstance(k, (int, np.integer)) and 1 <= k < min(n, d)):
            raise ValueError(
                f"n_components={k!r} must be an int in [1, min(n_samples, n_features) - 1]; "
                f"the data has n_samples={n}, n_features={d}"
            )
        if self.init not in ("pca", "random"):
            raise ValueError(f"init must be 'pca' or 'random', got {self.init!r}")
        observed = ~np.isnan(X)
        if not observed.any(axis=0).all():
            empty = np.flatnonzero(~observed.any(axis=0))[:5].tolist()
            raise ValueError(f"features {empty} are missing in every sample; drop them first")
        if not observed.any(axis=1).all():
            raise ValueError("some samples are missing entirely; drop them first")
        mean = np.nanmean(X, axis=0)
        W, sigma2 = self._initial(X, mean, observed, k)
        complete = bool(observed.all())
        step = _em_step_complete if complete else _em_step_missing
        history = []
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):  # noqa: B007 - n_iter is reported
            W_old = W
            W, mean, sigma2, log_likelihood = step(X, observed, W, mean, sigma2)
            history.append(log_likelihood)
            # EM converges linearly and the likelihood is flat at the optimum, so a test on
            # the likelihood stops far too early; test the model's covariance W W^T itself
            # (W alone is identified only up to a rotation).
            if _covariance_change(W_old, W) <= self.tol:
                break
        else:
            warnings.warn(
                f"EM did not converge in {self.max_iter} iterations; raise max_iter or tol "
                "(with many missing pixels and little noise EM converges slowly)",
                ConvergenceWarning,
                stacklevel=2,
            )
        u, s, _ = linalg.svd(W, full_matrices=False)
        components = sign_flip(u.T)
        self.mean_ = mean
        self.components_ = components
        self.W_ = components.T * s
        self.eigenvalues_ = s**2 + sigma2
        self.noise_variance_ = float(sigma2)
        self.n_components_ = k
        self.n_iter_ = n_iter
        self.log_likelihood_ = history
        return self

    def _initial(self, X, mean, observed, k):
        filled = np.where(observed, X, mean)
        if self.init == "pca":
            space = Eigenspace(k).fit(filled)
            W = space.components_.T * np.sqrt(
                np.maximum(space.eigenvalues_[:k] - space.noise_variance_, 1e-12)
            )
            return W, max(space.noise_variance_, 1e-12)
        rng = np.random.default_rng(self.seed)
        variance = filled.var(axis=0).mean()
        return rng.normal(scale=np.sqrt(variance), size=(X.shape[1], k)), variance

    # ----------------------------------------------------------- inference
    def _posterior(self, X):
        """``(X, observed mask, E[z | observed x], log-likelihood per sample)``."""
        check_fitted(self)
        X = self._validate_transform(X, allow_nan=True).astype(np.float64)
        observed = ~np.isnan(X)
        centred = np.where(observed, X - self.mean_, 0.0)
        M, Ez, log_likelihood = _e_step(centred, observed, self.W_, self.noise_variance_)
        return X, observed, Ez, log_likelihood

    def transform(self, X):
        """Posterior mean of the latent code, ``(n, k)``, along the principal axes.

        Missing (NaN) pixels are marginalised out.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack
            NaN marks a missing pixel.

        Returns
        -------
        (n, k) ndarray
        """
        codes = self._posterior(X)[2]
        return codes.astype(np.float32) if _dtype_of(X) == np.float32 else codes

    def inverse_transform(self, Z):
        """``m + W z`` for codes ``Z`` (n, k); returns ``(n, d)``.

        Parameters
        ----------
        Z : (n, k) ndarray

        Returns
        -------
        (n, d) ndarray
        """
        check_fitted(self)
        return np.asarray(Z, dtype=np.float64) @ self.W_.T + self.mean_

    def score_samples(self, X):
        """Log-likelihood of each sample's observed pixels, ``(n,)``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack
            NaN marks a missing pixel.

        Returns
        -------
        (n,) ndarray of float64
        """
        return self._posterior(X)[3]

    def score(self, X, y=None):
        """Mean log-likelihood.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack
        y : ignored

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def impute(self, X):
        """Fill the NaN pixels of ``X`` with the model's reconstruction ``m + W E[z|x]``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack
            NaN marks a missing pixel.

        Returns
        -------
        ndarray
            ``X`` with its NaN entries filled, same shape.
        """
        X, observed, Ez, _ = self._posterior(X)
        return np.where(observed, X, self.inverse_transform(Ez))


def _covariance_change(W_old, W_new) -> float:
    """``||W_new W_new^T - W_old W_old^T||_F / ||W_new W_new^T||_F`` through k x k products."""
    new = np.sum((W_new.T @ W_new) ** 2)
    old = np.sum((W_old.T @ W_old) ** 2)
    cross = np.sum((W_old.T @ W_new) ** 2)
    return float(np.sqrt(max(new + old - 2 * cross, 0.0) / new))


def _e_step(centred, observed, W, sigma2):
    """Per-sample ``M_i``, posterior means ``E[z_i]`` and observed-data log-likelihoods.

    ``centred`` holds ``x - m`` with zeros at missing pixels.
    """
    k = W.shape[1]
    M = _per_sample_M(observed, W, sigma2)
    b = centred @ W
    Ez = np.linalg.solve(M, b[:, :, None])[:, :, 0]
    n_obs = observed.sum(axis=1)
    quadratic = (np.einsum("ij,ij->i", centred, centred) - np.einsum("ij,ij->i", b, Ez)) / sigma2
    log_det = (n_obs - k) * np.log(sigma2) + np.linalg.slogdet(M)[1]
    return M, Ez, -0.5 * (n_obs * _LOG_2PI + log_det + quadratic)


def _per_sample_M(observed, W, sigma2):
    """``M_i = W_O^T W_O + sigma^2 I`` for the observed rows ``O`` of each sample."""
    d, k = W.shape
    outer = (W[:, :, None] * W[:, None, :]).reshape(d, k * k)
    M = (observed.astype(np.float64) @ outer).reshape(-1, k, k)
    M += sigma2 * np.eye(k)
    return M


def _em_step_complete(X, observed, W, mean, sigma2):
    n, d = X.shape
    k = W.shape[1]
    centred = X - mean
    M = W.T @ W + sigma2 * np.eye(k)
    M_inv = linalg.inv(M)
    b = centred @ W
    Ez = b @ M_inv
    total = float(np.einsum("ij,ij->", centred, centred))
    quadratic = (total - float(np.einsum("ij,ij->", b, Ez))) / sigma2
    log_det = (d - k) * np.log(sigma2) + np.linalg.slogdet(M)[1]
    log_likelihood = -0.5 * (n * d * _LOG_2PI + n * log_det + quadratic)
    sum_Ezz = n * sigma2 * M_inv + Ez.T @ Ez
    W_new = linalg.solve(sum_Ezz, (centred.T @ Ez).T, assume_a="pos").T
    sigma2_new = (
        total
        - 2 * float(np.einsum("ij,ij->", Ez, centred @ W_new))
        + float(np.sum(sum_Ezz * (W_new.T @ W_new)))
    ) / (n * d)
    return W_new, mean, max(sigma2_new, 1e-12), log_likelihood


def _em_step_missing(X, observed, W, mean, sigma2):
    n, d = X.shape
    k = W.shape[1]
    mask = observed.astype(np.float64)
    values = np.where(observed, X, 0.0)
    centred = np.where(observed, X - mean, 0.0)
    # E step, one k x k system per sample.
    M, Ez, per_sample = _e_step(centred, observed, W, sigma2)
    cov = sigma2 * np.linalg.inv(M)
    Ezz = cov + Ez[:, :, None] * Ez[:, None, :]
    log_likelihood = float(per_sample.sum())
    # M step, one (k+1) x (k+1) regression of pixel j on [E z, 1] per pixel.
    A = np.empty((d, k + 1, k + 1))
    A[:, :k, :k] = (mask.T @ Ezz.reshape(n, k * k)).reshape(d, k, k)
    A[:, :k, k] = A[:, k, :k] = mask.T @ Ez
    A[:, k, k] = mask.sum(axis=0)
    rhs = np.empty((d, k + 1))
    rhs[:, :k] = values.T @ Ez
    rhs[:, k] = values.sum(axis=0)
    solution = np.linalg.solve(A, rhs[:, :, None])[:, :, 0]
    W_new, mean_new = solution[:, :k], solution[:, k]
    residual = np.where(observed, X - mean_new - Ez @ W_new.T, 0.0)
    spread = np.einsum("ikl,ikl->", cov, _per_sample_M(observed, W_new, 0.0))
    sigma2_new = (float(np.einsum("ij,ij->", residual, residual)) + spread) / mask.sum()
    return W_new, mean_new, max(sigma2_new, 1e-12), log_likelihood


def _dtype_of(X):
    """The dtype of data as given (an ImageSet's images), float32 kept by ``transform``."""
    return getattr(getattr(X, "images", X), "dtype", np.float64)
