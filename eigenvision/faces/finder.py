"""Faces in photographs: :class:`FaceFinder`, the stages of :mod:`eigenvision.faces` in order.

The eigenspace detector of Moghaddam & Pentland (1997) made to hold up in
the wild, in four stages, each a module of its own:

1. :mod:`~eigenvision.faces.candidates`: DFFS minima over a pyramid and a
   few in-plane rotations;
2. :mod:`~eigenvision.faces.decision`: face or not, a perceptron on the
   distances to clusters of faces and of mined non-faces (Sung & Poggio 1998);
3. :mod:`~eigenvision.faces.refine`: the best candidates moved to the
   decision's best window nearby;
4. :mod:`~eigenvision.faces.features`: eyes, nose and mouth located inside
   each face kept, which checks it and places its features; and
   :mod:`~eigenvision.faces.appearance`: a linear classifier on HOG of the
   face, fused with the decision and the check.

:func:`~eigenvision.find_faces` runs the finder that ships in the project's
``data/`` (:mod:`eigenvision.faces.photos`). The user guide's page on faces
in photographs gives the measurements behind each default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator

from .._base import check_fitted
from .._parallel import single_threaded_blas
from .._spec import Param, State, check_model, check_params
from .appearance import EXAMINED, AppearanceMixin
from .candidates import (
    Prefilter,
    find_candidates,
    reduced,
    search_space,
)
from .decision import DecidingMixin
from .features import FeatureDetector, feature_check, place_features
from .geometry import HalfOctaves, face_box, window_shape
from .refine import REFINEMENT, distinct, refine
from .training import FinderTrainingMixin

__all__ = ["Face", "FaceFinder"]


@dataclass(frozen=True)
class Face:
    """A face found in a photo (:func:`~eigenvision.find_faces`).

    Attributes
    ----------
    box : (x, y, w, h)
        Brows to chin, cheek to cheek (:func:`~eigenvision.face_box` of the
        eyes), input pixels; along the eye line, so a tilted face's box is
        the upright box of its eyes.
    left_eye, right_eye, nose, mouth : (x, y)
        Input pixels; ``left_eye`` is on the image's left.
    score : float
        The face/non-face decision's log-odds plus the eye-pair check
        (:class:`FaceFinder`'s ``eye_weight``; higher: more face-like).
    confidence : float
        The probability of a face, ``1 / (1 + exp(-score))``.
    angle : float
        In-plane rotation of the eye line, degrees (positive: the right eye lower).
    """

    box: tuple
    left_eye: tuple
    right_eye: tuple
    nose: tuple
    mouth: tuple
    score: float
    confidence: float
    angle: float

    @property
    def iod(self) -> float:
        """Distance between the eyes, pixels."""
        return float(np.hypot(*np.subtract(self.right_eye, self.left_eye)))

    def scaled(self, factor: float) -> Face:
        """The same face in an image ``factor`` times as large (pixel centres kept).

        Parameters
        ----------
        factor : float
            New size over old size, > 0.

        Returns
        -------
        Face
        """

        def point(p):
            return None if p is None else tuple((float(v) + 0.5) * factor - 0.5 for v in p)

        x, y, w, h = self.box
        return replace(
            self,
            box=(*point((x, y)), w * factor, h * factor),
            left_eye=point(self.left_eye),
            right_eye=point(self.right_eye),
            nose=point(self.nose),
            mouth=point(self.mouth),
        )


class FaceFinder(FinderTrainingMixin, DecidingMixin, AppearanceMixin, BaseEstimator):
    """Find faces in photographs with eigenspaces (the stages of :mod:`eigenvision.faces`).

    Parameters
    ----------
    n_components : int, default 20
        Components of the face space and of each cluster's space.
    search_components : int, optional
        Components of the face space stage 1 searches with, its first ones
        (:meth:`~eigenvision.Eigenspace.leading`); default all. Each costs an
        inverse FFT of every pyramid level.
    iod : int, default 16
        Inter-ocular distance of the detection window
        (:data:`~eigenvision.faces.geometry.FACE_WINDOW` geometry:
        ``round(1.6 iod) x round(1.4 iod)`` pixels): the smallest face found
        without upsampling.
    rotations : tuple of float, default (-20.0, 0.0, 20.0)
        In-plane rotations searched, degrees (the face space is trained on
        faces tilted by ``augment`` in between).
    step : float, default 2**0.25
        Ratio between the pyramid's window sizes.
    min_iod : float, optional
        The smallest face searched, as its eye distance in the searched
        (reduced) photo's pixels; default the window's own. A larger one
        skips the pyramid's finest levels, where texture looks most like a
        small face.
    tilted_scale : float, default 2.0
        Faces turned in the plane (the ``rotations`` other than 0) are
        searched from this many times the smallest upright face up: the
        turned photos' finest levels cost most and add more clutter than faces.
    threshold : float, default 0.5
        Smallest probability of a face reported by :meth:`find`.
    identity_threshold : float, optional
        Smallest probability of a face that identity work takes (naming,
        comparing, grouping and enrolling faces:
        :func:`~eigenvision.faces.crops.identity_faces`): a stricter bar than
        detection's, so that a sign or a badge found as a face is not named
        or grouped with people. Default: ``threshold``.
    max_side : int, default 800
        Photos are searched with their longer side at most this (larger
        ones are reduced first): bounded time and memory whatever the upload.
    n_candidates : int, default 200
        Stage-1 candidates per rotation passed to the face/non-face decision.
    prefilter_recall : float or None, default 0.99
        The cascade's first test (:func:`~eigenvision.faces.candidates.fit_prefilter`):
        a linear discriminant slid over the pyramid keeps this fraction of the
        (jittered) training faces; the DFFS of the windows it keeps ranks them
        with it (:func:`~eigenvision.faces.candidates.cascade_map`). None:
        every window's DFFS, ranked by it alone. The cut is set by ``fit``;
        on a fitted finder only None changes the search.
    dffs_weight : float, default 1.0
        The candidates' rank: ``dffs_weight log DFFS`` minus the
        discriminant's score (:class:`~eigenvision.faces.candidates.Prefilter`).
    prefilter_stride : int, default 2
        The discriminant is first read on a grid of this many pixels, each
        survivor then moved to its cell's best window (coarse to fine).
    n_refined : int, default 30
        The candidates the decision likes best, moved to the best window
        around them (one coarse round of :func:`~eigenvision.faces.refine.refine`)
        and ranked by the mean of the decision there and where they were
        (the sharp decision rejects a window a little off). 0: none moved.
    candidate_overlap : float, default 0.5
        Stage-1 candidates may overlap a better one (by DFFS) up to this
        intersection over union, so the decision also sees better-placed
        neighbours.
    eye_weight : float, default 16.0
        The eye-pair check: a face's score is the decision's log-odds plus
        ``eye_weight (log p_left + log p_right)``, the located eyes'
        probabilities (:func:`~eigenvision.faces.features.feature_check`; 0:
        the decision alone).
    feature_weight : float, default 16.0
        The same check for the located nose and mouth.
    appearance_gate : float, default -1.0
        With an appearance check fitted (:meth:`fit_appearance`): the
        decision's log-odds from which a candidate reaches it (the
        decision's likeliest candidate always does). The face's score is
        then the fusion of the checked decision and the appearance
        (:mod:`~eigenvision.faces.appearance`).
    augment : tuple of float, default (-8.0, 0.0, 8.0)
        Tilts (degrees) of the training windows.
    negatives_per_image : int, default 200
        Stage-1 windows of each background kept as non-faces in each of the
        two bootstrap rounds (random ones, then the most face-like).
    n_clusters : int, default 6
        Clusters of faces and of non-faces (Sung & Poggio's six and six).
    hidden_units : int, default 32
        Hidden units of the face/non-face perceptron.
    n_networks : int, default 5
        Perceptrons (seeds) averaged in log-odds
        (:func:`~eigenvision.faces.decision.fit_network`): one fit's seed
        moves the detection rate by a few points.
    equalize : bool, default True
        Histogram-equalise every window the decision sees
        (:func:`~eigenvision.faces.decision.decision_windows`), as Sung &
        Poggio do, so it ignores any increasing change of contrast.
    min_contrast : float, default 0.02
        Stage-1 windows whose grey levels (in [0, 1]) vary less than this
        (standard deviation) are no candidates: standardised, a blank wall's
        JPEG noise can look like anything.
    antialias : bool, default True
        The decision's windows are cut from antialiased half-octave
        reductions of the photo (:func:`~eigenvision.faces.geometry.face_windows_at`), so a
        face many times larger than the window is not sampled a pixel here
        and there.

    Attributes
    ----------
    face_space_ : Eigenspace
        Of standardised face windows (stage 1).
    face_clusters_, nonface_clusters_ : dict of Eigenspace
        ``{"c0": ..., "c1": ...}``: the spaces of the face and non-face
        clusters.
    network_mean_, network_scale_, network_hidden_weights_, network_hidden_bias_, \
    network_output_weights_, network_output_bias_
        The perceptron on ``log`` (DFFS, DIFS) to every cluster space
        (:func:`~eigenvision.faces.decision.fit_network`): ``(f,)``, ``(f,)``,
        ``(f, hidden_units)``, ``(hidden_units,)``, ``(hidden_units,)``,
        float, with ``f = 2 (face + non-face clusters)``.
    locator_ : FeatureDetector
        Eyes, nose and mouth inside a candidate's box: the eye-pair and the
        nose-and-mouth checks read their confidences.
    placer_ : FeatureDetector
        Places the features reported
        (:func:`~eigenvision.faces.features.place_features`).
    window_ : (2,) int ndarray
        The detection window ``(h, w)``.
    prefilter_weights_, prefilter_bias_, prefilter_cut_ : (h, w) ndarray, float, float
        The cascade's first test (None without ``prefilter_recall``, and in
        model files written before it existed).
    eye_regressor_ : EyeRegressor or None
        Refines the placed eyes (:class:`~eigenvision.faces.eyes.EyeRegressor`);
        None in model files written before it existed.

    References
    ----------
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7). K.-K. Sung and T. Poggio (1998),
    Example-based learning for view-based human face detection, IEEE TPAMI
    20(1).
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, 1000),
        "search_components": Param("int", 1, 1000, optional=True),
        "iod": Param("int", 8, 64),
        "rotations": Param("reals", -90, 90, max_length=9),
        "step": Param("real", 1, 4, open_low=True),
        "min_iod": Param("real", 8, 4096, optional=True),
        "tilted_scale": Param("real", 1, 64),
        "threshold": Param("real", 0, 1),
        "identity_threshold": Param("real", 0, 1, optional=True),
        "max_side": Param("int", 64, 4096),
        "n_candidates": Param("int", 1, 100_000),
        "prefilter_recall": Param("real", 0, 1, open_low=True, optional=True),
        "dffs_weight": Param("real", 0, 100),
        "prefilter_stride": Param("int", 1, 8),
        "n_refined": Param("int", 0, 100_000),
        "candidate_overlap": Param("real", 0, 1, open_low=True),
        "eye_weight": Param("real", 0, 1000),
        "feature_weight": Param("real", 0, 1000),
        "appearance_gate": Param("real", -100, 100),
        "augment": Param("reals", -45, 45, max_length=9),
        "negatives_per_image": Param("int", 1, 10_000),
        "n_clusters": Param("int", 1, 64),
        "hidden_units": Param("int", 1, 1024),
        "n_networks": Param("int", 1, 64),
        "equalize": Param("bool"),
        "min_contrast": Param("real", 0, 1, open_high=True),
        "antialias": Param("bool"),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "window_": State(dtypes="iu", shape=(2,), low=1),
        "face_space_": State("model"),
        "face_clusters_": State("models"),
        "nonface_clusters_": State("models"),
        "network_mean_": State(shape=("f",)),
        "network_scale_": State(shape=("f",), low=0),
        "network_hidden_weights_": State(shape=("f", "m")),
        "network_hidden_bias_": State(shape=("m",)),
        "network_output_weights_": State(shape=("m",)),
        "network_output_bias_": State("real"),
        "n_negatives_": State("int", low=0),
        "locator_": State("model"),
        "placer_": State("model"),
        "prefilter_weights_": State(shape=("h", "w"), optional=True),
        "prefilter_bias_": State("real", optional=True),
        "prefilter_cut_": State("real", optional=True),
        "eye_regressor_": State("model", optional=True),
        "appearance_weights_": State(shape=("a",), optional=True),
        "appearance_bias_": State("real", optional=True),
        "appearance_fusion_": State(shape=(3,), optional=True),
        "appearance_offsets_": State(shape=("o", 3), optional=True),
    }

    def __init__(
        self,
        n_components=20,
        *,
        search_components=None,
        iod=16,
        rotations=(-20.0, 0.0, 20.0),
        step=2**0.25,
        min_iod=None,
        tilted_scale=2.0,
        threshold=0.5,
        identity_threshold=None,
        max_side=800,
        n_candidates=200,
        prefilter_recall=0.99,
        dffs_weight=1.0,
        prefilter_stride=2,
        n_refined=30,
        candidate_overlap=0.5,
        eye_weight=16.0,
        feature_weight=16.0,
        appearance_gate=-1.0,
        augment=(-8.0, 0.0, 8.0),
        negatives_per_image=200,
        n_clusters=6,
        hidden_units=32,
        n_networks=5,
        equalize=True,
        min_contrast=0.02,
        antialias=True,
    ):
        self.n_components = n_components
        self.search_components = search_components
        self.iod = iod
        self.rotations = rotations
        self.step = step
        self.min_iod = min_iod
        self.tilted_scale = tilted_scale
        self.threshold = threshold
        self.identity_threshold = identity_threshold
        self.max_side = max_side
        self.n_candidates = n_candidates
        self.prefilter_recall = prefilter_recall
        self.dffs_weight = dffs_weight
        self.prefilter_stride = prefilter_stride
        self.n_refined = n_refined
        self.candidate_overlap = candidate_overlap
        self.eye_weight = eye_weight
        self.feature_weight = feature_weight
        self.appearance_gate = appearance_gate
        self.augment = augment
        self.negatives_per_image = negatives_per_image
        self.n_clusters = n_clusters
        self.hidden_units = hidden_units
        self.n_networks = n_networks
        self.equalize = equalize
        self.min_contrast = min_contrast
        self.antialias = antialias

    def place(self, image, box, *, relocate=True):
        """Eyes, nose and mouth of the face in ``box``, placed as :meth:`find` reports them.

        Located by the placer (``placer_``, eye patches with the brows) in
        ``box``, then again in the box of the eyes found there
        (:func:`~eigenvision.faces.features.place_features`); where the model has an
        ``eye_regressor_``, the eyes reported are the mean of the placed ones and
        the regressor's refinement of them.

        Parameters
        ----------
        image : (H, W) or (H, W, 3) ndarray
        box : (x, y, w, h)
            The face, e.g. a :class:`~eigenvision.Face`'s ``box`` or :func:`~eigenvision.face_box`
            of known eyes; ``image``'s pixels.
        relocate : bool, default True
            Locate again in the box of the eyes found first (a box of
            uncertain scale). :meth:`find` passes False: its boxes are its
            windows moved onto the face, and one search there places the eyes
            as well as two.

        Returns
        -------
        FeatureLocations
            In ``image``'s pixels.
        """
        check_fitted(self, "locator_")
        placed = place_features(self.placer_, image, box, relocate=relocate)
        regressor = getattr(self, "eye_regressor_", None)  # None in older model files
        if regressor is None:
            return placed
        # The two estimates err apart (a brow-like patch, a blurred eye): their mean beats both.
        eyes = np.array([placed["left_eye"], placed["right_eye"]])
        return placed.with_eyes((eyes + regressor.predict(image, eyes)) / 2)

    def _prefilter(self):
        """The fitted :class:`~eigenvision.faces.candidates.Prefilter` (None without one)."""
        if getattr(self, "prefilter_weights_", None) is None or self.prefilter_recall is None:
            return None
        return Prefilter(
            self.prefilter_weights_,
            self.prefilter_bias_,
            self.prefilter_cut_,
            self.dffs_weight,
            self.prefilter_stride,
        )

    def check_parameters(self):
        """Raise ``ValueError`` naming a parameter outside ``_params`` (``fit``, ``load`` call it).

        Returns
        -------
        None
        """
        check_params(self)
        if self.min_iod is not None and self.min_iod < self.iod:
            raise ValueError(
                f"FaceFinder: min_iod must be None or at least iod={self.iod} pixels (the "
                f"window's), got {self.min_iod!r}"
            )

    def _candidates(self, image, count):
        """Stage 1 (:func:`~eigenvision.faces.candidates.find_candidates`), these settings."""
        return find_candidates(
            image,
            search_space(self.face_space_, self.search_components),
            self.window_,
            count=count,
            rotations=self.rotations,
            step=self.step,
            min_iod=self.min_iod,
            tilted_scale=self.tilted_scale,
            overlap=self.candidate_overlap,
            min_contrast=self.min_contrast,
            prefilter=self._prefilter(),
        )

    def find(self, image, *, threshold=None, max_faces=50, return_likeliest=False):
        """Every face in a photo, most confident first.

        Parameters
        ----------
        image : (H, W) or (H, W, 3) ndarray
            Any size: photos larger than ``max_side`` are reduced first
            (bounded time and memory), the results given in ``image``'s pixels.
        threshold : float, optional
            Smallest probability of a face (default ``self.threshold``).
        max_faces : int, default 50
        return_likeliest : bool, default False
            Also return the probability of the likeliest candidate, reported
            or not (None when the photo gives none): why a photo shows no
            face, without searching it again at threshold 0. Without an
            appearance check, candidates the decision puts under the
            threshold count with the decision's probability, which the
            eye-pair and nose-and-mouth checks could only lower: then it is
            an upper bound. With one (the shipped finder), the likeliest of
            the candidates examined (``appearance_gate``).

        Returns
        -------
        faces : list of Face
            Empty when there is no face.
        likeliest : float or None
            Only with ``return_likeliest``.
        """
        check_fitted(self, "network_hidden_weights_")
        check_params(self)  # set_params(max_side=0) after fit: refused, not "no face"
        threshold = self.threshold if threshold is None else threshold
        if not (isinstance(threshold, Real) and 0.0 <= threshold <= 1.0):
            raise ValueError(f"threshold must be a probability in [0, 1], got {threshold!r}")
        if isinstance(max_faces, bool) or not isinstance(max_faces, Integral) or max_faces < 1:
            raise ValueError(f"max_faces must be a positive int, got {max_faces!r}")
        faces, likeliest = self._search(image, threshold, max_faces)
        return (faces, likeliest) if return_likeliest else faces

    def _reduced(self, image):
        """``image`` reduced to at most ``max_side`` pixels, and the scale it was reduced by."""
        return reduced(image, self.max_side)

    def _examined(self, small, keep, max_faces, *, best=False):
        """The candidates the search examines in a reduced photo, placed by every round of
        :func:`~eigenvision.faces.refine.refine` and distinct, with their decision's log-odds;
        and the log-odds of the candidates not examined.

        ``keep(scores)`` says which candidates (by the decision's log-odds) are examined;
        ``best``: the decision's likeliest one is, whatever ``keep`` says.
        """
        nothing = [], np.zeros(0), np.zeros(0)
        if small.shape[0] < self.window_[0] or small.shape[1] < self.window_[1]:
            return nothing
        reductions = HalfOctaves(small)  # the pyramid's, and the windows are cut from them
        candidates = self._candidates(reductions, self.n_candidates)
        if not candidates:
            return nothing
        photo = reductions if self.antialias else small
        scores = self._scored(photo, candidates)
        if self.n_refined:
            moving = np.argsort(-scores)[: self.n_refined]
            chosen = [candidates[i] for i in moving]
            moved, moved_scores = refine(
                self._scored, photo, chosen, scores[moving], rounds=REFINEMENT[:1]
            )
            # The best of 27 windows scores higher than any one, on clutter as on faces; the
            # mean with the window's own score halves that gain.
            scores[moving] = (scores[moving] + moved_scores) / 2
            for i, candidate in zip(moving, moved, strict=True):
                candidates[i] = candidate
        kept = np.asarray(keep(scores), dtype=bool)
        if best:
            kept[np.argmax(scores)] = True
        order = [i for i in np.argsort(-scores) if kept[i]]
        chosen = [order[k] for k in distinct(candidates, scores, order, max_faces)]
        # Placed by all three rounds, ranked by the score before them (ranked by their score,
        # clutter gains as much as faces).
        refined, _ = refine(self._scored, photo, [candidates[i] for i in chosen], scores[chosen])
        examined = distinct(refined, scores[chosen], range(len(chosen)), max_faces)
        return [refined[k] for k in examined], scores[chosen][examined], scores[~kept]

    @single_threaded_blas()  # small products: BLAS's own threads only spin on our cores
    def _search(self, image, threshold, max_faces):
        """:meth:`find`'s faces and the likeliest candidate's probability (or None)."""
        small, scale = self._reduced(image)
        if self._appearance_fitted():
            # as many examined whatever max_faces: the fusion, not the decision, ranks them
            candidates, scores, _ = self._examined(
                small, lambda s: s >= self.appearance_gate, max(max_faces, EXAMINED), best=True
            )
            checked = self._appearance_scored(small, candidates, scores, threshold)
            unexamined = np.zeros(0)
        else:
            candidates, scores, unexamined = self._examined(
                small, lambda s: expit(s) >= threshold, max_faces
            )
            # The eye-pair check only lowers a score: the candidates under the threshold need
            # none (their decision's probability bounds the likeliest from above).
            checked = [self._checked(small, c, s) for c, s in zip(candidates, scores, strict=True)]
        if not candidates and not len(unexamined):
            return [], None
        likeliest = np.max(np.concatenate([expit(checked), expit(unexamined)]))
        # Only the faces reported are placed (one locate each): most checked candidates fail.
        reported = [
            i
            for i in np.argsort(-np.asarray(checked), kind="stable")
            if expit(checked[i]) >= threshold
        ]
        faces = [self._face(small, candidates[i], checked[i], scale) for i in reported[:max_faces]]
        return faces, float(likeliest)

    def _checked(self, small, candidate, score):
        """A candidate's ``score`` after the eye-pair and nose-and-mouth checks (the locator's
        confidences: the placer's brow-wide eye patches tell faces from clutter less well)."""
        return feature_check(
            self.locator_,
            small,
            candidate[:2],
            score,
            eye_weight=self.eye_weight,
            feature_weight=self.feature_weight,
        )

    def _face(self, small, candidate, score, scale):
        """A Face of checked ``score`` from a candidate: its features placed in its box
        (:meth:`place`), all back in input pixels."""
        left, right, _ = candidate
        reported = self.place(small, face_box(left, right), relocate=False)
        points = {name: np.asarray(p, dtype=float) for name, p in reported.positions.items()}
        if reported.eye_confidence < 0.02:
            points["left_eye"], points["right_eye"] = left, right  # the window's own eyes
        back = {
            name: tuple(float(v) for v in (p + 0.5) / scale[::-1] - 0.5)
            for name, p in points.items()
        }
        dx, dy = np.subtract(back["right_eye"], back["left_eye"])
        return Face(
            box=face_box(back["left_eye"], back["right_eye"]),
            left_eye=back["left_eye"],
            right_eye=back["right_eye"],
            nose=back.get("nose"),
            mouth=back.get("mouth"),
            score=float(score),
            confidence=float(expit(score)),
            angle=float(np.degrees(np.arctan2(dy, dx))),
        )

    def _check_relations(self):
        """Its spaces are of its window, its perceptron fits its cluster spaces, its locator and
        placer are feature detectors (:func:`~eigenvision._spec.check_model`)."""
        self.check_parameters()
        window = tuple(int(v) for v in self.window_)
        if window != window_shape(self.iod):
            raise ValueError(f"FaceFinder: window_ {window} is not the window of iod {self.iod}")
        spaces = [self.face_space_, *self.face_clusters_.values(), *self.nonface_clusters_.values()]
        for space in spaces:
            check_model(space)
            if tuple(space.image_shape_) != window:
                raise ValueError(
                    f"FaceFinder: a space of {space.image_shape_} windows, not {window}"
                )
        weights = getattr(self, "prefilter_weights_", None)
        if weights is not None and weights.shape != window:
            raise ValueError(
                f"FaceFinder: prefilter_weights_ of shape {weights.shape}, not the window {window}"
            )
        features = 2 * (len(spaces) - 1)
        if len(self.network_mean_) != features or np.any(self.network_scale_ <= 0):
            raise ValueError(
                f"FaceFinder: the perceptron's weights do not fit {features} features "
                "(2 per cluster space)"
            )
        for name in ("locator_", "placer_"):
            part = getattr(self, name, None)
            if not isinstance(part, FeatureDetector):
                raise ValueError(
                    f"FaceFinder.{name} must be a FeatureDetector, not {type(part).__name__}"
                )
            check_model(part)
