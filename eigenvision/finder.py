"""Faces in photographs: find every face, its eyes, nose and mouth.

A :class:`FaceFinder` is the eigenspace detector of Moghaddam & Pentland
(1997) made to hold up in the wild, in four stages:

1. **Candidates**: the distance from face space (DFFS) of every
   photometrically normalised window (:func:`~eigenvision.dffs_map`, by FFT)
   over an image pyramid and a few in-plane rotations (the turned photos
   from twice the smallest face up, ``tilted_scale``); the best local minima,
   repeats suppressed, are candidates
   (:func:`~eigenvision.search.multiscale_minima`, the one search of the
   package). On its own the face space ranks a wild face far down: the
   astronaut's face was the 1,453rd of 1,500 candidates by DFFS (a space
   general enough for every face explains much clutter too), and first by
   the decision below.
2. **Face or not** (Sung & Poggio 1998): each candidate, cut again from
   the photo on its eyes and histogram-equalised (``equalize``), is
   described by its distances from and in the
   eigenspaces of six clusters of faces and six of non-faces (the
   candidates of background photos, in two bootstrap rounds: a random
   sample, then the ones the decision still calls faces); a small
   perceptron on their logarithms gives the probability of a face. On the
   stage-1 candidates of 63 held-out HELEN faces (validation photos, not the
   test photos of ``wild_detection``) it finds 59% at 0.45 false alarms per
   photo, where the finder before (one face and one non-face space weighed
   by logistic regression, 40 non-faces per photo, the most face-like by
   DFFS) found 16%: most of the gain is the non-faces drawn from the
   candidates stage 1 really gives (one space, logistic: 44%), the clusters
   and the perceptron add the rest (in a prototype on the same photos).
3. **Placement**: the candidates the decision likes best (``n_refined``)
   are moved to its best window nearby (shifts and scales, one coarse round)
   and ranked by the mean of its score there and where they were: a large
   face's stage-1 window is often placed too far off for the sharp decision.
   The faces kept are moved again, coarse to fine, keeping that score.
4. **Features and the eye-pair check**: an eye, nose and mouth
   :class:`~eigenvision.FeatureDetector` trained on the same wild faces
   (``score="decision"``: the feature against the face around it) finds
   them inside each face kept; with ``eye_weight`` the face's score adds
   that times the log-probabilities of its two eyes (clutter that passes
   the decision seldom holds two eyes where a face has them). A second
   detector, whose eye patches take in the brows
   (:data:`~eigenvision.faces.PLACEMENT_EYE_PATCH`), places the features
   reported.

:func:`~eigenvision.find_faces` runs the finder that ships in the project's
``data/`` (rebuilt by ``eigenvision build-models``, see
:mod:`eigenvision.photos`).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from skimage.transform import SimilarityTransform, warp
from sklearn.base import BaseEstimator

from ._base import check_fitted
from ._base import progress as show_progress
from ._errors import EigenvisionError
from .decision import cluster_spaces, fit_network, log_distances, network_log_odds
from .detection import dffs_map
from .eigenspace import Eigenspace
from .faces import (
    FACE_WINDOW,
    PLACEMENT_EYE_PATCH,
    HalfOctaves,
    align_face,
    face_box,
    face_windows,
    face_windows_at,
    window_eyes,
)  # fmt: skip
from .imageset import ImageSet
from .modular import FeatureDetector
from .normalize import equalize_windows, resize, to_gray, unit_norm
from .search import Detection, _minima_table, box_iou, kept_indices, pyramid_scales

__all__ = ["Face", "FaceFinder", "photo_faces", "placement_locator", "single_face"]


@dataclass(frozen=True)
class Face:
    """A face found in a photo (:func:`find_faces`).

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


