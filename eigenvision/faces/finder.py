"""Faces in photographs: :class:`FaceFinder`, the stages of :mod:`eigenvision.faces` in order.

The eigenspace detector of Moghaddam & Pentland (1997) made to hold up in
the wild, in four stages, each a module of its own:

1. :class:`~eigenvision.faces.candidates.CandidateSearch`: DFFS minima over a
   pyramid and a few in-plane rotations;
2. :class:`~eigenvision.faces.decision.FaceDecision`: face or not, a perceptron
   on the distances to clusters of faces and of mined non-faces (Sung & Poggio 1998);
3. :mod:`~eigenvision.faces.refine`: the best candidates moved to the
   decision's best window nearby;
4. :mod:`~eigenvision.faces.features`: eyes, nose and mouth located inside
   each face kept, which checks it and places its features; and
   :class:`~eigenvision.faces.appearance.AppearanceCheck`: a linear classifier
   on HOG of the face, fused with the decision and the check.

:func:`~eigenvision.find_faces` runs the finder that ships in the project's
``data/`` (:mod:`eigenvision.faces.photos`). The user guide's page on faces
in photographs gives the measurements behind each default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator

from .._base import check_fitted, copied_with_parts
from .._base import progress as show_progress
from .._parallel import run_parallel, single_threaded_blas
from .._spec import Param, State, check_model, check_params
from ..evaluate import face_found, finds_a_face_of
from ..imageset import ImageSet
from .appearance import (
    APPEARANCE_OFFSETS,
    APPEARANCE_SHAPE,
    EXAMINED,
    AppearanceCheck,
    appearance_crops,
    checked_offsets,
)
from .candidates import CandidateSearch, reduced
from .decision import FaceDecision, decision_cuts, mine_nonfaces
from .features import FeatureDetector, feature_check, place_features, placement_locator
from .geometry import (
    HalfOctaves,
    augmented_face_windows,
    face_box,
    jittered_face_windows,
    window_shape,
)
from .refine import REFINEMENT, distinct, refine
from .training import background_candidates, training_background

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


class FaceFinder(BaseEstimator):
    """Find faces in photographs with eigenspaces (the stages of :mod:`eigenvision.faces`).

    The stages are estimators of their own, held as parameters and fitted in
    place, as a scikit-learn ``Pipeline`` holds its steps: their settings are
    reached as ``set_params(search__rotations=(0.0,))``,
    ``set_params(decision__equalize=False)``, ``set_params(appearance__gate=0.0)``,
    on a fitted finder too (a search or check setting then changes what
    :meth:`find` does; a training setting needs ``fit`` again).

    Parameters
    ----------
    iod : int, default 16
        Inter-ocular distance of the detection window
        (:data:`~eigenvision.faces.geometry.FACE_WINDOW` geometry:
        ``round(1.6 iod) x round(1.4 iod)`` pixels): the smallest face found
        without upsampling.
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
    n_refined : int, default 20
        The candidates the decision likes best, moved to the best window
        around them (one coarse round of :func:`~eigenvision.faces.refine.refine`)
        and ranked by the mean of the decision there and where they were
        (the sharp decision rejects a window a little off). 0: none moved.
    eye_weight : float, default 16.0
        The eye-pair check: a face's score is the decision's log-odds plus
        ``eye_weight (log p_left + log p_right)``, the located eyes'
        probabilities (:func:`~eigenvision.faces.features.feature_check`; 0:
        the decision alone).
    feature_weight : float, default 16.0
        The same check for the located nose and mouth.
    augment : tuple of float, default (-8.0, 0.0, 8.0)
        Tilts (degrees) of the training windows.
    search : CandidateSearch, optional
        Stage 1, the face space and the candidates' search
        (:class:`~eigenvision.faces.candidates.CandidateSearch`). None: one
        with its defaults, made by ``fit``.
    decision : FaceDecision, optional
        Stage 2, face or not
        (:class:`~eigenvision.faces.decision.FaceDecision`). None: one with
        its defaults, made by ``fit``.
    appearance : AppearanceCheck, optional
        Stage 4, the appearance check
        (:class:`~eigenvision.faces.appearance.AppearanceCheck`), fitted by
        :meth:`fit_appearance`; unfitted, the finder scores by the decision
        and the eye-pair check alone. None: one with its defaults, made by
        ``fit``.

    Attributes
    ----------
    window_ : (2,) int ndarray
        The detection window ``(h, w)``.
    locator_ : FeatureDetector
        Eyes, nose and mouth inside a candidate's box: the eye-pair and the
        nose-and-mouth checks read their confidences.
    placer_ : FeatureDetector
        Places the features reported
        (:func:`~eigenvision.faces.features.place_features`).
    eye_regressor_ : EyeRegressor or None
        Refines the placed eyes (:class:`~eigenvision.faces.eyes.EyeRegressor`);
        None unless given (:func:`~eigenvision.faces.recipes.build_finder` fits one).

    References
    ----------
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7). K.-K. Sung and T. Poggio (1998),
    Example-based learning for view-based human face detection, IEEE TPAMI
    20(1).
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "iod": Param("int", 8, 64),
        "threshold": Param("real", 0, 1),
        "identity_threshold": Param("real", 0, 1, optional=True),
        "max_side": Param("int", 64, 4096),
        "n_refined": Param("int", 0, 100_000),
        "eye_weight": Param("real", 0, 1000),
        "feature_weight": Param("real", 0, 1000),
        "augment": Param("reals", -45, 45, max_length=9),
        "search": Param("model", optional=True, needs=("candidates",)),
        "decision": Param("model", optional=True, needs=("decision_function",)),
        "appearance": Param("model", optional=True, needs=("fused",)),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "window_": State(dtypes="iu", shape=(2,), low=1),
        "locator_": State("model"),
        "placer_": State("model"),
        "eye_regressor_": State("model", optional=True),
    }

    def __init__(
        self,
        iod=16,
        *,
        threshold=0.5,
        identity_threshold=None,
        max_side=800,
        n_refined=20,
        eye_weight=16.0,
        feature_weight=16.0,
        augment=(-8.0, 0.0, 8.0),
        search=None,
        decision=None,
        appearance=None,
    ):
        self.iod = iod
        self.threshold = threshold
        self.identity_threshold = identity_threshold
        self.max_side = max_side
        self.n_refined = n_refined
        self.eye_weight = eye_weight
        self.feature_weight = feature_weight
        self.augment = augment
        self.search = search
        self.decision = decision
        self.appearance = appearance

    def __copy__(self):
        """A copy with settings of its own, its stages' too (their fitted arrays shared):
        ``copy.copy(finder).set_params(search__rotations=(0.0,))`` changes no other finder."""
        return copied_with_parts(self, _STAGES)

    def fit(self, faces: ImageSet, backgrounds, *, locator=None, placer=None, progress=False):
        """Train the face space, mine non-faces from ``backgrounds``, fit the decision.

        Training follows the stages the search runs: the face space of aligned
        face windows and the cascade's first test (``search``), then two rounds
        of non-faces mined from stage 1's candidates on the backgrounds
        (bootstrapping, Sung & Poggio 1998) with the face/non-face decision
        fitted after each (``decision``), and the feature locators. The
        appearance check is fitted after (:meth:`fit_appearance`).

        Parameters
        ----------
        faces : ImageSet or sequence of ImageSet
            Faces with ``left_eye`` and ``right_eye`` landmarks (e.g.
            :func:`~eigenvision.datasets.load_helen`); ``nose`` and ``mouth``
            too for the feature locator (fitted on the first set).
        backgrounds : sequence of (H, W) ndarray or ((H, W) ndarray, boxes)
            Photos whose windows are non-faces, except inside ``boxes``
            (``(x, y, w, h)`` each, e.g. the annotated faces, which are
            skipped along with windows overlapping them).
        locator : FeatureDetector, optional
            A fitted eye, nose and mouth detector (the checks); default one
            fitted here on ``faces``.
        placer : FeatureDetector, optional
            A fitted eye, nose and mouth detector (the positions reported);
            default :func:`~eigenvision.faces.features.placement_locator`
            fitted here on ``faces``.
        progress : bool, default False
            Progress bars (stderr, on a terminal) over the search of the
            backgrounds and the two mining rounds, minutes on a few hundred
            photos.

        Returns
        -------
        self
        """
        for name, default in _STAGES.items():
            if getattr(self, name) is None:
                setattr(self, name, default())
        self.check_parameters()
        sets = [faces] if isinstance(faces, ImageSet) else list(faces)
        windows = np.concatenate(
            [
                augmented_face_windows(one.images, one.landmarks, iod=self.iod, tilts=self.augment)
                for one in sets
            ]
        )
        self.window_ = np.array(windows.shape[1:], dtype=np.int64)
        backgrounds = [training_background(item, self.max_side) for item in backgrounds]
        jittered = []
        if self.search.prefilter_recall is not None:
            jittered = [
                jittered_face_windows(one.images, one.landmarks, iod=self.iod) for one in sets
            ]
        self.search.fit(windows, backgrounds, jittered=jittered)
        pools = background_candidates(self.search, backgrounds, progress=progress)
        # Round 1 samples the candidates stage 1 gives on backgrounds; round 2 (bootstrapping,
        # Sung & Poggio 1998) keeps those the whole decision still calls faces.
        cut = partial(decision_cuts, iod=self.iod, antialias=self.decision.antialias)
        per_image = self.decision.negatives_per_image
        negatives = mine_nonfaces(backgrounds, pools, cut, per_image=per_image, progress=progress)
        if negatives is None:
            negatives = np.zeros((0, *self.window_))
        self.decision.fit(windows, negatives, iod=self.iod)
        mined = mine_nonfaces(
            backgrounds,
            pools,
            cut,
            per_image=per_image,
            decide=self.decision.decision_function,
            progress=progress,
        )
        if mined is not None:
            negatives = np.concatenate([negatives, mined])
        self.decision.fit(windows, negatives, iod=self.iod)
        self.locator_ = (
            FeatureDetector(score="decision").fit(sets[0]) if locator is None else locator
        )
        self.placer_ = placement_locator().fit(sets[0]) if placer is None else placer
        self.eye_regressor_ = None
        return self

    def fit_appearance(
        self, photos, fusion_photos=None, *, offsets=APPEARANCE_OFFSETS, progress=False
    ):
        """Fit the appearance check on annotated photos (the rest of the finder fitted).

        The linear score is trained on the candidates of ``photos``
        (:meth:`~eigenvision.faces.appearance.AppearanceCheck.fit`), cut on
        their own eyes; a candidate's appearance is then the best linear score
        of its crops at ``offsets``
        (:func:`~eigenvision.faces.appearance.offset_eyes`). The fusion of the
        scores is fitted on the candidates of ``fusion_photos``: other photos,
        so the fusion weighs the appearance as it scores faces the linear
        score was not trained on.

        Parameters
        ----------
        photos : iterable of (image, centre, iod, others)
            As :meth:`labelled_candidates` reads them.
        fusion_photos : iterable of (image, centre, iod, others), optional
            The same. None: the linear score alone, the fusion left to fit
            (:meth:`~eigenvision.faces.appearance.AppearanceCheck.fit_fusion` on
            :meth:`labelled_candidates` with ``scored=True``, as
            :func:`~eigenvision.faces.recipes.fit_appearance_check` does fold by
            fold); until then the finder scores by the decision.
        offsets : (k, 3) array-like, default APPEARANCE_OFFSETS
            ``(scale, along, across)`` rows; ``[(1, 0, 0)]``: the candidate alone.
        progress : bool, default False

        Returns
        -------
        self
        """
        offsets = checked_offsets(offsets)
        check_fitted(self, "locator_")
        if self.appearance is None:
            self.appearance = AppearanceCheck()
        _, _, crops, faces = self.labelled_candidates(
            photos, check=False, progress=progress, desc="appearance"
        )
        self.appearance.fit(crops, faces, offsets=offsets)
        if fusion_photos is not None:
            _, checked, seen, faces = self.labelled_candidates(
                fusion_photos, scored=True, progress=progress, desc="fusion"
            )
            self.appearance.fit_fusion(checked, seen, faces)
        return self

    def labelled_candidates(
        self, photos, *, check=True, scored=False, progress=False, desc="candidates"
    ):
        """Every candidate the search examines in annotated photos, with what it is.

        Parameters
        ----------
        photos : iterable of (image, centre, iod, others)
            Each photo (grey), its annotated face's centre ``(x, y)`` and
            inter-ocular distance (``centre`` None: a photo without a face), and
            the boxes of the faces it holds unannotated (``None``: its other
            candidates are neither faces nor non-faces, as in LFW, where people
            stand behind the one named).
        check : bool, default True
            Run the eye-pair check (a locate a candidate); False: ``checked`` is NaN.
        scored : bool, default False
            Return each candidate's appearance (the check's linear score, the
            best over its offsets: :meth:`~eigenvision.faces.appearance.AppearanceCheck.best`)
            instead of its crop.
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
        gate = (AppearanceCheck() if self.appearance is None else self.appearance).gate
        decision, checked, crops, labels = [], [], [], []
        for image, centre, iod, others in show_progress(photos, desc=desc, enabled=progress):
            small, scale = reduced(image, self.max_side)
            candidates, scores, _ = self._examined(small, lambda s: s >= gate, EXAMINED)
            kept = []
            for candidate, score in zip(candidates, scores, strict=True):
                back = [(np.asarray(p) + 0.5) / scale[::-1] - 0.5 for p in candidate[:2]]
                box = face_box(*back)
                face = centre is not None and face_found(box, centre, iod)
                if not face and (others is None or finds_a_face_of(box, others)):
                    continue
                kept.append(candidate)
                decision.append(score)
                checked.append(self._checked(small, candidate, score) if check else np.nan)
                labels.append(face)
            if kept:
                crops.append(
                    self.appearance.best(small, kept) if scored else appearance_crops(small, kept)
                )
        if scored:
            crops = np.concatenate(crops) if crops else np.zeros(0)
        else:
            crops = np.concatenate(crops) if crops else np.zeros((0, *APPEARANCE_SHAPE), np.float32)
        return np.asarray(decision), np.asarray(checked), crops, np.asarray(labels, dtype=bool)

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
            windows moved onto the face, and one search there, at the few
            scales of :data:`~eigenvision.faces.features.FITTED_BOX_SCALES`,
            places the eyes as well as two.

        Returns
        -------
        FeatureLocations
            In ``image``'s pixels.
        """
        check_fitted(self, "locator_")
        placed = place_features(self.placer_, image, box, relocate=relocate)
        regressor = self.eye_regressor_
        if regressor is None:
            return placed
        # The two estimates err apart (a brow-like patch, a blurred eye): their mean beats both.
        eyes = np.array([placed["left_eye"], placed["right_eye"]])
        return placed.with_eyes((eyes + regressor.predict(image, eyes)) / 2)

    def check_parameters(self):
        """Raise ``ValueError`` naming a parameter outside ``_params`` (``fit``, ``load`` call it).

        Returns
        -------
        None
        """
        check_params(self)
        for name in _STAGES:
            stage = getattr(self, name)
            if stage is not None:
                check_params(stage)
        min_iod = None if self.search is None else self.search.min_iod
        if min_iod is not None and min_iod < self.iod / 2:
            raise ValueError(
                f"FaceFinder: search__min_iod must be None or at least half of iod={self.iod} "
                f"pixels (the window's; smaller faces are searched in the photo enlarged, up to "
                f"twice), got {min_iod!r}"
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
            the candidates examined (the appearance check's ``gate``).

        Returns
        -------
        faces : list of Face
            Empty when there is no face.
        likeliest : float or None
            Only with ``return_likeliest``.
        """
        check_fitted(self, "locator_")
        self.check_parameters()  # set_params(max_side=0) after fit: refused, not "no face"
        threshold = self.threshold if threshold is None else threshold
        if not (isinstance(threshold, Real) and 0.0 <= threshold <= 1.0):
            raise ValueError(f"threshold must be a probability in [0, 1], got {threshold!r}")
        if isinstance(max_faces, bool) or not isinstance(max_faces, Integral) or max_faces < 1:
            raise ValueError(f"max_faces must be a positive int, got {max_faces!r}")
        faces, likeliest = self._search(image, threshold, max_faces)
        return (faces, likeliest) if return_likeliest else faces

    def _examined(self, small, keep, max_faces, *, best=False):
        """The candidates the search examines in a reduced photo, placed by every round of
        :func:`~eigenvision.faces.refine.refine` and distinct, with their decision's log-odds;
        and the log-odds of the candidates not examined.

        ``keep(scores)`` says which candidates (by the decision's log-odds) are examined;
        ``best``: the decision's likeliest one is, whatever ``keep`` says (and below the
        window, the likeliest of the window's size or more).
        """
        nothing = [], np.zeros(0), np.zeros(0)
        if small.shape[0] < self.window_[0] or small.shape[1] < self.window_[1]:
            return nothing
        reductions = HalfOctaves(small)  # the pyramid's, and the windows are cut from them
        candidates = self.search.candidates(reductions)
        if not candidates:
            return nothing
        photo = reductions if self.decision.antialias else small
        score = self.decision.candidate_scores
        scores = score(photo, candidates)
        if self.n_refined:
            moving = np.argsort(-scores)[: self.n_refined]
            chosen = [candidates[i] for i in moving]
            moved, moved_scores = refine(
                score, photo, chosen, scores[moving], rounds=REFINEMENT[:1]
            )
            # The best of 27 windows scores higher than any one, on clutter as on faces; the
            # mean with the window's own score halves that gain.
            scores[moving] = (scores[moving] + moved_scores) / 2
            for i, candidate in zip(moving, moved, strict=True):
                candidates[i] = candidate
        kept = np.asarray(keep(scores), dtype=bool)
        if best:
            kept[np.argmax(scores)] = True
            min_iod = self.search.min_iod
            if min_iod is not None and min_iod < self.iod:
                # below the window a close face's eyes and nostrils, a small face in its
                # middle, may be likelier than the face: the likeliest of the window's size
                # or more is examined too (nearer the window's level than the one below it)
                distances = np.array([np.hypot(*np.subtract(c[1], c[0])) for c in candidates])
                large = np.flatnonzero(distances >= self.iod / np.sqrt(self.search.step))
                if len(large):
                    kept[large[np.argmax(scores[large])]] = True
        order = [i for i in np.argsort(-scores) if kept[i]]
        chosen = [order[k] for k in distinct(candidates, scores, order, max_faces, parts_only=True)]
        # Placed by all three rounds, ranked by the score before them (ranked by their score,
        # clutter gains as much as faces).
        refined, _ = refine(score, photo, [candidates[i] for i in chosen], scores[chosen])
        examined = distinct(refined, scores[chosen], range(len(chosen)), max_faces, parts_only=True)
        return [refined[k] for k in examined], scores[chosen][examined], scores[~kept]

    @single_threaded_blas()  # small products: BLAS's own threads only spin on our cores
    def _search(self, image, threshold, max_faces):
        """:meth:`find`'s faces and the likeliest candidate's probability (or None)."""
        small, scale = reduced(image, self.max_side)
        placed = {}  # the candidates placed while they were checked, by their id
        if self._checks_appearance():
            # as many examined whatever max_faces: the fusion, not the decision, ranks them
            gate = self.appearance.gate
            candidates, scores, _ = self._examined(
                small, lambda s: s >= gate, max(max_faces, EXAMINED), best=True
            )
            checked = self.appearance.fused(
                small, candidates, scores, threshold, partial(self._checked_placed, small, placed)
            )
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
        passed = [
            i
            for i in np.argsort(-np.asarray(checked), kind="stable")
            if expit(checked[i]) >= threshold
        ]
        # of a box and a larger one around it, both examined, the surer after the checks
        reported = [passed[k] for k in distinct(candidates, np.asarray(checked), passed, max_faces)]
        faces = [
            self._face(small, candidates[i], checked[i], scale, placed.get(id(candidates[i])))
            for i in reported
        ]
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

    def _checked_placed(self, small, placed, candidate, score):
        """:meth:`_checked`, the candidate placed meanwhile on the other core (into
        ``placed``, by its ``id``): the appearance check checks few candidates, most of them
        faces then reported. The two locates overlap where they release the GIL (their FFTs
        and compiled loops); much of their Python and small-array work does not."""
        check = partial(self._checked, small, candidate, score)
        place = partial(self._placed, small, candidate)
        checked, placed[id(candidate)] = run_parallel([check, place])
        return checked

    def _placed(self, small, candidate):
        """A candidate's features as :meth:`find` reports them (:meth:`place` in its box)."""
        left, right, _ = candidate
        return self.place(small, face_box(left, right), relocate=False)

    def _face(self, small, candidate, score, scale, placed=None):
        """A Face of checked ``score`` from a candidate: its features placed in its box
        (:meth:`_placed`, or ``placed`` when it was), all back in input pixels."""
        left, right, _ = candidate
        reported = self._placed(small, candidate) if placed is None else placed
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

    def _checks_appearance(self) -> bool:
        """Whether the finder has a fitted appearance check (it scores by it then)."""
        return self.appearance is not None and self.appearance.__sklearn_is_fitted__()

    def _check_relations(self):
        """Its stages are fitted to its window, its locator and placer are feature detectors
        (:func:`~eigenvision._spec.check_model`)."""
        self.check_parameters()
        window = tuple(int(v) for v in self.window_)
        if window != window_shape(self.iod):
            raise ValueError(f"FaceFinder: window_ {window} is not the window of iod {self.iod}")
        for name in ("search", "decision"):
            stage = getattr(self, name)
            if not isinstance(stage, _STAGES[name]):
                raise ValueError(
                    f"FaceFinder.{name} must be a fitted {_STAGES[name].__name__}, not "
                    f"{type(stage).__name__}"
                )
            check_model(stage)
        if self.search.window != window:
            raise ValueError(f"FaceFinder: a search of {self.search.window} windows, not {window}")
        if self.decision.iod_ != self.iod:
            raise ValueError(
                f"FaceFinder: a decision of windows with eyes {self.decision.iod_} pixels apart, "
                f"not iod {self.iod}"
            )
        if self._checks_appearance():
            check_model(self.appearance)
        for name in ("locator_", "placer_"):
            part = getattr(self, name, None)
            if not isinstance(part, FeatureDetector):
                raise ValueError(
                    f"FaceFinder.{name} must be a FeatureDetector, not {type(part).__name__}"
                )
            check_model(part)


#: The finder's stages: its parameter for each and the estimator ``fit`` makes for None.
_STAGES = {"search": CandidateSearch, "decision": FaceDecision, "appearance": AppearanceCheck}
