"""Late fusion of PLDA models: several descriptions of one face, their log-likelihood ratios
summed (Kittler et al. 1998's product rule)."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import validate_data

from .._base import check_fitted
from .._spec import Param, State, check_params
from ..imageset import check_labels
from .plda import PLDA, PairScores

__all__ = ["PLDAFusion"]


class PLDAFusion(PairScores, TransformerMixin, BaseEstimator):
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
    widths : sequence of int, optional
        The blocks' widths, in column order; they sum to the number of features.
        Default: one block of every column (then the model is one :class:`PLDA`).
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
        "widths": Param("reals", 1, 10_000_000, min_length=1, max_length=16, optional=True),
        "n_components": Param("int", 1, 100_000, optional=True),
        "pca_components": Param("int", 1, 100_000, optional=True),
        "length_norm": Param("bool"),
        "lda_components": Param("int", 1, 100_000, optional=True),
    }

    _state = {
        "models_": State("models"),
        "n_features_in_": State("int", low=1),
        "n_components_": State("int", low=1),
    }

    def __init__(
        self,
        widths=None,
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
            sizes = [width] if self.widths is None else [int(w) for w in self.widths]
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
        if self.widths is not None and any(int(w) != w for w in self.widths):
            raise ValueError(
                f"PLDAFusion.widths must be whole numbers of columns, got {self.widths!r}"
            )
        X, y = validate_data(self, X, check_labels(y), dtype=[np.float64, np.float32])
        self.models_ = {}
        blocks = self._cuts(X.shape[1], "features")
        for i, block in enumerate(blocks):
            self.models_[f"block{i}"] = PLDA(
                n_components=self.n_components,
                pca_components=self.pca_components,
                length_norm=self.length_norm,
                lda_components=self.lda_components,
            ).fit(X[:, block], y)
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

    def _check_relations(self):
        """One block model per width, reading the widths' features
        (:func:`~eigenvision._spec.check_model`)."""
        widths = [int(w) for w in self.widths]
        names = [f"block{i}" for i in range(len(widths))]
        if list(self.models_) != names:
            raise ValueError(
                f"PLDAFusion.models_ must be {names}, one per width, got {list(self.models_)}"
            )
        held = [part.n_features_in_ for part in self.models_.values()]
        if held != widths or sum(widths) != self.n_features_in_:
            raise ValueError(
                f"PLDAFusion's block models read {held} features, its widths say {widths} "
                f"({self.n_features_in_} in all)"
            )
