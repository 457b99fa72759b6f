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
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .._base import progress as show_progress
from ..descriptors import hog_descriptors
from ..evaluate import face_found, finds_a_face_of
from ..transform import as_float_image, eye_transform, warp_many
from .geometry import face_box

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
    "AppearanceMixin",
    "appearance_svm",
    "fit_fusion",
    "labelled_candidates",
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
#: the best window near a face; :meth:`~AppearanceMixin.fit_appearance`'s default.
APPEARANCE_OFFSETS = tuple(
    (scale, along, across)
    for scale in (0.9, 1.0, 1.1)
    for along in (-0.1, 0.0, 0.1)
    for across in (-0.1, 0.0, 0.1)
)

#: A search reads a candidate's offsets only where its own crop's fused log-odds come this close
#: to the threshold (chosen on the fusion's training candidates; the user guide gives the
#: measurement).
OFFSET_MARGIN = 3.0


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
    transforms = [
        eye_transform(*candidate[:2], shape=APPEARANCE_SHAPE, eye_positions=APPEARANCE_EYES)
        for candidate in candidates
    ]
    crops = warp_many(image, transforms, APPEARANCE_SHAPE).astype(np.float32, copy=False)
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
        scikit-image's rows to 1e-7.
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


def labelled_candidates(
    finder, photos, *, check=True, scored=False, progress=False, desc="candidates"
):
    """Every candidate the finder's search examines in annotated photos, with what it is.

    Parameters
    ----------
    finder : FaceFinder
        Fitted up to its decision and eye-pair check.
    photos : iterable of (image, centre, iod, others)
        Each photo (grey), its annotated face's centre ``(x, y)`` and
        inter-ocular distance (``centre`` None: a photo without a face), and
        the boxes of the faces it holds unannotated (``None``: its other
        candidates are neither faces nor non-faces, as in LFW, where people
        stand behind the one named).
    check : bool, default True
        Run the eye-pair check (a locate a candidate); False: ``checked`` is NaN.
    scored : bool, default False
        Return the finder's appearance score of each candidate (its fitted
        linear score, the best over its offsets) instead of its crop.
    progress : bool, default False
    desc : str

    Returns
    -------
    decision : (n,) ndarray
        The decision's log-odds.
    checked : (n,) ndarray
        After the eye-pair check.
    crops : (n, 56, 48) ndarray
        Cut on the candidates' own eyes; with ``scored``, the ``(n,)`` appearance scores.
    labels : (n,) ndarray of bool
        The candidates that find the annotated face.
    """
    decision, checked, crops, labels = [], [], [], []
    for image, centre, iod, others in show_progress(photos, desc=desc, enabled=progress):
        small, scale = finder._reduced(image)
        candidates, scores, _ = finder._examined(
            small, lambda s: s >= finder.appearance_gate, EXAMINED
        )
        kept = []
        for candidate, score in zip(candidates, scores, strict=True):
            back = [(np.asarray(p) + 0.5) / scale[::-1] - 0.5 for p in candidate[:2]]
            box = face_box(*back)
            face = centre is not None and face_found(box, centre, iod)
            if not face and (others is None or finds_a_face_of(box, others)):
                continue
            kept.append(candidate)
            decision.append(score)
            checked.append(finder._checked(small, candidate, score) if check else np.nan)
            labels.append(face)
        if kept:
            crops.append(
                finder._best_appearance(small, kept) if scored else appearance_crops(small, kept)
            )
    if scored:
        crops = np.concatenate(crops) if crops else np.zeros(0)
    else:
        crops = np.concatenate(crops) if crops else np.zeros((0, *APPEARANCE_SHAPE), np.float32)
    return np.asarray(decision), np.asarray(checked), crops, np.asarray(labels, dtype=bool)


