"""Bayesian face matching: Gaussian models of intrapersonal and extrapersonal differences."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from ._base import SupervisedSubspaceModel, check_fitted
from ._spec import INPUT_STATE, Param, State, check_model
from .eigenspace import Eigenspace, eigenspace_within_rank
from .neighbors import squared_distances

__all__ = ["BayesianSpace"]


class BayesianSpace(SupervisedSubspaceModel):
    """Intrapersonal / extrapersonal difference models (Moghaddam, Jebara & Pentland 2000).

    A face difference ``delta = x_1 - x_2`` is either intrapersonal
    (``Omega_I``: two images of one person) or extrapersonal (``Omega_E``).
    Each class of differences is a zero-mean Gaussian whose covariance is an
    eigenspace plus isotropic noise: the ``k`` leading eigenvalues
    ``lambda_i`` and ``rho``, the mean of the others (the full likelihood,
    DIFS + DFFS / rho, of Moghaddam & Pentland 1997). As in Fisherfaces, both
    live in the space of a PCA step fitted first, where the ``n - c``
    dimensions the training data span keep the covariances estimable
    (Wang & Tang 2004 show this "PCA then Bayes" order helps).

    :meth:`transform` gives the *whitened intrapersonal codes*
    ``y = Sigma_I^(-1/2) V (x - m)``; the squared Euclidean distance between
    two codes is ``delta^T Sigma_I^(-1) delta``, so the nearest neighbour of
    a probe among gallery codes is exactly the gallery image of maximum
    likelihood ``P(delta | Omega_I)`` (the paper's ML similarity). The MAP
    similarity ``P(Omega_I | delta)`` (:meth:`intra_probability`) weighs
    it against the extrapersonal likelihood and the prior.

    Both covariances come from every pair of training images without
    forming a pair: over the pairs of a class, ``sum (x_i - x_j)(x_i -
    x_j)^T = n_c S_c`` (``S_c`` its scatter about its mean), and over all
    pairs ``n S``, so the intrapersonal covariance is ``sum_c n_c S_c /
    sum_c C(n_c, 2)`` and the extrapersonal one ``(n S - sum_c n_c S_c) /
    (C(n, 2) - sum_c C(n_c, 2))``.

    Parameters
    ----------
    n_components : int, default 20
        Intrapersonal principal components ``k_I``; less than the PCA
        dimension.
    extra_components : int, optional
        Extrapersonal principal components ``k_E`` (default
        ``n_components``).
    pca_components : int, optional
        Dimension of the PCA step; default ``min(n - c, d, rank)`` (``c``
        classes, ``rank`` that of the centred data), the dimension the
        intrapersonal differences span.
    intra_prior : float, default 0.5
        ``P(Omega_I)``, the prior that a compared pair is one person (0.5:
        a verification claim as likely true as not).
    calibrate : bool, default True
        Calibrate :meth:`probability` by Platt scaling of the log likelihood
        ratio on pairs of people the model did not see: the training people
        are split in two halves, a model fitted on each half scores every
        pair of the other. The Gaussians' own ratio is overconfident (log
        odds of -80 for two people); on AT&T (people 21-40 verified by a
        model of 1-20) the calibration took the class-balanced Brier score
        from 0.186 to 0.113. Needs 10 people or more (with fewer, or when
        the halves do not generalise, a warning says so and the ratio is
        used as it is).

    Attributes
    ----------
    mean_ : (d,) ndarray
    components_ : (m, d) ndarray
        ``Sigma_I^(-1/2) V``: rows map centred images to whitened
        intrapersonal codes (not orthonormal).
    pca_ : Eigenspace
        The PCA step (``m = pca_components`` components).
    intra_variances_ : (m,) ndarray
        Intrapersonal eigenvalues, the ``k_I`` largest then ``rho_I``
        repeated (the covariance the codes are whitened by).
    extra_variances_ : (m,) ndarray
        Extrapersonal eigenvalues, ``k_E`` then ``rho_E``.
    intra_to_extra_ : (m, m) ndarray
        Maps a difference of intrapersonal codes to the difference of
        extrapersonal (whitened) codes.
    calibration_ : (2,) ndarray
        Platt's ``(a, b)``: :meth:`probability` is ``expit(a r + b + log
        prior odds)`` for the log likelihood ratio ``r``; ``(1, 0)`` without
        calibration.
    n_components_ : int
        ``m``, the length of the codes.
    classes_ : (c,) ndarray

    References
    ----------
    B. Moghaddam, T. Jebara and A. Pentland (2000), Bayesian face
    recognition, Pattern Recognition 33(11). B. Moghaddam and A. Pentland
    (1997), Probabilistic visual learning for object representation, IEEE
    TPAMI 19(7). X. Wang and X. Tang (2004), A unified framework for subspace
    face recognition, IEEE TPAMI 26(9).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> people = rng.normal(size=(5, 30))
    >>> X = np.repeat(people, 4, axis=0) + 0.1 * rng.normal(size=(20, 30))
    >>> y = np.repeat(np.arange(5), 4)
    >>> space = BayesianSpace(n_components=3, calibrate=False).fit(X, y)
    >>> space.transform(X).shape
    (20, 15)
    >>> same = space.intra_probability(X[[0]], X[[1]])[0]
    >>> other = space.intra_probability(X[[0]], X[[4]])[0]
    >>> bool(same > 0.99 and other < 0.01)
    True
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1),
        "extra_components": Param("int", 1, optional=True),
        "pca_components": Param("int", 2, optional=True),
        "intra_prior": Param("real", 0, 1, open_low=True, open_high=True),
        "calibrate": Param("bool"),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        **INPUT_STATE,
        "pca_": State("model"),
        "mean_": State(shape=("d",)),
        "components_": State(shape=("k", "d")),
        "intra_variances_": State(shape=("k",), positive=True),
        "extra_variances_": State(shape=("k",), positive=True),
        "intra_to_extra_": State(shape=("k", "k")),
        "classes_": State(dtypes="biufU", shape=("c",)),
        "n_components_": State("int", dim="k"),
        "calibration_": State(shape=(2,), optional=True),
    }

    def __init__(
        self,
        n_components=20,
        *,
        extra_components=None,
        pca_components=None,
        intra_prior=0.5,
        calibrate=True,
    ):
        self.n_components = n_components
        self.extra_components = extra_components
        self.pca_components = pca_components
        self.intra_prior = intra_prior
        self.calibrate = calibrate

    def fit(self, X, y):
        """Fit the PCA step and both difference models on labelled images.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : (n,) array-like
            Person labels; at least 2 people and one with two images or more.

        Returns
        -------
        self
        """
        X, classes, codes = self._validate_labelled(X, y)
        n, c = len(X), len(classes)
        if n - c < 2:
            raise ValueError(
                f"BayesianSpace needs intrapersonal differences: {n} images of {c} people "
                "span n - c < 2 dimensions of them; add more images per person"
            )
        if not (isinstance(self.intra_prior, Real) and 0.0 < self.intra_prior < 1.0):
            raise ValueError(f"intra_prior must lie in (0, 1), got {self.intra_prior!r}")
        m = min(n - c, X.shape[1]) if self.pca_components is None else self.pca_components
        largest = min(n - 1, X.shape[1])
        if isinstance(m, bool) or not isinstance(m, Integral) or not 2 <= m <= largest:
            raise ValueError(
                f"pca_components={m!r} must be an int in [2, min(n - 1, d) = {largest}] "
                f"(n_samples={n}, n_features={X.shape[1]})"
            )
        pca = eigenspace_within_rank(X, m) if self.pca_components is None else Eigenspace(m).fit(X)
        m = pca.n_components_
        k_intra = _checked_rank("n_components", self.n_components, m)
        k_extra = _checked_rank(
            "extra_components",
            self.n_components if self.extra_components is None else self.extra_components,
            m,
        )
        Z = pca.transform(X).astype(np.float64)
        intra, extra = _pair_covariances(Z, codes)
        intra_values, intra_vectors = _regularised_spectrum(intra, k_intra)
        extra_values, extra_vectors = _regularised_spectrum(extra, k_extra)
        whiten = intra_vectors / np.sqrt(intra_values)  # (m, m): Z @ whiten are the codes
        self.pca_ = pca
        self.mean_ = pca.mean_
        self.components_ = (whiten.T @ pca.components_.astype(np.float64)).astype(X.dtype)
        self.intra_variances_ = intra_values
        self.extra_variances_ = extra_values
        # codes = Z W_I with W_I = U_I L_I^(-1/2), so Z = codes L_I^(1/2) U_I^T and the
        # extrapersonal codes are Z U_E L_E^(-1/2).
        self.intra_to_extra_ = (
            (intra_vectors * np.sqrt(intra_values)).T @ extra_vectors / np.sqrt(extra_values)
        )
        self.classes_ = classes
        self.n_components_ = m
        self.calibration_ = np.array([1.0, 0.0])
        if self.calibrate:
            self.calibration_ = self._cross_fitted_platt(X, codes)
        return self

    def _cross_fitted_platt(self, X, codes):
        """Platt's ``(a, b)`` from the pairs of each half of the people, scored by the other."""
        ratios, same = [], []
        if codes.max() + 1 < 2 * _CALIBRATION_PEOPLE:
            return _uncalibrated(
                f"{codes.max() + 1} people; calibration needs {2 * _CALIBRATION_PEOPLE}"
            )
        for half in (0, 1):
            fit, held = codes % 2 != half, codes % 2 == half
            try:
                model = clone(self).set_params(calibrate=False, pca_components=None)
                model.fit(X[fit], codes[fit])
            except ValueError as exc:
                return _uncalibrated(f"half the training people cannot be modelled alone: {exc}")
            held_codes = model.transform(X[held])
            i, j = np.triu_indices(len(held_codes), 1)
            ratios.append(
                model.pairwise_log_odds(held_codes, held_codes)[i, j] - model._prior_log_odds()
            )
            same.append(codes[held][i] == codes[held][j])
        ratios, same = np.concatenate(ratios), np.concatenate(same)
        if same.all() or not same.any():
            return _uncalibrated("no pair of one person (or of two) in a half")
        platt = LogisticRegression(class_weight="balanced").fit(ratios[:, None], same)
        if not platt.coef_[0, 0] > 0:  # unseen people's ratios do not rank same above different
            return _uncalibrated("the ratio does not separate unseen people")
        return np.array([platt.coef_[0, 0], platt.intercept_[0]])

    def _prior_log_odds(self):
        return float(np.log(self.intra_prior) - np.log1p(-self.intra_prior))

    def probability(self, log_odds):
        """``P(same person)`` from :meth:`log_odds`, calibrated (see ``calibrate``).

        Parameters
        ----------
        log_odds : array-like
            From :meth:`log_odds` or :meth:`pairwise_log_odds`.

        Returns
        -------
        ndarray
            Of the same shape, in [0, 1].
        """
        check_fitted(self, "calibration_")
        prior = self._prior_log_odds()
        a, b = self.calibration_
        return expit(a * (np.asarray(log_odds, dtype=np.float64) - prior) + b + prior)

    def log_odds(self, code_differences):
        """``log P(Omega_I | delta) / P(Omega_E | delta)`` from differences of codes.

        Parameters
        ----------
        code_differences : (n, m) ndarray
            ``transform(x_1) - transform(x_2)`` for each pair.

        Returns
        -------
        (n,) ndarray
            ``log P(delta | Omega_I) - log P(delta | Omega_E)`` plus the
            log prior ratio; positive means "more likely the same person".
        """
        delta = self._checked_codes(code_differences, "code_differences")
        extra_codes = delta @ self.intra_to_extra_
        return self._from_distances(
            np.einsum("ij,ij->i", delta, delta), np.einsum("ij,ij->i", extra_codes, extra_codes)
        )

    def pairwise_log_odds(self, codes_a, codes_b):
        """:meth:`log_odds` of every pair of two sets of codes.

        Parameters
        ----------
        codes_a : (na, m) ndarray
        codes_b : (nb, m) ndarray
            Outputs of :meth:`transform`.

        Returns
        -------
        (na, nb) ndarray
        """
        a = self._checked_codes(codes_a, "codes_a")
        b = self._checked_codes(codes_b, "codes_b")
        to_extra = self.intra_to_extra_
        return self._from_distances(
            squared_distances(a, b), squared_distances(a @ to_extra, b @ to_extra)
        )

    def _checked_codes(self, codes, name):
        check_fitted(self)
        codes = np.asarray(codes, dtype=np.float64)
        if codes.ndim != 2 or codes.shape[1] != self.n_components_:
            raise ValueError(f"{name} must be (n, {self.n_components_}), got shape {codes.shape}")
        return codes

    def _from_distances(self, intra, extra):
        """Log odds from squared whitened distances under each model."""
        log_det = np.sum(np.log(self.intra_variances_)) - np.sum(np.log(self.extra_variances_))
        return -0.5 * (intra - extra + log_det) + self._prior_log_odds()

    def intra_probability(self, X1, X2):
        """The MAP similarity ``P(Omega_I | x_1 - x_2)`` of image pairs.

        Parameters
        ----------
        X1, X2 : (n, d) ndarray or (n, H, W) image stack
            Row ``i`` of each forms pair ``i``.

        Returns
        -------
        (n,) ndarray
            Probability that each pair shows one person, in [0, 1]
            (:meth:`probability` of the pairs' log odds).
        """
        codes1, codes2 = self.transform(X1), self.transform(X2)
        if codes1.shape != codes2.shape:
            raise ValueError(
                f"X1 and X2 must hold as many images, got {len(codes1)} and {len(codes2)}"
            )
        return self.probability(self.log_odds(codes1.astype(np.float64) - codes2))

    def _check_relations(self):
        """A loaded space's variances, prior and calibration
        (:func:`~eigenvision._spec.check_model`)."""
        for key in ("intra_variances_", "extra_variances_"):
            if not np.all(getattr(self, key) > 0):
                raise ValueError(f"BayesianSpace.{key} must be positive variances")
        if not (isinstance(self.intra_prior, Real) and 0 < self.intra_prior < 1):
            raise ValueError(
                f"BayesianSpace.intra_prior must lie in (0, 1), got {self.intra_prior!r}"
            )
        calibration = getattr(self, "calibration_", None)
        if calibration is not None and not calibration[0] > 0:
            raise ValueError("BayesianSpace.calibration_ must be (a > 0, b)")
        check_model(self.pca_)


