"""How a recogniser's codes are made: the metrics each method allows, eigenfeature patches,
and the fusion of blocks (the whole face, each facial feature) into one code.

Functions over arrays, each testable alone; :class:`~eigenvision.Recognizer` fits the
features and calls them (its Notes say how the blocks are weighed).
"""

from __future__ import annotations

import numpy as np

from .neighbors import METRICS

__all__ = ["allowed_metrics", "block_scales", "fused_codes", "feature_patches"]


def allowed_metrics(method, feature=None):
    """The metrics a recognizer of ``method`` takes (the app offers these; fit refuses others).

    Parameters
    ----------
    method : str
        One of :data:`~eigenvision.recognize.METHODS`.
    feature : subspace model, optional
        The recognizer's ``feature``: with one, any metric its fit allows
        (``"mahalanobis"`` needs ``explained_variance_``, checked on fit).

    Returns
    -------
    tuple of str
        Names in :data:`eigenvision.neighbors.METRICS`: the presets whose
        codes have no eigenvalues (``"fisherfaces"``, ``"bayesian"``) leave out
        the metrics that need them; ``"plda"`` compares by its ratio alone.
    """
    if method == "plda":
        return ("euclidean",)
    if feature is None and method in ("fisherfaces", "bayesian"):
        return tuple(name for name, metric in METRICS.items() if not metric.needs_variances)
    return tuple(METRICS)


def block_scales(blocks, weights) -> np.ndarray:
    """Divisors that give each block of codes its share of the fused distance.

    Each block's root-mean-square distance between its rows, over the square
    root of its weight, so that every block has the typical distance its
    weight asks for (the recognizer's Notes).

    Parameters
    ----------
    blocks : sequence of (n, q_b) ndarray
        The training codes of each block.
    weights : sequence of float
        Each block's share of the squared distance, >= 0.

    Returns
    -------
    (n_blocks,) ndarray
        ``inf`` for a block of weight 0 (its codes then count for nothing).

    Examples
    --------
    >>> blocks = [np.array([[0.0], [2.0]]), np.array([[0.0], [4.0]])]
    >>> block_scales(blocks, [0.5, 0.0]).tolist()
    [2.0, inf]
    """
    spread = np.array([np.sqrt(2 * np.mean(np.sum((b - b.mean(0)) ** 2, axis=1))) for b in blocks])
    weights = np.asarray(weights, dtype=np.float64)
    return np.where(weights > 0, spread / np.sqrt(np.where(weights > 0, weights, 1)), np.inf)


def fused_codes(blocks, scales) -> np.ndarray:
    """Block codes side by side, each divided by its scale (:func:`block_scales`).

    Parameters
    ----------
    blocks : sequence of (n, q_b) ndarray
    scales : (n_blocks,) ndarray

    Returns
    -------
    (n, sum q_b) ndarray
        The one block itself when it is alone with scale 1.
    """
    if len(blocks) == 1 and scales[0] == 1:
        return blocks[0]
    return np.hstack([b / b.dtype.type(scale) for b, scale in zip(blocks, scales, strict=True)])


def feature_patches(detector, faces, face_box=None) -> dict:
    """The eigenfeature patches of every face: at its landmarks, or where ``detector`` finds them.

    Parameters
    ----------
    detector : FeatureDetector
        Fitted.
    faces : ImageSet
        Its landmarks are used where they name every feature of the detector.
    face_box : (x, y, w, h), optional
        Where the face lies in each image, for locating (default the whole image).

    Returns
    -------
    dict of str to (n, h, w) ndarray
        One stack of patches per feature of the detector.
    """
    cut = {feature: [] for feature in detector.features_}
    for i, image in enumerate(faces.images):
        positions = None
        if faces.landmarks and all(f in faces.landmarks for f in detector.features_):
            positions = {f: faces.landmarks[f][i] for f in detector.features_}
        found = detector.patches(image, box=face_box, locations=positions)
        for feature, patch in found.items():
            cut[feature].append(patch)
    return {feature: np.stack(patches) for feature, patches in cut.items()}
