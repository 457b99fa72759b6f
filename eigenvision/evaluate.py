"""Evaluation: ROC analysis, equal error rate, recognition rates and rank curves.

Scores follow scikit-learn's convention: higher means "more positive". For
distances pass ``-distance``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from sklearn.base import clone

from ._base import progress as show_progress
from .imageset import ImageSet

__all__ = [
    "roc_curve",
    "auc",
    "eer",
    "recognition_rate",
    "rank_curve",
    "open_set_roc",
    "rate_at",
    "cross_validate",
    "detection_roc",
    "detection_rate_at",
    "eye_error",
    "error_fractions",
    "face_found",
    "finds_a_face_of",
    "hits_and_alarms",
    "face_detection_roc",
    "pair_precision_recall",
    "calibration",
    "Calibration",
]


def roc_curve(y_true, scores, *, pos_label=None):
    """Receiver operating characteristic for binary labels (Fawcett 2006).

    Parameters
    ----------
    y_true : (n,) array-like
        Binary labels: bool, {0, 1}, or any two values with ``pos_label``.
    scores : (n,) array-like
        Higher means more likely positive.
    pos_label : optional
        The positive class. Needed unless the labels are bool, {0, 1} or
        {-1, 1} (as scikit-learn); more than two distinct labels are refused.

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
    y_true = _positives(y_true, pos_label)
    scores = _real(scores, "scores").ravel()
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


def _positives(y_true, pos_label):
    """``y_true == pos_label`` as bool, with scikit-learn's rules for binary labels."""
    y_true = np.asarray(y_true).ravel()
    classes = np.unique(y_true)
    if len(classes) > 2:
        raise ValueError(
            f"y_true holds {len(classes)} classes ({classes[:5].tolist()}...); a ROC needs "
            "binary labels: pass y_true == positive_class"
        )
    if pos_label is None:
        if y_true.dtype == bool:
            return y_true
        if not set(classes.tolist()) <= {0, 1} and not set(classes.tolist()) <= {-1, 1}:
            raise ValueError(
                f"y_true has labels {classes.tolist()}; say which is positive with pos_label="
            )
        pos_label = 1
    return y_true == pos_label


def _real(values, name):
    """A float64 array of real numbers (complex input is refused, not truncated)."""
    values = np.asarray(values)
    if np.iscomplexobj(values):
        raise TypeError(f"{name} are complex; pass real numbers (e.g. np.abs(values))")
    return values.astype(np.float64)


def auc(fpr, tpr) -> float:
    """Area under a curve by the trapezoidal rule (``fpr`` non-decreasing).

    Parameters
    ----------
    fpr, tpr : (m,) array-like
        A curve from :func:`roc_curve`.

    Returns
    -------
    float
    """
    fpr, tpr = _roc_points(fpr, tpr)
    return float(np.trapezoid(tpr, fpr))


def _roc_points(fpr, tpr):
    """``(fpr, tpr)`` as float64 arrays, checked to be a ROC curve (:func:`roc_curve`'s)."""
    fpr, tpr = np.asarray(fpr, dtype=np.float64), np.asarray(tpr, dtype=np.float64)
    if fpr.shape != tpr.shape or fpr.ndim != 1 or len(fpr) < 2:
        raise ValueError(
            f"fpr and tpr must be 1-d of the same length >= 2, got shapes {fpr.shape} and "
            f"{tpr.shape}; pass the output of roc_curve"
        )
    if not (np.all((fpr >= 0) & (fpr <= 1)) and np.all((tpr >= 0) & (tpr <= 1))):
        raise ValueError("fpr and tpr must be rates in [0, 1] (no NaN); pass roc_curve's output")
    if np.any(np.diff(fpr) < 0):
        raise ValueError("fpr must be non-decreasing; pass the output of roc_curve")
    return fpr, tpr


