"""The open-set decision over distances: thresholds, score normalisation, verification.

Recognition names the nearest enrolled person; the open set asks whether
that person is there at all. Everything here is a function over distances
(or log-odds), so every feature model shares it: :class:`~eigenvision.Recognizer`
computes distances and delegates the decision.

Score normalisation: a raw nearest distance means different things for different people (a
person whose images vary a lot sits far from everyone) and for different
probes (a blurred probe sits far from everyone). Normalising it by the
distribution of *impostor* distances makes one threshold fit all
(Auckenthaler, Carey & Lloyd-Thomas 2000, Score normalization for
text-independent speaker verification systems, Digital Signal Processing
10(1-3)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._errors import refuse_complex

__all__ = [
    "UNKNOWN",
    "GALLERY_CALIBRATION_PEOPLE",
    "reads_its_gallery",
    "SCORE_NORMS",
    "Verification",
    "class_distances",
    "znorm_statistics",
    "normalized",
    "reject_unknown",
    "calibrated_threshold",
    "threshold_at",
    "best_per_class",
]

#: The label a probe farther than the threshold from everyone enrolled gets.
UNKNOWN = "unknown"

#: The fewest enrolled people from which the command line (``train``) and the app centre
#: the identity model on the gallery (``method="plda"``,
#: :meth:`~eigenvision.Recognizer.centre_on_gallery`) and, without strangers, calibrate the
#: threshold on it (each person a stranger to the others,
#: :meth:`~eigenvision.Recognizer.gallery_as_strangers`) by default, for ``"plda"`` alone.
GALLERY_CALIBRATION_PEOPLE = 5


def reads_its_gallery(recognizer) -> bool:
    """Whether the command line and the app centre ``recognizer`` on its gallery and calibrate
    it there by default: ``method="plda"`` (a model of other people) with at least
    :data:`GALLERY_CALIBRATION_PEOPLE` people enrolled.

    Parameters
    ----------
    recognizer : Recognizer
        Fitted.

    Returns
    -------
    bool
    """
    return recognizer.method == "plda" and len(recognizer.classes_) >= GALLERY_CALIBRATION_PEOPLE


#: The normalisations :func:`normalized` knows.
SCORE_NORMS = ("znorm", "tnorm")


def class_distances(distances, gallery_labels, classes):
    """The nearest distance from each probe to each class's enrolled images.

    Parameters
    ----------
    distances : (m, n) ndarray
        Probe-to-gallery distances.
    gallery_labels : (n,) ndarray
    classes : (c,) ndarray
        Sorted; every gallery label among them.

    Returns
    -------
    (m, c) ndarray
    """
    columns = np.searchsorted(classes, gallery_labels)
    nearest = np.full((len(distances), len(classes)), np.inf)
    np.minimum.at(nearest.T, columns, np.asarray(distances, dtype=np.float64).T)
    return nearest


def znorm_statistics(gallery_class_distances, gallery_labels, classes):
    """Mean and standard deviation of each class's impostor distances, from the gallery itself.

    Class ``c``'s impostors are the enrolled images of every other class;
    their nearest distances to ``c`` are its Z-norm cohort.

    Parameters
    ----------
    gallery_class_distances : (n, c) ndarray
        :func:`class_distances` of the gallery to itself.
    gallery_labels : (n,) ndarray
    classes : (c,) ndarray

    Returns
    -------
    (c, 2) ndarray
        ``[mean, std]`` per class; the std floored at a millionth of the
        mean's magnitude (a class all others sit equally far from).
    """
    own = np.searchsorted(classes, gallery_labels)
    impostor = own[:, None] != np.arange(len(classes))[None]
    if not impostor.any(axis=0).all():
        raise ValueError("Z-norm needs at least two enrolled people (each one's impostors)")
    values = np.where(impostor, gallery_class_distances, np.nan)
    mean = np.nanmean(values, axis=0)
    spread = np.nanstd(values, axis=0)
    floor = 1e-6 * np.maximum(np.abs(mean), np.finfo(np.float64).tiny)
    return np.column_stack([mean, np.maximum(spread, floor)])


def normalized(class_distances_, method, statistics=None):
    """Normalised distances (lower: more alike), in impostor standard deviations.

    Parameters
    ----------
    class_distances_ : (m, c) ndarray
        :func:`class_distances` of the probes.
    method : {"znorm", "tnorm"}
        ``"znorm"``: ``(d - mean_c) / std_c`` with each class's impostor
        statistics (:func:`znorm_statistics`); ``"tnorm"``: ``(d_c -
        mean) / std`` over the probe's distances to every *other* class
        (the probe's own impostor cohort).
    statistics : (c, 2) ndarray, optional
        Required for ``"znorm"``.

    Returns
    -------
    (m, c) ndarray

    Examples
    --------
    >>> d = np.array([[1.0, 5.0, 7.0]])
    >>> normalized(d, "tnorm").round(3).tolist()
    [[-5.0, 0.333, 2.0]]
    """
    d = np.asarray(class_distances_, dtype=np.float64)
    if method == "znorm":
        if statistics is None:
            raise ValueError("Z-norm needs the classes' impostor statistics")
        return (d - statistics[:, 0]) / statistics[:, 1]
    if method == "tnorm":
        c = d.shape[1]
        if c < 3:
            raise ValueError(f"T-norm needs at least 3 enrolled people (a cohort of 2), got {c}")
        total, squares = d.sum(axis=1, keepdims=True), (d * d).sum(axis=1, keepdims=True)
        mean = (total - d) / (c - 1)
        variance = np.maximum((squares - d * d) / (c - 1) - mean * mean, 0.0)
        floor = 1e-6 * np.maximum(np.abs(mean), np.finfo(np.float64).tiny)
        return (d - mean) / np.maximum(np.sqrt(variance), floor)
    raise ValueError(f"score_norm must be one of {SCORE_NORMS} or None, got {method!r}")


@dataclass(frozen=True)
class Verification:
    """The answer to "is this person X?".

    Attributes
    ----------
    accepted : bool
    distance : float
        To the nearest enrolled image of the claimed label, in the metric's units.
    threshold : float or None
        The threshold the decision used (None: every claim is accepted).
    probability : float or None
        ``P(same person | difference)`` of the best-matching image of the
        claimed label, where the method has one (``"bayesian"`` with the
        Euclidean metric: the MAP similarity); None otherwise.
    model : str or None
        Which identity model answered, for photos compared by one
        (:func:`~eigenvision.compare_faces`: ``"deep"``, ``"classical"``, ...); None otherwise.
    faces : tuple of Face or None
        The face compared in each photo (:func:`~eigenvision.compare_faces`), in the photo's
        pixels; None otherwise.
    face_counts : tuple of int or None
        How many faces each photo showed (the most confident was compared); None otherwise.
    """

    accepted: bool
    distance: float
    threshold: float | None
    probability: float | None = None
    model: str | None = None
    faces: tuple | None = None
    face_counts: tuple | None = None


def reject_unknown(named, decision, threshold):
    """``named`` with :data:`UNKNOWN` where ``decision`` exceeds ``threshold``.

    Parameters
    ----------
    named : (m,) ndarray
        Each probe's label.
    decision : (m,) array-like
        The distance (or normalised score) the threshold judges.
    threshold : float or None
        None: every name stands.

    Returns
    -------
    (m,) ndarray
        Strings stay strings (wide enough for :data:`UNKNOWN`); other labels
        become dtype object so they can hold it.

    Examples
    --------
    >>> reject_unknown(np.array(["ann", "bob"]), [0.2, 0.9], 0.5).tolist()
    ['ann', 'unknown']
    """
    if threshold is None:
        return named
    rejected = np.asarray(decision) > threshold
    if named.dtype.kind not in "US":
        predicted = named.astype(object)
    else:
        predicted = named.astype(f"<U{max(named.dtype.itemsize // 4, len(UNKNOWN))}")
    predicted[rejected] = UNKNOWN
    return predicted


def calibrated_threshold(impostor_decisions, far):
    """The threshold that accepts at most a fraction ``far`` of impostors.

    Accepts distances strictly below the ``(allowed + 1)``-th smallest
    impostor distance (:func:`threshold_at`).

    Parameters
    ----------
    impostor_decisions : (m,) array-like
        What the threshold judges, for probes of people not enrolled.
    far : float
        In ``[0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> calibrated_threshold([1.0, 2.0, 3.0, 4.0], 0.0) < 1.0
    True
    """
    return float(-threshold_at(-np.asarray(impostor_decisions, dtype=float), far))


def best_per_class(log_odds, gallery_labels, classes):
    """Each probe's best log-odds against each class's enrolled images.

    Parameters
    ----------
    log_odds : (m, n) ndarray
        Probe-to-gallery log-odds of the same identity.
    gallery_labels : (n,) ndarray
    classes : (c,) ndarray
        Sorted; every gallery label among them.

    Returns
    -------
    (m, c) ndarray
    """
    return -class_distances(-np.asarray(log_odds), gallery_labels, classes)


def threshold_at(impostor_scores, far: float) -> float:
    """The lowest threshold that accepts at most ``far`` of the impostors (``score >= t``).

    Calibrates an open-set decision from impostor probes (people not
    enrolled): with ``n`` of them, ``floor(far n)`` may be accepted.

    Parameters
    ----------
    impostor_scores : (n,) array-like
        Higher: more confident (pass ``-distance``).
    far : float
        False-accept rate allowed, in ``[0, 1)``.

    Returns
    -------
    float
        Just above the ``(floor(far n) + 1)``-th highest impostor score ``s``:
        by ``1e-6 |s|`` (or one float64 step, the larger), float32 codes'
        round-off, so that the same probes described in another batch (BLAS
        blocks the products differently) stay on the same side.

    Examples
    --------
    >>> threshold_at([0.1, 0.9, 0.5, 0.3], far=0.25) > 0.5
    True
    """
    if not (isinstance(far, (int, float, np.floating)) and 0.0 <= far < 1.0):
        raise ValueError(f"far must lie in [0, 1), got {far!r}")
    refuse_complex(impostor_scores, "impostor_scores")
    scores = np.asarray(impostor_scores, dtype=np.float64).ravel()
    if scores.size == 0 or np.isnan(scores).any():
        raise ValueError("calibration needs impostor scores, none of them NaN")
    allowed = int(np.floor(far * scores.size))
    kth = np.sort(scores)[::-1][allowed]
    return float(max(np.nextafter(kth, np.inf), kth + 1e-6 * abs(kth)))
