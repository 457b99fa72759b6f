"""Probabilistic identity subspaces: probabilistic LDA and the Joint Bayesian model.

The lecture's generative PCA (``x = m + W z + noise``) with the identity
made explicit. Every image of person ``i`` shares one identity variable:

``x_ij = m + F h_i + e_ij``,  ``h_i ~ N(0, I_p)``,  ``e_ij ~ N(0, S_w)``,

so the between-person covariance is ``S_b = F F^T`` (rank ``p``) and the
within-person covariance ``S_w`` is full, or a factor model ``G G^T +
diag(psi)`` of rank ``q`` (Prince & Elder 2007's ``x = m + F h + G w +
noise``). Two images are compared by the log-likelihood ratio of "same
identity" against "different identities", a quadratic form in closed form
(Chen et al. 2012's ``A`` and ``G`` matrices). The Joint Bayesian model is
the same model with full-rank ``S_b`` and ``S_w`` (two covariances).

Both are fitted by expectation-maximisation on the codes of a PCA step
(where the within-person scatter is full rank): the exact EM of the model,
whose marginal likelihood never decreases (Chen et al.'s own update uses point
estimates of the latent variables and carries no such guarantee).
"""

from __future__ import annotations

import copy
from functools import partial
from typing import NamedTuple

import numpy as np
from scipy import linalg
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.utils import gen_batches

from ._base import SupervisedSubspaceModel, check_fitted, kept_on
from ._errors import NotFittedError
from ._spec import INPUT_STATE, Param, State, check_params
from .descriptors import IDENTITY_DESCRIPTORS, FaceDescriptionMixin
from .eigenspace import Eigenspace
from .fisher import discriminant_directions

__all__ = [
    "PLDA",
    "JointBayesian",
    "PLDAFusion",
    "IdentityModel",
    "half_precision",
    "quantized",
    "centred_on",
]

_LOG_2PI = np.log(2 * np.pi)
_BLOCK_ROWS = 1024  # rows of a pairwise score matrix whose temporaries are made at a time
_CROPS_AT_ONCE = 256  # crops described at a time by IdentityModel.encode


#: Where :class:`IdentityModel` puts the eyes in its crops, as fractions of width and height.
IDENTITY_EYE_POSITIONS = ((0.33, 0.42), (0.67, 0.42))


class _PairScores:
    """Scores of pairs of rows through the model's codes: ``encode``, then the codes' ratio."""

    def score_pairs(self, A, B):
        """``log p(a, b | same) - log p(a, b | different)`` of each pair ``(A[i], B[i])``.

        Parameters
        ----------
        A, B : (n, d) ndarray or (n, H, W) image stacks
            Paired row by row, as :meth:`fit` took them.

        Returns
        -------
        (n,) ndarray
        """
        return self.paired_log_odds(self.encode(A), self.encode(B))

    def pairwise_scores(self, A, B=None):
        """The log-likelihood ratio of every pair of rows of ``A`` and ``B``.

        Parameters
        ----------
        A : (m, d) ndarray or (m, H, W) image stack
        B : (n, d) ndarray or (n, H, W) image stack, optional
            Default ``A``.

        Returns
        -------
        (m, n) ndarray
        """
        a = self.encode(A)
        return self.pairwise_log_odds(a, a if B is None else self.encode(B))


class _PairFormMixin:
    """PLDA's pair ratio made from its fitted covariances: the axes where it is a sum
    (:func:`diagonal_pair_scoring`, made once) and the ``(r, r)`` forms of the ratio."""

    def _pair_form(self):
        """:func:`diagonal_pair_scoring` of the fitted covariances in ``pair_basis_``, made once
        per set of them (files from before the basis: the basis made here, not kept)."""
        check_fitted(self, "identity_loadings_")
        fitted = (self.identity_loadings_, self.within_covariance_)
        fitted += (getattr(self, "pair_basis_", None),)
        return kept_on(self, "_pair_form_memo", fitted, lambda: diagonal_pair_scoring(*fitted))

    @property
    def quadratic_(self):
        """``Q`` of the pair ratio, ``(r, r)``: ``V diag(q) V^T`` (:class:`PairForm`)."""
        form = self._pair_form()
        return (form.basis * form.quadratic) @ form.basis.T

    @property
    def cross_(self):
        """``C`` of the pair ratio, ``(r, r)``: ``V diag(c) V^T`` (:class:`PairForm`)."""
        form = self._pair_form()
        return (form.basis * form.cross) @ form.basis.T

    @property
    def offset_(self):
        """The pair ratio's constant (:func:`diagonal_pair_scoring`)."""
        return self._pair_form().offset

    # Model files written before the ratio was made from the covariances hold its forms: they
    # are what the covariances give, made again when read.
    @quadratic_.setter
    def quadratic_(self, value):
        pass

    @cross_.setter
    def cross_(self, value):
        pass

    @offset_.setter
    def offset_(self, value):
        pass