def eer(fpr, tpr, thresholds=None):
    """Equal error rate: where the false-accept rate equals the false-reject rate ``1 - tpr``.

    Linear interpolation between the ROC points around the crossing.

    Parameters
    ----------
    fpr, tpr : (m,) array-like
    thresholds : (m,) array-like, optional

    Returns
    -------
    rate : float
    threshold : float
        Interpolated between the neighbouring thresholds (only with
        ``thresholds``; NaN otherwise).
    """
    fpr, tpr = _roc_points(fpr, tpr)
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
    """Fraction of probes given their true label (an ``UNKNOWN`` answer counts as wrong).

    Parameters
    ----------
    y_true, y_pred : (n,) array-like

    Returns
    -------
    float
    """
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


def open_set_roc(genuine_scores, genuine_correct, impostor_scores):
    """Open-set identification ROC: detection-and-identification rate against false alarms.

    A probe is accepted when its score (higher: more confident, as
    elsewhere here; pass ``-distance``) reaches the threshold. A genuine
    probe (its person enrolled) counts when it is accepted *and* named
    correctly; an impostor (not enrolled) is a false alarm when accepted at
    all. The watch-list ROC of Phillips, Grother & Micheals (2005, Evaluation
    methods in face recognition, Handbook of Face Recognition) and FRVT 2002.

    Parameters
    ----------
    genuine_scores : (g,) array-like
        Score of each genuine probe's answer (e.g. minus its nearest distance).
    genuine_correct : (g,) array-like of bool
        Whether that answer names the right person (rank-1 correct).
    impostor_scores : (i,) array-like
        Score of each impostor probe's answer.

    Returns
    -------
    far : (m,) ndarray
        False-alarm rate at each threshold, rising from 0.
    dir : (m,) ndarray
        Detection-and-identification rate (TAR of the issue tracker's wording).
    thresholds : (m,) ndarray
        Decreasing; the first is ``+inf`` (nothing accepted).

    Examples
    --------
    >>> far, dir_, _ = open_set_roc([3.0, 2.0, 1.0], [True, False, True], [1.5, 0.0])
    >>> far.tolist(), dir_.round(3).tolist()
    ([0.0, 0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.333, 0.333, 0.333, 0.667, 0.667])
    """
    genuine = _real(np.asarray(genuine_scores, dtype=np.float64).ravel(), "genuine_scores")
    correct = np.asarray(genuine_correct, dtype=bool).ravel()
    impostor = _real(np.asarray(impostor_scores, dtype=np.float64).ravel(), "impostor_scores")
    if correct.shape != genuine.shape:
        raise ValueError(
            f"genuine_correct has {correct.size} values for {genuine.size} genuine scores"
        )
    if genuine.size == 0 or impostor.size == 0:
        raise ValueError("an open-set ROC needs genuine and impostor probes, at least one each")
    if np.isnan(genuine).any() or np.isnan(impostor).any():
        raise ValueError("scores hold NaN; every probe needs a score")
    thresholds = np.concatenate([[np.inf], np.unique(np.concatenate([genuine, impostor]))[::-1]])

    # accepted at threshold t: score >= t; counts by sorting once.
    def accepted(scores):
        return scores.size - np.searchsorted(np.sort(scores), thresholds, side="left")

    return accepted(impostor) / impostor.size, accepted(genuine[correct]) / genuine.size, thresholds


def rate_at(far, rate, target: float) -> float:
    """The highest ``rate`` reached with ``far <= target`` (e.g. TAR at FAR 0.01).

    Parameters
    ----------
    far, rate : (m,) array-like
        An ROC (:func:`roc_curve` or :func:`open_set_roc`).
    target : float
        The false-alarm rate allowed.

    Returns
    -------
    float
    """
    far, rate = np.asarray(far, dtype=np.float64), np.asarray(rate, dtype=np.float64)
    allowed = far <= target
    return float(rate[allowed].max()) if allowed.any() else 0.0


