"""Where a face's features are: eyes, nose and mouth searched under a shape prior.

:class:`LocatingMixin` holds :class:`~eigenvision.FeatureDetector`'s search:
each feature's region predicted from the face box (:func:`~eigenvision.face_box`),
the feature maps searched over scales there
(:func:`~eigenvision.search.multiscale_minima`), the eye pair chosen by its
scores and its geometry, then the nose and mouth around where the training
faces put them relative to the eyes (Moghaddam & Pentland 1997). The result is
a :class:`FeatureLocations`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from .._base import check_fitted
from .._errors import refuse_complex
from ..normalize import to_gray
from ..search import multiscale_minima, suppress
from .geometry import box_eyes, eye_frame

__all__ = ["LocatingMixin"]  # FeatureLocations: documented as eigenvision.FeatureLocations


@dataclass(frozen=True)
class FeatureLocations:
    """Where :meth:`FeatureDetector.locate` found each feature.

    Attributes
    ----------
    positions : dict of str to (float, float)
        ``(x, y)`` of each feature's centre in the input image's pixels.
    scores : dict of str to float
        DFFS of the normalised patch found there (lower is better; a patch
        identical to a training patch's projection scores 0).
    confidence : dict of str to float
        Fraction of the training patches whose DFFS is at least the score:
        about 0.5 for a typical feature, near 0 when the best window looks
        like no training patch (a non-face, or a feature out of the search
        region). Read low confidence as "not found". It is relative to the
        training faces: faces unlike them score low even where the features
        are found (a detector trained on studio faces gives faces with other
        glasses and lighting confidences near 0); there compare ``scores``
        within an image instead.
    iod : float
        Inter-ocular distance of the located eyes, in input pixels.
    """

    positions: dict
    scores: dict
    confidence: dict
    iod: float

    def __getitem__(self, feature):
        return self.positions[feature]

    @property
    def eye_confidence(self) -> float:
        """The smaller of the two eyes' ``confidence`` (0 without eyes): how sure the pair is."""
        return min(self.confidence.get("left_eye", 0.0), self.confidence.get("right_eye", 0.0))

    def with_eyes(self, eyes) -> FeatureLocations:
        """These locations with the eyes moved (the other features, scores and confidences kept).

        Parameters
        ----------
        eyes : (2, 2) array_like
            The left and right eye, ``(x, y)``.

        Returns
        -------
        FeatureLocations
            ``iod`` is the new eyes' distance.
        """
        left, right = (tuple(float(v) for v in eye) for eye in np.asarray(eyes, dtype=float))
        positions = {**self.positions, "left_eye": left, "right_eye": right}
        return replace(
            self, positions=positions, iod=float(np.hypot(right[0] - left[0], right[1] - left[1]))
        )


class LocatingMixin:
    """The search of :class:`~eigenvision.FeatureDetector`: features located in a face.

    Reads the detector's parameters and fitted members (``features_``,
    ``patch_shapes_``, ``offsets_mean_``, ``offsets_std_``,
    ``score_quantiles_``) and its ``feature_map``.
    """

    def _search(self, image, feature, center, half, base_factor, *, map_function=None, n=5):
        """Up to ``n`` best local minima of ``feature``'s map near ``center``, over scales.

        Returns a list of :class:`~eigenvision.Detection`, best first, in
        ``image`` pixels; a detection's ``scale`` is the inverse of the
        resampling factor that brought it to the detector's ``iod``.
        """
        window = tuple(self.patch_shapes_[self.features_.index(feature)])
        # the detector's own maps score each window from its pixels: the scales in one call
        local_windows = map_function is None
        if map_function is None:
            map_function = self.feature_map
        scales = [1.0 / (base_factor * multiplier) for multiplier in self.search_scales]
        found = multiscale_minima(
            image,
            lambda scaled: map_function(scaled, feature),
            window,
            scales,
            region=(center, half),
            local_windows=local_windows,
        )
        # One candidate per place, whatever the scale: 0.1 IOD apart at least.
        return suppress(found, max_count=n, separation=0.1 * self.iod / window[1])

    def _known(self, feature):
        """``feature``, checked to be one the detector was fitted for."""
        check_fitted(self, "spaces_")
        if feature not in self.features_:
            raise ValueError(
                f"this FeatureDetector knows {list(self.features_)}, not {feature!r}; fit one "
                f"with features=(..., {feature!r}) and landmarks of that name"
            )
        return feature

    def _prepare(self, face_image, box):
        check_fitted(self, "spaces_")
        image = np.asarray(face_image)
        refuse_complex(image, "the face image")
        if image.ndim == 3:
            image = to_gray(image)
        image = image.astype(np.float64) if image.dtype != np.float32 else image
        if image.ndim != 2 or image.size == 0:
            raise ValueError(f"expected a face image (H, W) or (H, W, 3), got shape {image.shape}")
        if not np.all(np.isfinite(image)):
            raise ValueError("the image contains NaN or infinite values; fill or mask them first")
        if box is None:
            box = (0.0, 0.0, float(image.shape[1]), float(image.shape[0]))
        box = tuple(float(v) for v in box)
        if len(box) != 4 or not np.all(np.isfinite(box)) or box[2] <= 0 or box[3] <= 0:
            raise ValueError(
                f"box must be finite (x, y, w, h) with positive width and height, got {box}"
            )
        return image, box, box_eyes(box)[2]

    def _eye_prior(self, box):
        left, right, _ = box_eyes(box)
        return {"left_eye": tuple(left), "right_eye": tuple(right)}

    def feature_minimum(
        self, face_image, feature, *, box=None, map_function=None, whole_image=False
    ):
        """Global minimum of one feature's map over its search region and scales.

        The lecture's detection criterion reads this minimum (see
        :func:`eigenvision.evaluate.detection_roc`). No shape prior: each
        feature on its own, in :meth:`search_region` or the whole image.

        Parameters
        ----------
        face_image : (H, W) or (H, W, 3) ndarray
        feature : str
        box : (x, y, w, h), optional
            The face box (see :func:`face_box`); default the whole image.
        map_function : callable, optional
            ``map_function(image, feature) -> (H', W')`` replacing the DFFS
            map (lower is better; for comparisons with other scores on the
            same regions and scales).
        whole_image : bool, default False
            The minimum over every window of the image, at the scales the box
            predicts (the lecture's criterion: the other eye, the brows and
            the chin compete), not only in :meth:`search_region`.

        Returns
        -------
        (x, y, score)
        """
        image, box, iod = self._prepare(face_image, box)
        shape = image.shape if whole_image else None
        center, half = self.search_region(feature, box, image_shape=shape)
        found = self._search(
            image, feature, center, half, self.iod / iod, map_function=map_function, n=1
        )
        if not found:
            return (np.nan, np.nan, np.inf)
        x, y = found[0].center
        return (x, y, found[0].score)

    def search_region(self, feature, box, *, image_shape=None):
        """Where a feature is searched from the face box alone: centre ``(x, y)`` and half-size.

        The eyes: a square of half-size ``search_margin`` IODs around where
        :func:`face_box` puts them. The others: the training faces' mean
        position relative to the eyes, plus or minus three standard
        deviations and ``search_margin`` IODs.

        Parameters
        ----------
        feature : str
            One of ``features_``.
        box : (x, y, w, h)
            The face box (see :func:`~eigenvision.face_box`).
        image_shape : (H, W), optional
            Search the whole image of this shape instead (the lecture's
            criterion, :meth:`feature_minimum`'s ``whole_image``).

        Returns
        -------
        center : (x, y) tuple of float
        half : (half_width, half_height) tuple of float
        """
        self._known(feature)
        if image_shape is not None:
            height, width = image_shape[:2]
            return ((width - 1) / 2, (height - 1) / 2), (width / 2, height / 2)
        iod = box_eyes(box)[2]
        eyes = self._eye_prior(box)
        if feature in eyes:
            margin = self.search_margin * iod
            return eyes[feature], (margin, margin)
        origin = (np.array(eyes["left_eye"]) + np.array(eyes["right_eye"])) / 2
        index = self.features_.index(feature)
        center = origin + self.offsets_mean_[index] * iod
        spread = (3 * self.offsets_std_[index] + self.search_margin) * iod
        return tuple(center), tuple(spread)

    def locate(self, face_image, *, box=None) -> FeatureLocations:
        """Find the features in a face.

        The eyes are searched over scales around where the face box puts
        them; the best-scoring pair under a shape prior (their distance and
        tilt against the scale at which they matched) fixes the face's scale
        and orientation; the other features are then searched around where
        the training faces' geometry puts them relative to the eyes, each
        candidate paying the shape prior (``geometry_weight``).

        Parameters
        ----------
        face_image : (H, W) or (H, W, 3) ndarray
            A face cropped roughly from the brows to the chin (any size), or
            a larger image with ``box``.
        box : (x, y, w, h), optional
            The face in ``face_image``; default the whole image.

        Returns
        -------
        FeatureLocations
            Positions in ``face_image`` pixels, scores and confidences.
        """
        image, box, iod = self._prepare(face_image, box)
        base = self.iod / iod
        eyes = {}
        for f in ("left_eye", "right_eye"):
            center, half = self.search_region(f, box)
            eyes[f] = self._search(image, f, center, half, base, n=6) if f in self.features_ else []
        positions, scores = {}, {}
        pair = self._best_eye_pair(eyes)
        prior = self._eye_prior(box)
        for f, candidate in zip(("left_eye", "right_eye"), pair or (None, None), strict=True):
            if f in self.features_:  # no pair found: the prior, scored as not found
                found = prior[f] if candidate is None else candidate.center
                positions[f], scores[f] = found, np.inf if candidate is None else candidate.score
        left, right = (np.array(positions.get(f, prior[f])) for f in ("left_eye", "right_eye"))
        origin, ex, ey, found_iod = eye_frame(left, right)
        to_frame = np.array([ex, ey]).T / found_iod  # image offsets to eye-frame IODs
        for f in self.features_:
            if f in ("left_eye", "right_eye"):
                continue
            index = self.features_.index(f)
            offset, spread = self.offsets_mean_[index], self.offsets_std_[index]
            center = origin + found_iod * (offset[0] * ex + offset[1] * ey)
            half = tuple((3 * spread + 0.15) * found_iod)
            found = self._search(image, f, center, half, self.iod / found_iod, n=6)
            if found:
                best = min(
                    found,
                    key=lambda d: (
                        d.score
                        + self._position_cost(
                            np.subtract(d.center, origin) @ to_frame, offset, spread
                        )
                    ),
                )
                positions[f], scores[f] = best.center, best.score
            else:
                positions[f], scores[f] = tuple(center), np.inf
        confidence = {f: self._confidence(f, scores[f]) for f in positions}
        return FeatureLocations(positions, scores, confidence, float(found_iod))

    def _position_cost(self, found, offset, spread):
        """The shape prior of a nose or mouth candidate: ``weight / 2`` times its squared
        distance from the training faces' mean offset in their standard deviations
        (``found``: its offset from the eyes' midpoint, in the eye frame, IODs).

        The frame is the *located* eyes', not the true ones: 0.05 IOD (a typical located
        eye's error) is added in quadrature, so that 60 frontal studio faces (spread 0.02
        IOD) do not pin the nose to their mean.
        """
        if self.score != "decision" and self.geometry_weight is None:
            return 0.0  # the lecture's DFFS locator: no prior unless asked (see geometry_weight)
        z = (found - offset) / np.hypot(spread, 0.05)
        return self._geometry_weight() / 2 * float(np.sum(z**2))

    def _geometry_weight(self):
        """``geometry_weight``, default 1 (log-odds scores) or 0.03 (DFFS scores)."""
        if self.geometry_weight is not None:
            return self.geometry_weight
        return 1.0 if self.score == "decision" else 0.03

    def _best_eye_pair(self, eyes):
        lefts, rights = eyes.get("left_eye", []), eyes.get("right_eye", [])
        if not lefts or not rights:
            return None
        best, best_cost = None, np.inf
        weight = self._geometry_weight()
        for a in lefts:
            for b in rights:
                dx, dy = np.subtract(b.center, a.center)
                if dx <= 0:
                    continue
                distance = np.hypot(dx, dy)
                # the IOD at the scales they matched (scale: inverse resampling factor)
                expected = self.iod * 2 / (1 / a.scale + 1 / b.scale)
                scale_error = np.log(distance / expected) / 0.15
                tilt = np.arctan2(dy, dx) / np.deg2rad(15)
                cost = a.score + b.score + weight * (scale_error**2 + tilt**2)
                if cost < best_cost:
                    best, best_cost = (a, b), cost
        return best

    def _confidence(self, feature, score):
        quantiles = self.score_quantiles_[self.features_.index(feature)]
        if not np.isfinite(score):
            return 0.0
        if self.score == "decision":  # the score is minus the log-odds of the feature
            return float(expit(-score))
        return float(1.0 - np.interp(score, quantiles, np.arange(101) / 100, left=0.0, right=1.0))