class PLDA(_PairFormMixin, _PairScores, SupervisedSubspaceModel):
    """Probabilistic linear discriminant analysis (Prince & Elder 2007; Ioffe 2006).

    Parameters
    ----------
    n_components : int, optional
        Rank ``p`` of the identity subspace ``F``; default every dimension of
        the PCA step (at most the number of people - 1 carry information).
    within_components : int, optional
        Rank ``q`` of the within-person factor ``G`` (``S_w = G G^T +
        diag(psi)``); default a full within-person covariance.
    pca_components : int, optional
        Dimension of the PCA step the model lives in; default
        ``min(d, n - c)``, where the within-person scatter is full rank.
    length_norm : bool, default False
        Whiten the PCA step's codes and scale each to length ``sqrt(r)``
        before the model sees them (Garcia-Romero & Espy-Wilson 2011): the
        heavy tails of real data (a few faces far out along some direction)
        pulled onto the sphere where the Gaussian model fits them better, then
        centred again. :meth:`encode` and :meth:`transform` apply it to new data.
    lda_components : int, optional
        An LDA step between the PCA step and the model: the PCA step's codes
        projected onto their ``lda_components`` leading Fisher directions
        (:func:`~eigenvision.fisher.discriminant_directions`), each scaled
        to unit variance over the training codes, before the length
        normalisation (the LDA, length-normalisation, PLDA chain of speaker
        recognition, Garcia-Romero & Espy-Wilson 2011): directions along
        which people differ little against their own variation are dropped
        before they can dominate a code's length. At most ``pca_components``
        and the number of people - 1. Default: no LDA step.
    max_iter : int, default 200
        EM iterations at most.
    tol : float, default 1e-7
        Stop when the log-likelihood per image gains less than this.

    Attributes
    ----------
    pca_ : Eigenspace or None
        The PCA step (whitened with ``length_norm``); None in a :meth:`compact`
        model.
    lda_ : (s, r) ndarray or None
        With ``lda_components``, the LDA step's map from the PCA step's ``s``
        codes to the model's ``r``; None without, and in a :meth:`compact` model.
    step_ : (r, d) ndarray or None
        In a :meth:`compact` model, the PCA and LDA steps as one map: a code
        in the model's ``r`` dimensions is ``step_ @ (x - mean_)`` before the
        length normalisation. None in a model as fitted. 8-bit integers in a
        :func:`quantized` model, the map being ``step_ * step_scale_[:, None]``.
    step_scale_ : (r,) ndarray or None
        The scale of each row of an 8-bit ``step_``; None for a float map.
    mean_ : (d,) ndarray
    components_ : (p, d) ndarray
        ``transform``'s linear map: the posterior mean of the identity variable
        of one image is ``components_ @ (x - mean_)``. With ``length_norm``
        the codes are normalised and centred between the two linear steps, so
        ``components_`` is only the linear part and :meth:`transform` applies
        the posterior map to :meth:`encode`'s codes. Made from the PCA step
        and the loadings when first read, never saved (it would be as large
        as the PCA step).
    identity_loadings_ : (r, p) ndarray
        ``F`` in the PCA step's ``r`` dimensions.
    within_covariance_ : (r, r) ndarray
        ``S_w``.
    quadratic_ : (r, r) ndarray
    cross_ : (r, r) ndarray
    offset_ : float
        The log-likelihood ratio of codes ``a`` and ``b`` (centred, in the PCA
        step) is ``a^T Q a + b^T Q b + a^T C b + offset_`` with ``Q`` =
        ``quadratic_``, ``C`` = ``cross_``. Made from ``identity_loadings_``
        and ``within_covariance_`` when first read, never saved: the scores
        are computed in :meth:`pair_coordinates`, where the ratio is a sum
        over ``p`` axes.
    pair_basis_ : (r, p) ndarray or None
        ``V`` of :func:`diagonal_pair_scoring`: :meth:`pair_coordinates` are
        ``codes @ pair_basis_``. Kept with the model, so that coordinates kept
        elsewhere (an :class:`IdentityModel`'s cohort) stay its own: an
        eigensolver run again may give another sign or order. None in files
        written before it (made when needed).
    code_mean_ : (r,) ndarray or None
        With ``length_norm``, the mean of the training codes after the length
        normalisation (subtracted from every code); None without.
    log_likelihood_ : list of float
        The marginal log-likelihood of the training codes after each EM
        iteration (never decreasing).
    n_iter_ : int
    classes_ : (c,) ndarray or None
        None in a :func:`half_precision` model.
    n_components_ : int

    References
    ----------
    S. Prince and J. Elder (2007), Probabilistic linear discriminant analysis
    for inferences about identity, ICCV. S. Ioffe (2006), Probabilistic linear
    discriminant analysis, ECCV. D. Chen, X. Cao, L. Wang, F. Wen and J. Sun
    (2012), Bayesian face revisited: a joint formulation, ECCV.
    A. Sizov, K. A. Lee and T. Kinnunen (2014), Unifying probabilistic linear
    discriminant analysis variants in biometric authentication, S+SSPR.
    D. Garcia-Romero and C. Y. Espy-Wilson (2011), Analysis of i-vector
    length normalization in speaker recognition systems, Interspeech.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> people = rng.normal(size=(20, 1, 5)) * 3
    >>> X = (people + rng.normal(size=(20, 4, 5))).reshape(80, 5)
    >>> y = np.repeat(np.arange(20), 4)
    >>> model = PLDA(n_components=5).fit(X, y)
    >>> bool(model.score_pairs(X[:1], X[1:2])[0] > model.score_pairs(X[:1], X[4:5])[0])
    True
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, 100_000, optional=True),
        "within_components": Param("int", 1, 100_000, optional=True),
        "pca_components": Param("int", 1, 100_000, optional=True),
        "length_norm": Param("bool"),
        "lda_components": Param("int", 1, 100_000, optional=True),
        "max_iter": Param("int", 0, 100_000),
        "tol": Param("real", 0, 1),
    }

    #: Parameters added after models were first saved, with the value that keeps an older
    #: model file's behaviour (:func:`~eigenvision.load` gives it where a file has none).
    _former_defaults = {"lda_components": None}

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        **INPUT_STATE,
        "pca_": State("model", optional=True),
        "lda_": State(shape=("s", "r"), optional=True),
        "step_": State(dtypes="fi", shape=("r", "d"), optional=True),  # int8 in a quantized one
        "step_scale_": State(shape=("r",), optional=True, low=0),
        "mean_": State(shape=("d",)),
        "identity_loadings_": State(shape=("r", "p")),
        "within_covariance_": State(shape=("r", "r")),
        "pair_basis_": State(shape=("r", "p"), optional=True),  # None in files from before it
        "code_mean_": State(shape=("r",), optional=True),
        "log_likelihood_": State("reals"),
        "n_iter_": State("int", low=0),
        "classes_": State(dtypes="biufU", shape=("c",), optional=True),  # None: shipped forms
        "n_components_": State("int", dim="p"),
    }

    def __init__(
        self,
        n_components=None,
        *,
        within_components=None,
        pca_components=None,
        length_norm=False,
        lda_components=None,
        max_iter=200,
        tol=1e-7,
    ):
        self.n_components = n_components
        self.within_components = within_components
        self.pca_components = pca_components
        self.length_norm = length_norm
        self.lda_components = lda_components
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y):
        """Fit by EM on images or flattened data ``X`` with identity labels ``y``.

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : (n,) array-like
            Identity labels: at least 2 people, and more images than people.

        Returns
        -------
        self
        """
        check_params(self)
        X, classes, codes = self._validate_labelled(X, y)
        n, c = len(X), len(classes)
        if n <= c:
            raise ValueError(
                f"{type(self).__name__} needs more images ({n}) than people ({c}): the "
                "within-person covariance is learnt from people with two or more"
            )
        r = min(X.shape[1], n - c) if self.pca_components is None else self.pca_components
        if r > min(X.shape[1], n - 1):
            raise ValueError(
                f"pca_components={r} exceeds what {n} images of {X.shape[1]} features give "
                f"({min(X.shape[1], n - 1)})"
            )
        lda = getattr(self, "lda_components", None)  # JointBayesian has none
        if lda is not None and lda > min(r, c - 1):
            raise ValueError(
                f"lda_components={lda} exceeds min(pca_components, people - 1) = "
                f"{min(r, c - 1)}: Fisher's directions live in the PCA step and number at most "
                "one fewer than the people"
            )
        steps, step = (r, "PCA") if lda is None else (lda, "LDA")
        p, q = self._ranks()
        p = steps if p is None else p
        if p > steps:
            raise ValueError(f"n_components={p} exceeds the {step} step's {steps} dimensions")
        if q is not None and q >= steps:
            raise ValueError(
                f"within_components={q} must be below the {step} step's {steps} dimensions"
            )
        self.pca_ = Eigenspace(r, whiten=self.length_norm).fit(X)
        self.code_mean_ = None
        self.lda_ = None
        self.step_ = None
        if lda is not None:
            Z = self.pca_.transform(X).astype(np.float64)
            _, directions = discriminant_directions(Z, codes, lda)
            # unit variance along each: the whitening the length normalisation expects
            self.lda_ = directions / np.maximum((Z @ directions).std(axis=0), 1e-300)
        Z = self._step_codes(X)
        if self.length_norm:
            self.code_mean_ = Z.mean(axis=0)
            Z -= self.code_mean_
        F, within, history = _expectation_maximisation(
            Z, codes, p, q, max_iter=self.max_iter, tol=self.tol
        )
        self.identity_loadings_, self.within_covariance_ = F, within
        self.log_likelihood_, self.n_iter_ = history, len(history)
        # kept, not made again when read: codes kept in pair coordinates need this very basis
        self.pair_basis_ = diagonal_pair_scoring(F, within).basis
        self.mean_ = self.pca_.mean_
        self.classes_ = classes
        self.n_components_ = p
        self._components = None
        return self

    @property
    def components_(self):
        """``transform``'s ``(p, d)`` map: ``(I + F^T S_w^-1 F)^-1 F^T S_w^-1`` times the PCA
        step's components (the posterior mean of the identity variable), in their dtype."""
        if getattr(self, "_components", None) is None:
            # in the steps' dtype: the PCA step's mean, components and a compact step_ share it
            self._components = (self._posterior() @ self._step_map()).astype(self.mean_.dtype)
        return self._components

    @components_.setter
    def components_(self, value):
        # model files written before it was made on demand hold it
        self._components = value

    def pair_coordinates(self, codes):
        """Codes where the pair ratio is a sum over axes: ``u = V^T a``, ``(n, r)`` -> ``(n, p)``.

        :meth:`pairwise_log_odds` with ``coordinates=True`` scores them; a set
        scored again and again (a cohort, a gallery) can be kept in them.

        Parameters
        ----------
        codes : (n, r) ndarray
            :meth:`encode`'s.

        Returns
        -------
        (n, p) ndarray of float64
        """
        return np.asarray(codes, dtype=np.float64) @ self._pair_form().basis

    def _step_map(self):
        """The ``(r, d)`` float64 map from a centred row to its code in the model's steps: the
        PCA step's components (whitened with ``length_norm``), through the LDA step if any."""
        if getattr(self, "step_", None) is not None:
            return _stored(self.step_, getattr(self, "step_scale_", None), np.float64, axis=1)
        step = self.pca_.components_.astype(np.float64)
        if self.pca_.whiten:
            step = step / np.sqrt(self.pca_.explained_variance_)[:, None]
        if getattr(self, "lda_", None) is not None:
            step = self.lda_.T @ step
        return step

    def compact(self):
        """This model with its PCA and LDA steps made one map (``step_``): the form to ship.

        The PCA step holds ``s`` components of the ``d`` features, the LDA step
        maps their codes to the model's ``r`` (``r < s``; without an LDA step
        ``r = s`` and only the spectrum is saved); the codes need only the
        product of the two, ``(r, d)``. The scores are those of the model
        as fitted up to round-off in the components' dtype; what is lost is
        the PCA step itself (its spectrum and the components the LDA step
        drops).

        Returns
        -------
        PLDA
            A copy with ``step_`` (in the PCA step's dtype) and without
            ``pca_`` and ``lda_`` (a compact model: a shallow copy of it).
        """
        check_fitted(self, "identity_loadings_")
        compacted = copy.copy(self)
        if getattr(self, "step_", None) is None:
            compacted.step_ = self._step_map().astype(self.pca_.components_.dtype)
            compacted.pca_, compacted.lda_, compacted._components = None, None, None
        return compacted

    def _posterior(self):
        """``(I + F^T S_w^-1 F)^-1 F^T S_w^-1``, ``(p, r)``: a code's posterior identity mean."""
        F, within = self.identity_loadings_, self.within_covariance_
        projected = linalg.solve(within, F, assume_a="pos")  # S_w^-1 F
        return linalg.solve(np.eye(F.shape[1]) + F.T @ projected, projected.T, assume_a="pos")

    def _ranks(self):
        """``(identity rank, within-person rank)``; None: the largest (full)."""
        return self.n_components, self.within_components

    def _step_codes(self, X):
        """The PCA step's codes (through the LDA step), length-normalised with ``length_norm``."""
        if getattr(self, "step_", None) is not None:
            Z = self._project(X, _computed_step(self))[1].astype(np.float64)
        else:
            Z = self.pca_.transform(X).astype(np.float64)
            if getattr(self, "lda_", None) is not None:
                Z = Z @ self.lda_
        if self.length_norm:
            length = np.linalg.norm(Z, axis=1, keepdims=True)
            Z *= np.sqrt(Z.shape[1]) / np.maximum(length, np.finfo(np.float64).tiny)
            if self.code_mean_ is not None:  # None while fit computes it
                Z -= self.code_mean_
        return Z

    def encode(self, X):
        """Centred codes in the PCA step, where :meth:`pairwise_log_odds` compares them.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n, r) ndarray of float64
            Whitened and length-normalised with ``length_norm``.
        """
        check_fitted(self)
        return self._step_codes(X)

    def transform(self, X):
        """The posterior mean of each row's identity variable, ``(n, d)`` -> ``(n, p)``.

        Parameters
        ----------
        X : (n, d) ndarray or (n, H, W) image stack

        Returns
        -------
        (n, p) ndarray
        """
        if not self.length_norm:
            return super().transform(X)
        check_fitted(self)
        return self.encode(X) @ self._posterior().T

    def paired_log_odds(self, a, b, *, coordinates=False):
        """:meth:`score_pairs` of codes already in the PCA step (:meth:`encode`).

        Parameters
        ----------
        a, b : (n, r) ndarray
            Paired row by row.
        coordinates : bool, default False
            ``a`` and ``b`` are :meth:`pair_coordinates`, ``(n, p)``.

        Returns
        -------
        (n,) ndarray
        """
        form = self._pair_form()
        u, v = self._coordinates(a, coordinates), self._coordinates(b, coordinates)
        if u.shape != v.shape:
            raise ValueError(f"score_pairs pairs rows: A has {len(u)}, B has {len(v)}")
        return (u * u + v * v) @ form.quadratic + (u * v) @ form.cross + form.offset

    def pairwise_log_odds(self, a, b, *, coordinates=False):
        """:meth:`pairwise_scores` of codes already in the PCA step (:meth:`encode`).

        Parameters
        ----------
        a : (m, r) ndarray
        b : (n, r) ndarray
        coordinates : bool, default False
            ``a`` and ``b`` are :meth:`pair_coordinates`, ``(m, p)`` and ``(n, p)``.

        Returns
        -------
        (m, n) ndarray
        """
        form = self._pair_form()
        u, v = self._coordinates(a, coordinates), self._coordinates(b, coordinates)
        # in place, in the order of the formula, the cross term a block of rows at a time:
        # a large set's (m, n) scores and no temporary as large
        scores = ((u * u) @ form.quadratic)[:, None] + ((v * v) @ form.quadratic)[None, :]
        weighted = u * form.cross
        for rows in gen_batches(len(u), _BLOCK_ROWS):
            scores[rows] += weighted[rows] @ v.T
        scores += form.offset
        return scores

    def _coordinates(self, codes, given):
        """``codes`` in :meth:`pair_coordinates`, or as given (``given``), checked for width."""
        codes = np.asarray(codes, dtype=np.float64)
        form = self._pair_form()
        width = form.basis.shape[1] if given else form.basis.shape[0]
        if codes.ndim != 2 or codes.shape[1] != width:
            what = "pair coordinates" if given else "codes"
            raise ValueError(f"{what} must be (n, {width}) rows, got shape {codes.shape}")
        return codes if given else codes @ form.basis