def cross_validate(
    model, imageset: ImageSet, *, scheme="kfold", n_splits=5, k=5, seed=0, progress=False
):
    """Recognition rate of ``model`` (e.g. a :class:`Recognizer`) over seeded splits.

    Parameters
    ----------
    scheme : {"kfold", "loo", "first_k_per_class"}
        ``"kfold"``: stratified k-fold (``n_splits``, shuffled with
        ``seed``); ``"loo"``: leave one image out; ``"first_k_per_class"``:
        one split, the first ``k`` images of each class (natural name order)
        train, the rest test.
    model : estimator
        Cloned and fitted on each split's training images; a model with
        ``accepts_image_sets = True`` (a :class:`~eigenvision.Recognizer`)
        gets ImageSets, so that landmarks reach it.
    imageset : ImageSet
    n_splits : int, default 5
    k : int, default 5
    seed : int, default 0
    progress : bool, default False
        A progress bar over the folds on stderr (when it is a terminal).

    Returns
    -------
    (n_folds,) ndarray of recognition rates
    """
    from sklearn.model_selection import LeaveOneOut, StratifiedKFold

    if scheme == "first_k_per_class":
        train, test = imageset.split(k, order="name")
        return np.array([recognition_rate(test.labels, _fit_predict(model, train, test))])
    if scheme == "kfold":
        splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    elif scheme == "loo":
        splitter = LeaveOneOut()
    else:
        raise ValueError(f"scheme must be 'kfold', 'loo' or 'first_k_per_class', got {scheme!r}")
    rates = []
    folds = splitter.split(imageset.images, imageset.labels)
    total = splitter.get_n_splits(imageset.images, imageset.labels)
    for train_index, test_index in show_progress(
        folds, total=total, desc="folds", enabled=progress
    ):
        train, test = imageset[train_index], imageset[test_index]
        rates.append(recognition_rate(test.labels, _fit_predict(model, train, test)))
    return np.array(rates)


def _fit_predict(model, train: ImageSet, test: ImageSet):
    """A clone of ``model`` fitted on ``train``, predicting ``test``."""
    if getattr(model, "accepts_image_sets", False):  # landmarks and all (a Recognizer)
        return clone(model).fit(train).predict(test)
    return clone(model).fit(train.images, train.labels).predict(test.images)


def detection_roc(minima, errors, *, radius=0.1):
    """Detection rate against false-alarm rate for "find the feature in each image".

    The criterion of Moghaddam & Pentland (1997) as the lecture states it:
    per test image the global minimum of the feature's map; for a threshold
    ``alpha`` the image is a *correct detection* when the minimum is below
    ``alpha`` and within ``radius`` of the true position, a *false alarm*
    when below ``alpha`` and farther. Both rates are fractions of all test
    images, so they sum to at most 1.

    Parameters
    ----------
    minima : (n,) array-like
        The map's global minimum per image (lower is better; ``+inf`` when
        nothing was searched).
    errors : (n,) array-like
        Distance from that minimum's position to the truth, in the unit of
        ``radius`` (e.g. divided by the inter-ocular distance).
    radius : float or (n,) array-like, default 0.1
        Largest error of a correct detection (0.1 inter-ocular distances is
        about the lecture's 5 pixels).

    Returns
    -------
    false_alarm, detection : (m,) ndarray
        Non-decreasing, from (0, 0) at ``alpha = -inf``.
    thresholds : (m,) ndarray
        ``-inf`` then every distinct finite minimum, ascending.

    Examples
    --------
    >>> fa, det, alpha = detection_roc([0.1, 0.2, 0.3], [0.05, 0.3, 0.01])
    >>> fa.tolist(), det.tolist()
    ([0.0, 0.0, 0.3333333333333333, 0.3333333333333333], [0.0, 0.3333333333333333, \
0.3333333333333333, 0.6666666666666666])
    """
    minima = np.asarray(minima, dtype=np.float64).ravel()
    errors = np.asarray(errors, dtype=np.float64).ravel()
    if minima.shape != errors.shape:
        raise ValueError(f"minima has {minima.size} entries but errors {errors.size}")
    if minima.size == 0:
        raise ValueError("no test images: minima is empty")
    if np.any(np.isnan(minima)) or np.any(np.isnan(errors[np.isfinite(minima)])):
        raise ValueError("minima or errors contain NaN; use +inf for images with no minimum")
    correct = errors <= np.broadcast_to(np.asarray(radius, dtype=np.float64), errors.shape)
    finite = np.isfinite(minima)
    order = np.argsort(minima[finite], kind="mergesort")
    values, hits = minima[finite][order], correct[finite][order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(values)), len(values) - 1] if len(values) else []
    n = minima.size
    detections = np.r_[0, np.cumsum(hits)[last_of_tie]] / n
    alarms = np.r_[0, np.cumsum(~hits)[last_of_tie]] / n
    return alarms, detections, np.r_[-np.inf, values[last_of_tie]]


