"""Fisherfaces: PCA to ``n - c`` dimensions, then Fisher's linear discriminant."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ._base import SupervisedSubspaceModel
from ._linalg import generalized_eigh, sign_flip
from ._spec import INPUT_STATE, Param, State
from .eigenspace import Eigenspace

__all__ = ["FisherSpace", "discriminant_directions"]


def discriminant_directions(Z, codes, n_directions):
    """Fisher's discriminant directions of centred codes: ``S_b w = lambda S_w w``, largest first.

    Parameters
    ----------
    Z : (n, r) ndarray
        Centred codes (a PCA step's), where the within-class scatter is full rank.
    codes : (n,) int ndarray
        Each row's class, ``0 .. c - 1``.
    n_directions : int
        At most ``c - 1`` carry information.

    Returns
    -------
    values : (n_directions,) ndarray
        The generalised eigenvalues, the ratio of between- to within-class scatter.
    vectors : (r, n_directions) ndarray
        ``S_w``-orthonormal: ``vectors.T @ S_w @ vectors = I``, ``S_w`` the
        within-class scatter (a sum over rows, not a mean).

    References
    ----------
    R. A. Fisher (1936), The use of multiple measurements in taxonomic
    problems, Annals of Eugenics 7(2).
    """
    Z = np.asarray(Z, dtype=np.float64)
    c = int(codes.max()) + 1
    class_means = np.zeros((c, Z.shape[1]))
    np.add.at(class_means, codes, Z)
    counts = np.bincount(codes, minlength=c).astype(np.float64)
    class_means /= counts[:, None]
    within = Z - class_means[codes]
    scatter_within = within.T @ within
    # Z is centred, so the between-class scatter is sum_c n_c m_c m_c^T.
    scatter_between = (class_means * counts[:, None]).T @ class_means
    ridge = 1e-12 * np.trace(scatter_within) / len(scatter_within)
    values, vectors = generalized_eigh(
        scatter_between, scatter_within + ridge * np.eye(len(scatter_within))
    )
    return values[::-1][:n_directions], vectors[:, ::-1][:, :n_directions]  # largest first


class FisherSpace(SupervisedSubspaceModel):
    """Fisherfaces (Belhumeur, Hespanha & Kriegman 1997).

    PCA first reduces the data to ``n - c`` dimensions, where the
    within-class scatter ``S_w`` is non-singular; the generalised eigenproblem
    ``S_b w = lambda S_w w`` then gives at most ``c - 1`` discriminant
    directions. The projection is ``z = W^T V (x - m)``.

    Parameters
    ----------
    n_components : int, optional
        Discriminant directions kept, at most ``c - 1`` (the default).
    pca_components : int, optional
        Dimension of the PCA step; ``n - c`` by default.

    Attributes
    ----------
    mean_ : (d,) ndarray
    components_ : (k, d) ndarray
        The "Fisherfaces" ``W^T V``: unit-length rows, ``S_w``-orthogonal
        (the projected within-class scatter is diagonal), not orthogonal in
        general.
    eigenvalues_ : (k,) ndarray
        The generalised eigenvalues, the ratio of between- to within-class
        scatter along each direction.
    classes_ : (c,) ndarray
    pca_ : Eigenspace
        The fitted PCA step.

    References
    ----------
    P. Belhumeur, J. Hespanha and D. Kriegman (1997), Eigenfaces vs.
    Fisherfaces: recognition using class specific linear projection, IEEE
    TPAMI 19(7).
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, optional=True),
        "pca_components": Param("int", 1, optional=True),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        **INPUT_STATE,
        "pca_": State("model"),
        "mean_": State(shape=("d",)),
        "components_": State(shape=("k", "d")),
        "eigenvalues_": State(shape=("k",)),
        "classes_": State(dtypes="biufU", shape=("c",)),
        "n_components_": State("int", dim="k"),
    }

    def __init__(self, n_components=None, *, pca_components=None):
        self.n_components = n_components
        self.pca_components = pca_components

    def fit(self, X, y):
        """Fit on images or flattened data ``X`` with class labels ``y`` (n,).

        Parameters
        ----------
        X : (n, d) ndarray, (n, H, W) image stack or ImageSet
        y : (n,) array-like
            Class labels, at least 2 classes and more samples than classes.

        Returns
        -------
        self
        """
        X, classes, codes = self._validate_labelled(X, y)
        n, c = len(X), len(classes)
        if n <= c:
            raise ValueError(
                f"Fisherfaces need more samples ({n}) than classes ({c}); "
                "add at least two images of some class"
            )
        max_k = c - 1
        k = max_k if self.n_components is None else int(self.n_components)
        if not 1 <= k <= max_k:
            raise ValueError(f"n_components={self.n_components} must lie in [1, c - 1 = {max_k}]")
        pca_k = min(n - c, X.shape[1]) if self.pca_components is None else self.pca_components
        if isinstance(pca_k, bool) or not isinstance(pca_k, Integral) or pca_k < k:
            raise ValueError(
                f"pca_components={pca_k!r} must be an int >= n_components ({k}): the "
                "discriminant directions live in the PCA step's space"
            )
        pca = Eigenspace(n_components=pca_k).fit(X)
        values, vectors = discriminant_directions(pca.transform(X), codes, k)
        # Unit-length directions (Belhumeur et al., OpenCV, facerec): the S_w-orthonormal
        # scaling of eigh weighs every direction equally, noise-fitted ones included.
        vectors = sign_flip((vectors / np.linalg.norm(vectors, axis=0)).T).T
        self.pca_ = pca
        self.mean_ = pca.mean_
        self.components_ = (vectors.T @ pca.components_.astype(np.float64)).astype(X.dtype)
        self.eigenvalues_ = values
        self.classes_ = classes
        self.n_components_ = k
        return self