class JointBayesian(PLDA):
    """The Joint Bayesian face model (Chen, Cao, Wang, Wen & Sun 2012): two full covariances.

    ``x = m + mu + eps`` with identity ``mu ~ N(0, S_mu)`` and within-person
    variation ``eps ~ N(0, S_eps)``, both full rank in the PCA step: the
    :class:`PLDA` model with ``n_components`` and ``within_components`` at
    their maximum, fitted by the exact EM. ``score_pairs`` is Chen et al.'s
    closed-form ratio ``r(x1, x2) = x1^T A x1 + x2^T A x2 - 2 x1^T G x2``
    (plus the constant that makes it a log-likelihood ratio).

    Parameters
    ----------
    pca_components : int, optional
        Dimension of the PCA step; default ``min(d, n - c)``.
    length_norm : bool, default False
        As :class:`PLDA`'s.
    max_iter : int, default 200
    tol : float, default 1e-7

    Attributes
    ----------
    pca_, mean_, components_, identity_loadings_, within_covariance_, quadratic_, cross_, \
    offset_, log_likelihood_, n_iter_, classes_, n_components_
        As :class:`PLDA`'s; ``S_mu = identity_loadings_ @ identity_loadings_.T``,
        ``S_eps = within_covariance_``; Chen et al.'s ``A = 2 quadratic_`` and
        ``G = -cross_`` (their ratio is twice the log-likelihood ratio, constant aside).

    References
    ----------
    D. Chen, X. Cao, L. Wang, F. Wen and J. Sun (2012), Bayesian face
    revisited: a joint formulation, ECCV.
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "pca_components": Param("int", 1, 100_000, optional=True),
        "length_norm": Param("bool"),
        "max_iter": Param("int", 0, 100_000),
        "tol": Param("real", 0, 1),
    }

    _former_defaults = {}  # PLDA's lda_components is not a JointBayesian parameter

    def __init__(self, *, pca_components=None, length_norm=False, max_iter=200, tol=1e-7):
        self.pca_components = pca_components
        self.length_norm = length_norm
        self.max_iter = max_iter
        self.tol = tol

    def _ranks(self):
        """Both covariances of full rank."""
        return None, None


class PLDAFusion(_PairScores, BaseEstimator):
    """PLDA models of several descriptions of the same faces, their log-likelihood ratios summed.

    The columns of ``X`` are blocks, each one description of a face (e.g. its
    descriptors with and without illumination normalisation); each block
    gets a :class:`PLDA` model of its own, and a pair's ratio is the sum of
    the blocks' ratios: the log-likelihood ratio of the joint model in which
    the descriptions are independent under either hypothesis (late fusion by
    the product rule, Kittler et al. 1998). Codes (:meth:`encode`) are the
    blocks' codes side by side.

    Parameters
    ----------
    widths : sequence of int
        The blocks' widths, in column order; they sum to the number of features.
    n_components, pca_components, lda_components : int, optional
        Each block's :class:`PLDA` identity rank, PCA step and LDA step.
    length_norm : bool, default False
        As :class:`PLDA`'s, in each block.

    Attributes
    ----------
    models_ : dict of PLDA
        ``"block0"``, ``"block1"``, ...: each block's model.
    n_features_in_ : int
    n_components_ : int
        The identity ranks summed (:meth:`transform`'s width).

    References
    ----------
    J. Kittler, M. Hatef, R. P. W. Duin and J. Matas (1998), On combining
    classifiers, IEEE TPAMI 20(3).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> people = rng.normal(size=(20, 1, 6)) * 3
    >>> X = (people + rng.normal(size=(20, 4, 6))).reshape(80, 6)
    >>> y = np.repeat(np.arange(20), 4)
    >>> fused = PLDAFusion(widths=(2, 4), n_components=2).fit(X, y)
    >>> alone = PLDA(n_components=2).fit(X[:, :2], y)
    >>> bool(np.allclose(fused.models_["block0"].score_pairs(X[:3, :2], X[3:6, :2]),
    ...                  alone.score_pairs(X[:3, :2], X[3:6, :2])))
    True
    """

    _params = {
        "widths": Param("reals", 1, 10_000_000, min_length=1, max_length=16),
        "n_components": Param("int", 1, 100_000, optional=True),
        "pca_components": Param("int", 1, 100_000, optional=True),
        "length_norm": Param("bool"),
        "lda_components": Param("int", 1, 100_000, optional=True),
    }

    #: Parameters added after models were first saved, with the value that keeps an older
    #: model file's behaviour (:func:`~eigenvision.load` gives it where a file has none).
    _former_defaults = {"lda_components": None}

    _state = {
        "models_": State("models"),
        "n_features_in_": State("int", low=1),
        "n_components_": State("int", low=1),
    }

    def __init__(
        self,
        widths,
        *,
        n_components=None,
        pca_components=None,
        length_norm=False,
        lda_components=None,
    ):
        self.widths = widths
        self.n_components = n_components
        self.pca_components = pca_components
        self.length_norm = length_norm
        self.lda_components = lda_components

    def _cuts(self, width, what):
        """Column slices of the blocks of a ``width``-wide array of ``what``."""
        if what == "features":
            sizes = [int(w) for w in self.widths]
        else:  # a block's codes are as wide as its loadings' rows, its coordinates as its columns
            axis = 1 if what == "pair coordinates" else 0
            sizes = [m.identity_loadings_.shape[axis] for m in self.models_.values()]
        if width != sum(sizes):
            raise ValueError(
                f"{what} must be {sum(sizes)} columns wide (blocks of {sizes}), got {width}"
            )
        ends = np.cumsum(sizes)
        return [slice(end - size, end) for size, end in zip(sizes, ends, strict=True)]

    def fit(self, X, y):
        """Fit one :class:`PLDA` on each block of columns.

        Parameters
        ----------
        X : (n, sum(widths)) ndarray
        y : (n,) array-like
            Identity labels.

        Returns
        -------
        self
        """
        check_params(self)
        if any(int(w) != w for w in self.widths):
            raise ValueError(f"widths must be whole numbers of columns, got {self.widths!r}")
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be (n, {sum(self.widths)}) rows, got shape {X.shape}")
        self.models_ = {}
        blocks = self._cuts(X.shape[1], "features")
        for i, block in enumerate(blocks):
            self.models_[f"block{i}"] = PLDA(
                n_components=self.n_components,
                pca_components=self.pca_components,
                length_norm=self.length_norm,
                lda_components=self.lda_components,
            ).fit(X[:, block], y)
        self.n_features_in_ = X.shape[1]
        self.n_components_ = sum(m.n_components_ for m in self.models_.values())
        return self

    def _each(self, method, *arrays, what="features", **options):
        """``method`` of each block's model on the arrays' matching column blocks."""
        check_fitted(self, "models_")
        arrays = [np.asarray(a) for a in arrays]
        cuts = [self._cuts(a.shape[-1], what) for a in arrays]
        return [
            getattr(model, method)(
                *(a[..., cut[i]] for a, cut in zip(arrays, cuts, strict=True)), **options
            )
            for i, model in enumerate(self.models_.values())
        ]

    def encode(self, X):
        """The blocks' :meth:`PLDA.encode` codes side by side.

        Parameters
        ----------
        X : (n, sum(widths)) ndarray

        Returns
        -------
        (n, r) ndarray of float64
            ``r``: the blocks' PCA steps together.
        """
        return np.hstack(self._each("encode", X))

    def compact(self):
        """A copy whose blocks are :meth:`PLDA.compact`: the form to ship.

        Returns
        -------
        PLDAFusion
        """
        check_fitted(self, "models_")
        compacted = copy.copy(self)
        compacted.models_ = {name: model.compact() for name, model in self.models_.items()}
        return compacted

    def transform(self, X):
        """The blocks' :meth:`PLDA.transform` side by side.

        Parameters
        ----------
        X : (n, sum(widths)) ndarray

        Returns
        -------
        (n, p) ndarray
            ``p``: the blocks' identity ranks together (``n_components_``).
        """
        return np.hstack(self._each("transform", X))

    def pair_coordinates(self, codes):
        """The blocks' :meth:`PLDA.pair_coordinates` side by side.

        Parameters
        ----------
        codes : (n, r) ndarray

        Returns
        -------
        (n, p) ndarray of float64
            ``p``: the blocks' identity ranks together.
        """
        return np.hstack(self._each("pair_coordinates", codes, what="codes"))

    def pairwise_log_odds(self, a, b, *, coordinates=False):
        """The sum of the blocks' :meth:`PLDA.pairwise_log_odds` of codes (:meth:`encode`).

        Parameters
        ----------
        a : (m, r) ndarray
        b : (n, r) ndarray
        coordinates : bool, default False
            ``a`` and ``b`` are :meth:`pair_coordinates`, ``(m, p)`` and ``(n, p)``.

        Returns
        -------
        (m, n) ndarray
        """
        check_fitted(self, "models_")
        what = "pair coordinates" if coordinates else "codes"
        a, b = np.asarray(a), np.asarray(b)
        cuts_a, cuts_b = self._cuts(a.shape[-1], what), self._cuts(b.shape[-1], what)
        scores = None
        for model, cut_a, cut_b in zip(self.models_.values(), cuts_a, cuts_b, strict=True):
            # the blocks summed as they come: a set's (m, n) scores, not one per block
            block = model.pairwise_log_odds(a[:, cut_a], b[:, cut_b], coordinates=coordinates)
            scores = block if scores is None else np.add(scores, block, out=scores)
            del block  # not held while the next block is computed
        return scores

    def paired_log_odds(self, a, b, *, coordinates=False):
        """The sum of the blocks' :meth:`PLDA.paired_log_odds` of codes paired row by row.

        Parameters
        ----------
        a, b : (n, r) ndarray
        coordinates : bool, default False
            ``a`` and ``b`` are :meth:`pair_coordinates`, ``(n, p)``.

        Returns
        -------
        (n,) ndarray
        """
        what = "pair coordinates" if coordinates else "codes"
        return sum(self._each("paired_log_odds", a, b, what=what, coordinates=coordinates))


class PairForm(NamedTuple):
    """PLDA's pair ratio where it is a sum over axes (:func:`diagonal_pair_scoring`).

    Attributes
    ----------
    basis : (r, p) ndarray
        ``V``: a code ``a`` has coordinates ``u = V^T a``.
    quadratic, cross : (p,) ndarray
        ``q`` and ``c``.
    offset : float
    """

    basis: np.ndarray
    quadratic: np.ndarray
    cross: np.ndarray
    offset: float


def diagonal_pair_scoring(loadings, within, basis=None):
    """The log-likelihood ratio of a pair, same against different identity, axis by axis.

    With ``S_b = F F^T`` and ``S_w`` as PLDA fits them, a pair ``[a; b]`` of
    centred codes is ``N(0, [[T, S_b], [S_b, T]])`` for one identity and
    ``N(0, [[T, 0], [0, T]])`` for two (``T = S_b + S_w``). The generalised
    eigenvectors ``V`` of ``S_b V = S_w V diag(psi)``, ``V^T S_w V = I``,
    make both covariances diagonal, and the ratio a sum over the ``p`` axes
    that ``S_b`` spans (the others add nothing): with ``u = V^T a``,
    ``v = V^T b``,

    ``sum_k q_k (u_k^2 + v_k^2) + c_k u_k v_k + offset``,
    ``q_k = -psi_k^2 / (2 (psi_k + 1) (2 psi_k + 1))``,
    ``c_k = psi_k / (2 psi_k + 1)``,
    ``offset = sum_k log(psi_k + 1) - log(2 psi_k + 1) / 2``

    (Ioffe 2006's scoring in the space where both covariances are diagonal;
    the ``(r, r)`` forms ``Q = V diag(q) V^T``, ``C = V diag(c) V^T`` are
    Chen et al. 2012's ``A / 2`` and ``-G``).

    Parameters
    ----------
    loadings : (r, p) ndarray
        ``F``.
    within : (r, r) ndarray
        ``S_w``, symmetric positive definite.
    basis : (r, p) ndarray, optional
        ``V`` as made before (a fitted model's ``pair_basis_``): only ``psi``
        is read from it (``diag(V^T S_b V)``). Default: solved here, each
        column's largest entry made positive (scikit-learn's ``svd_flip``
        convention).

    Returns
    -------
    PairForm
    """
    loadings = np.asarray(loadings, dtype=np.float64)
    p = loadings.shape[1]
    if basis is not None:
        basis = np.asarray(basis, dtype=np.float64)
        return _pair_form(basis, np.sum((loadings.T @ basis) ** 2, axis=0))  # v^T F F^T v
    try:
        psi, basis = linalg.eigh(
            loadings @ loadings.T, within, subset_by_index=(len(within) - p, len(within) - 1)
        )
    except (linalg.LinAlgError, ValueError) as exc:
        raise ValueError(
            "within_covariance_ must be a symmetric positive definite (r, r) matrix: the "
            f"model is damaged or was not fitted by PLDA ({exc}); fit it again"
        ) from exc
    largest = np.argmax(np.abs(basis), axis=0)
    basis *= np.sign(basis[largest, np.arange(p)])
    return _pair_form(basis, psi)


def _pair_form(basis, psi):
    """:class:`PairForm` of the basis and the between-person variances along it."""
    psi = np.maximum(psi, 0.0)  # S_b's rank: round-off below 0 is 0
    quadratic = -(psi**2) / (2 * (psi + 1) * (2 * psi + 1))
    cross = psi / (2 * psi + 1)
    offset = float(np.sum(np.log1p(psi) - np.log1p(2 * psi) / 2))
    return PairForm(basis, quadratic, cross, offset)


def _class_sums(Z, codes):
    """Per-class sums ``(c, r)`` and counts ``(c,)`` (one sort, then sums of runs)."""
    c = int(codes.max()) + 1
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=c)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    sums = np.zeros((c, Z.shape[1]))
    present = counts > 0
    sums[present] = np.add.reduceat(Z[order], starts[present], axis=0)
    return sums, counts.astype(np.float64)


class _Statistics:
    """What the likelihood needs of the codes, computed once: the count, the within-person
    scatter and each person's mean, grouped by the person's number of images."""

    def __init__(self, Z, codes):
        sums, counts = _class_sums(Z, codes)
        means = sums / counts[:, None]
        deviations = Z - means[codes]
        self.n, self.r, self.people = len(Z), Z.shape[1], len(counts)
        self.scatter = deviations.T @ deviations
        self.by_size = {size: means[counts == size] for size in np.unique(counts)}

    def log_likelihood(self, between, within):
        # numpy's batched factorisations: between scipy's many small calls its own BLAS
        # threads keep spinning (as top_eigh in _linalg notes)
        lower = np.linalg.cholesky(within)
        log_det_within = 2 * np.log(np.diag(lower)).sum()
        halves = np.linalg.solve(lower, self.scatter)
        total = -0.5 * np.trace(np.linalg.solve(lower.T, halves))
        total -= 0.5 * (self.n * self.r * _LOG_2PI + (self.n - self.people) * log_det_within)
        sizes = np.array(list(self.by_size))
        lowers = np.linalg.cholesky(within[None] + sizes[:, None, None] * between[None])
        log_dets = 2 * np.log(np.diagonal(lowers, axis1=1, axis2=2)).sum(axis=1)
        for (size, class_means), lower_s, log_det in zip(
            self.by_size.items(), lowers, log_dets, strict=True
        ):
            whitened = np.linalg.solve(lower_s, class_means.T)
            total -= 0.5 * (len(class_means) * log_det + size * np.sum(whitened * whitened))
        return float(total)


def log_likelihood(Z, codes, between, within):
    """The marginal log-likelihood of centred codes under the identity model.

    The images of one person, stacked, are ``N(0, I_n (x) S_w + 1 1^T (x) S_b)``:
    their mean carries ``S_w + n S_b``, the deviations from it ``S_w``.

    Parameters
    ----------
    Z : (N, r) ndarray
        Centred codes.
    codes : (N,) int ndarray
        Each row's person, ``0 .. c - 1``.
    between, within : (r, r) ndarray
        ``S_b`` and ``S_w``.

    Returns
    -------
    float
    """
    return _Statistics(Z, codes).log_likelihood(between, within)


def _expectation_maximisation(Z, codes, p, q, *, max_iter, tol):
    """EM for ``F`` (r, p) and ``S_w`` (full, or ``G G^T + diag(psi)`` of rank ``q``)."""
    n, r = Z.shape
    sums, counts = _class_sums(Z, codes)
    scatter = Z.T @ Z
    means = sums / counts[:, None]
    within = (scatter - (sums.T * (1 / counts)) @ sums) / n
    between = (means.T * counts) @ means / n
    values, vectors = np.linalg.eigh(between)
    F = vectors[:, ::-1][:, :p] * np.sqrt(np.maximum(values[::-1][:p], 1e-12))
    factor = None
    if q is not None:
        factor, noise = _factor_init(within, q)
        within = factor @ factor.T + np.diag(noise)
    history = []
    statistics = _Statistics(Z, codes)
    previous = statistics.log_likelihood(F @ F.T, within)
    for _ in range(max_iter):
        # E-step: the posterior of each person's identity variable, per class size
        projected = np.linalg.solve(within, F)  # S_w^-1 F
        precision = F.T @ projected
        expected = np.empty((len(sums), p))
        second = np.zeros((p, p))
        sizes = np.unique(counts)
        covariances = np.linalg.inv(np.eye(p)[None] + sizes[:, None, None] * precision[None])
        for size, covariance in zip(sizes, covariances, strict=True):
            chosen = counts == size
            covariance = (covariance + covariance.T) / 2
            expected[chosen] = sums[chosen] @ projected @ covariance
            second += size * chosen.sum() * covariance
        second += (expected.T * counts) @ expected  # sum_i n_i E[h_i h_i^T]
        cross = sums.T @ expected  # sum_i s_i E[h_i]^T
        # M-step: F, then S_w given F (each maximises the expected complete log-likelihood)
        F = np.linalg.solve(second, cross.T).T
        residual = scatter - F @ cross.T - cross @ F.T + F @ second @ F.T
        residual = (residual + residual.T) / (2 * n)
        if q is None:
            within = residual
        else:
            factor, noise = _factor_step(residual, factor, noise)
            within = factor @ factor.T + np.diag(noise)
        current = statistics.log_likelihood(F @ F.T, within)
        history.append(current)
        if current - previous < tol * n:
            break
        previous = current
    return F, within, history


def _factor_init(covariance, q):
    """A rank-``q`` factor model of ``covariance`` from its leading eigenvectors."""
    values, vectors = np.linalg.eigh(covariance)
    values, vectors = values[::-1], vectors[:, ::-1]
    noise_level = max(values[q:].mean(), 1e-12)
    factor = vectors[:, :q] * np.sqrt(np.maximum(values[:q] - noise_level, 1e-12))
    noise = np.maximum(np.diag(covariance) - np.sum(factor**2, axis=1), 1e-6 * noise_level)
    return factor, noise


def _factor_step(covariance, factor, noise):
    """One EM step of factor analysis on a covariance: never lowers its likelihood."""
    model = factor @ factor.T + np.diag(noise)
    beta = linalg.solve(model, factor, assume_a="pos").T  # G^T (G G^T + Psi)^-1
    moments = np.eye(factor.shape[1]) - beta @ factor + beta @ covariance @ beta.T
    new_factor = linalg.solve(moments, (covariance @ beta.T).T, assume_a="pos").T
    new_noise = np.diag(covariance - new_factor @ beta @ covariance)
    return new_factor, np.maximum(new_noise, 1e-12 * np.trace(covariance) / len(covariance))


class _CohortScoresMixin:
    """:class:`IdentityModel`'s scores of codes: PLDA's ratio, normalised against the cohort
    (adaptive symmetric normalisation) when the model has one."""

    def pairwise_log_odds(self, codes_a, codes_b, *, statistics_b=None):
        """The score of one person for every pair of codes (:meth:`encode`).

        PLDA's log-likelihood ratio, normalised against the cohort when the
        model has one (``cohort_size``).

        Parameters
        ----------
        codes_a : (m, r) ndarray
        codes_b : (n, r) ndarray
        statistics_b : (mean, std) of (n,) ndarrays, optional
            :meth:`cohort_statistics` of ``codes_b`` when the caller keeps
            them (a gallery scored against query after query); computed here
            when not given.

        Returns
        -------
        (m, n) ndarray
        """
        check_fitted(self, "plda_")
        plda, cohort = self.plda_, _cohort_of(self)
        u = plda.pair_coordinates(codes_a)
        v = u if codes_b is codes_a else plda.pair_coordinates(codes_b)
        scores = plda.pairwise_log_odds(u, v, coordinates=True)
        if cohort is None:  # None in files from before the cohort
            return scores
        if statistics_b is None:
            statistics_b = _cohort_statistics(plda, v, cohort, self.cohort_top)
        elif any(np.shape(part) != (len(codes_b),) for part in statistics_b):
            raise ValueError(
                f"statistics_b must be the (mean, std) of the {len(codes_b)} codes_b, one value "
                "per code each (cohort_statistics(codes_b))"
            )
        # a set against itself (pairwise_scores, the calibration, a gallery's own score
        # normalisation): its statistics once
        mean_a, std_a = (
            statistics_b
            if codes_a is codes_b
            else _cohort_statistics(plda, u, cohort, self.cohort_top)
        )
        return _symmetric_normalized(scores, (mean_a[:, None], std_a[:, None]), statistics_b)

    def paired_log_odds(self, codes_a, codes_b):
        """:meth:`pairwise_log_odds` of the pairs ``(codes_a[i], codes_b[i])`` only.

        Parameters
        ----------
        codes_a, codes_b : (n, r) ndarray
            Paired row by row.

        Returns
        -------
        (n,) ndarray
        """
        check_fitted(self, "plda_")
        plda, cohort = self.plda_, _cohort_of(self)
        u, v = plda.pair_coordinates(codes_a), plda.pair_coordinates(codes_b)
        scores = plda.paired_log_odds(u, v, coordinates=True)
        if cohort is None:
            return scores
        return _symmetric_normalized(
            scores,
            _cohort_statistics(plda, u, cohort, self.cohort_top),
            _cohort_statistics(plda, v, cohort, self.cohort_top),
        )

    def cohort_statistics(self, codes):
        """Mean and standard deviation of each face's ``cohort_top`` best ratios against the cohort.

        Parameters
        ----------
        codes : (n, r) ndarray

        Returns
        -------
        mean, std : (n,) ndarray
        """
        check_fitted(self, "plda_")
        cohort = _cohort_of(self)
        if cohort is None:
            raise NotFittedError("this IdentityModel has no cohort: its scores are not normalised")
        coordinates = self.plda_.pair_coordinates(codes)
        return _cohort_statistics(self.plda_, coordinates, cohort, self.cohort_top)


class IdentityModel(_CohortScoresMixin, FaceDescriptionMixin, BaseEstimator):
    """Faces in, "same person?" out: descriptors, a PLDA identity subspace and a calibration.

    Aligned face crops (:func:`~eigenvision.align_face` at ``shape``) are
    described four times (:func:`~eigenvision.descriptors.face_descriptors`):
    by dense DAISY gradient histograms once normalised for illumination (Tan
    & Triggs 2010) and once as they are, by LBP histograms and HOG of the
    normalised crop, and by the Fisher vector of the normalised crop's local
    DAISY descriptors (:class:`~eigenvision.descriptors.FisherVectors`, its
    Gaussian mixture learnt by :meth:`fit`). Pairs are compared by the log-likelihood ratio of a
    :class:`PLDA` model of each description, summed (:class:`PLDAFusion`); a
    logistic calibration, fitted on people held out of the PLDA fit, turns
    the ratio into ``P(same person)``.

    Parameters
    ----------
    shape : (H, W), default (120, 104)
        The aligned crops' size.
    eye_positions : ((u, v), (u, v)), default ((0.33, 0.42), (0.67, 0.42))
        Where :func:`~eigenvision.align_face` puts the eyes, as fractions of
        the crop's width and height: the default crop is three eye distances
        wide, the hair line and jaw inside it.
    descriptor : str or tuple of str, default ("daisy", "daisy", "lbp+hog", "fisher")
        What describes a crop (:func:`~eigenvision.descriptors.face_descriptors`:
        ``"pixels"``, ``"lbp"``, ``"hog"``, ``"lbp+hog"``, ``"daisy"`` or
        ``"lbp+hog+daisy"``), or ``"fisher"``: the Fisher vector of the crop's
        local DAISY descriptors (:class:`~eigenvision.descriptors.FisherVectors`,
        its mixture fitted by :meth:`fit` on a sample of the crops, kept as
        ``fisher_``; its own scales and mirror image). A tuple describes each
        crop several times, each description with a PLDA model of its own,
        and a pair's ratio is the sum of theirs (:class:`PLDAFusion`); see
        :meth:`descriptions`.
    lbp_cells : (rows, cols), default (10, 8)
        The grid of LBP histograms (:func:`~eigenvision.descriptors.lbp_histograms`;
        descriptors with ``"lbp"``).
    lbp_radii : sequence of int, default (1, 2, 3)
        The LBP radii, pixels: one histogram grid per radius.
    hog_cell : int, default 12
        HOG's cell side, pixels (:func:`~eigenvision.descriptors.hog_descriptor`;
        descriptors with ``"hog"``).
    fisher_clusters : int, default 128
        Gaussians of the ``"fisher"`` description's mixture.
    descriptor_scales : sequence of float, a tuple of them, or None, default None
        The crop is described at each of these sizes (relative to ``shape``;
        scikit-image's ``rescale`` with its anti-aliasing), the descriptors
        concatenated: the descriptors' cells and radii in pixels cover a
        larger share of a smaller crop. A tuple of sequences gives each
        description its own (:meth:`descriptions`). None: DAISY at 0.7 of
        the crop, the other descriptors at its full size.
    illumination : bool, "both" or tuple of bool, default (True, False, True, True)
        Tan & Triggs' normalisation before the descriptors
        (:func:`~eigenvision.normalize.illumination`), for all descriptions
        or, a tuple, for each ``descriptor`` in turn; ``"both"``: each
        descriptor twice, with it and without it. The normalised crop keeps
        the shape the light hides, the crop as it is keeps the shading the
        normalisation removes.
    mirror : bool, default True
        Describe each crop by the mean of its descriptors and its mirror
        image's (as Simonyan et al. 2013 do): a face and its mirror show one
        person, and the mean depends less on which side the light or a turn
        favours.
    length_norm : bool, default True
        PLDA's ``length_norm``: the PCA step's codes whitened and brought to
        one length (Garcia-Romero & Espy-Wilson 2011).
    pca_components : int, default 500
        PLDA's PCA step.
    lda_components : int or None, default 200
        PLDA's LDA step (:class:`PLDA`'s ``lda_components``; the identity
        rank at most this): the PCA step's codes projected onto their leading
        Fisher directions before the length norm. None: no LDA step.
    n_components : int, default 100
        PLDA's identity rank.
    calibration_share : float, default 0.1
        Share of the people (with two or more crops) held out of the PLDA fit
        to calibrate the probability on; split by person, never by crop.
    cohort_size : int, default 2000
        Faces of distinct training people kept as a cohort for adaptive
        symmetric score normalisation (Matějka et al. 2017): a pair's ratio
        ``s`` becomes ``((s - mu_a) / sigma_a + (s - mu_b) / sigma_b) / 2``,
        ``mu`` and ``sigma`` the mean and standard deviation of each face's
        ``cohort_top`` highest ratios against the cohort. A face that is
        like many strangers (a blurred, dark or common-looking face) no
        longer scores high against everyone. 0: raw ratios.
    cohort_top : int, default 100
        How many of a face's best cohort ratios its statistics read.
    seed : int, default 0
        Which people are held out, and which faces make the cohort.

    Attributes
    ----------
    plda_ : PLDA or PLDAFusion
        :class:`PLDAFusion` when there are several :meth:`descriptions`;
        :meth:`~PLDA.compact` (its PCA and LDA steps one map).
    calibration_ : (2,) ndarray
        ``(a, b)``: ``P(same) = 1 / (1 + exp(-(a s + b)))`` of a pair's score ``s``
        (the ratio, normalised when there is a cohort).
    threshold_ : float
        The score where ``P(same) = 1/2``: the model's decision.
    cohort_coordinates_ : (cohort_size, p) ndarray of float32 or None
        The cohort's faces in PLDA's pair coordinates (:meth:`PLDA.pair_coordinates`
        of their codes, where a ratio needs nothing else of them); None
        without normalisation. 8-bit integers in a :func:`quantized` model,
        the coordinates being ``cohort_coordinates_ * cohort_scale_``.
    cohort_scale_ : (p,) ndarray or None
        The scale of each axis of an 8-bit ``cohort_coordinates_``; None otherwise.
    fisher_ : FisherVectors or None
        The ``"fisher"`` description's encoder; None without one.
    cohort_ : (cohort_size, r) ndarray of float32 or None
        The cohort's codes, in files written before ``cohort_coordinates_``
        (read as it); None in models fitted now.

    References
    ----------
    X. Tan and B. Triggs (2010), Enhanced local texture feature sets for face
    recognition under difficult lighting conditions, IEEE TIP 19(6).
    K. Simonyan, O. Parkhi, A. Vedaldi and A. Zisserman (2013), Fisher vector
    faces in the wild, BMVC (descriptors of the face and its mirror image).
    """

    _params = {
        "shape": Param("shape", 16, 512),
        "eye_positions": Param("any"),
        "descriptor": Param("choice", choices=IDENTITY_DESCRIPTORS, sequence=True, max_length=8),
        "lbp_cells": Param("shape", 2, 64),
        "lbp_radii": Param("reals", 1, 16, max_length=8),
        "hog_cell": Param("int", 2, 64),
        "fisher_clusters": Param("int", 1, 4096),
        "descriptor_scales": Param("reals", 0.1, 4, max_length=8, sequence=True, optional=True),
        "illumination": Param("bool", also=("both",), sequence=True, max_length=8),
        "mirror": Param("bool"),
        "length_norm": Param("bool"),
        "pca_components": Param("int", 1, 100_000),
        "lda_components": Param("int", 1, 100_000, optional=True),
        "n_components": Param("int", 1, 100_000),
        "calibration_share": Param("real", 0, 1, open_low=True, open_high=True),
        "cohort_size": Param("int", 0, 1_000_000),
        "cohort_top": Param("int", 1, 1_000_000),
        "seed": Param("int", 0, 2**32 - 1),
    }

    #: Parameters added after models were first saved, with the value that keeps an older
    #: model file's behaviour (:func:`~eigenvision.load` gives it where a file has none).
    _former_defaults = {
        "mirror": False,
        "lbp_cells": (8, 8),
        "lbp_radii": (1, 2),
        "hog_cell": 8,
        "fisher_clusters": 128,
        "descriptor_scales": (1.0,),
        "cohort_size": 0,
        "length_norm": False,
        "lda_components": None,
    }

    _state = {
        "plda_": State("model"),
        "calibration_": State(shape=(2,)),
        "threshold_": State("real"),
        # int8 in a quantized model, with its scales
        "cohort_coordinates_": State(dtypes="fi", shape=("c", "p"), optional=True),
        "cohort_scale_": State(shape=("p",), optional=True, low=0),
        "cohort_": State(shape=("c", "r"), optional=True),  # files from before the coordinates
        # the "fisher" description's mixture; None or absent without one
        "fisher_": State("model", optional=True),
    }

    def __init__(
        self,
        *,
        shape=(120, 104),
        eye_positions=IDENTITY_EYE_POSITIONS,
        descriptor=("daisy", "daisy", "lbp+hog", "fisher"),
        lbp_cells=(10, 8),
        lbp_radii=(1, 2, 3),
        hog_cell=12,
        fisher_clusters=128,
        descriptor_scales=None,
        illumination=(True, False, True, True),
        mirror=True,
        length_norm=True,
        pca_components=500,
        lda_components=200,
        n_components=100,
        calibration_share=0.1,
        cohort_size=2000,
        cohort_top=100,
        seed=0,
    ):
        self.shape = shape
        self.eye_positions = eye_positions
        self.descriptor = descriptor
        self.lbp_cells = lbp_cells
        self.lbp_radii = lbp_radii
        self.hog_cell = hog_cell
        self.fisher_clusters = fisher_clusters
        self.descriptor_scales = descriptor_scales
        self.illumination = illumination
        self.mirror = mirror
        self.length_norm = length_norm
        self.pca_components = pca_components
        self.lda_components = lda_components
        self.n_components = n_components
        self.calibration_share = calibration_share
        self.cohort_size = cohort_size
        self.cohort_top = cohort_top
        self.seed = seed

    def fit(self, crops, labels):
        """Fit PLDA on most people's crops and the calibration on the others'.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.
        labels : (n,) array-like
            Their people.

        Returns
        -------
        self
        """
        check_params(self)
        self.fit_description(crops)
        return self.fit_descriptors(self.describe(crops), labels)

    def fit_descriptors(self, X, labels):
        """:meth:`fit` on descriptor rows already computed by :meth:`describe`.

        A learned description (``"fisher"``) must be learned first
        (:meth:`fit_description`); it is kept as it is.

        Parameters
        ----------
        X : (n, m) ndarray
        labels : (n,) array-like

        Returns
        -------
        self
        """
        check_params(self)
        labels = np.asarray(labels)
        if len(labels) != len(X):
            raise ValueError(f"labels must be one per crop: {len(labels)} for {len(X)} crops")
        people, counts = np.unique(labels, return_counts=True)
        repeated = people[counts >= 2]
        rng = np.random.default_rng(self.seed)
        n_held = max(2, int(round(self.calibration_share * len(repeated))))
        held = rng.permutation(repeated)[:n_held]
        calibrate = np.isin(labels, held)
        if len(repeated) < 4 or calibrate.all():
            raise ValueError(
                "the calibration needs at least two people with two or more crops beside those "
                f"the model learns from; got {len(repeated)} such people in all"
            )
        fitted = X[~calibrate]
        widths = self.description_widths() if len(self.descriptions()) > 1 else [X.shape[1]]
        if X.shape[1] != sum(widths):
            raise ValueError(
                f"X must be describe's rows: {len(widths)} descriptions {widths} wide, "
                f"{sum(widths)} columns, got {X.shape[1]}"
            )
        people = len(np.unique(labels[~calibrate]))
        pca = min(self.pca_components, len(fitted) - 1, *widths)
        rank = min(self.n_components, people - 1)
        lda = self.lda_components
        if lda is not None:  # the identity rank lives in the LDA step
            lda = min(lda, pca, people - 1)
            rank = min(rank, lda)
        options = dict(
            n_components=rank,
            pca_components=pca,
            length_norm=self.length_norm,
            lda_components=lda,
        )
        model = PLDA(**options) if len(widths) == 1 else PLDAFusion(tuple(widths), **options)
        # the PCA step is larger than the LDA step it feeds: a saved model holds their product
        self.plda_ = model.fit(fitted, labels[~calibrate]).compact()
        self.cohort_, self.cohort_coordinates_ = None, None
        if self.cohort_size:
            cohort = self.plda_.encode(
                fitted[_one_face_each(labels[~calibrate], self.cohort_size, rng)]
            )
            # float32: half the file
            self.cohort_coordinates_ = self.plda_.pair_coordinates(cohort).astype(np.float32)
        scores, same = _calibration_pairs(self, X[calibrate], labels[calibrate], rng)
        model = LogisticRegression(C=1e6).fit(scores[:, None], same)
        self.calibration_ = np.array([model.coef_[0, 0], model.intercept_[0]])
        self.threshold_ = float(-self.calibration_[1] / self.calibration_[0])
        return self

    def transform(self, crops):
        """Identity codes of aligned crops: PLDA's codes of their descriptors.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, k) ndarray
        """
        check_fitted(self, "plda_")
        return self.plda_.transform(self.describe(crops))

    def pairwise_scores(self, crops):
        """The log-likelihood ratio of one person for every pair of crops.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, n) ndarray
            Symmetric.
        """
        codes = self.encode(crops)
        return self.pairwise_log_odds(codes, codes)

    def pairwise_probability(self, crops):
        """``P(same person)`` of every pair of crops, by the calibration.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, n) ndarray
            Symmetric.
        """
        return self.probability(self.pairwise_scores(crops))

    def encode(self, crops):
        """Codes of aligned crops in PLDA's PCA step, for :meth:`pairwise_log_odds`.

        What a :class:`~eigenvision.Recognizer` with ``method="plda"`` enrols:
        comparing codes needs no descriptor again.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, r) ndarray of float64
        """
        check_fitted(self, "plda_")
        crops = np.asarray(crops)
        if crops.ndim != 3 or len(crops) <= _CROPS_AT_ONCE:
            return self.plda_.encode(self.describe(crops))  # describe checks the shape
        # a block of crops at a time: their descriptions are many times their size
        return np.concatenate(
            [
                self.plda_.encode(self.describe(crops[rows]))
                for rows in gen_batches(len(crops), _CROPS_AT_ONCE)
            ]
        )

    def score_pairs(self, crops_a, crops_b):
        """The score of one person for each pair of crops (see :meth:`pairwise_log_odds`).

        Parameters
        ----------
        crops_a, crops_b : (n, H, W) ndarray

        Returns
        -------
        (n,) ndarray
        """
        return self.paired_log_odds(self.encode(crops_a), self.encode(crops_b))

    def probability(self, llr):
        """``P(same person)`` of log-likelihood ratios, by the calibration.

        Parameters
        ----------
        llr : array-like

        Returns
        -------
        ndarray
        """
        check_fitted(self, "calibration_")
        a, b = self.calibration_
        return expit(a * np.asarray(llr, dtype=np.float64) + b)


def half_precision(model):
    """A copy of a fitted identity model whose large maps are kept in float16.

    Each description's map to its codes (a compact PLDA's ``step_``, ``(r, d)``)
    and the cohort's pair coordinates (``cohort_coordinates_``) are rounded
    to float16 and computed in float32 or wider, as before; each PLDA's
    copy of the training people's names (``classes_``, which scoring never
    reads) is left out. The rest (covariances, loadings, bases, the
    calibration) is kept as it is. Codes and ratios move by the round-off
    of float16, a relative ``2**-11`` in each weight; the calibration is
    the fitted model's. :func:`quantized` keeps the maps in 8 bits.

    Parameters
    ----------
    model : IdentityModel, PLDAFusion or PLDA
        Fitted; a PLDA with PCA and LDA steps is made :meth:`~PLDA.compact` first.

    Returns
    -------
    Same type as ``model``
    """
    return _shipped_form(model, "half_precision", _float16, _float16)


def quantized(model):
    """A copy of a fitted identity model whose large maps are kept in 8 bits: the form to ship.

    Each description's map to its codes (a compact PLDA's ``step_``, ``(r, d)``)
    is kept as 8-bit integers with one scale per row (``step_scale_``), the
    largest weight of a row at +-127 (symmetric per-channel quantisation,
    as Jacob et al. 2018 keep a layer's weights); the cohort's pair
    coordinates likewise with one scale per axis (``cohort_scale_``). Both
    are computed in float32 or wider, made once. The covariances, loadings
    and pair basis are kept in float32, each PLDA's copy of the training
    people's names (``classes_``, which scoring never reads) is left out,
    and the calibration is the fitted model's. A weight moves by at most
    half its row's step (``step_scale_ / 2``), the codes and ratios by the
    sum of those moves.

    Parameters
    ----------
    model : IdentityModel, PLDAFusion or PLDA
        Fitted (in any of these forms); a PLDA with PCA and LDA steps is made
        :meth:`~PLDA.compact` first.

    Returns
    -------
    Same type as ``model``

    References
    ----------
    B. Jacob, S. Kligys, B. Chen et al. (2018), Quantization and training of
    neural networks for efficient integer-arithmetic-only inference, CVPR.
    """
    return _shipped_form(
        model,
        "quantized",
        partial(_eight_bits, axis=1),
        partial(_eight_bits, axis=0),
        parameters=np.float32,
    )


def _shipped_form(model, name, store_map, store_cohort, *, parameters=None):
    """``model`` with each PLDA block's map kept by ``store_map`` and the cohort by
    ``store_cohort`` (each ``array -> (values, scale or None)``), and the blocks' covariances,
    loadings and pair basis in the dtype ``parameters`` (None: as they are)."""
    forms = (name, store_map, store_cohort)
    if isinstance(model, IdentityModel):
        check_fitted(model, "plda_")
        shipped = copy.copy(model)
        shipped.plda_ = _shipped_form(model.plda_, *forms, parameters=parameters)
        if getattr(model, "cohort_coordinates_", None) is not None:
            shipped.cohort_coordinates_, shipped.cohort_scale_ = store_cohort(_cohort_of(model))
        return shipped
    if isinstance(model, PLDAFusion):
        check_fitted(model, "models_")
        shipped = copy.copy(model)
        shipped.models_ = {
            key: _shipped_form(block, *forms, parameters=parameters)
            for key, block in model.models_.items()
        }
        return shipped
    if not isinstance(model, PLDA):
        raise TypeError(
            f"{name} takes an IdentityModel, PLDAFusion or PLDA, got {type(model).__name__}"
        )
    shipped = model.compact()  # a copy
    shipped.step_, shipped.step_scale_ = store_map(shipped._step_map())
    for member in ("identity_loadings_", "within_covariance_", "pair_basis_"):
        value = getattr(shipped, member, None)
        if parameters is not None and value is not None:
            setattr(shipped, member, value.astype(parameters))
    shipped.classes_ = None
    shipped._components = None  # made again from the stored map
    return shipped


def _float16(values):
    """``values`` kept in float16, without a scale: ``(values, None)``."""
    return np.asarray(values).astype(np.float16), None


def _eight_bits(values, axis):
    """``values`` as int8 ``q`` and a float32 ``scale`` per slice along ``axis`` (1: per row, 0:
    per column), ``q * scale`` nearest ``values`` with each slice's largest magnitude at 127 (an
    all-zero slice: scale 1)."""
    values = np.asarray(values, dtype=np.float64)
    scale = np.abs(values).max(axis=axis, keepdims=True) / 127
    scale[scale == 0] = 1.0
    integers = np.rint(values / scale).astype(np.int8)
    return integers, scale.squeeze(axis).astype(np.float32)


def _stored(values, scale, dtype, axis):
    """An array kept in a shipped form, in ``dtype``: 8-bit ``values`` times their ``scale`` (one
    per slice along ``axis``, as :func:`_eight_bits` made it), or float ``values`` as they are."""
    computed = values.astype(dtype)
    if scale is not None:
        computed *= np.expand_dims(scale.astype(dtype), axis)
    return computed


def centred_on(model, crops=None, *, codes=None):
    """A copy of an identity model whose codes are centred on faces of another kind of photo.

    Unsupervised mean adaptation, as speaker verification moves an
    out-of-domain PLDA to unlabelled in-domain data (Garcia-Romero et al.
    2014): a model trained on news photos sees two studio photos of
    different people as alike, since the shared conditions (camera, light,
    pose, background) move both codes the same way from the training
    faces' mean. Centring the length-normalised codes on the new photos'
    own mean removes that shared offset. Each PLDA's ``code_mean_`` moves
    by the mean of the crops' codes (its part of them), and the cohort with
    it, so the adapted model encodes every face, the cohort's too, as one
    model; the covariances and the calibration are the model's.

    Parameters
    ----------
    model : IdentityModel
        Fitted, with ``length_norm`` (the codes are centred after it).
    crops : (n, H, W) ndarray
        Faces of many people photographed as the faces to compare are (a
        gallery, a set of strangers), cut for the model
        (:func:`~eigenvision.faces.compare.model_crop`); ``n >= 2``. Faces of
        one or two people would centre the codes on those people.
    codes : (n, r) ndarray, optional
        Instead of ``crops``, their codes (``model.encode(crops)``, e.g. a
        :class:`~eigenvision.Recognizer`'s ``gallery_``): nothing is encoded again.

    Returns
    -------
    IdentityModel

    References
    ----------
    D. Garcia-Romero, A. McCree, S. Shum, N. Brümmer and C. Vaquero (2014),
    Unsupervised domain adaptation for i-vector speaker recognition, Odyssey.
    """
    if not isinstance(model, IdentityModel):
        raise TypeError(f"centred_on takes an IdentityModel, got {type(model).__name__}")
    check_fitted(model, "plda_")
    if not model.length_norm:
        raise ValueError(
            "centred_on needs a model with length_norm=True: its codes are centred after "
            "the length normalisation"
        )
    if (crops is None) == (codes is None):
        raise ValueError("centred_on takes the faces' crops or their codes, one of the two")
    if codes is None:
        crops = np.asarray(crops)
        if crops.ndim != 3 or len(crops) < 2:
            raise ValueError(
                f"crops must be an (n, H, W) stack of at least 2 faces of many people, got "
                f"shape {crops.shape}"
            )
        codes = model.encode(crops)
    plda = model.plda_
    blocks = plda.models_.values() if isinstance(plda, PLDAFusion) else [plda]
    width = sum(len(block.code_mean_) for block in blocks)
    codes = np.asarray(codes, dtype=np.float64)
    if codes.shape[1:] != (width,) or len(codes) < 2 or not np.all(np.isfinite(codes)):
        raise ValueError(
            f"codes must be an (n, {width}) array of at least 2 finite codes of this model "
            f"(model.encode(crops)), got shape {codes.shape}"
        )
    shift = codes.mean(axis=0)

    def moved(block, part):
        block = copy.copy(block)
        block.code_mean_ = block.code_mean_ + part
        return block

    adapted = copy.copy(model)
    if isinstance(plda, PLDAFusion):
        cuts = plda._cuts(len(shift), "codes")
        adapted.plda_ = copy.copy(plda)
        adapted.plda_.models_ = {
            name: moved(block, shift[cut])
            for (name, block), cut in zip(plda.models_.items(), cuts, strict=True)
        }
    else:
        adapted.plda_ = moved(plda, shift)
    cohort = _cohort_of(model)  # files from before the coordinates: made from their codes
    if cohort is not None:
        dtype = np.float32 if cohort.dtype == np.float64 else cohort.dtype  # as fit keeps them
        cohort = cohort.astype(np.float64) - plda.pair_coordinates(shift[None])
        adapted.cohort_coordinates_, adapted.cohort_ = cohort.astype(dtype), None
        adapted.cohort_scale_ = None  # a quantized cohort is kept moved in float32
    return adapted


def _computed_step(plda):
    """A compact PLDA's ``step_`` as computed with: a :func:`half_precision` or :func:`quantized`
    map in its mean's dtype, float32 or wider (numpy has no fast float16 or int8 arithmetic),
    made once per map."""
    step, scale = plda.step_, getattr(plda, "step_scale_", None)
    if step.dtype.kind == "f" and step.dtype.itemsize >= 4 and scale is None:
        return step
    dtype = np.promote_types(plda.mean_.dtype, np.float32)
    return kept_on(
        plda, "_computed_step_memo", (step, scale), lambda: _stored(step, scale, dtype, axis=1)
    )


def _cohort_of(model):
    """An :class:`IdentityModel`'s cohort in PLDA's pair coordinates, or None:
    ``cohort_coordinates_`` (a :func:`quantized` one in float32, made once), or made from the
    codes files written before it hold (``cohort_``)."""
    cohort = getattr(model, "cohort_coordinates_", None)
    if cohort is not None:
        scale = getattr(model, "cohort_scale_", None)
        if scale is None:
            return cohort
        return kept_on(
            model,
            "_cohort_memo",
            (cohort, scale),
            lambda: _stored(cohort, scale, np.float32, axis=0),
        )
    codes = getattr(model, "cohort_", None)
    return None if codes is None else model.plda_.pair_coordinates(codes)


def _cohort_statistics(plda, coordinates, cohort, top):
    """:meth:`IdentityModel.cohort_statistics` of faces in pair coordinates: the mean and spread
    of each face's ``top`` best ratios against the cohort."""
    top = min(top, len(cohort))
    mean, std = np.empty(len(coordinates)), np.empty(len(coordinates))
    for rows in gen_batches(len(coordinates), _BLOCK_ROWS):  # a block's ratios at a time
        against = plda.pairwise_log_odds(coordinates[rows], cohort, coordinates=True)
        best = -np.partition(-against, top - 1, axis=1)[:, :top]
        mean[rows], std[rows] = best.mean(axis=1), best.std(axis=1)
    return mean, np.maximum(std, 1e-12)


def _symmetric_normalized(scores, statistics_a, statistics_b):
    """Adaptive symmetric normalisation: the mean of ``scores`` standardised by each side's,
    written over ``scores`` (a set's (n, n) scores: one temporary as large, not four)."""
    (mean_a, std_a), (mean_b, std_b) = statistics_a, statistics_b
    by_a = scores - mean_a
    by_a /= std_a
    scores -= mean_b
    scores /= std_b
    scores += by_a
    scores /= 2
    return scores


def _one_face_each(labels, size, rng):
    """Indices of one random face of each of ``size`` random people (all people if fewer)."""
    order = rng.permutation(len(labels))
    _, first = np.unique(labels[order], return_index=True)
    chosen = order[first]
    return np.sort(rng.permutation(chosen)[:size])


def _calibration_pairs(model, X, labels, rng, max_pairs=20_000):
    """Scores of the same-person pairs of held-out people and as many others."""
    rows, cols = np.triu_indices(len(X), 1)
    same = labels[rows] == labels[cols]
    positive = np.flatnonzero(same)
    negative = np.flatnonzero(~same)
    take = min(len(positive), max_pairs // 2)
    positive = rng.choice(positive, take, replace=False)
    negative = rng.choice(negative, min(len(negative), take), replace=False)
    chosen = np.concatenate([positive, negative])
    codes = model.plda_.encode(X)
    scores = model.pairwise_log_odds(codes, codes)[rows[chosen], cols[chosen]]
    return scores, same[chosen]