def detection_rate_at(minima, errors, *, false_alarm=0.06, radius=0.1):
    """Best detection rate at false alarms of at most ``false_alarm`` (:func:`detection_roc`).

    Parameters
    ----------
    minima : (n,) array-like
        Each image's global-minimum score.
    errors : (n,) array-like
        Distance of that minimum from the true position, pixels.
    false_alarm : float
        Largest false-alarm rate allowed.
    radius : float
        A minimum within ``radius`` pixels is a detection.

    Returns
    -------
    float
    """
    alarms, detections, _ = detection_roc(minima, errors, radius=radius)
    return float(detections[alarms <= false_alarm + 1e-12].max())


def eye_error(left, right, true_left, true_right):
    """Jesorsky et al.'s relative eye-pair error ``e = max(d_l, d_r) / ||C_l - C_r||``.

    Parameters
    ----------
    left, right, true_left, true_right : (n, 2) array-like
        Found and true eye centres ``(x, y)``.

    Returns
    -------
    (n,) ndarray
        ``e <= 0.25`` is about "between the eyes", ``<= 0.10`` "within the
        iris", ``<= 0.05`` "within the pupil" (BioID convention).

    References
    ----------
    O. Jesorsky, K. J. Kirchberg and R. W. Frischholz (2001), Robust face
    detection using the Hausdorff distance, AVBPA.
    """
    left, right, true_left, true_right = (
        np.atleast_2d(np.asarray(a, dtype=np.float64)) for a in (left, right, true_left, true_right)
    )
    iod = np.linalg.norm(true_left - true_right, axis=1)
    if np.any(iod <= 0):
        raise ValueError("some true eye pairs coincide; the relative error is undefined")
    worst = np.maximum(
        np.linalg.norm(left - true_left, axis=1), np.linalg.norm(right - true_right, axis=1)
    )
    return worst / iod


def error_fractions(errors, levels=(0.05, 0.10, 0.25)):
    """Fraction of ``errors`` at or below each level, as ``{level: fraction}``.

    Parameters
    ----------
    errors : (n,) array-like
    levels : sequence of float

    Returns
    -------
    dict of float to float
    """
    errors = np.asarray(errors, dtype=np.float64).ravel()
    if errors.size == 0:
        raise ValueError("no errors given")
    return {float(level): float(np.mean(errors <= level)) for level in levels}


def face_found(box, centre, iod) -> bool:
    """Whether a detection ``box`` finds the face of landmark centre ``centre`` and ``iod``.

    The protocol of the wild-detection study: the box's centre lies within
    0.5 IOD of the landmarks' centre, and its width within a factor 1.5 of
    the face box's (:func:`~eigenvision.face_box`, 2.15 IOD).

    Parameters
    ----------
    box : (x, y, w, h)
    centre : (x, y)
    iod : float

    Returns
    -------
    bool

    Examples
    --------
    >>> face_found((0, 0, 43, 44), (21, 22), 20.0), face_found((0, 0, 90, 90), (21, 22), 20.0)
    (True, False)
    """
    x, y, w, h = (float(v) for v in box)
    near = np.hypot(x + (w - 1) / 2 - centre[0], y + (h - 1) / 2 - centre[1]) <= 0.5 * iod
    ratio = w / (2.15 * iod)
    return bool(near and 1 / 1.5 <= ratio <= 1.5)