class AppearanceMixin:
    """The appearance check of :class:`~eigenvision.FaceFinder`: its fit and its scores.

    Reads the finder's search (``_reduced``, ``_examined``, ``_checked``) and
    ``appearance_gate``.
    """

    def fit_appearance(self, photos, fusion_photos, *, offsets=APPEARANCE_OFFSETS, progress=False):
        """Fit the appearance check on annotated photos (the rest of the finder fitted).

        The linear score is trained on the candidates of ``photos``
        (:func:`appearance_svm`), cut on their own eyes; a candidate's
        appearance is then the best linear score of its crops at ``offsets``
        (:func:`offset_eyes`). The fusion of the scores is fitted on the
        candidates of ``fusion_photos`` (:func:`fit_fusion`): other photos, so
        the fusion weighs the appearance as it scores faces the linear score
        was not trained on.

        Parameters
        ----------
        photos, fusion_photos : iterable of (image, centre, iod, others)
            As :func:`labelled_candidates` reads them.
        offsets : (k, 3) array-like, default APPEARANCE_OFFSETS
            ``(scale, along, across)`` rows; ``[(1, 0, 0)]``: the candidate alone.
        progress : bool, default False

        Returns
        -------
        self
        """
        offsets = np.array(offsets, dtype=float).reshape(-1, 3)
        if not len(offsets) or not np.isfinite(offsets).all() or (offsets[:, 0] <= 0).any():
            raise ValueError(
                f"offsets must be (scale, along, across) rows, finite, with scales > 0, got "
                f"{offsets.tolist()}; e.g. [(1.0, 0.0, 0.0)] for the candidate alone"
            )
        _, _, crops, faces = labelled_candidates(
            self, photos, check=False, progress=progress, desc="appearance"
        )
        weights, bias = appearance_svm(crops[faces], crops[~faces])
        self.appearance_weights_, self.appearance_bias_ = weights, bias
        self.appearance_offsets_ = offsets
        _, checked, seen, faces = labelled_candidates(
            self, fusion_photos, scored=True, progress=progress, desc="fusion"
        )
        self.appearance_fusion_ = fit_fusion(checked, seen, faces)
        return self

    def _appearance_fitted(self):
        return getattr(self, "appearance_fusion_", None) is not None

    def _appearance(self, crops):
        """The linear score of :func:`appearance_crops`' crops."""
        return appearance_features(crops) @ self.appearance_weights_ + self.appearance_bias_

    def _best_appearance(self, small, candidates):
        """Each candidate's appearance: the best linear score of its crops at the check's offsets
        (``appearance_offsets_``; a finder file without them reads the candidate alone)."""
        offsets = getattr(self, "appearance_offsets_", None)
        if offsets is None:
            return self._appearance(appearance_crops(small, candidates))
        moved = offset_eyes(candidates, offsets)
        return self._appearance(appearance_crops(small, moved)).reshape(len(candidates), -1).max(1)

    def _appearance_scored(self, small, candidates, scores, threshold):
        """The candidates' face log-odds: the fusion of the checked decision and the appearance.

        Each candidate is first read on its own crop; the offsets' crops are read only where
        that fusion comes within :data:`OFFSET_MARGIN` of ``threshold`` (a probability), the
        others keep that lower bound: far under the threshold, they stay under it. The
        eye-pair check (a locate, the dearest step) runs only where the fusion without it, an
        upper bound, reaches ``threshold``.
        """
        if not candidates:
            return np.zeros(0)
        a, b, c = self.appearance_fusion_
        scores = np.asarray(scores, dtype=float)
        seen = b * self._appearance(appearance_crops(small, candidates)) + c
        if getattr(self, "appearance_offsets_", None) is not None:
            near = np.flatnonzero(a * scores + seen >= logit(threshold) - OFFSET_MARGIN)
            if len(near):
                best = self._best_appearance(small, [candidates[i] for i in near])
                seen[near] = b * best + c
        fused = a * scores + seen
        for i in np.flatnonzero(fused >= logit(threshold)):
            fused[i] = a * self._checked(small, candidates[i], scores[i]) + seen[i]
        return fused
