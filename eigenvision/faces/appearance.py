"""Stage 4 of the photo pipeline: the appearance check, a linear classifier on HOG of the face.

The decision (stage 2) sees a small window of the face, histogram-equalised,
through its distances to clusters of faces and non-faces: glasses, beards,
fringes and side light move a face's window away from every face cluster,
and the decision rejects it. The appearance check looks again at each
candidate the decision does not rule out: the face cut on the candidate's
eyes to :data:`APPEARANCE_SHAPE` pixels, described by its histograms of
oriented gradients (Dalal & Triggs 2005, as ``skimage.feature.hog``), scored by
a linear support vector machine trained on the candidates of training photos
(faces against the clutter the earlier stages let through). A logistic
regression fitted on other training photos fuses that score with the
decision's and the eye-pair check's (:func:`fit_fusion`), and the fused
log-odds is the face's score: since the eye-pair check only lowers a score,
the fusion without it bounds the score from above, and a candidate under the
threshold by that bound is never located.

References
----------
N. Dalal and B. Triggs (2005), Histograms of oriented gradients for human
detection, CVPR. K.-K. Sung and T. Poggio (1998), Example-based learning for
view-based human face detection, IEEE TPAMI 20(1) (the bootstrapped
non-faces the classifier is trained on).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logit
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .._base import check_fitted
from .._parallel import n_threads, run_on_row_parts
from .._spec import Param, State, check_params
from ..descriptors import hog_descriptors
from ..transform import as_float_image, eye_matrices, warp_many

__all__ = [
    "APPEARANCE_SHAPE",
    "APPEARANCE_EYES",
    "APPEARANCE_CELL",
    "APPEARANCE_OFFSETS",
    "OFFSET_MARGIN",
    "EXAMINED",
    "appearance_crops",
    "appearance_features",
    "offset_eyes",
    "checked_offsets",
    "AppearanceCheck",
    "appearance_svm",
    "fit_fusion",
]

#: The crop the appearance check reads, (height, width) pixels: brow to chin.
APPEARANCE_SHAPE = (56, 48)

#: Where the candidate's eyes land in that crop, as fractions of its width and height.
APPEARANCE_EYES = ((0.3, 0.35), (0.7, 0.35))

#: Candidates a finder with an appearance check examines at most in a photo (more when
#: ``find`` is asked for more faces), in its search as in its training.
EXAMINED = 50

#: HOG's cell, pixels (blocks of 2 x 2 cells, 9 orientations).
APPEARANCE_CELL = 6

#: Where the appearance check looks around a candidate (:func:`offset_eyes`): ``(scale, along,
#: across)``, the eye pair scaled about its midpoint and moved along and across the eye line, in
#: eye distances. The check reads the best of these crops, as a sliding-window detector reads
#: the best window near a face; :meth:`AppearanceCheck.fit`'s default.
APPEARANCE_OFFSETS = tuple(
    (scale, along, across)
    for scale in (0.9, 1.0, 1.1)
    for along in (-0.1, 0.0, 0.1)
    for across in (-0.1, 0.0, 0.1)
)

#: A search reads a candidate's offsets only where its own crop's fused log-odds come within
#: this many units of the linear score (the fusion's appearance weight times it, in log-odds)
#: of the threshold: in the linear score's units, so that a refitted fusion weighing the
#: appearance more widens it as it widens the offsets' rise (chosen on the fusion's training
#: candidates; the user guide gives the measurement).
OFFSET_MARGIN = 2.5


def appearance_crops(image, candidates) -> np.ndarray:
    """The candidates' faces cut on their eyes to :data:`APPEARANCE_SHAPE`
    (:func:`~eigenvision.align_face`, antialiased; crops that shrink the photo alike smoothed
    once, :func:`~eigenvision.transform.warp_many`).

    Parameters
    ----------
    image : (H, W) ndarray
        The photo searched (grey).
    candidates : sequence of (left_eye, right_eye, ...)

    Returns
    -------
    (n, 56, 48) ndarray of float32
    """
    image = as_float_image(image)  # once: align_face checks the whole photo at every call
    eyes = [candidate[:2] for candidate in candidates]
    matrices = eye_matrices(eyes, shape=APPEARANCE_SHAPE, eye_positions=APPEARANCE_EYES)
    crops = warp_many(image, matrices, APPEARANCE_SHAPE).astype(np.float32, copy=False)
    return crops.reshape(len(candidates), *APPEARANCE_SHAPE)


def offset_eyes(candidates, offsets) -> np.ndarray:
    """Each candidate's eye pair at each offset: scaled about its midpoint, then moved along
    and across the eye line.

    Parameters
    ----------
    candidates : sequence of (left_eye, right_eye, ...)
    offsets : (k, 3) array-like
        ``(scale, along, across)`` rows (:data:`APPEARANCE_OFFSETS`); ``along`` and
        ``across`` in eye distances, ``across`` towards the mouth.

    Returns
    -------
    (n * k, 2, 2) ndarray
        ``[left, right]`` of the first candidate at every offset, then the next.

    Examples
    --------
    >>> offset_eyes([((10.0, 20.0), (30.0, 20.0))], [(1.0, 0.0, 0.0), (0.5, 0.1, 0.2)])
    array([[[10., 20.],
            [30., 20.]],
    <BLANKLINE>
           [[17., 24.],
            [27., 24.]]])
    """
    offsets = np.asarray(offsets, dtype=float).reshape(-1, 3)
    eyes = np.array([candidate[:2] for candidate in candidates], dtype=float).reshape(-1, 2, 2)
    middle = eyes.mean(axis=1)[:, None, :]
    half = (eyes[:, 1] - eyes[:, 0])[:, None, :] / 2
    across = np.stack([-half[..., 1], half[..., 0]], axis=-1)  # the eye line turned a right angle
    moved = middle + 2 * (offsets[:, 1, None] * half + offsets[:, 2, None] * across)
    scaled = offsets[:, 0, None] * half
    return np.stack([moved - scaled, moved + scaled], axis=2).reshape(-1, 2, 2)


def appearance_features(crops) -> np.ndarray:
    """HOG of each crop, as ``skimage.feature.hog`` (9 orientations, :data:`APPEARANCE_CELL`-pixel
    cells, blocks of 2 x 2 cells normalised by L2-Hys, square-rooted grey levels), computed for
    all crops at once (:func:`~eigenvision.descriptors.hog_descriptors`).

    Parameters
    ----------
    crops : (n, 56, 48) ndarray

    Returns
    -------
    (n, d) ndarray
        scikit-image's rows to about 1e-7 (its cells' sums are single precision).
    """
    crops = np.asarray(crops, dtype=float).reshape(-1, *APPEARANCE_SHAPE)
    return hog_descriptors(crops, cell=APPEARANCE_CELL, transform_sqrt=True)


def appearance_svm(faces, nonfaces, *, C=0.01):
    """The appearance check's linear score: a linear SVM on standardised HOG, as one map.

    Parameters
    ----------
    faces, nonfaces : (n, 56, 48) ndarray
        Crops (:func:`appearance_crops`) of candidates that are faces, and of
        candidates that are not.
    C : float, default 0.01
        The SVM's regularisation (:class:`sklearn.svm.LinearSVC`).

    Returns
    -------
    weights : (d,) ndarray
    bias : float
        ``appearance_features(crops) @ weights + bias`` is the SVM's decision
        value (the standardisation folded in).
    """
    if len(faces) == 0 or len(nonfaces) == 0:
        raise ValueError(
            f"appearance_svm needs crops of faces and of non-faces, got {len(faces)} and "
            f"{len(nonfaces)}"
        )
    X = appearance_features(np.concatenate([faces, nonfaces]))
    y = np.r_[np.ones(len(faces)), np.zeros(len(nonfaces))]
    scaler = StandardScaler().fit(X)
    svm = LinearSVC(C=C, max_iter=20_000, random_state=0).fit(scaler.transform(X), y)
    weights = svm.coef_[0] / scaler.scale_
    return weights, float(svm.intercept_[0] - weights @ scaler.mean_)


def fit_fusion(checked, appearance, labels) -> np.ndarray:
    """The face's log-odds from the checked decision and the appearance score (logistic regression).

    Parameters
    ----------
    checked : (n,) array_like
        The candidates' decision log-odds after the eye-pair check
        (:func:`~eigenvision.faces.features.feature_check`).
    appearance : (n,) array_like
        Their appearance scores.
    labels : (n,) array_like of bool
        Face or not.

    Returns
    -------
    (3,) ndarray
        ``(a, b, c)``: the score is ``a checked + b appearance + c``.
    """
    X = np.column_stack([checked, appearance]).astype(float)
    labels = np.asarray(labels, dtype=bool)
    if labels.all() or not labels.any():
        raise ValueError("fit_fusion needs candidates that are faces and candidates that are not")
    fusion = LogisticRegression().fit(X, labels)
    if fusion.coef_[0, 0] <= 0:
        raise ValueError(
            "fit_fusion: the decision's weight came out non-positive; the checked scores do not "
            "tell these faces from these non-faces (more photos?)"
        )
    return np.r_[fusion.coef_[0], fusion.intercept_]


class AppearanceCheck(BaseEstimator):
    """Stage 4 of :class:`~eigenvision.FaceFinder`: the appearance check, its linear score on HOG
    of the face and its fusion with the decision and the eye-pair check.

    The finder fits it (:meth:`~eigenvision.FaceFinder.fit_appearance`) on the
    candidates its search examines in annotated photos: :meth:`fit` (the
    linear score) on one set of photos, :meth:`fit_fusion` on another.

    Parameters
    ----------
    gate : float, default -1.0
        The decision's log-odds from which a candidate reaches the check (the
        decision's likeliest candidate always does).

    Attributes
    ----------
    weights_, bias_ : (d,) ndarray, float
        The linear score of :func:`appearance_features` (:func:`appearance_svm`).
    offsets_ : (k, 3) ndarray
        Where the check looks around a candidate (:func:`offset_eyes`).
    fusion_ : (3,) ndarray or None
        ``(a, b, c)`` of :func:`fit_fusion` (None until :meth:`fit_fusion`).

    References
    ----------
    N. Dalal and B. Triggs (2005), Histograms of oriented gradients for human
    detection, CVPR.
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {"gate": Param("real", -100, 100)}

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "weights_": State(shape=("a",)),
        "bias_": State("real"),
        "offsets_": State(shape=("o", 3)),
        "fusion_": State(shape=(3,), optional=True),
    }

    def __init__(self, gate=-1.0):
        self.gate = gate

    def fit(self, crops, faces, *, offsets=APPEARANCE_OFFSETS):
        """The linear score of candidates' crops (:func:`appearance_svm`); no fusion yet.

        Parameters
        ----------
        crops : (n, 56, 48) ndarray
            The candidates' crops (:func:`appearance_crops`), cut on their own eyes.
        faces : (n,) array-like of bool
            Which are faces.
        offsets : (k, 3) array-like, default APPEARANCE_OFFSETS
            ``(scale, along, across)`` rows; ``[(1, 0, 0)]``: the candidate alone.

        Returns
        -------
        self
        """
        check_params(self)
        offsets = checked_offsets(offsets)
        faces = np.asarray(faces, dtype=bool)
        self.weights_, self.bias_ = appearance_svm(crops[faces], crops[~faces])
        self.offsets_ = offsets
        self.fusion_ = None
        return self

    def fit_fusion(self, checked, appearance, faces):
        """The fusion of the checked decision and the appearance (:func:`fit_fusion`).

        Parameters
        ----------
        checked, appearance : (n,) array-like
            Candidates' log-odds after the eye-pair check and their appearance
            (:meth:`best`), on photos :meth:`fit` did not see.
        faces : (n,) array-like of bool

        Returns
        -------
        self
        """
        check_fitted(self, "weights_")
        self.fusion_ = fit_fusion(checked, appearance, faces)
        return self

    def __sklearn_is_fitted__(self):
        """Fitted when it can score: its linear score and its fusion."""
        return getattr(self, "fusion_", None) is not None

    def linear(self, crops) -> np.ndarray:
        """The linear score of :func:`appearance_crops`' crops.

        Parameters
        ----------
        crops : (n, 56, 48) ndarray

        Returns
        -------
        (n,) ndarray
        """
        check_fitted(self, "weights_")
        return appearance_features(crops) @ self.weights_ + self.bias_

    def best(self, image, candidates) -> np.ndarray:
        """Each candidate's appearance: the best linear score of its crops at ``offsets_``.

        Parameters
        ----------
        image : (H, W) ndarray
        candidates : sequence of (left_eye, right_eye, ...)

        Returns
        -------
        (n,) ndarray
        """
        moved = offset_eyes(candidates, self.offsets_)
        # the crops in two parts on two threads: cutting them and their HOG release the GIL
        parts = min(n_threads(), 2) if len(moved) >= _PARALLEL_CROPS else 1
        scores = run_on_row_parts(
            lambda rows: self.linear(appearance_crops(image, moved[rows])), len(moved), parts
        )
        return scores.reshape(len(candidates), -1).max(1)

    def fused(self, image, candidates, scores, threshold, check) -> np.ndarray:
        """The candidates' face log-odds: the fusion of the checked decision and the appearance.

        Each candidate is first read on its own crop; the offsets' crops are read only where
        that fusion comes within ``b`` :data:`OFFSET_MARGIN` log-odds of ``threshold`` (``b``
        the fusion's appearance weight), the others keep that lower bound: far under the
        threshold, they stay under it. The eye-pair check (a
        locate, the dearest step) runs only where the fusion without it, an upper bound,
        reaches ``threshold``.

        Parameters
        ----------
        image : (H, W) ndarray
        candidates : sequence of (left_eye, right_eye, ...)
        scores : (n,) array-like
            The decision's log-odds.
        threshold : float
            A probability.
        check : callable
            ``check(candidate, score)``: ``score`` after the eye-pair check.

        Returns
        -------
        (n,) ndarray
        """
        if not candidates:
            return np.zeros(0)
        check_fitted(self, "fusion_")
        a, b, c = self.fusion_
        scores = np.asarray(scores, dtype=float)
        seen = b * self.linear(appearance_crops(image, candidates)) + c
        near = np.flatnonzero(a * scores + seen >= logit(threshold) - b * OFFSET_MARGIN)
        if len(near):
            seen[near] = b * self.best(image, [candidates[i] for i in near]) + c
        fused = a * scores + seen
        for i in np.flatnonzero(fused >= logit(threshold)):
            fused[i] = a * check(candidates[i], scores[i]) + seen[i]
        return fused

    def _check_relations(self):
        """Its offsets are scales and shifts, its weights fit HOG of its crop."""
        check_params(self)
        checked_offsets(self.offsets_)
        width = appearance_features(np.zeros((1, *APPEARANCE_SHAPE))).shape[1]
        if len(self.weights_) != width:
            raise ValueError(
                f"AppearanceCheck: weights_ of length {len(self.weights_)}, not the {width} HOG "
                f"values of a {APPEARANCE_SHAPE} crop"
            )


#: Crops from which :meth:`AppearanceCheck.best` cuts and describes them on two threads.
_PARALLEL_CROPS = 27


def checked_offsets(offsets) -> np.ndarray:
    """``offsets`` as a ``(k, 3)`` float array, or ``ValueError`` naming what is wrong.

    Parameters
    ----------
    offsets : (k, 3) array-like
        ``(scale, along, across)`` rows (:func:`offset_eyes`).

    Returns
    -------
    (k, 3) ndarray
    """
    try:
        array = np.array(offsets, dtype=float).reshape(-1, 3)
    except (TypeError, ValueError):
        array = np.zeros((0, 3))
    if not len(array) or not np.isfinite(array).all() or (array[:, 0] <= 0).any():
        raise ValueError(
            f"offsets must be (scale, along, across) rows, finite, with scales > 0, got "
            f"{np.asarray(offsets, dtype=object).tolist()}; e.g. [(1.0, 0.0, 0.0)] for the "
            "candidate alone"
        )
    return array