def finds_a_face_of(box, faces) -> bool:
    """Whether a detection ``box`` finds one of ``faces``, by :func:`face_found`'s rule with
    each face box's centre and an eye distance of its width / 2.15.

    Parameters
    ----------
    box : (x, y, w, h)
    faces : (n, 4) array-like
        Face boxes ``(x, y, w, h)``, e.g. :func:`~eigenvision.face_box` of known eyes.

    Returns
    -------
    bool

    Examples
    --------
    >>> finds_a_face_of((0, 0, 43, 44), [(100, 0, 43, 44), (2, 1, 40, 40)])
    True
    """
    return any(
        face_found(box, (x + (w - 1) / 2, y + (h - 1) / 2), w / 2.15)
        for x, y, w, h in np.asarray(faces, dtype=float).reshape(-1, 4)
    )


def hits_and_alarms(detections, centre, iod, others=()):
    """The scores of an image's detections that find its annotated face, and of its false alarms.

    Parameters
    ----------
    detections : sequence of ((x, y, w, h), score)
    centre : (x, y)
        The annotated face's landmarks' centre.
    iod : float
        Its inter-ocular distance.
    others : (n, 4) array-like, optional
        Faces the image holds unannotated: a detection that finds one of
        them (:func:`finds_a_face_of`) and not the annotated face is
        neither.

    Returns
    -------
    hits, alarms : list of float
        The detections that find the face (:func:`face_found`), and those
        that find no face.

    Examples
    --------
    >>> hits_and_alarms([((0, 0, 43, 44), 2.0), ((100, 0, 43, 44), 1.0), ((300, 0, 9, 9), 0.5)],
    ...                 (21.0, 21.5), 20.0, others=[(100, 0, 43, 44)])
    ([2.0], [0.5])
    """
    hits, alarms = [], []
    for box, score in detections:
        if face_found(box, centre, iod):
            hits.append(float(score))
        elif not finds_a_face_of(box, others):
            alarms.append(float(score))
    return hits, alarms


def face_detection_roc(found, truths, others=None):
    """Detection rate against false alarms per image as the score threshold falls.

    Parameters
    ----------
    found : sequence of sequences of ((x, y, w, h), score)
        Each image's detections; higher scores are more confident.
    truths : sequence of ((x, y), iod)
        Each image's annotated face: its landmarks' centre and inter-ocular
        distance (one annotated face per image, as HELEN's crops).
    others : sequence of (n, 4) array-like, optional
        Each image's faces that carry no annotation (boxes, e.g.
        :func:`~eigenvision.datasets.helen_other_faces`): a detection that
        finds none of the annotated faces but one of these
        (:func:`finds_a_face_of`) is neither a hit nor a false alarm.
        Default: every detection that finds no annotated face is a false
        alarm.

    Returns
    -------
    false_alarms : (m,) ndarray
        Detections per image that find no annotated face, at each threshold.
    detection_rate : (m,) ndarray
        Fraction of the annotated faces found.
    thresholds : (m,) ndarray
        Decreasing; a detection counts when ``score >= threshold``.
    """
    if len(found) != len(truths) or not truths:
        raise ValueError(f"found ({len(found)}) and truths ({len(truths)}) must match, non-empty")
    others = [()] * len(truths) if others is None else others
    if len(others) != len(truths):
        raise ValueError(f"others ({len(others)}) and truths ({len(truths)}) must match")
    hits, alarms = [], []
    for detections, (centre, iod), unannotated in zip(found, truths, others, strict=True):
        scores, wrong = hits_and_alarms(detections, centre, iod, unannotated)
        alarms += wrong
        if scores:
            hits.append(max(scores))
    thresholds = np.unique(np.r_[hits, alarms])[::-1]
    hits, alarms = np.sort(hits)[::-1], np.sort(alarms)[::-1]
    n = len(truths)
    rate = np.searchsorted(-hits, -thresholds, side="right") / n
    false_alarms = np.searchsorted(-alarms, -thresholds, side="right") / n
    return np.r_[0.0, false_alarms], np.r_[0.0, rate], np.r_[np.inf, thresholds]


