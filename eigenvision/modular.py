"""Eigenfeatures: modular eigenspaces that find and describe eyes, nose and mouth.

One eigenspace per facial feature, trained on patches cut around manual
landmarks at a common scale; a feature is found where the distance from its
feature space (DFFS) is smallest (Pentland, Moghaddam & Starner 1994;
Moghaddam & Pentland 1997). The patches found are the "eigenfeatures" of
modular recognition.

Geometry is in units of the inter-ocular distance (IOD), the distance
between the two eye landmarks. A *face box* ``(x, y, w, h)`` runs roughly
from the brows to the chin and from cheek to cheek; :func:`face_box` gives
the convention used (measured on the IMM faces' 73-point outlines).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from sklearn.base import BaseEstimator

from ._base import check_fitted
from .detect import window_maps
from .eigenspace import Eigenspace
from .io import ImageSet
from .normalize import align, resize, resize_points, to_gray

__all__ = [
    "FeatureDetector", "FeatureLocations", "face_box", "face_windows", "window_eyes",
    "FACE_WINDOW", "FEATURES", "PATCH_SHAPES",
]  # fmt: skip

#: The features a :class:`FeatureDetector` knows by default.
FEATURES = ("left_eye", "right_eye", "nose", "mouth")

#: Patch (height, width) around each landmark, in inter-ocular distances.
PATCH_SHAPES = {
    "left_eye": (0.5, 0.8),
    "right_eye": (0.5, 0.8),
    "nose": (0.4, 0.45),
    "mouth": (0.35, 0.75),
}

# Face box around the eyes, in IODs: the IMM faces' 73-point outlines span
# 2.15 IOD across, 0.29 IOD above the eye line and 1.90 below it.
_BOX_WIDTH, _BOX_ABOVE, _BOX_BELOW = 2.15, 0.29, 1.90

_MIRRORED = {"left_eye": "right_eye", "right_eye": "left_eye"}

#: The face-detection window, in IODs: ``height`` and ``width``, the eye line
#: ``eye_row`` below its top, each eye centre ``eye_inset`` in from its side
#: (brows to mouth, cheek to cheek inside the face outline).
FACE_WINDOW = {"height": 1.6, "width": 1.4, "eye_row": 0.4, "eye_inset": 0.2}


def face_box(left_eye, right_eye) -> tuple[float, float, float, float]:
    """The face box ``(x, y, w, h)`` of a face with the given eye centres.

    Centred on the eyes' midpoint, 2.15 inter-ocular distances (IOD) wide,
    from 0.29 IOD above the eye line to 1.90 IOD below it: brows to chin
    on an upright face (the mean over the IMM faces' 73-point outlines).

    Parameters
    ----------
    left_eye, right_eye : (2,) array_like
        ``(x, y)`` pixels.
    """
    left, right = np.asarray(left_eye, float), np.asarray(right_eye, float)
    iod = float(np.linalg.norm(right - left))
    cx, cy = (left + right) / 2
    return (cx - _BOX_WIDTH * iod / 2, cy - _BOX_ABOVE * iod, _BOX_WIDTH * iod,
            (_BOX_ABOVE + _BOX_BELOW) * iod)  # fmt: skip


def face_windows(images, landmarks=None, *, iod=20, mirror=True) -> np.ndarray:
    """Faces cut to the face-detection window, eyes aligned, for training a face space.

    Each face is rotated, scaled and shifted (:func:`normalize.align`) so its
    eyes lie ``iod`` pixels apart on a horizontal line in a window of
    :data:`FACE_WINDOW` geometry: ``round(1.6 iod)`` high (0.4 IOD above the
    eye line, 1.2 below: brows to mouth) and ``round(1.4 iod)`` wide (0.2
    IOD beyond each eye). The window keeps to the inside of the face, as
    in Moghaddam & Pentland's detector: hair and background vary too much
    to model, and a space that must also explain them explains smooth
    clutter better than faces. On scikit-image's ``astronaut()`` a
    ``k = 10`` space of the IMM faces in this window ranks the face first;
    25 x 25 crops with hair and background (scikit-image's LFW subset,
    AT&T) rank it 100th to 2,000th.

    Parameters
    ----------
    images : ImageSet or (n, H, W[, 3]) ndarray
        Faces; an ImageSet brings its ``landmarks`` (e.g. :func:`load_imm`).
    landmarks : dict of str to (n, 2) ndarray, optional
        ``left_eye`` and ``right_eye`` ``(x, y)`` of every face (required for
        a plain array).
    iod : int, default 20
        Inter-ocular distance in the window, pixels: the smallest face
        :func:`detect` finds without upsampling the image.
    mirror : bool, default True
        Append the mirror images (left and right eye swap places).

    Returns
    -------
    (n, h, w) or (2n, h, w) ndarray of float64
        ``h, w = round(1.6 iod), round(1.4 iod)``. Standardise the windows
        (``normalize_images(..., standardize="norm")``) before fitting an
        :class:`Eigenspace` for ``detect(..., normalize="window")``.

    Examples
    --------
    >>> space = Eigenspace(10).fit(normalize_images(face_windows(load_imm()), standardize="norm"))
    >>> best = detect(image, space)[0]
    >>> left_eye, right_eye = window_eyes(best)
    """
    if not iod >= 5:
        raise ValueError(f"iod must be at least 5 pixels, got {iod!r}")
    faces, marks = _faces_and_landmarks(
        images, landmarks, {"left_eye", "right_eye"}, caller="face_windows"
    )
    shape = (int(round(FACE_WINDOW["height"] * iod)), int(round(FACE_WINDOW["width"] * iod)))
    row = FACE_WINDOW["eye_row"] * iod / (shape[0] - 1)
    inset = FACE_WINDOW["eye_inset"] * iod / (shape[1] - 1)
    eyes = ((inset, row), (inset + iod / (shape[1] - 1), row))
    windows = np.stack([
        align(face.astype(np.float64), left, right, shape=shape, eye_positions=eyes)
        for face, left, right in zip(faces, marks["left_eye"], marks["right_eye"], strict=True)
    ])  # fmt: skip
    return np.concatenate([windows, windows[:, :, ::-1]]) if mirror else windows


def window_eyes(detection) -> tuple[np.ndarray, np.ndarray]:
    """Left and right eye ``(x, y)`` of a window found with a :func:`face_windows` space.

    Parameters
    ----------
    detection : Detection
        From :func:`detect` with a space trained on :func:`face_windows`.

    Returns
    -------
    left_eye, right_eye : (2,) ndarray
        Where the training faces' eyes lie in such a window; pass them to
        :func:`face_box` for :meth:`FeatureDetector.locate`'s ``box``.
    """
    iod = detection.width / FACE_WINDOW["width"]
    y = detection.y + FACE_WINDOW["eye_row"] * iod
    left = detection.x + FACE_WINDOW["eye_inset"] * iod
    return np.array([left, y]), np.array([left + iod, y])


def _eye_frame(left, right):
    """Origin (eyes' midpoint), unit x along left->right eye, unit y perpendicular, IOD."""
    axis = right - left
    iod = np.linalg.norm(axis)
    ex = axis / iod
    ey = np.array([-ex[1], ex[0]])
    return (left + right) / 2, ex, ey, iod


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
        are found (measured: a detector trained on six IMM people gives a
        median eye confidence 0.80-0.84 on other IMM people brought down to
        an IOD of 21-32 px, below AT&T's 27-45 px, but ~0 on AT&T's faces,
        with their glasses and lighting); there compare ``scores`` within
        an image instead.
    iod : float
        Inter-ocular distance of the located eyes, in input pixels.
    """

    positions: dict
    scores: dict
    confidence: dict
    iod: float

    def __getitem__(self, feature):
        return self.positions[feature]


class FeatureDetector(BaseEstimator):
    """Eye, nose and mouth detector from per-feature eigenspaces ("eigenfeatures").

    Parameters
    ----------
    features : tuple of str, default ("left_eye", "right_eye", "nose", "mouth")
        Landmark names, as in an :class:`~eigenvision.ImageSet`'s ``landmarks``.
        The two eyes are always used (they fix scale and orientation).
    n_components : int, default 10
        Eigenvectors per feature space. ``0`` gives template matching: the
        score is the distance to the mean patch.
    iod : int, default 40
        Inter-ocular distance, in pixels, at which patches are cut and
        searched.
    patch : dict, optional
        ``{feature: (height, width)}`` in IODs, overriding :data:`PATCH_SHAPES`.
    rotations : tuple of float, default (-10, -5, 0, 5, 10)
        In-plane rotations (degrees) of the training augmentation.
    scales : tuple of float, default (0.9, 1.0, 1.1)
        Scale factors of the training augmentation.
    mirror : bool, default True
        Also train on mirrored faces (a mirrored left eye is a right eye).
    search_scales : tuple of float, default (0.85, 0.92, 1.0, 1.08, 1.17)
        Scales tried around the size the face box predicts.
    search_margin : float, default 0.5
        Half-size of the eyes' search regions, in IODs predicted from the box.
    geometry_weight : float, default 0.03
        Weight of the shape prior when pairing eye candidates and placing the
        nose and mouth (0: each feature at its own global minimum).

    Attributes
    ----------
    spaces_ : dict of str to Eigenspace
        One per feature, fitted on zero-mean, unit-norm patches.
    patch_shapes_ : (n_features, 2) int ndarray
        Patch (height, width) in pixels at ``iod``.
    offsets_mean_, offsets_std_ : (n_features, 2) ndarray
        Feature centres in the eye frame (origin between the eyes, x along
        the eyes, y down the face), in IODs, over the training faces.
    score_quantiles_ : (n_features, 101) ndarray
        Percentiles of the DFFS of training patches scored by a space fitted
        on the other half of the training people (so they describe unseen
        faces), for ``confidence``.

    References
    ----------
    A. Pentland, B. Moghaddam and T. Starner (1994), View-based and modular
    eigenspaces for face recognition, CVPR.
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7).
    """

    def __init__(
        self,
        features=FEATURES,
        n_components=10,
        *,
        iod=40,
        patch=None,
        rotations=(-10.0, -5.0, 0.0, 5.0, 10.0),
        scales=(0.9, 1.0, 1.1),
        mirror=True,
        search_scales=(0.85, 0.92, 1.0, 1.08, 1.17),
        search_margin=0.5,
        geometry_weight=0.03,
    ):
        self.features = features
        self.n_components = n_components
        self.iod = iod
        self.patch = patch
        self.rotations = rotations
        self.scales = scales
        self.mirror = mirror
        self.search_scales = search_scales
        self.search_margin = search_margin
        self.geometry_weight = geometry_weight

    # ------------------------------------------------------------------ fit
    def _feature_list(self):
        features = tuple(self.features)
        unknown = [f for f in features if f not in {**PATCH_SHAPES, **(self.patch or {})}]
        if unknown:
            raise ValueError(
                f"no patch shape for features {unknown}; give patch={{name: (height, width)}} "
                "in inter-ocular distances"
            )
        return features

    def _patch_shape(self, feature):
        height, width = {**PATCH_SHAPES, **(self.patch or {})}[feature]
        return max(3, int(round(height * self.iod))), max(3, int(round(width * self.iod)))

    def fit(self, images, landmarks=None):
        """Train one eigenspace per feature from faces with landmarks.

        Parameters
        ----------
        images : ImageSet or (n, H, W) ndarray
            Faces (grey or colour). An ImageSet brings its ``landmarks``.
        landmarks : dict of str to (n, 2) ndarray, optional
            ``(x, y)`` of every feature and of both eyes in every image;
            required for a plain array.

        Returns
        -------
        self
        """
        features = self._feature_list()
        groups = images.labels if isinstance(images, ImageSet) else None
        faces, marks = _faces_and_landmarks(images, landmarks, {"left_eye", "right_eye", *features})
        folds = _two_folds(groups, len(faces))
        shapes = [self._patch_shape(f) for f in features]
        patches = {f: [] for f in features}
        patch_folds = {f: [] for f in features}
        offsets = {f: [] for f in features}
        for face, points, fold in zip(faces, _per_image(marks, len(faces)), folds, strict=True):
            origin, ex, ey, iod = _eye_frame(points["left_eye"], points["right_eye"])
            for f in features:
                delta = points[f] - origin
                offsets[f].append((delta @ ex / iod, delta @ ey / iod))
            factor = self.iod / iod
            canonical, points = _rescale(face, points, factor)
            views = [(canonical, points)]
            if self.mirror:
                views.append(_mirror(canonical, points))
            for view, view_points in views:
                for f, shape in zip(features, shapes, strict=True):
                    if f not in view_points:
                        continue
                    for angle in self.rotations:
                        for scale in self.scales:
                            patches[f].append(_cut(view, view_points[f], shape, angle, scale))
                            patch_folds[f].append(fold)
        self.spaces_ = {}
        quantiles = []
        for f in features:
            stack = _unit_patches(np.stack(patches[f]))
            self.spaces_[f] = self._feature_space(stack)
            # Confidence is calibrated on people the space has not seen: each half of
            # the training people scored by a space fitted on the other half.
            fold = np.array(patch_folds[f])
            held_out = [
                self._feature_space(stack[fold != side]).dffs(
                    stack[fold == side].reshape(-1, stack[0].size)
                )
                for side in (0, 1)
                if np.any(fold == side) and np.any(fold != side)
            ]
            if not held_out:
                held_out = [self.spaces_[f].dffs(stack.reshape(len(stack), -1))]
            quantiles.append(np.percentile(np.concatenate(held_out), np.arange(101)))
        self.patch_shapes_ = np.array(shapes, dtype=np.int64)
        self.offsets_mean_ = np.array([np.mean(offsets[f], axis=0) for f in features])
        self.offsets_std_ = np.array([np.std(offsets[f], axis=0) for f in features])
        self.score_quantiles_ = np.array(quantiles)
        self.features_ = features
        return self

    def _feature_space(self, stack):
        k = min(self.n_components, len(stack) - 1)
        space = Eigenspace(max(k, 1)).fit(stack)
        return _template_only(space) if self.n_components == 0 else space

    # --------------------------------------------------------------- search
    def feature_map(self, image, feature, *, factor=1.0, method="dffs"):
        """The feature's score map over ``image`` rescaled by ``factor`` ("valid" windows).

        Parameters
        ----------
        image : (H, W) ndarray
            Grey.
        feature : str
        factor : float
            Resampling factor that brings the face to the detector's ``iod``.
        method : {"dffs", "ssd"}
            DFFS of each normalised window, or its squared distance to the
            mean patch (template matching; equals 1 - 2 NCC + const).

        Returns
        -------
        (H', W') ndarray
            ``H' = round(H * factor) - h + 1`` (window top-left indexing).
        """
        check_fitted(self, "spaces_")
        space = self.spaces_[feature]
        if factor != 1.0:
            shape = (max(1, int(round(image.shape[0] * factor))),
                     max(1, int(round(image.shape[1] * factor))))  # fmt: skip
            image = resize(image, shape)
        maps = window_maps(image, space, normalize="window")
        if method == "ssd":
            return maps.residual_energy
        if method != "dffs":
            raise ValueError(f"method must be 'dffs' or 'ssd', got {method!r}")
        return maps.dffs

    def _search(self, image, feature, center, half, base_factor, *, map_function=None, n=5):
        """Up to ``n`` best local minima of ``feature``'s map near ``center``, over scales.

        Returns a list of ``(score, x, y, factor)``, best first, in ``image`` pixels.
        """
        index = self.features_.index(feature)
        h, w = self.patch_shapes_[index]
        candidates = []
        for multiplier in self.search_scales:
            factor = base_factor * multiplier
            reach = np.array(half) + np.array([w, h]) / (2 * factor) + 2
            x0 = int(max(0, np.floor(center[0] - reach[0])))
            y0 = int(max(0, np.floor(center[1] - reach[1])))
            x1 = int(min(image.shape[1], np.ceil(center[0] + reach[0]) + 1))
            y1 = int(min(image.shape[0], np.ceil(center[1] + reach[1]) + 1))
            crop = image[y0:y1, x0:x1]
            shape = (int(round(crop.shape[0] * factor)), int(round(crop.shape[1] * factor)))
            if shape[0] < h or shape[1] < w:
                continue
            small = resize(crop, shape) if shape != crop.shape else crop
            fy, fx = shape[0] / crop.shape[0], shape[1] / crop.shape[1]
            if map_function is None:
                values = self.feature_map(small, feature)
            else:
                values = map_function(small, feature)
            rows, cols = np.indices(values.shape)
            # window centre in the small crop, then back to input pixels (pixel-centre convention)
            xs = (cols + (w - 1) / 2 + 0.5) / fx - 0.5 + x0
            ys = (rows + (h - 1) / 2 + 0.5) / fy - 0.5 + y0
            inside = (np.abs(xs - center[0]) <= half[0]) & (np.abs(ys - center[1]) <= half[1])
            values = np.where(inside & np.isfinite(values), values, np.inf)
            radius = max(1, min(h, w) // 4)
            minima = (values == ndimage.minimum_filter(values, size=2 * radius + 1)) & np.isfinite(
                values
            )
            for i, j in zip(*np.nonzero(minima), strict=True):
                candidates.append((float(values[i, j]), float(xs[i, j]), float(ys[i, j]), factor))
        candidates.sort()
        kept = []
        for candidate in candidates:  # one candidate per place, whatever the scale
            if all(np.hypot(candidate[1] - k[1], candidate[2] - k[2]) > 0.1 * self.iod / k[3]
                   for k in kept):  # fmt: skip
                kept.append(candidate)
                if len(kept) == n:
                    break
        return kept

    def _prepare(self, face_image, box):
        check_fitted(self, "spaces_")
        image = np.asarray(face_image)
        if image.ndim == 3:
            image = to_gray(image)
        image = image.astype(np.float64) if image.dtype != np.float32 else image
        if image.ndim != 2 or image.size == 0:
            raise ValueError(f"expected a face image (H, W) or (H, W, 3), got shape {image.shape}")
        if not np.all(np.isfinite(image)):
            raise ValueError("the image contains NaN or infinite values; fill or mask them first")
        if box is None:
            box = (0.0, 0.0, float(image.shape[1]), float(image.shape[0]))
        x, y, w, h = (float(v) for v in box)
        if w <= 0 or h <= 0:
            raise ValueError(f"box must have positive width and height, got {box}")
        iod = w / _BOX_WIDTH
        return image, (x, y, w, h), iod

    def _eye_prior(self, box, iod):
        x, y, w, _ = box
        ey = y + _BOX_ABOVE * iod
        cx = x + w / 2
        return {"left_eye": (cx - iod / 2, ey), "right_eye": (cx + iod / 2, ey)}

    def feature_minimum(self, face_image, feature, *, box=None, map_function=None):
        """Global minimum of one feature's map over its search region and scales.

        The lecture's detection criterion reads this minimum (see
        :func:`eigenvision.evaluate.detection_roc`). No shape prior: each
        feature on its own, in :meth:`search_region`.

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

        Returns
        -------
        (x, y, score)
        """
        image, box, iod = self._prepare(face_image, box)
        center, half = self.search_region(feature, box)
        found = self._search(image, feature, center, half, self.iod / iod,
                             map_function=map_function, n=1)  # fmt: skip
        if not found:
            return (np.nan, np.nan, np.inf)
        score, x, y, _ = found[0]
        return (x, y, score)

    def search_region(self, feature, box):
        """Where a feature is searched from the face box alone: centre ``(x, y)`` and half-size.

        The eyes: a square of half-size ``search_margin`` IODs around where
        :func:`face_box` puts them. The others: the training faces' mean
        position relative to the eyes, plus or minus three standard
        deviations and ``search_margin`` IODs.
        """
        check_fitted(self, "spaces_")
        x, y, w, h = (float(v) for v in box)
        iod = w / _BOX_WIDTH
        box = (x, y, w, h)
        eyes = self._eye_prior(box, iod)
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
        the training faces' geometry puts them relative to the eyes.

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
            eyes[f] = self._search(image, f, center, half, base, n=6) if f in self.features_ \
                else []  # fmt: skip
        positions, scores = {}, {}
        pair = self._best_eye_pair(eyes)
        prior = self._eye_prior(box, iod)
        for f, candidate in zip(("left_eye", "right_eye"), pair or (None, None), strict=True):
            if f in self.features_:  # no pair found: the prior, scored as not found
                found = prior[f] if candidate is None else (candidate[1], candidate[2])
                positions[f], scores[f] = found, np.inf if candidate is None else candidate[0]
        left, right = (np.array(positions.get(f, prior[f])) for f in ("left_eye", "right_eye"))
        origin, ex, ey, found_iod = _eye_frame(left, right)
        for f in self.features_:
            if f in ("left_eye", "right_eye"):
                continue
            index = self.features_.index(f)
            offset = self.offsets_mean_[index]
            center = origin + found_iod * (offset[0] * ex + offset[1] * ey)
            half = tuple((3 * self.offsets_std_[index] + 0.15) * found_iod)
            found = self._search(image, f, center, half, self.iod / found_iod, n=1)
            if found:
                positions[f], scores[f] = (found[0][1], found[0][2]), found[0][0]
            else:
                positions[f], scores[f] = tuple(center), np.inf
        confidence = {f: self._confidence(f, scores[f]) for f in positions}
        return FeatureLocations(positions, scores, confidence, float(found_iod))

    def _best_eye_pair(self, eyes):
        lefts, rights = eyes.get("left_eye", []), eyes.get("right_eye", [])
        if not lefts or not rights:
            return None
        best, best_cost = None, np.inf
        for a in lefts:
            for b in rights:
                dx, dy = b[1] - a[1], b[2] - a[2]
                if dx <= 0:
                    continue
                distance = np.hypot(dx, dy)
                expected = self.iod * 2 / (a[3] + b[3])  # IOD at the scales they matched
                scale_error = np.log(distance / expected) / 0.15
                tilt = np.arctan2(dy, dx) / np.deg2rad(15)
                cost = a[0] + b[0] + self.geometry_weight * (scale_error**2 + tilt**2)
                if cost < best_cost:
                    best, best_cost = (a, b), cost
        return best

    def _confidence(self, feature, score):
        quantiles = self.score_quantiles_[self.features_.index(feature)]
        if not np.isfinite(score):
            return 0.0
        return float(1.0 - np.interp(score, quantiles, np.arange(101) / 100, left=0.0, right=1.0))

    def patches(self, face_image, *, box=None, locations=None):
        """The normalised feature patches of a face, for modular recognition.

        Parameters
        ----------
        face_image : (H, W) or (H, W, 3) ndarray
        box : (x, y, w, h), optional
        locations : FeatureLocations or dict, optional
            Feature positions (e.g. manual landmarks); default
            ``self.locate(face_image, box=box)``.

        Returns
        -------
        dict of str to (h, w) ndarray
            Zero-mean, unit-norm patches cut at the scale of the located
            eyes, upright along the eye line.
        """
        image, box, _ = self._prepare(face_image, box)
        if locations is None:
            locations = self.locate(image, box=box)
        positions = getattr(locations, "positions", locations)
        left, right = (
            np.asarray(positions["left_eye"], float),
            np.asarray(positions["right_eye"], float),
        )
        _, ex, _, iod = _eye_frame(left, right)
        angle = np.degrees(np.arctan2(ex[1], ex[0]))
        factor = self.iod / iod
        points = np.array([positions[f] for f in self.features_], dtype=np.float64)
        # Resample only the part of the image the patches reach (any rotation), not all of it.
        reach = np.hypot(*self.patch_shapes_.max(axis=0)) / (2 * factor) + 2
        x0, y0 = np.maximum(np.floor(points.min(axis=0) - reach).astype(int), 0)
        x1, y1 = np.ceil(points.max(axis=0) + reach).astype(int) + 1
        crop = image[y0:y1, x0:x1]
        shifted = dict(zip(self.features_, points - (x0, y0), strict=True))
        canonical, points = _rescale(crop, shifted, factor)
        out = {}
        for f in self.features_:
            shape = tuple(self.patch_shapes_[self.features_.index(f)])
            out[f] = _unit_patches(_cut(canonical, points[f], shape, angle, 1.0)[None])[0]
        return out


# ---------------------------------------------------------------- helpers
def _faces_and_landmarks(images, landmarks, required, *, caller="FeatureDetector.fit"):
    if isinstance(images, ImageSet):
        landmarks = images.landmarks if landmarks is None else landmarks
        images = images.images
    faces = np.asarray(images)
    if faces.ndim not in (3, 4) or len(faces) == 0:
        raise ValueError(f"expected a stack of faces (n, H, W[, 3]), got shape {faces.shape}")
    if not landmarks:
        raise ValueError(
            f"{caller} needs landmarks: an ImageSet with landmarks (e.g. load_imm()) "
            "or landmarks={name: (n, 2) array}"
        )
    missing = sorted(required - set(landmarks))
    if missing:
        raise ValueError(f"landmarks lack {missing}; have {sorted(landmarks)}")
    marks = {}
    for name in required:
        points = np.asarray(landmarks[name], dtype=np.float64)
        if points.shape != (len(faces), 2):
            raise ValueError(f"landmarks[{name!r}] must be ({len(faces)}, 2), got {points.shape}")
        if not np.all(np.isfinite(points)):
            raise ValueError(f"landmarks[{name!r}] contains NaN or infinite values")
        marks[name] = points
    if np.any(np.linalg.norm(marks["right_eye"] - marks["left_eye"], axis=1) < 2):
        raise ValueError("some faces have their two eye landmarks less than 2 pixels apart")
    if faces.ndim == 4:
        faces = np.stack([to_gray(face) for face in faces])
    return faces, marks


def _two_folds(groups, n):
    """Alternate groups (people, when labels are known; else images) between two folds."""
    if groups is None or len(np.unique(groups)) < 2:
        return np.arange(n) % 2
    _, index = np.unique(np.asarray(groups), return_inverse=True)
    return index % 2


def _per_image(marks, n):
    return [{name: points[i] for name, points in marks.items()} for i in range(n)]


def _rescale(image, points, factor):
    """Resize ``image`` by ``factor`` (antialiased) and move ``points`` with it."""
    shape = (
        max(1, int(round(image.shape[0] * factor))),
        max(1, int(round(image.shape[1] * factor))),
    )
    scaled = resize(image.astype(np.float64), shape)
    return scaled, {k: resize_points(p, image.shape, shape) for k, p in points.items()}


def mirror_landmarks(landmarks, width):
    """Landmarks of the left-right mirrored image: x flipped, left and right eye swapped.

    Parameters
    ----------
    landmarks : dict of str to (..., 2) array-like
    width : int
        Image width ``W``; ``x`` becomes ``W - 1 - x``.
    """
    mirrored = {}
    for name, points in landmarks.items():
        flipped = np.array(points, dtype=np.float64)
        flipped[..., 0] = width - 1 - flipped[..., 0]
        mirrored[_MIRRORED.get(name, name)] = flipped
    return mirrored


def _mirror(image, points):
    return image[:, ::-1], mirror_landmarks(points, image.shape[1])


def _cut(image, center, shape, angle, scale):
    """Bilinear patch of ``shape`` centred at ``center``, rotated by ``angle`` degrees, scaled."""
    h, w = shape
    v, u = np.mgrid[0:h, 0:w].astype(np.float64)
    u -= (w - 1) / 2
    v -= (h - 1) / 2
    theta = np.deg2rad(angle)
    cos, sin = np.cos(theta) / scale, np.sin(theta) / scale
    xs = center[0] + cos * u - sin * v
    ys = center[1] + sin * u + cos * v
    return ndimage.map_coordinates(image, [ys, xs], order=1, mode="nearest")


def _unit_patches(stack):
    """Zero-mean, unit-norm patches (flat ones become zero), as ``normalize="window"`` sees them."""
    flat = stack.reshape(len(stack), -1).astype(np.float64)
    flat = flat - flat.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(flat, axis=1, keepdims=True)
    flat = np.divide(flat, norms, out=np.zeros_like(flat), where=norms > 1e-12)
    return flat.reshape(stack.shape)


def _template_only(space):
    """An eigenspace with no components: DFFS is the squared distance to the mean."""
    space.components_ = space.components_[:0]
    space.eigenvalues_ = space.eigenvalues_[:0]
    space.singular_values_ = space.singular_values_[:0]
    space.explained_variance_ratio_ = space.explained_variance_ratio_[:0]
    space.n_components_ = 0
    return space
