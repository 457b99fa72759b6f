"""Recognition by nearest neighbour in component space: identify, verify, enrol.

A :class:`Recognizer` composes a feature (an eigenspace) and a
:class:`NearestNeighbor` classifier over a gallery of codes, in the spirit of
bytefish/facerec's feature + classifier.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator

from ._base import check_fitted
from .eigenspace import Eigenspace
from .fisher import FisherSpace
from .io import ImageSet
from .normalize import resize

__all__ = ["UNKNOWN", "NearestNeighbor", "Recognizer", "Verification"]

#: The label :meth:`Recognizer.predict` gives a probe farther than the threshold from all.
UNKNOWN = "unknown"

_METRICS = ("euclidean", "cosine", "mahalanobis")
_METHODS = ("eigenfaces", "fisherfaces")


class NearestNeighbor:
    """Exact k-nearest-neighbour search over a gallery of codes, in bounded memory.

    :meth:`fit` centres the gallery on its mean (so norms are of the order of
    the distances and the expansion below loses little to cancellation) and
    stores the rows ``[-2 g, ||g||^2]``. For a block of probes ``[p, 1]`` and
    a chunk of the gallery, one BLAS product gives ``||g||^2 - 2 p.g`` (the
    per-probe ``||p||^2`` does not change the ranking); one row-minimum pass
    finds the probes with any entry below their current k-th best, and only
    those entries are merged into the running best lists. Blocks are sized
    to stay in cache. Finally the
    best ``k + 8`` candidates are re-ranked by distances computed directly in
    float64 from the data as given: the result is the exact k nearest unless
    more than 8 entries lie within round-off of the k-th.

    Parameters
    ----------
    chunk_size : int, default 1024
        Gallery entries compared at once.
    probe_block : int, default 512
        Probes compared at once. Memory is ``O(probe_block * chunk_size)``,
        whatever the gallery size.

    Attributes
    ----------
    raw_gallery_ : (n, q) ndarray
        The gallery as given (the same object, not a copy).
    offset_ : (q,) ndarray
        The gallery mean, subtracted before the expansion.
    scaled_gallery_ : (n, q + 1) ndarray
        ``[-2 (g - offset_), ||g - offset_||^2]``.
    """

    _MARGIN = 8

    def __init__(self, *, chunk_size: int = 1024, probe_block: int = 512):
        self.chunk_size = chunk_size
        self.probe_block = probe_block

    def __repr__(self) -> str:
        return f"NearestNeighbor(chunk_size={self.chunk_size}, probe_block={self.probe_block})"

    def fit(self, gallery: np.ndarray) -> NearestNeighbor:
        """Index ``gallery`` (n, q)."""
        gallery = np.atleast_2d(np.asarray(gallery))
        if len(gallery) == 0:
            raise ValueError("the gallery is empty; enrol at least one image")
        if gallery.dtype not in (np.float32, np.float64):
            gallery = gallery.astype(np.float64)
        self.raw_gallery_ = gallery
        self.offset_ = gallery.mean(axis=0, dtype=np.float64).astype(gallery.dtype)
        centred = gallery - self.offset_
        squared_norms = np.einsum("ij,ij->i", centred, centred)
        # [-2 g, ||g||^2] so that [p, 1] . row = ||g||^2 - 2 p.g in one product.
        self.scaled_gallery_ = np.hstack([-2 * centred, squared_norms[:, None]])
        return self

    def kneighbors(self, probes: np.ndarray, k: int):
        """Return ``(distances, indices)``, each ``(m, k)``, nearest first.

        Parameters
        ----------
        probes : (m, q) ndarray
        k : int, 1 <= k <= n

        Returns
        -------
        distances : (m, k) ndarray of float64, Euclidean (not squared)
        indices : (m, k) ndarray of int64
        """
        check_fitted(self, "scaled_gallery_")
        n, q = self.raw_gallery_.shape
        probes = np.atleast_2d(probes)
        if not 1 <= k <= n:
            raise ValueError(f"k={k} must lie in [1, gallery size {n}]")
        if probes.shape[1] != q:
            raise ValueError(f"probes have {probes.shape[1]} dimensions, the gallery {q}")
        keep = min(k + self._MARGIN, n)
        candidates = np.empty((len(probes), keep), dtype=np.int64)
        for start in range(0, len(probes), self.probe_block):
            block = probes[start : start + self.probe_block]
            candidates[start : start + len(block)] = self._candidates(block, keep)
        # Re-rank the candidates by float64 distances between the data as given.
        diff = probes[:, None, :].astype(np.float64) - self.raw_gallery_[candidates].astype(
            np.float64
        )
        exact = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        order = np.lexsort((candidates, exact), axis=1)[:, :k]
        return np.take_along_axis(exact, order, axis=1), np.take_along_axis(
            candidates, order, axis=1
        )

    def _candidates(self, probes, keep):
        """Indices of the ``keep`` smallest ``||g||^2 - 2 p.g`` for each probe (unordered)."""
        gallery = self.scaled_gallery_
        m, n = len(probes), len(gallery)
        augmented = np.ones((m, gallery.shape[1]), dtype=gallery.dtype)
        augmented[:, :-1] = probes - self.offset_
        chunk = max(self.chunk_size, keep)
        scores = augmented @ gallery[:chunk].T  # the first chunk seeds the running lists
        part = np.argpartition(scores, keep - 1, axis=1)[:, :keep]
        best_d = np.take_along_axis(scores, part, axis=1)
        best_i = part
        worst = best_d.max(axis=1)
        for start in range(chunk, n, chunk):
            scores = augmented @ gallery[start : start + chunk].T
            # One pass finds the few probes with any entry below their current k-th best.
            rows = np.flatnonzero(scores.min(axis=1) < worst)
            if rows.size == 0:
                continue
            hit_rows, hit_cols = np.nonzero(scores[rows] < worst[rows, None])
            # Merge: sort (row, value) over the rows' current lists and their hits and keep
            # the first `keep` of each row (every row has at least its current list).
            count = len(rows)
            all_rows = np.concatenate([np.repeat(np.arange(count), keep), hit_rows])
            all_d = np.concatenate([best_d[rows].ravel(), scores[rows[hit_rows], hit_cols]])
            all_i = np.concatenate([best_i[rows].ravel(), hit_cols + start])
            order = np.lexsort((all_d, all_rows))
            first = np.searchsorted(all_rows[order], np.arange(count))
            take = order[first[:, None] + np.arange(keep)]
            best_d[rows], best_i[rows] = all_d[take], all_i[take]
            worst[rows] = best_d[rows, -1]
        return best_i


@dataclass(frozen=True)
class Verification:
    """The answer to "is this person X?"."""

    accepted: bool
    distance: float
    threshold: float | None


class Recognizer(BaseEstimator):
    """Face (or any object) recognition by nearest neighbour in an eigenspace.

    Parameters
    ----------
    n_components : int or float, default 20
        Eigenspace size (for ``"fisherfaces"``: discriminant directions,
        at most classes - 1; None means all).
    method : {"eigenfaces", "fisherfaces"}, default "eigenfaces"
        The feature: :class:`Eigenspace` (Turk & Pentland 1991) or
        :class:`FisherSpace` (Belhumeur et al. 1997).
    metric : {"euclidean", "cosine", "mahalanobis"}, default "euclidean"
        Distance between codes. ``"cosine"`` is ``1 - cos`` (angle between
        codes); ``"mahalanobis"`` is Euclidean on whitened codes (each
        component divided by its standard deviation; eigenfaces only).
    k : int, default 1
        Neighbours voting in :meth:`predict` (majority; ties go to the
        nearest).
    threshold : float, optional
        Probes whose nearest distance exceeds it are :data:`UNKNOWN`;
        :meth:`calibrate_threshold` picks one from data.
    shape : (H, W), optional
        Working resolution: every image (training, enrolled, probe) is
        resized to it first. Lower resolutions smooth away pixel noise.
    mirror : bool, default False
        Also train on and enrol each image's left-right mirror image, a
        free second view of a roughly symmetric face.
    resize : bool, default False
        Without ``shape``: resize probes of another size than the training
        images (otherwise a clear error).
    chunk_size : int, default 1024
        Gallery chunk of the exact search (:class:`NearestNeighbor`).

    Attributes
    ----------
    feature_ : Eigenspace or FisherSpace
    gallery_ : (n, q) ndarray
        Codes of the enrolled images (normalised for the metric).
    gallery_labels_ : (n,) ndarray
    classes_ : ndarray
    image_shape_ : (H, W)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> faces = rng.random((6, 4, 4)); labels = np.array([0, 0, 1, 1, 2, 2])
    >>> rec = Recognizer(n_components=3).fit(faces, labels)
    >>> rec.predict(faces).tolist()
    [0, 0, 1, 1, 2, 2]
    """

    def __init__(
        self,
        n_components=20,
        *,
        method="eigenfaces",
        metric="euclidean",
        k=1,
        threshold=None,
        shape=None,
        mirror=False,
        resize=False,
        chunk_size=1024,
    ):
        self.n_components = n_components
        self.method = method
        self.metric = metric
        self.k = k
        self.threshold = threshold
        self.shape = shape
        self.mirror = mirror
        self.resize = resize
        self.chunk_size = chunk_size

    # ------------------------------------------------------------------ fit
    def fit(self, images, labels=None):
        """Train the eigenspace on ``images`` and enrol them with ``labels``.

        Parameters
        ----------
        images : (n, H, W) ndarray or ImageSet
            An ImageSet brings its own labels.
        labels : (n,) array-like, optional
        """
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        if self.metric not in _METRICS:
            raise ValueError(f"metric must be one of {_METRICS}, got {self.metric!r}")
        if self.metric == "mahalanobis" and self.method != "eigenfaces":
            raise ValueError("metric='mahalanobis' needs method='eigenfaces' (its eigenvalues)")
        stack, labels = _images_and_labels(images, labels)
        stack = self._working_resolution(stack)
        stack, labels = self._with_mirrors(stack, labels)
        if self.method == "fisherfaces":
            feature = FisherSpace(n_components=self.n_components).fit(stack, labels)
        else:
            feature = Eigenspace(n_components=self.n_components).fit(stack)
        self.feature_ = feature
        self.image_shape_ = tuple(stack.shape[1:])
        self.gallery_ = self._codes_for_metric(feature.transform(stack))
        self.gallery_labels_ = labels
        self.classes_ = np.unique(labels)
        return self

    def _codes_for_metric(self, codes):
        if self.metric == "cosine":
            norms = np.linalg.norm(codes, axis=1, keepdims=True)
            return codes / np.where(norms == 0, 1, norms)
        if self.metric == "mahalanobis":
            scale = np.sqrt(self.feature_.eigenvalues_[: self.feature_.n_components_])
            return codes / scale.astype(codes.dtype)
        return codes

    def _working_resolution(self, stack):
        if self.shape is None or stack.shape[1:] == tuple(self.shape):
            return stack
        return np.stack([resize(image, self.shape) for image in stack])

    def _with_mirrors(self, stack, labels):
        if not self.mirror:
            return stack, labels
        return np.concatenate([stack, stack[:, :, ::-1]]), np.concatenate([labels, labels])

    def _probe_codes(self, images):
        check_fitted(self, "gallery_")
        stack = self._working_resolution(_as_stack(images))
        if stack.shape[1:] != self.image_shape_:
            if not self.resize:
                raise ValueError(
                    f"probe images are {stack.shape[1:]}, the recognizer was trained on "
                    f"{self.image_shape_}; pass resize=True or call "
                    f"normalize_images(images, shape={self.image_shape_}) first"
                )
            stack = np.stack([resize(image, self.image_shape_) for image in stack])
        return self._codes_for_metric(self.feature_.transform(stack))

    def _index(self) -> NearestNeighbor:
        """The search index of ``gallery_``, built on first use and again after it changes."""
        index = getattr(self, "_nn_index", None)
        if index is None or index.raw_gallery_ is not self.gallery_:
            index = NearestNeighbor(chunk_size=self.chunk_size).fit(self.gallery_)
            self._nn_index = index
        return index

    def _metric_distance(self, euclidean):
        """Distances between metric-normalised codes, in the metric's own units."""
        if self.metric == "cosine":
            return euclidean**2 / 2  # unit vectors: ||a - b||^2 / 2 = 1 - cos
        return euclidean

    # --------------------------------------------------------------- queries
    def kneighbors(self, images, k=5):
        """The ``k`` nearest enrolled images of each probe (the lecture's top-15 search).

        Returns
        -------
        distances : (m, k) ndarray, nearest first
        labels : (m, k) ndarray
        """
        codes = self._probe_codes(images)
        distances, indices = self._index().kneighbors(codes, min(k, len(self.gallery_)))
        return self._metric_distance(distances), self.gallery_labels_[indices]

    def predict(self, images):
        """Labels of the probes; :data:`UNKNOWN` beyond ``threshold``.

        Returns
        -------
        (m,) ndarray
            With a threshold set and labels that are not strings, the result
            has dtype object so it can hold :data:`UNKNOWN`.
        """
        return self.predict_from_neighbors(*self.kneighbors(images, k=self.k))

    def predict_from_neighbors(self, distances, labels):
        """The decision of :meth:`predict` from :meth:`kneighbors`' output, without searching again.

        Parameters
        ----------
        distances, labels : (m, r) ndarray
            Nearest first, ``r >= k``; only the first ``k`` columns vote.
        """
        labels = np.asarray(labels)[:, : self.k]
        predicted = (
            labels[:, 0].copy()
            if self.k == 1
            else np.array([_vote(row) for row in labels], dtype=labels.dtype)
        )
        if self.threshold is None:
            return predicted
        rejected = np.asarray(distances)[:, 0] > self.threshold
        if predicted.dtype.kind not in "US":
            predicted = predicted.astype(object)
        else:
            predicted = predicted.astype(f"<U{max(predicted.dtype.itemsize // 4, len(UNKNOWN))}")
        predicted[rejected] = UNKNOWN
        return predicted

    def verify(self, image, label) -> Verification:
        """Is ``image`` (H, W) the enrolled ``label``? Uses the nearest image of that label."""
        check_fitted(self, "gallery_")
        mask = self.gallery_labels_ == label
        if not mask.any():
            raise ValueError(f"label {label!r} is not enrolled; enrol it with add() first")
        code = self._probe_codes(np.asarray(image)[None])[0].astype(np.float64)
        # A person has a handful of codes: the exact distance directly, no index needed.
        difference = self.gallery_[mask].astype(np.float64) - code
        euclidean = np.sqrt(np.einsum("ij,ij->i", difference, difference).min())
        distance = float(self._metric_distance(euclidean))
        accepted = self.threshold is None or distance <= self.threshold
        return Verification(bool(accepted), distance, self.threshold)

    def add(self, images, labels=None):
        """Enrol images (new people or new views) without refitting the eigenspace."""
        check_fitted(self, "gallery_")
        stack, labels = _images_and_labels(images, labels, min_images=1)
        stack, labels = self._with_mirrors(self._working_resolution(stack), labels)
        codes = self._probe_codes(stack)
        if labels.dtype.kind != self.gallery_labels_.dtype.kind:
            raise ValueError(
                f"labels of dtype {labels.dtype} do not match the enrolled "
                f"{self.gallery_labels_.dtype}; use labels of the same kind"
            )
        self.gallery_ = np.vstack([self.gallery_, codes.astype(self.gallery_.dtype)])
        self.gallery_labels_ = np.concatenate([self.gallery_labels_, labels])
        self.classes_ = np.unique(self.gallery_labels_)
        return self

    def calibrate_threshold(self, images, labels, *, far: float = 0.01) -> float:
        """Set ``threshold`` so that at most ``far`` of impostor probes are accepted.

        Impostors are probes whose label is not enrolled; their nearest
        distance is what a threshold must reject. Returns the threshold.
        """
        if not 0.0 <= far < 1.0:
            raise ValueError(f"far must lie in [0, 1), got {far}")
        stack, labels = _images_and_labels(images, labels, min_images=1)
        impostor = ~np.isin(labels, self.gallery_labels_)
        if not impostor.any():
            raise ValueError(
                "calibration needs impostor probes: images of people who are not enrolled"
            )
        distances, _ = self.kneighbors(stack[impostor], k=1)
        nearest = np.sort(distances[:, 0])
        allowed = int(np.floor(far * len(nearest)))
        # Accept distances strictly below the (allowed + 1)-th smallest impostor distance.
        self.threshold = float(np.nextafter(nearest[allowed], -np.inf))
        return self.threshold


def _vote(labels):
    counts = Counter(labels.tolist())
    top = max(counts.values())
    return next(label for label in labels.tolist() if counts[label] == top)


def _as_stack(images) -> np.ndarray:
    if isinstance(images, ImageSet):
        images = images.images
    stack = np.asarray(images)
    if stack.ndim == 2:
        stack = stack[None]
    if stack.ndim != 3:
        raise ValueError(f"images must be (H, W) or (n, H, W), got shape {stack.shape}")
    if stack.dtype not in (np.float32, np.float64):
        stack = stack.astype(np.float64)
    return stack


def _images_and_labels(images, labels, *, min_images=2):
    if isinstance(images, ImageSet):
        labels = images.labels if labels is None else labels
    stack = _as_stack(images)
    if labels is None:
        raise ValueError("labels are required: pass labels= or an ImageSet")
    labels = np.asarray(labels)
    if labels.shape != (len(stack),):
        raise ValueError(f"labels must have shape ({len(stack)},), got {labels.shape}")
    if len(stack) < min_images:
        raise ValueError(f"need at least {min_images} images, got {len(stack)}")
    return stack, labels
