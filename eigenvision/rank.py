"""Rank selection: how many principal components the data supports.

Horn's parallel analysis by column permutation (the lecture's method), the
eigengap and the explained-variance fraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy import linalg

from ._base import flatten_images
from ._errors import EigenvisionError, refuse_complex

__all__ = ["RankSelection", "select_rank"]


@dataclass(frozen=True)
class RankSelection:
    """The result of :func:`select_rank`.

    Attributes
    ----------
    rank : int
        The chosen number of components.
    method : str
    spectrum : (m,) ndarray
        Singular values of the (centred) data, largest first.
    reference : (n_permutations, m) ndarray or None
        Singular values of the column-permuted copies (method "permutation").
    threshold : (m,) ndarray or None
        The reference quantile each singular value is compared with.
    """

    rank: int
    method: str
    spectrum: np.ndarray
    reference: np.ndarray | None = None
    threshold: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"RankSelection(rank={self.rank}, method={self.method!r}, m={len(self.spectrum)})"


def select_rank(
    X,
    *,
    method: str = "permutation",
    n_permutations: int = 20,
    quantile: float = 0.95,
    fraction: float = 0.95,
    center: bool = True,
    seed: int = 0,
    max_rank: int | None = None,
) -> RankSelection:
    """Choose the number of principal components.

    Parameters
    ----------
    X : (n, d) ndarray or (n, H, W) image stack
    method : {"permutation", "gap", "variance"}
        ``"permutation"`` (the lecture's method, Horn's parallel analysis):
        compare the singular values of ``X`` with those of copies whose
        columns were permuted independently, destroying the correlations
        between features; the rank is the number of leading singular values
        above the ``quantile`` of the permuted ones at the same index.
        ``"gap"``: the ``r`` maximising ``lambda_r / lambda_{r+1}`` (the
        eigengap). ``"variance"``: the smallest ``r`` explaining ``fraction``
        of the variance.
    n_permutations : int, default 20
    quantile : float, default 0.95
    fraction : float, default 0.95
    center : bool, default True
    seed : int, default 0
    max_rank : int, optional
        ``"gap"``: look for the gap among the first ``max_rank`` values only
        (a near-singular tail, e.g. always-blank border pixels, has huge
        ratios that say nothing about the signal). Default: the first half
        of the spectrum, so the noise floor's tail is never searched
        (searching all of it, 300 x 256 Gaussian noise chose 255).

    Returns
    -------
    RankSelection

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 30)) * 3
    >>> X += rng.normal(size=(200, 30))
    >>> select_rank(X, method="permutation").rank
    3
    """
    X, _ = flatten_images(X)
    refuse_complex(X, "X")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or min(X.shape) < 2:
        raise ValueError(f"X must be (n, d) with n, d >= 2, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; clean or impute them first")
    if center:
        X = X - X.mean(axis=0)
    spectrum = linalg.svdvals(X, check_finite=False)
    if spectrum[0] == 0:
        raise EigenvisionError("X has zero variance; there is no rank to select")
    if method == "permutation":
        if not 0.0 < quantile < 1.0:
            raise ValueError(f"quantile must lie in (0, 1), got {quantile}")
        if (
            isinstance(n_permutations, bool)
            or not isinstance(n_permutations, Integral)
            or n_permutations < 1
        ):
            raise ValueError(f"n_permutations must be a positive int, got {n_permutations!r}")
        rng = np.random.default_rng(seed)
        reference = np.empty((int(n_permutations), len(spectrum)))
        for i in range(len(reference)):
            permuted = rng.permuted(X, axis=0)  # each column shuffled on its own
            reference[i] = linalg.svdvals(permuted, check_finite=False)
        threshold = np.quantile(reference, quantile, axis=0)
        above = spectrum > threshold
        rank = len(above) if above.all() else int(np.argmin(above))
        return RankSelection(rank, method, spectrum, reference, threshold)
    eigen = spectrum**2
    if method == "gap":
        positive = eigen > eigen[0] * 1e-12
        m = int(positive.sum())
        if max_rank is None:
            max_rank = max(1, len(eigen) // 2)
        if isinstance(max_rank, bool) or not isinstance(max_rank, Integral) or max_rank < 1:
            raise ValueError(f"max_rank must be a positive int, got {max_rank!r}")
        m = min(m, int(max_rank) + 1)
        if m < 2:
            return RankSelection(1, method, spectrum)
        ratios = eigen[: m - 1] / eigen[1:m]
        return RankSelection(int(np.argmax(ratios)) + 1, method, spectrum)
    if method == "variance":
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"fraction must lie in (0, 1], got {fraction}")
        ratio = np.cumsum(eigen) / eigen.sum()
        rank = int(np.searchsorted(ratio, fraction - 1e-12) + 1)
        return RankSelection(min(rank, len(eigen)), method, spectrum)
    raise ValueError(f"method must be 'permutation', 'gap' or 'variance', got {method!r}")
