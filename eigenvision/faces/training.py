"""How a :class:`~eigenvision.FaceFinder` learns: the face space, the prefilter, mined non-faces.

Training follows the stages the search runs: the face space and its clusters
of aligned face windows (:mod:`~eigenvision.faces.geometry`), the cascade's
first test (:func:`~eigenvision.faces.candidates.fit_prefilter`), then two
rounds of non-faces mined from stage 1's candidates on background photos
(bootstrapping, Sung & Poggio 1998) with the face/non-face decision fitted
after each (:mod:`~eigenvision.faces.decision`), and the feature locators
(:mod:`~eigenvision.faces.features`).
"""

from __future__ import annotations

import numpy as np

from .._base import progress as show_progress
from .._errors import EigenvisionError
from ..eigenspace import Eigenspace
from ..imageset import ImageSet
from ..search import box_iou
from .candidates import background_windows, fit_prefilter, reduced
from .decision import NETWORK, cluster_spaces, fit_network, mine_nonfaces
from .features import FeatureDetector, placement_locator
from .geometry import augmented_face_windows, face_box, jittered_face_windows

__all__ = ["FinderTrainingMixin"]


class FinderTrainingMixin:
    """:meth:`fit` of :class:`~eigenvision.FaceFinder`: every fitted member from faces and
    backgrounds.

    Reads the finder's parameters and its search (``_candidates``, ``_windows``,
    ``_normalized``, ``_describe``, ``decision_function``).
    """

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
        self.check_parameters()
        sets = [faces] if isinstance(faces, ImageSet) else list(faces)
        windows = np.concatenate(
            [
                augmented_face_windows(one.images, one.landmarks, iod=self.iod, tilts=self.augment)
                for one in sets
            ]
        )
        self.window_ = np.array(windows.shape[1:], dtype=np.int64)
        k = min(self.n_components, len(windows) - 1)
        self.face_space_ = Eigenspace(k).fit(windows)
        clusters = cluster_spaces(self._normalized(windows), self.n_clusters, self.n_components)
        self.face_clusters_ = _named(clusters)
        backgrounds = [_background(item, self.max_side) for item in backgrounds]
        self._fit_prefilter(sets, windows, backgrounds)
        pools = self._background_candidates(backgrounds, progress=progress)
        # Round 1 samples the candidates stage 1 gives on backgrounds; round 2 (bootstrapping,
        # Sung & Poggio 1998) keeps those the whole decision still calls faces.
        negatives = self._mine(backgrounds, pools, None, progress)
        self._fit_decision(windows, negatives)
        mined = self._mine(backgrounds, pools, self.decision_function, progress)
        self._fit_decision(windows, np.concatenate([negatives, mined]))
        self.locator_ = (
            FeatureDetector(score="decision").fit(sets[0]) if locator is None else locator
        )
        self.placer_ = placement_locator().fit(sets[0]) if placer is None else placer
        return self

    def _fit_prefilter(self, sets, windows, backgrounds):
        """The cascade's first test (:func:`~eigenvision.faces.candidates.fit_prefilter`): the
        training windows and jittered cuts of the same faces against random background windows."""
        self.prefilter_weights_ = self.prefilter_bias_ = self.prefilter_cut_ = None
        if self.prefilter_recall is None:
            return
        jittered = [jittered_face_windows(one.images, one.landmarks, iod=self.iod) for one in sets]
        nonfaces = background_windows(backgrounds, self.window_, step=self.step)
        if len(nonfaces) < 2:
            raise EigenvisionError(
                f"only {len(nonfaces)} non-face windows were found in the backgrounds; "
                "give more (or larger) photos"
            )
        prefilter = fit_prefilter(
            np.concatenate([windows, *jittered]), nonfaces, recall=self.prefilter_recall
        )
        self.prefilter_weights_ = prefilter.weights
        self.prefilter_bias_, self.prefilter_cut_ = prefilter.bias, prefilter.cut

    def _mine(self, backgrounds, pools, decide, progress):
        """Non-face windows of the backgrounds' candidates (:func:`mine_nonfaces`)."""
        found = mine_nonfaces(
            backgrounds,
            pools,
            self._windows,
            per_image=self.negatives_per_image,
            decide=decide,
            progress=progress,
        )
        return np.zeros((0, *self.window_)) if found is None else found

    def _fit_decision(self, windows, negatives):
        """The non-face clusters of ``negatives`` and the perceptron between them and the faces
        (windows as cut: normalised here)."""
        if len(negatives) < 2:
            raise EigenvisionError(
                f"only {len(negatives)} non-face windows were found in the backgrounds; "
                "give more (or larger) photos"
            )
        windows, negatives = self._normalized(windows), self._normalized(negatives)
        clusters = cluster_spaces(negatives, self.n_clusters, self.n_components)
        self.nonface_clusters_ = _named(clusters)
        network = fit_network(
            self._describe(windows),
            self._describe(negatives),
            hidden=self.hidden_units,
            n_networks=self.n_networks,
        )
        for name in NETWORK:
            setattr(self, f"network_{name}_", network[name])
        self.n_negatives_ = len(negatives)

    def _background_candidates(self, backgrounds, *, progress=False):
        """Stage 1's candidates on each background, away from its faces (both rounds use them:
        the search, not the cut, is what takes time)."""
        pools = []
        searched = show_progress(backgrounds, desc="searching the backgrounds", enabled=progress)
        for image, avoid in searched:
            pools.append(
                [
                    c
                    for c in self._candidates(image, self.n_candidates)
                    if not len(avoid) or box_iou(face_box(c[0], c[1]), avoid).max() == 0
                ]
            )
        return pools


def _named(spaces):
    """Cluster spaces as the dictionary a model file holds."""
    return {f"c{index}": space for index, space in enumerate(spaces)}


def _background(item, max_side):
    """A background as ``(reduced grey image, boxes to avoid in its pixels)``."""
    image, avoid = (item, ()) if isinstance(item, np.ndarray) else item
    image, scale = reduced(image, min(max_side, 480))
    return image, [_scaled_box(box, scale) for box in avoid]


def _scaled_box(box, scale):
    """An ``(x, y, w, h)`` box of the input in the reduced image (``scale`` = (fy, fx))."""
    x, y, w, h = box
    return ((x + 0.5) * scale[1] - 0.5, (y + 0.5) * scale[0] - 0.5, w * scale[1], h * scale[0])
