"""Evaluation: ROC analysis, equal error rate, recognition rates and rank curves.

Scores follow scikit-learn's convention: higher means "more positive". For
distances pass ``-distance``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone

from .io import ImageSet

__all__ = [
    "roc_curve",
    "auc",
    "eer",
    "recognition_rate",
    "rank_curve",
    "cross_validate",
]


def roc_curve(y_true, scores):
    """Receiver operating characteristic for binary labels (Fawcett 2006).

    Parameters
    ----------
    y_true : (n,) array-like of bool or {0, 1}
        True for positives.
    scores : (n,) array-like
        Higher means more likely positive.

    Returns
    -------
    fpr, tpr : (m,) ndarray
        False- and true-positive rates, from (0, 0) to (1, 1), non-decreasing.
    thresholds : (m,) ndarray
        ``score >= thresholds[i]`` is called positive at point ``i``; the
        first is ``+inf``.

    Notes
    -----
    One point per distinct score, ties handled together (scikit-learn's
    ``roc_curve(..., drop_intermediate=False)``). With no positives or no
    negatives the undefined rate is NaN and a warning is raised.

    References
    ----------
    T. Fawcett (2006), An introduction to ROC analysis, Pattern Recogn.
    Lett. 27(8).

    Examples
    --------
    >>> fpr, tpr, thr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    y_true = np.asarray(y_true).astype(bool).ravel()
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if y_true.shape != scores.shape:
        raise ValueError(f"y_true has {y_true.size} entries but scores {scores.size}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinite values")
    order = np.argsort(-scores, kind="mergesort")
    scores, y_true = scores[order], y_true[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]
    tps = np.cumsum(y_true)[last_of_tie]
    fps = (last_of_tie + 1) - tps
    tps, fps = np.r_[0, tps], np.r_[0, fps]
    thresholds = np.r_[np.inf, scores[last_of_tie]]
    positives, negatives = tps[-1], fps[-1]
    if positives == 0 or negatives == 0:
        warnings.warn(
            f"ROC undefined: {positives} positives and {negatives} negatives; "
            "the missing rate is NaN",
            RuntimeWarning,
            stacklevel=2,
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = tps / positives if positives else np.full(tps.shape, np.nan)
        fpr = fps / negatives if negatives else np.full(fps.shape, np.nan)
    return fpr, tpr, thresholds


def auc(fpr, tpr) -> float:
    """Area under a curve by the trapezoidal rule (``fpr`` non-decreasing)."""
    fpr, tpr = np.asarray(fpr, dtype=np.float64), np.asarray(tpr, dtype=np.float64)
    if fpr.shape != tpr.shape or fpr.ndim != 1 or len(fpr) < 2:
        raise ValueError("fpr and tpr must be 1-d of the same length >= 2")
    if np.any(np.diff(fpr) < 0):
        raise ValueError("fpr must be non-decreasing; pass the output of roc_curve")
    return float(np.trapezoid(tpr, fpr))


def eer(fpr, tpr, thresholds=None):
    """Equal error rate: where the false-accept rate equals the false-reject rate ``1 - tpr``.

    Linear interpolation between the ROC points around the crossing.

    Returns
    -------
    rate : float
    threshold : float
        Interpolated between the neighbouring thresholds (only with
        ``thresholds``; NaN otherwise).
    """
    fpr, tpr = np.asarray(fpr, dtype=np.float64), np.asarray(tpr, dtype=np.float64)
    gap = fpr - (1.0 - tpr)  # rises from -1 to +1 along the curve
    i = int(np.argmax(gap >= 0))
    if i == 0:
        return float(fpr[0]), float("nan")
    t = gap[i - 1] / (gap[i - 1] - gap[i])
    rate = fpr[i - 1] + t * (fpr[i] - fpr[i - 1])
    threshold = float("nan")
    if thresholds is not None:
        low, high = thresholds[i - 1], thresholds[i]
        threshold = float(high if not np.isfinite(low) else low + t * (high - low))
    return float(rate), threshold


def recognition_rate(y_true, y_pred) -> float:
    """Fraction of probes given their true label (an ``UNKNOWN`` answer counts as wrong)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError(f"y_true {y_true.shape} and y_pred {y_pred.shape} must match, non-empty")
    return float(np.mean(y_true == y_pred))


def rank_curve(y_true, neighbor_labels, max_rank: int | None = None):
    """Cumulative match characteristic: fraction of probes whose label is among the top r.

    Parameters
    ----------
    y_true : (m,) array-like
    neighbor_labels : (m, n) array-like
        Labels of each probe's neighbours, nearest first (e.g. from
        :meth:`Recognizer.kneighbors`). Repeated labels count once, at their
        first place: rank ``r`` means "among the r nearest distinct people".
    max_rank : int, optional

    Returns
    -------
    (R,) ndarray
        ``curve[r - 1]`` is the identification rate at rank ``r``;
        non-decreasing.
    """
    y_true = np.asarray(y_true)
    neighbor_labels = np.asarray(neighbor_labels)
    if neighbor_labels.ndim != 2 or len(neighbor_labels) != len(y_true):
        raise ValueError("neighbor_labels must be (m, n) with one row per probe")
    ranks = np.full(len(y_true), np.inf)
    for i, (truth, row) in enumerate(zip(y_true, neighbor_labels, strict=True)):
        _, first = np.unique(row, return_index=True)
        distinct = row[np.sort(first)]
        hits = np.flatnonzero(distinct == truth)
        if hits.size:
            ranks[i] = hits[0] + 1
    width = max_rank or neighbor_labels.shape[1]
    return np.array([np.mean(ranks <= r) for r in range(1, width + 1)])


def cross_validate(model, imageset: ImageSet, *, scheme="kfold", n_splits=5, k=5, seed=0):
    """Recognition rate of ``model`` (e.g. a :class:`Recognizer`) over seeded splits.

    Parameters
    ----------
    scheme : {"kfold", "loo", "first_k_per_class"}
        ``"kfold"``: stratified k-fold (``n_splits``, shuffled with
        ``seed``); ``"loo"``: leave one image out; ``"first_k_per_class"``:
        one split, the first ``k`` images of each class (natural name order)
        train, the rest test.

    Returns
    -------
    (n_folds,) ndarray of recognition rates
    """
    from sklearn.model_selection import LeaveOneOut, StratifiedKFold

    if scheme == "first_k_per_class":
        train, test = imageset.split(k, order="name")
        fitted = clone(model).fit(train.images, train.labels)
        return np.array([recognition_rate(test.labels, fitted.predict(test.images))])
    if scheme == "kfold":
        splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    elif scheme == "loo":
        splitter = LeaveOneOut()
    else:
        raise ValueError(f"scheme must be 'kfold', 'loo' or 'first_k_per_class', got {scheme!r}")
    rates = []
    for train_index, test_index in splitter.split(imageset.images, imageset.labels):
        fitted = clone(model).fit(imageset.images[train_index], imageset.labels[train_index])
        predicted = fitted.predict(imageset.images[test_index])
        rates.append(recognition_rate(imageset.labels[test_index], predicted))
    return np.array(rates)
