"""Score normalisation for open-set decisions: Z-norm (per enrolled person) and T-norm (per probe).

A raw nearest distance means different things for different people (a
person whose images vary a lot sits far from everyone) and for different
probes (a blurred probe sits far from everyone). Normalising it by the
distribution of *impostor* distances makes one threshold fit all
(Auckenthaler, Carey & Lloyd-Thomas 2000, Score normalization for
text-independent speaker verification systems, Digital Signal Processing
10(1-3)).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCORE_NORMS", "class_distances", "znorm_statistics", "normalized"]

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