#: People per half needed to calibrate (each half's model must generalise to the other's).
_CALIBRATION_PEOPLE = 5


def _uncalibrated(reason):
    warnings.warn(f"BayesianSpace: P(same person) left uncalibrated ({reason})", stacklevel=4)
    return np.array([1.0, 0.0])


def _checked_rank(name, value, m):
    if isinstance(value, bool) or not isinstance(value, Integral) or not 1 <= value < m:
        raise ValueError(
            f"{name}={value!r} must be an int in [1, {m - 1}]: fewer than the PCA step's "
            f"{m} dimensions, so that the noise variance rho has directions to average over"
        )
    return int(value)


def _pair_covariances(Z, codes):
    """Covariances of intrapersonal and extrapersonal pair differences of ``Z`` (n, m)."""
    n = len(Z)
    counts = np.bincount(codes).astype(np.float64)
    means = np.zeros((len(counts), Z.shape[1]))
    np.add.at(means, codes, Z)
    means /= counts[:, None]
    within = Z - means[codes]
    # sum over pairs of a class of (x_i - x_j)(x_i - x_j)^T = n_c * its scatter.
    intra_sum = (within * counts[codes][:, None]).T @ within
    centred = Z - Z.mean(axis=0)
    total_sum = n * centred.T @ centred
    intra_pairs = float(np.sum(counts * (counts - 1) / 2))
    extra_pairs = n * (n - 1) / 2 - intra_pairs
    return intra_sum / intra_pairs, (total_sum - intra_sum) / extra_pairs


def _regularised_spectrum(covariance, k):
    """Eigenvalues (largest first) with all but the ``k`` largest replaced by their mean ``rho``."""
    values, vectors = np.linalg.eigh(covariance)
    values, vectors = np.maximum(values[::-1], 0.0), vectors[:, ::-1]
    rho = float(values[k:].mean())
    floor = max(float(values[0]), np.finfo(float).tiny) * np.finfo(float).eps
    if rho <= floor:
        raise ValueError(
            f"the differences span only {int(np.sum(values > floor))} dimensions: keep fewer "
            f"than {k} components or give more images per person"
        )
    return np.concatenate([values[:k], np.full(len(values) - k, rho)]), vectors
