"""Object / non-object decisions from two eigenspaces: the log DFFS and DIFS of each, weighed.

A single eigenspace's DFFS is a poor detector where the object varies more
than the clutter around it: wild eyes are explained worse by ten components
than smooth cheeks are (measured on three HELEN training faces: the true
eye's DFFS 0.08-0.33, the map's minimum, on skin, 0.05-0.08). Sung &
Poggio (1998) and Moghaddam & Pentland (1997) answer with a second model
of what is *not* the object; here the four log distances of a window to the
object space and to a space of mined non-object windows are weighed by
logistic regression.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from .detection import window_maps

__all__ = ["log_distances", "log_distance_maps", "fit_decision"]

_FLOOR = 1e-12  # log of an exact fit


def log_distances(X, spaces) -> np.ndarray:
    """``log`` DFFS and DIFS of zero-mean, unit-norm rows to each space.

    Parameters
    ----------
    X : (n, d) ndarray
    spaces : sequence of Eigenspace

    Returns
    -------
    (n, 2 len(spaces)) ndarray
        ``[log dffs_1, log difs_1, log dffs_2, ...]``.
    """
    columns = []
    for space in spaces:
        columns += [space.dffs(X), space.difs(X)]
    return np.log(np.maximum(np.stack(columns, axis=1), _FLOOR))


def log_distance_maps(image, spaces) -> list:
    """:func:`log_distances` of every window of ``image`` (each made zero-mean, unit-norm).

    Parameters
    ----------
    image : (H, W) ndarray
    spaces : sequence of Eigenspace
        Fitted on windows of one shape ``(h, w)``.

    Returns
    -------
    list of (H - h + 1, W - w + 1) ndarray
        In :func:`log_distances`' order; ``+inf`` DFFS on flat windows.
    """
    maps = []
    for space in spaces:
        windows = window_maps(image, space, normalize="window")
        codes = windows.codes.astype(np.float64)
        squares = codes * codes
        dffs = np.maximum(windows.residual_energy - squares.sum(axis=0), 0.0)
        difs = np.einsum("kij,k->ij", squares, 1.0 / space.explained_variance_)
        with np.errstate(invalid="ignore"):  # flat windows: inf energy
            maps += [np.log(np.maximum(dffs, _FLOOR)), np.log(np.maximum(difs, _FLOOR))]
    return maps


def fit_decision(positive, negative):
    """Logistic weights separating positive from negative feature rows (classes balanced).

    Parameters
    ----------
    positive, negative : (n, f) ndarray
        :func:`log_distances` of object and non-object windows.

    Returns
    -------
    (f + 1,) ndarray
        The ``f`` weights, then the intercept: log-odds of "object" are
        ``features @ w[:-1] + w[-1]``.
    """
    X = np.vstack([positive, negative])
    y = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
    model = LogisticRegression(class_weight="balanced", max_iter=1000).fit(X, y)
    return np.r_[model.coef_[0], model.intercept_[0]].astype(np.float64)