class FaceFinder(BaseEstimator):
    """Find faces in photographs with eigenspaces (see the module's description).

    Parameters
    ----------
    n_components : int, default 20
        Components of the face space and of each cluster's space.
    search_components : int, optional
        Components of the face space stage 1 searches with, its first ones
        (:meth:`~eigenvision.Eigenspace.leading`); default all. Each costs
        an inverse FFT of every pyramid level: with 6 of 20, stage 1 takes
        0.35 s per 640-pixel photo instead of 0.62 s (``find`` 0.64 s
        instead of 0.92 s; 10 test photos), but its candidates are placed
        less well. On the 130 validation and calibration photos the eyes
        from the finder's box were within 0.10 IOD on 76% against 83% (a
        finder mined and calibrated with 6), and about as many faces were
        found (103 against 106 at 0.45 false alarms per photo, 99 against
        99 at 0.25).
    iod : int, default 16
        Inter-ocular distance of the detection window (:data:`FACE_WINDOW`
        geometry: ``round(1.6 iod) x round(1.4 iod)`` pixels): the smallest
        face found without upsampling.
    rotations : tuple of float, default (-20.0, 0.0, 20.0)
        In-plane rotations searched, degrees (the face space is trained on
        faces tilted by ``augment`` in between). On 30 held-out HELEN
        photos at 0.45 false alarms per photo: upright 57% with these or with
        ``(0.0,)``; turned by 20 degrees 17% with these, 7% with ``(0.0,)``
        (the search at 0 degrees alone is 1.6 times faster).
    step : float, default 2**0.25
        Ratio between the pyramid's window sizes.
    min_iod : float, optional
        The smallest face searched, as its eye distance in the searched
        (reduced) photo's pixels; default the window's own (``iod``, rounded
        to whole pixels of the window; no upsampling). A larger one skips
        the pyramid's finest levels, where texture looks most like a small
        face.
    tilted_scale : float, default 2.0
        Faces turned in the plane (the ``rotations`` other than 0) are
        searched from this many times the smallest upright face up (its eye
        distance: ``min_iod``, or the window's). The turned photos' canvases
        hold 1.7 times the photo's pixels, and a pyramid's finest octave 75%
        of its pixels: with 2, stage 1 takes 0.31 s per 640-pixel photo
        instead of 0.66 s (mean of 12 test photos), ``find`` 0.72 s instead
        of 1.22 s (their median). Their finest levels added more clutter than faces:
        on the 130 validation and calibration photos, at 0.025 / 0.05 / 0.1
        / 0.25 / 0.45 false alarms per photo (``n_refined``'s protocol),
        94 / 98 / 106 / 112 / 114 faces found, against 93 / 96 / 102 / 109
        / 111 with 1 (every size turned; model files written before this
        parameter existed load with 1). Upright faces are still found down
        to the smallest size.
    threshold : float, default 0.5
        Smallest probability of a face reported by :meth:`find`.
    max_side : int, default 800
        Photos are searched with their longer side at most this (larger
        ones are reduced first): bounded time and memory whatever the upload.
    n_candidates : int, default 2000
        Stage-1 candidates per rotation passed to the face/non-face decision
        (the face space alone ranks a wild face among the first few hundred
        local minima of a photo, not first; the decision sorts them out).
    n_refined : int, default 150
        The candidates the decision likes best, moved to the best window
        around them (one coarse round of the refinement: shifts of 0.15 IOD,
        scales of 2 ** 0.25) and ranked by the mean of the decision there
        and where they were. The decision is sharp: a large face's stage-1
        window, a little off, scores as clutter (8 of the 9 faces of the
        validation and calibration photos no candidate found; moved, -9.5 in
        log-odds became +8.2). On those 130 photos, of their 130 faces, at
        0.025 / 0.05 / 0.1 / 0.25 / 0.45 false alarms per photo (people the
        photos hold unannotated not counted,
        :data:`~eigenvision.datasets.HELEN_OTHER_FACES`): **93 / 96 / 102 /
        109 / 111** found, against 76 / 86 / 95 / 103 / 109 with none moved
        (0). Ranked by the moved window's score alone: 82 / 94 / 102 / 108 /
        113 (60 moved: 89 / 100 / 102 / 107 / 110; 300: 82 / 94 / 101 / 105
        / 111; 150 moved by all three rounds: 84 / 101 / 102 / 112 / 116, at
        1.6 times the search's time), but clutter gained as much: scikit-image's
        immunohistochemistry texture showed a face of p 0.998 (0.83 ranked by
        the mean). 0: none moved before ranking (model files written before
        this parameter existed load with 0).
    candidate_overlap : float, default 0.5
        Stage-1 candidates may overlap a better one (by DFFS) up to this
        intersection over union. The face space's best window on a face is
        often off by a sixth of the eye distance (median over 125 HELEN
        training faces: 0.16 IOD), where the sharp decision rejects it;
        closer neighbours let the decision see better-placed ones (with the
        non-faces mined from the same candidates). With ``equalize``, on 170
        held-out HELEN photos at 0.45 false alarms per photo: 69% found,
        against 60% with 0.3 and 1,000 candidates (one perceptron each).
    eye_weight : float, default 16.0
        The eye-pair check: a face's score is the decision's log-odds plus
        ``eye_weight (log p_left + log p_right)``, the located eyes'
        probabilities (0: the decision alone; clutter that passes the
        decision seldom holds two eyes where a face has them). On 170
        held-out HELEN photos at 0.45 false alarms per photo: 75% found,
        against 69% without (one perceptron each).
    feature_weight : float, default 16.0
        The nose and mouth check, as the eye-pair check: ``feature_weight
        (log p_nose + log p_mouth)`` of the located nose and mouth (placed
        under the locator's shape prior) is added too. Chosen on the 70
        validation photos: at 0.1 / 0.25 / 0.45 false alarms per photo 65.7%
        / 77.1% / 81.4% found, against 58.6% / 72.9% / 75.7% without (0);
        weights 2-24 all gained. Model files written before this parameter
        existed load with 0.
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
        (:func:`~eigenvision.decision.fit_network`): a single fit's seed
        moves the detection rate by about 5 points. Five against one on 170
        held-out HELEN photos at 0.45 false alarms per photo: 71% against
        69% found. These defaults together (the shipped finder): 73.5% of
        the 170.
    equalize : bool, default True
        Histogram-equalise every window the face/non-face decision sees (its
        grey levels replaced by their ranks, :func:`~eigenvision.normalize.equalize_windows`),
        as Sung & Poggio do, rather than only making it zero-mean and of unit
        norm (stage 1's normalisation, kept for the face space's DFFS map):
        the decision then ignores any increasing change of contrast. The same
        recipe fitted both ways on held-out HELEN photos (three sets: 40, 70
        and 60 photos) found at 0.45 false alarms per photo 60%, 64% and 55%
        equalised against 57.5%, 57% and 48% without; scikit-image's
        ``microaneurysms`` picture's likeliest face fell from p 0.98 to 0.14.
        Model files written before this parameter existed load with False.
    min_contrast : float, default 0.02
        Stage-1 windows whose grey levels (in [0, 1]) vary less than this
        (standard deviation, at the pyramid level searched: the DFFS map
        holds them infinitely far) are no candidates: standardised, a blank wall's
        JPEG noise can look like anything. The faintest of 182 HELEN and IMM
        face windows varies by 0.067. On a studio portrait (IMM 07_01) such
        windows held half of stage 1's 1,000 places and crowded the face out.
    antialias : bool, default True
        The decision's windows are cut from antialiased half-octave
        reductions of the photo (:func:`~eigenvision.face_windows_at`), so a
        face many times larger than the window is not sampled a pixel here
        and there. The training faces are cut from crops with their eyes 40
        pixels apart; a photo's large faces (eyes 80-200 pixels apart)
        aliased, and the decision rejected them (a face's own window lost
        1.1 in log-odds on average when its photo went from 160 to 640
        pixels). On the 70 validation photos, at 0.05 / 0.1 / 0.25 / 0.45
        false alarms per photo, the shipped finder found 57.1% / 68.6% /
        82.9% / 85.7% with it and 51.4% / 65.7% / 77.1% / 81.4% without (its
        non-faces are mined without it: :func:`~eigenvision.photos.build_finder`).
        Model files written before this parameter existed load with ``False``.

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
        (:func:`~eigenvision.decision.fit_network`): ``(f,)``, ``(f,)``,
        ``(f, hidden_units)``, ``(hidden_units,)``, ``(hidden_units,)``,
        float, with ``f = 2 (face + non-face clusters)``.
    locator_ : FeatureDetector
        Eyes, nose and mouth inside a candidate's box: the eye-pair and the
        nose-and-mouth checks read their confidences.
    placer_ : FeatureDetector or None
        Places the features reported: in the candidate's box, then again in
        the box of the eyes found there. None (model files written before
        it existed): the locator places them.
    window_ : (2,) int ndarray
        The detection window ``(h, w)``.

    References
    ----------
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7). K.-K. Sung and T. Poggio (1998),
    Example-based learning for view-based human face detection, IEEE TPAMI
    20(1).
    """

    #: Parameters added after finders were first saved, with the value that keeps an older
    #: model file's behaviour (:func:`~eigenvision.load` gives it where a file has none).
    _former_defaults = {"equalize": False, "n_networks": 1, "feature_weight": 0.0,
                        "antialias": False, "n_refined": 0, "tilted_scale": 1.0}

    def __init__(self, n_components=20, *, search_components=None, iod=16,
                 rotations=(-20.0, 0.0, 20.0), step=2**0.25, min_iod=None, tilted_scale=2.0,
                 threshold=0.5, max_side=800, n_candidates=2000, n_refined=150,
                 candidate_overlap=0.5, eye_weight=16.0, feature_weight=16.0,
                 augment=(-8.0, 0.0, 8.0),
                 negatives_per_image=200, n_clusters=6, hidden_units=32, n_networks=5,
                 equalize=True, min_contrast=0.02, antialias=True):  # fmt: skip
        self.n_components = n_components
        self.search_components = search_components
        self.iod = iod
        self.rotations = rotations
        self.step = step
        self.min_iod = min_iod
        self.tilted_scale = tilted_scale
        self.threshold = threshold
        self.max_side = max_side
        self.n_candidates = n_candidates
        self.n_refined = n_refined
        self.candidate_overlap = candidate_overlap
        self.eye_weight = eye_weight
        self.feature_weight = feature_weight
        self.augment = augment
        self.negatives_per_image = negatives_per_image
        self.n_clusters = n_clusters
        self.hidden_units = hidden_units
        self.n_networks = n_networks
        self.equalize = equalize
        self.min_contrast = min_contrast
        self.antialias = antialias

    # ------------------------------------------------------------------ fit
    def fit(self, faces: ImageSet, backgrounds, *, locator=None, placer=None, progress=False):
        """Train the face space, mine non-faces from ``backgrounds``, fit the decision.

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
            default one fitted here on ``faces`` with eye patches of
            :data:`~eigenvision.faces.PLACEMENT_EYE_PATCH`.
        progress : bool, default False
            Progress bars (stderr, on a terminal) over the search of the
            backgrounds and the two mining rounds, minutes on a few hundred
            photos.

        Returns
        -------
        self
        """
        self.check_parameters()
        windows = self._training_windows(faces)
        self.window_ = np.array(windows.shape[1:], dtype=np.int64)
        k = min(self.n_components, len(windows) - 1)
        self.face_space_ = Eigenspace(k).fit(windows)
        self.face_clusters_ = _named(cluster_spaces(self._normalized(windows), self.n_clusters,
                                                    self.n_components))  # fmt: skip
        backgrounds = [_background(item, self.max_side) for item in backgrounds]
        pools = self._background_candidates(backgrounds, progress=progress)
        # Round 1 samples the candidates stage 1 gives on backgrounds; round 2 (bootstrapping,
        # Sung & Poggio 1998) keeps those the whole decision still calls faces.
        negatives = self._mine(backgrounds, pools, by_decision=False, progress=progress)
        self._fit_decision(windows, negatives)
        negatives = np.concatenate([negatives, self._mine(backgrounds, pools, by_decision=True,
                                                          progress=progress)])  # fmt: skip
        self._fit_decision(windows, negatives)
        first = faces if isinstance(faces, ImageSet) else faces[0]
        self.locator_ = FeatureDetector(score="decision").fit(first) if locator is None \
            else locator  # fmt: skip
        self.placer_ = placement_locator().fit(first) if placer is None else placer
        return self

    def _fit_decision(self, windows, negatives):
        """The non-face clusters of ``negatives`` and the perceptron between them and the faces
        (windows as cut: normalised here)."""
        if len(negatives) < 2:
            raise EigenvisionError(
                f"only {len(negatives)} non-face windows were found in the backgrounds; "
                "give more (or larger) photos"
            )
        windows, negatives = self._normalized(windows), self._normalized(negatives)
        self.nonface_clusters_ = _named(cluster_spaces(negatives, self.n_clusters,
                                                       self.n_components))  # fmt: skip
        network = fit_network(self._describe(windows), self._describe(negatives),
                              hidden=self.hidden_units, n_networks=self.n_networks)  # fmt: skip
        for name in _NETWORK:
            setattr(self, f"network_{name}_", network[name])
        self.n_negatives_ = len(negatives)

    def check_parameters(self):
        """Raise ``ValueError`` naming a parameter out of range (``fit`` and ``load`` call it).

        Returns
        -------
        None
        """
        if self.search_components is not None and (
                isinstance(self.search_components, bool)
                or not isinstance(self.search_components, Integral)
                or not 1 <= self.search_components <= 1000):  # fmt: skip
            raise ValueError("search_components must be None or an int in [1, 1000], "
                             f"got {self.search_components!r}")  # fmt: skip
        if not (isinstance(self.iod, Integral) and 8 <= self.iod <= 64):
            raise ValueError(f"iod must be an int in [8, 64] pixels, got {self.iod!r}")
        angles = np.asarray(self.rotations, dtype=float)
        if angles.ndim != 1 or not 1 <= len(angles) <= 9 or not np.all(np.abs(angles) <= 90):
            raise ValueError(f"rotations must be 1-9 angles in [-90, 90], got {self.rotations!r}")
        if self.min_iod is not None and not (isinstance(self.min_iod, Real)
                                             and self.iod <= self.min_iod <= 4096):  # fmt: skip
            raise ValueError(f"min_iod must be None or a number in [iod, 4096] pixels, "
                             f"got {self.min_iod!r}")  # fmt: skip
        if isinstance(self.tilted_scale, bool) or not (isinstance(self.tilted_scale, Real)
                                                       and 1.0 <= self.tilted_scale <= 64.0):
            raise ValueError(f"tilted_scale must be a number in [1, 64], got {self.tilted_scale!r}")
        if not (isinstance(self.threshold, Real) and 0.0 <= self.threshold <= 1.0):
            raise ValueError(f"threshold must be a probability in [0, 1], got {self.threshold!r}")
        if not (isinstance(self.max_side, Integral) and 64 <= self.max_side <= 4096):
            raise ValueError(f"max_side must be an int in [64, 4096], got {self.max_side!r}")
        if not (isinstance(self.candidate_overlap, Real) and 0.0 < self.candidate_overlap <= 1.0):
            raise ValueError("candidate_overlap must be an intersection over union in (0, 1], "
                             f"got {self.candidate_overlap!r}")  # fmt: skip
        for name in ("eye_weight", "feature_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, Real) and 0 <= value <= 1000):
                raise ValueError(f"{name} must be a number in [0, 1000], got {value!r}")
        for name in ("equalize", "antialias"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if not (isinstance(self.min_contrast, Real) and 0.0 <= self.min_contrast < 1.0):
            raise ValueError(f"min_contrast must be a number in [0, 1), got {self.min_contrast!r}")
        for name, low, high in (("n_clusters", 1, 64), ("hidden_units", 1, 1024),
                                ("n_networks", 1, 64), ("negatives_per_image", 1, 10_000),
                                ("n_candidates", 1, 100_000),
                                ("n_refined", 0, 100_000)):  # fmt: skip
            value = getattr(self, name)
            in_range = isinstance(value, Integral) and low <= value <= high
            if isinstance(value, bool) or not in_range:
                raise ValueError(f"{name} must be an int in [{low}, {high}], got {value!r}")

    def _training_windows(self, faces):
        """Standardised face windows, tilted by ``augment`` and mirrored."""
        if not isinstance(faces, ImageSet):
            return np.concatenate([self._training_windows(one) for one in faces])
        left, right = faces.landmarks["left_eye"], faces.landmarks["right_eye"]
        centre = (left + right) / 2
        stacks = []
        for angle in self.augment:
            theta = np.deg2rad(angle)
            rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
            # eyes moved by +angle around their midpoint: the window sees the face tilted by -angle
            moved = {"left_eye": centre + (left - centre) @ rotation.T,
                     "right_eye": centre + (right - centre) @ rotation.T}  # fmt: skip
            stacks.append(face_windows(faces.images, moved, iod=self.iod, mirror=True))
        return unit_norm(np.concatenate(stacks))

    def _background_candidates(self, backgrounds, *, progress=False):
        """Stage 1's candidates on each background, away from its faces (both rounds use them:
        the search, not the cut, is what takes time)."""
        pools = []
        for image, avoid in show_progress(backgrounds, desc="searching the backgrounds",
                                          enabled=progress):  # fmt: skip
            pools.append([c for c in self._candidates(image, self.n_candidates) if not len(avoid)
                          or box_iou(face_box(c[0], c[1]), avoid).max() == 0])  # fmt: skip
        return pools

    def _mine(self, backgrounds, pools, *, by_decision, progress=False):
        """Non-face windows from each background's candidates (``pools``): a random sample
        (round 1) or the most face-like by the decision fitted so far (round 2)."""
        found, rng = [], np.random.default_rng(0)
        rounds = show_progress(zip(backgrounds, pools, strict=True), total=len(pools),
                               desc=f"mining non-faces, round {2 if by_decision else 1}",
                               enabled=progress)  # fmt: skip
        for (image, _), candidates in rounds:
            if not candidates:
                continue
            windows = self._windows(image, candidates)
            order = np.argsort(-self.decision_function(windows)) if by_decision else \
                rng.permutation(len(windows))  # fmt: skip
            found.append(windows[order[: self.negatives_per_image]])
        return np.concatenate(found) if found else np.zeros((0, *self.window_))

    # --------------------------------------------------------------- search
    def _candidates(self, image, count):
        """Stage 1: ``(left_eye, right_eye, dffs)`` of the ``count`` best windows of every
        rotation (local DFFS minima over the pyramid, repeats suppressed)."""
        window = tuple(int(v) for v in self.window_)
        # flat windows are infinitely far (in the map, so they hide no neighbouring minimum)
        gate = max(self.min_contrast, 1e-3)
        # a window of width w holds eyes w / FACE_WINDOW["width"] apart (window_eyes)
        smallest = window[0] * (1.0 if self.min_iod is None else
                                self.min_iod * FACE_WINDOW["width"] / window[1])  # fmt: skip

        space = self._search_space()

        def score_map(scaled):
            return dffs_map(scaled, space, normalize="window", min_contrast=gate)

        found = []
        for angle in self.rotations:
            rotated, transform = _rotated(image, angle)
            scales = pyramid_scales(rotated.shape, window, step=self.step,
                                    min_size=smallest * (1.0 if angle == 0 else self.tilted_scale))
            if len(scales) == 0:
                continue
            minima = _minima_table(rotated, score_map, window, scales)
            # thousands of local minima per photo, most of them one clutter seen at several scales
            kept = minima.take(kept_indices(minima, max_count=count,
                                            overlap=self.candidate_overlap))  # fmt: skip
            n = len(kept.score)
            if n == 0:
                continue
            eyes = transform.inverse(np.concatenate(window_eyes(kept)))
            found += [(eyes[i], eyes[n + i], score) for i, score in enumerate(kept.score.tolist())]
        return found

    def _search_space(self):
        """The face space's first ``search_components`` components (default all). Made per
        search: the templates' spectra are kept by their bytes, not by the space."""
        k = self.face_space_.n_components_
        if self.search_components is None or self.search_components >= k:
            return self.face_space_
        return self.face_space_.leading(int(self.search_components))

    def _windows(self, image, candidates):
        """The candidates' face windows cut from ``image`` (an ndarray or
        :class:`~eigenvision.faces.HalfOctaves`) on their eyes, from antialiased
        reductions with ``antialias`` (as cut: :meth:`decision_function` normalises them)."""
        eyes = [(left, right) for left, right, _ in candidates]
        return face_windows_at(image, eyes, iod=self.iod, antialias=self.antialias)

    def _normalized(self, windows):
        """Windows as the decision sees them: histogram-equalised (``equalize``) or zero-mean,
        then of unit norm."""
        return equalize_windows(windows) if self.equalize else unit_norm(windows)

    def _describe(self, windows):
        """``log`` DFFS and DIFS of normalised windows to every face and non-face cluster."""
        spaces = [*self.face_clusters_.values(), *self.nonface_clusters_.values()]
        return log_distances(windows.reshape(len(windows), -1), spaces)

    def decision_function(self, windows):
        """Log-odds that standardised windows are faces.

        Parameters
        ----------
        windows : (n, h, w) ndarray
            Face windows of ``window_`` shape, as cut from a photo
            (:func:`~eigenvision.face_windows_at`; any grey levels): each is
            normalised here, histogram-equalised (``equalize``) or made
            zero-mean and of unit norm.

        Returns
        -------
        (n,) ndarray
        """
        check_fitted(self, "network_hidden_weights_")
        network = {name: getattr(self, f"network_{name}_") for name in _NETWORK}
        return network_log_odds(self._describe(self._normalized(windows)), network)

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
            face, without searching it again at threshold 0. Candidates the
            decision puts under the threshold count with the decision's
            probability, which the eye-pair and nose-and-mouth checks could
            only lower: then it is an upper bound (a photo whose best
            decision gives p 0.578 showed nothing at threshold 0.3, its
            checked faces at most p 0.185).

        Returns
        -------
        faces : list of Face
            Empty when there is no face.
        likeliest : float or None
            Only with ``return_likeliest``.
        """
        check_fitted(self, "network_hidden_weights_")
        threshold = self.threshold if threshold is None else threshold
        if not (isinstance(threshold, Real) and 0.0 <= threshold <= 1.0):
            raise ValueError(f"threshold must be a probability in [0, 1], got {threshold!r}")
        if isinstance(max_faces, bool) or not isinstance(max_faces, Integral) or max_faces < 1:
            raise ValueError(f"max_faces must be a positive int, got {max_faces!r}")
        faces, likeliest = self._search(image, threshold, max_faces)
        return (faces, likeliest) if return_likeliest else faces

    def _search(self, image, threshold, max_faces):
        """:meth:`find`'s faces and the likeliest candidate's probability (or None)."""
        small, scale = _prepare(image, self.max_side)
        if small.shape[0] < self.window_[0] or small.shape[1] < self.window_[1]:
            return [], None
        candidates = self._candidates(small, self.n_candidates)
        if not candidates:
            return [], None
        # the windows are cut several times (candidates, their moves): reductions made once
        photo = HalfOctaves(small) if self.antialias else small
        scores = self.decision_function(self._windows(photo, candidates))
        if self.n_refined:
            best = np.argsort(-scores)[: self.n_refined]
            moved, moved_scores = self._refine(photo, [candidates[i] for i in best], scores[best],
                                               rounds=_REFINEMENT[:1])  # fmt: skip
            # The best of 27 windows scores higher than any one, on clutter as on faces; the
            # mean with the window's own score halves that gain (``n_refined``).
            scores[best] = (scores[best] + moved_scores) / 2
            for i, candidate in zip(best, moved, strict=True):
                candidates[i] = candidate
        probability = expit(scores)
        order = [i for i in np.argsort(-scores) if probability[i] >= threshold]
        chosen = [order[k] for k in _distinct(candidates, scores, order, max_faces)]
        # Placed by all three rounds, ranked by the score before them: ranked by their score,
        # clutter gained as much as faces (validation photos, an earlier finder: 57% -> 53%
        # found at 0.45 false alarms per photo).
        refined, _ = self._refine(photo, [candidates[i] for i in chosen], scores[chosen])
        kept = _distinct(refined, scores[chosen], range(len(chosen)), max_faces)
        checked = [(refined[k], self._checked(small, refined[k], scores[chosen[k]])) for k in kept]
        # The eye-pair check only lowers a score: the candidates under the threshold need none
        # (their decision's probability bounds the likeliest from above).
        unchecked = probability[probability < threshold]
        likeliest = np.max(np.concatenate([expit([s for _, s in checked]), unchecked]))
        # Only the faces reported are placed (two locates each): most checked candidates fail.
        faces = [self._face(small, candidate, s, scale) for candidate, s in checked
                 if float(expit(s)) >= threshold]  # fmt: skip
        return sorted(faces, key=lambda face: -face.score), float(likeliest)

    def _refine(self, image, candidates, scores, rounds=None):
        """Candidates moved to the best window of the decision around them, coarse to fine,
        and the decision's values there.

        Each round tries shifts of ``(-d, 0, d)`` inter-ocular distances in x
        and y and scales ``2 ** (-e, 0, e)`` about the eyes' midpoint (27
        windows) and keeps the best, with ``(d, e)`` halving from
        ``(0.15, 0.25)`` over three rounds (``rounds``, default
        :data:`_REFINEMENT`). ``scores`` are the candidates' own decision
        values (a move must beat them).
        """
        if not candidates:
            return [], np.zeros(0)
        left = np.array([c[0] for c in candidates], dtype=float)
        right = np.array([c[1] for c in candidates], dtype=float)
        best = np.array(scores, dtype=float)
        for shift, scale in _REFINEMENT if rounds is None else rounds:
            grid = np.array([(dx, dy, s) for dx in (-shift, 0.0, shift)
                             for dy in (-shift, 0.0, shift)
                             for s in 2.0 ** np.array([-scale, 0.0, scale])])  # fmt: skip
            centre, half = (left + right) / 2, (right - left) / 2
            iod = 2 * np.hypot(*half.T)[:, None, None]
            moved = centre[:, None] + grid[None, :, :2] * iod  # (n, 27, 2)
            spread = half[:, None] * grid[None, :, 2:]
            trial_left = (moved - spread).reshape(-1, 2)
            trial_right = (moved + spread).reshape(-1, 2)
            trials = [(a, b, 0.0) for a, b in zip(trial_left, trial_right, strict=True)]
            values = self.decision_function(self._windows(image, trials)).reshape(len(left), -1)
            pick = values.argmax(axis=1)
            better = values[np.arange(len(left)), pick] > best
            rows = np.flatnonzero(better) * len(grid) + pick[better]
            left[better], right[better] = trial_left[rows], trial_right[rows]
            best = np.maximum(best, values.max(axis=1))
        return [(a, b, c[2]) for a, b, c in zip(left, right, candidates, strict=True)], best

    def place(self, image, box):
        """Eyes, nose and mouth of the face in ``box``, placed as :meth:`find` reports them.

        Located by the placer (``placer_``, eye patches with the brows) in
        ``box``, then again in the box of the eyes found there: a box's scale
        is often off by more than the locator searches around it. When the
        first pass finds no eye pair (eye confidence under 0.02) its
        locations are returned.

        Parameters
        ----------
        image : (H, W) or (H, W, 3) ndarray
        box : (x, y, w, h)
            The face, e.g. a :class:`Face`'s ``box`` or :func:`~eigenvision.face_box`
            of known eyes; ``image``'s pixels.

        Returns
        -------
        FeatureLocations
            In ``image``'s pixels.
        """
        check_fitted(self, "locator_")
        placer = getattr(self, "placer_", None) or self.locator_  # None in older model files
        located = placer.locate(image, box=box)
        if located.eye_confidence < 0.02:
            return located
        # Eyes e <= 0.10 IOD, validation / calibration photos: by the locator from the finder's
        # box, one pass 65.7% / 78.3%, two 71.4% / 78.3%; by the placer from the true box, one
        # pass 82.9% / 90.0%, two 82.9% / 91.7%.
        eyes = (np.asarray(located[name], dtype=float) for name in ("left_eye", "right_eye"))
        return placer.locate(image, box=face_box(*eyes))

    def _checked(self, small, candidate, score):
        """A candidate's decision ``score`` after the eye-pair and nose-and-mouth checks of
        the features the locator finds in its box: clutter that passes the decision seldom
        holds them where a face does."""
        # The checks read the locator's confidences, not the placer's: the placer's eye patches
        # take in the brows, which placed the eyes from the finder's box within 0.10 IOD on the
        # validation / calibration photos 80.0% / 86.7% (the locator 71.4% / 78.3%), but its
        # confidences in the checks lost faces to clutter (80.0% -> 72.9% found at 0.25 false
        # alarms per validation photo). Nor do they read a second pass's: centred on its own
        # eyes, it finds eye-like pairs in clutter too (validation, the locator: 82.9% ->
        # 77.1% found at 0.25 false alarms per photo).
        checked = self.locator_.locate(small, box=face_box(*candidate[:2]))
        for weight, names in ((self.eye_weight, ("left_eye", "right_eye")),
                              (self.feature_weight, ("nose", "mouth"))):  # fmt: skip
            found = [checked.confidence[name] for name in names if name in checked.confidence]
            if weight and found:
                score = score + weight * float(np.log(np.maximum(found, 1e-12)).sum())
        return score

    def _face(self, small, candidate, score, scale):
        """A Face of checked ``score`` from a candidate: its features placed in its box
        (:meth:`place`), all back in input pixels."""
        left, right, _ = candidate
        # The placer starts from the candidate's box, not the locator's eyes: from those (one
        # locate less) it placed 75.7% / 85.0% of the eyes within 0.10 IOD (validation /
        # calibration photos), from the box 80.0% / 86.7%.
        reported = self.place(small, face_box(left, right))
        points = {name: np.asarray(p, dtype=float) for name, p in reported.positions.items()}
        if reported.eye_confidence < 0.02:
            points["left_eye"], points["right_eye"] = left, right  # the window's own eyes
        back = {name: tuple(float(v) for v in (p + 0.5) / scale[::-1] - 0.5)
                for name, p in points.items()}  # fmt: skip
        dx, dy = np.subtract(back["right_eye"], back["left_eye"])
        return Face(
            box=face_box(back["left_eye"], back["right_eye"]),
            left_eye=back["left_eye"], right_eye=back["right_eye"],
            nose=back.get("nose"), mouth=back.get("mouth"),
            score=float(score), confidence=float(expit(score)),
            angle=float(np.degrees(np.arctan2(dy, dx))),
        )  # fmt: skip


def placement_locator():
    """The unfitted eye, nose and mouth detector that places a found face's features
    (:class:`FaceFinder`'s ``placer_``): scored by decision, eye patches of
    :data:`~eigenvision.faces.PLACEMENT_EYE_PATCH`.

    Returns
    -------
    FeatureDetector
    """
    eyes = {name: PLACEMENT_EYE_PATCH for name in ("left_eye", "right_eye")}
    return FeatureDetector(score="decision", patch=eyes)


def single_face(finder, photo, *, name="the photo"):
    """The one face of a photo that shows one person (for enrolment).

    The finder's most confident face at its threshold. A second face counts
    only when it is at least half as wide as the first: smaller ones are
    bystanders or the clutter a wild-face finder also accepts (a studio
    portrait's background gave false faces of a sixth of the subject's width
    at the same probability as the subject's).

    Parameters
    ----------
    finder : FaceFinder
        Anything with the :meth:`FaceFinder.find` interface and ``threshold``.
    photo : (H, W) or (H, W, 3) ndarray
    name : str, optional
        How the error messages name the photo.

    Returns
    -------
    Face

    Raises
    ------
    ValueError
        No face at the finder's threshold, or several faces of similar size.
    """
    found, likeliest = finder.find(photo, max_faces=5, return_likeliest=True)
    if not found:
        best = "" if likeliest is None else f" (the likeliest: p {likeliest:.4f} at most)"
        raise ValueError(
            f"{name} shows no face at the finder's threshold {finder.threshold:.4g}{best}: use a "
            "photo with the face large and frontal, or lower the threshold (--face-threshold, "
            "or finder.threshold)"
        )
    first = found[0]
    rivals = [face for face in found[1:] if face.box[2] >= 0.5 * first.box[2]]
    if rivals:
        raise ValueError(
            f"{name} shows {1 + len(rivals)} faces of similar size; enrolment takes one person per "
            "photo: crop the photo to that person, or raise the finder's threshold"
        )
    return first


# ---------------------------------------------------------------- helpers
#: The perceptron's weights, each held as the attribute ``network_<name>_``.
_NETWORK = ("mean", "scale", "hidden_weights", "hidden_bias", "output_weights", "output_bias")


#: The refinement's rounds: (shift in inter-ocular distances, log2 scale step).
_REFINEMENT = ((0.15, 0.25), (0.075, 0.125), (0.0375, 0.0625))


def photo_faces(finder, photos, labels=None, *, shape=(56, 46), every_face=False,
                progress=False):  # fmt: skip
    """The faces of uncropped photos, each cut on its eyes (:func:`~eigenvision.align_face`).

    Parameters
    ----------
    finder : FaceFinder
        Anything with the :meth:`FaceFinder.find` interface and ``threshold``.
    photos : sequence of (H, W) or (H, W, 3) ndarray, or ImageSet
        A list, or an array whose first axis runs over photos; one 2-D array
        is one grey photo. An ImageSet brings its labels.
    labels : (n,) array-like, optional
        One per photo.
    shape : (h, w), default (56, 46)
        The aligned crop.
    every_face : bool, default False
        Every face the finder finds in a photo (none or several), each with
        the photo's label; by default the photo's one face
        (:func:`single_face`: none or several is an error).
    progress : bool, default False
        A progress bar over the photos (the search takes seconds each).

    Returns
    -------
    crops : (m, h, w) ndarray
        ``m`` is the number of photos, or of faces found with ``every_face``.
    labels : (m,) ndarray or None
    """
    if isinstance(photos, ImageSet):
        photos, labels = photos.images, photos.labels if labels is None else labels
    photos = [photos] if isinstance(photos, np.ndarray) and photos.ndim == 2 else list(photos)
    if not photos:
        raise ValueError("no photos given: pass a list of photos, (H, W) or (H, W, 3) arrays")
    if labels is not None and len(labels) != len(photos):
        raise ValueError(f"labels must be one per photo: {len(labels)} for {len(photos)} photos")
    crops, owners = [], []
    searched = show_progress(enumerate(photos), total=len(photos), desc="finding faces",
                             enabled=progress)  # fmt: skip
    for index, photo in searched:
        if every_face:
            found = finder.find(photo)
        else:
            name = f"photo {index}" + ("" if labels is None else f" ({labels[index]})")
            found = [single_face(finder, photo, name=name)]
        crops += [align_face(photo, face, shape=shape) for face in found]
        owners += [index] * len(found)
    crops = np.stack(crops) if crops else np.empty((0, *shape))
    return crops, None if labels is None else np.asarray(labels)[owners]


def _distinct(candidates, scores, order, max_faces):
    """Positions in ``order`` of the candidates that are separate faces, surest first: a box
    centred inside a surer one is a part of that face (an eye region, a cheek)."""
    boxes = [Detection(*face_box(*candidates[i][:2]), 1.0, -scores[i]) for i in order]
    return kept_indices(boxes, max_count=max_faces, overlap=0.3, separation=0.5)


def _named(spaces):
    """Cluster spaces as the dictionary a model file holds."""
    return {f"c{index}": space for index, space in enumerate(spaces)}


def _background(item, max_side):
    """A background as ``(reduced grey image, boxes to avoid in its pixels)``."""
    image, avoid = (item, ()) if isinstance(item, np.ndarray) else item
    image, scale = _prepare(image, min(max_side, 480))
    return image, [_scaled_box(box, scale) for box in avoid]


def _scaled_box(box, scale):
    """An ``(x, y, w, h)`` box of the input in the reduced image (``scale`` = (fy, fx))."""
    x, y, w, h = box
    return ((x + 0.5) * scale[1] - 0.5, (y + 0.5) * scale[0] - 0.5, w * scale[1], h * scale[0])


def _prepare(image, max_side):
    """A grey float image with its longer side at most ``max_side``, and the factors
    ``(fy, fx)`` from input to reduced pixels."""
    image = to_gray(image)  # 8-bit or float, grey, RGB or RGBA; NaN and complex refused
    factor = min(1.0, max_side / max(image.shape))
    if factor == 1.0:
        return image, np.ones(2)
    small = resize(image, tuple(max(1, round(side * factor)) for side in image.shape))
    return small, np.array(small.shape) / np.array(image.shape)


def _rotated(image, angle):
    """``image`` turned by ``angle`` degrees about its centre on a canvas that holds all of it,
    and the transform from input to output pixels."""
    height, width = image.shape
    theta = np.deg2rad(angle)
    cos, sin = abs(np.cos(theta)), abs(np.sin(theta))
    out_w = int(np.ceil(width * cos + height * sin))
    out_h = int(np.ceil(width * sin + height * cos))
    transform = (
        SimilarityTransform(translation=(-(width - 1) / 2, -(height - 1) / 2))
        + SimilarityTransform(rotation=theta)
        + SimilarityTransform(translation=((out_w - 1) / 2, (out_h - 1) / 2))
    )
    if angle == 0:
        return image, transform
    out = warp(image, transform.inverse, output_shape=(out_h, out_w), order=1, mode="edge")
    return out.astype(image.dtype, copy=False), transform