def pair_precision_recall(y_true, y_pred):
    """Pairwise precision, recall and F-measure of a clustering.

    Every pair of items counts: a pair in one predicted group is a true
    positive when its two items share a true label. Precision is the share of
    predicted pairs that are true, recall the share of true pairs predicted.

    Parameters
    ----------
    y_true, y_pred : (n,) array-like
        True labels and group labels.

    Returns
    -------
    precision, recall, f_measure : float
        1.0 where there is no pair to count (a single item, or all apart).

    Examples
    --------
    >>> pair_precision_recall([0, 0, 1, 1], [0, 0, 0, 1])
    (0.3333333333333333, 0.5, 0.4)
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(
            f"y_true and y_pred must be (n,) alike, got {y_true.shape}, {y_pred.shape}"
        )
    _, true_codes = np.unique(y_true, return_inverse=True)
    _, pred_codes = np.unique(y_pred, return_inverse=True)
    table = np.zeros((true_codes.max(initial=-1) + 1, pred_codes.max(initial=-1) + 1))
    np.add.at(table, (true_codes, pred_codes), 1)

    def pairs(counts):
        return float(np.sum(counts * (counts - 1) / 2))

    both, predicted, true = pairs(table), pairs(table.sum(axis=0)), pairs(table.sum(axis=1))
    precision = both / predicted if predicted else 1.0
    recall = both / true if true else 1.0
    f_measure = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f_measure


class Calibration(NamedTuple):
    """How far stated probabilities are from the frequencies they claim (:func:`calibration`)."""

    #: Expected calibration error: the bins' gaps, weighted by their share of the pairs.
    ece: float
    #: The largest gap of a bin holding a hundredth of the pairs or more.
    largest_gap: float
    #: Per bin: the mean stated probability, the observed frequency, the count.
    stated: np.ndarray
    observed: np.ndarray
    counts: np.ndarray
    #: Among the negatives, the share stated at ``confident`` or more.
    confident_false: float
    #: Among those stated at ``confident`` or more, the share positive (NaN when none).
    confident_right: float


def calibration(y_true, probability, *, bins=10, confident=0.9) -> Calibration:
    """Reliability of stated probabilities: the reliability diagram's points and the expected
    calibration error (Naeini, Cooper & Hauskrecht 2015), in equal-width bins.

    Parameters
    ----------
    y_true : (n,) array-like of bool
        What happened (same person).
    probability : (n,) array-like
        What was stated, in [0, 1].
    bins : int, default 10
    confident : float, default 0.9
        Where a statement counts as confident.

    Returns
    -------
    Calibration
        Empty bins give NaN in ``stated`` and ``observed``.

    Examples
    --------
    >>> result = calibration([True, False, True, True], [0.9, 0.1, 0.8, 0.95], bins=2)
    >>> f"{result.ece:.4f}", result.counts.tolist()
    ('0.1125', [1, 3])
    """
    y = np.asarray(y_true, dtype=bool)
    p = np.asarray(probability, dtype=np.float64)
    if y.shape != p.shape or y.ndim != 1 or not len(y):
        raise ValueError(
            f"y_true and probability must be two (n,) arrays, n >= 1, got shapes {y.shape} "
            f"and {p.shape}"
        )
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("probability must lie in [0, 1] (no NaN)")
    index = np.minimum((p * bins).astype(int), bins - 1)
    counts = np.bincount(index, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        stated = np.bincount(index, weights=p, minlength=bins) / counts
        observed = np.bincount(index, weights=y, minlength=bins) / counts
    gaps = np.abs(stated - observed)
    filled = counts > 0
    ece = float(np.sum(counts[filled] * gaps[filled]) / len(p))
    large = counts >= 0.01 * len(p)
    sure = p >= confident
    return Calibration(
        ece=ece,
        largest_gap=float(gaps[large].max()) if large.any() else float("nan"),
        stated=stated,
        observed=observed,
        counts=counts,
        confident_false=float(np.mean(sure[~y])) if (~y).any() else float("nan"),
        confident_right=float(np.mean(y[sure])) if sure.any() else float("nan"),
    )
