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
from typing import NamedTuple

import numpy as np
from scipy import linalg
from sklearn.utils import gen_batches

from .._base import SupervisedSubspaceModel, check_fitted, kept_on
from .._spec import INPUT_STATE, Param, State, check_eight_bits, check_params
from ..eigenspace import Eigenspace, eigenspace_within_rank
from ..fisher import discriminant_directions

__all__ = ["PLDA", "JointBayesian", "PairForm", "diagonal_pair_scoring", "log_likelihood"]

_LOG_2PI = np.log(2 * np.pi)
BLOCK_ROWS = 1024  # rows of a pairwise score matrix whose temporaries are made at a time


class PairScores:
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


class PLDA(PairScores, SupervisedSubspaceModel):
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
    pair_basis_ : (r, p) ndarray
        ``V`` of :func:`diagonal_pair_scoring`: :meth:`pair_coordinates` are
        ``codes @ pair_basis_``. Kept with the model, so that coordinates kept
        elsewhere (an :class:`IdentityModel`'s cohort) stay its own: an
        eigensolver run again may give another sign or order.
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
        "within_covariance_": State(shape=("r", "r"), positive_definite=True),
        "pair_basis_": State(shape=("r", "p")),
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
        if self.pca_components is None:  # null directions (constant pixels) would be singular
            pca = eigenspace_within_rank(X, r, whiten=self.length_norm)
            r = pca.n_components_
        else:
            pca = Eigenspace(r, whiten=self.length_norm).fit(X)
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
        self.pca_ = pca
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
        try:
            F, within, history = _expectation_maximisation(
                Z, codes, p, q, max_iter=self.max_iter, tol=self.tol
            )
        except np.linalg.LinAlgError:
            raise ValueError(
                f"{type(self).__name__}: the within-person covariance of the {r}-dimensional "
                f"{step} step is singular (images that repeat within a person, or pixels that "
                "vary only between people); lower pca_components"
                + ("" if lda is None else " or lda_components")
                + " or drop the repeated images"
            ) from None
        self.identity_loadings_, self.within_covariance_ = F, within
        self.log_likelihood_, self.n_iter_ = history, len(history)
        # kept, not made again when read: codes kept in pair coordinates need this very basis
        self.pair_basis_ = diagonal_pair_scoring(F, within).basis
        self.mean_ = self.pca_.mean_
        self.classes_ = classes
        self.n_components_ = p
        return self

    @property
    def components_(self):
        """``transform``'s ``(p, d)`` map: ``(I + F^T S_w^-1 F)^-1 F^T S_w^-1`` times the PCA
        step's components (the posterior mean of the identity variable), in their dtype."""
        inputs = (self.identity_loadings_, self.within_covariance_, self.mean_)
        inputs += tuple(
            getattr(self, name, None) for name in ("pca_", "lda_", "step_", "step_scale_")
        )
        # in the steps' dtype: the PCA step's mean, components and a compact step_ share it
        return kept_on(
            self,
            "components",
            inputs,
            lambda: (self._posterior() @ self._step_map()).astype(self.mean_.dtype),
        )

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
            return stored_values(self.step_, getattr(self, "step_scale_", None), np.float64, axis=1)
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
            compacted.pca_, compacted.lda_ = None, None
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
        for rows in gen_batches(len(u), BLOCK_ROWS):
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
        if not np.all(np.isfinite(codes)):
            raise ValueError(
                "codes hold NaN or infinite values; encode finite descriptions (encode())"
            )
        return codes if given else codes @ form.basis

    def _pair_form(self):
        """:func:`diagonal_pair_scoring` of the fitted covariances in ``pair_basis_``, made once
        per set of them."""
        check_fitted(self, "identity_loadings_")
        fitted = (self.identity_loadings_, self.within_covariance_, self.pair_basis_)
        return kept_on(self, "pair_form", fitted, lambda: diagonal_pair_scoring(*fitted))

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

    def _check_relations(self):
        """The steps chain: the PCA step's codes feed the LDA step (if any), whose codes the
        model reads; or one map, a compact model's ``step_``, in their place (each declaration
        binds only its own members' lengths); a kept ``pair_basis_`` makes both covariances
        diagonal (:func:`~eigenvision._spec.check_model`)."""
        name = type(self).__name__
        basis = self.pair_basis_.astype(np.float64)  # a quantized model keeps them in float32
        within = basis.T @ self.within_covariance_.astype(np.float64) @ basis
        projected = self.identity_loadings_.astype(np.float64).T @ basis  # V^T S_b V = P^T P
        between = projected.T @ projected
        off = between - np.diag(np.diag(between))
        scale = max(1.0, float(np.abs(between).max()))
        if not (
            np.allclose(within, np.eye(len(within)), atol=1e-6)
            and np.abs(off).max() <= 1e-6 * scale
        ):
            raise ValueError(
                f"{name}.pair_basis_ does not make its covariances diagonal (V^T S_w V = I, "
                "V^T S_b V diagonal): the file is damaged; fit the model again"
            )
        pca, step = getattr(self, "pca_", None), getattr(self, "step_", None)
        if (pca is None) == (step is None):
            raise ValueError(
                f"{name} needs its PCA step (pca_) or, compact, one map (step_) in its place; "
                f"the file holds {'both' if step is not None else 'neither'}"
            )
        lda = getattr(self, "lda_", None)
        check_eight_bits(self, "step_", "step_scale_")
        if step is not None:
            if lda is not None:
                raise ValueError(f"{name}.step_ holds the LDA step already; lda_ must be None")
            return  # step_'s rows and the loadings' bind through their declarations (r)
        steps = pca.n_components_
        if lda is not None and lda.shape[0] != steps:
            raise ValueError(f"{name}.lda_ maps {lda.shape[0]} codes, the PCA step gives {steps}")
        width = steps if lda is None else lda.shape[1]
        if self.identity_loadings_.shape[0] != width:
            raise ValueError(
                f"{name}.identity_loadings_ has {self.identity_loadings_.shape[0]} rows, "
                f"its codes are {width} wide"
            )


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

    def __init__(self, *, pca_components=None, length_norm=False, max_iter=200, tol=1e-7):
        self.pca_components = pca_components
        self.length_norm = length_norm
        self.max_iter = max_iter
        self.tol = tol

    def _ranks(self):
        """Both covariances of full rank."""
        return None, None


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


def stored_values(values, scale, dtype, axis):
    """An array kept in a shipped form, in ``dtype``: 8-bit ``values`` times their ``scale`` (one
    per slice along ``axis``, as :func:`_eight_bits` made it), or float ``values`` as they are."""
    computed = values.astype(dtype)
    if scale is not None:
        computed *= np.expand_dims(scale.astype(dtype), axis)
    return computed


def _computed_step(plda):
    """A compact PLDA's ``step_`` as computed with: a :func:`half_precision` or :func:`quantized`
    map in its mean's dtype, float32 or wider (numpy has no fast float16 or int8 arithmetic),
    made once per map."""
    step, scale = plda.step_, getattr(plda, "step_scale_", None)
    if step.dtype.kind == "f" and step.dtype.itemsize >= 4 and scale is None:
        return step
    dtype = np.promote_types(plda.mean_.dtype, np.float32)
    return kept_on(
        plda, "computed_step", (step, scale), lambda: stored_values(step, scale, dtype, axis=1)
    )
