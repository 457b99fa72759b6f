"""Eigenfeatures: modular eigenspaces that find and describe eyes, nose and mouth.

One eigenspace per facial feature, trained on patches cut around manual
landmarks at a common scale; a feature is found where the distance from its
feature space (DFFS) is smallest (Pentland, Moghaddam & Starner 1994;
Moghaddam & Pentland 1997). The patches found are the "eigenfeatures" of
modular recognition. :meth:`FeatureDetector.locate` searches a face: each
feature's region predicted from the face box (:func:`~eigenvision.face_box`),
the feature maps searched over scales there
(:func:`~eigenvision.search.multiscale_minima`), the eye pair chosen by its
scores and its geometry, then the nose and mouth around where the training
faces put them relative to the eyes; the result is a :class:`FeatureLocations`.
The face geometry (face box, patch shapes, eye frame) is
:mod:`eigenvision.faces.geometry`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator

from .._base import check_fitted
from .._errors import refuse_complex
from .._spec import Param, State, check_arguments, check_model, check_params
from ..detection import window_maps
from ..eigenspace import Eigenspace
from ..imageset import ImageSet
from ..normalize import to_gray, unit_norm
from ..search import multiscale_minima, suppress
from ..transform import eye_points, resize, resize_points, sample_grids
from .decision import fit_decision, log_distance_maps, log_distances
from .geometry import (
    FEATURES,
    PATCH_SHAPES,
    PLACEMENT_EYE_PATCH,
    box_eyes,
    eye_frame,
    face_box,
    faces_and_landmarks,
    mirror_landmarks,
)

__all__ = [  # FeatureLocations is documented as eigenvision.FeatureLocations
    "FeatureDetector",
    "placement_locator",
    "place_features",
    "feature_check",
    "FITTED_BOX_SCALES",
]


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
    geometry_weight : float, optional
        Weight of the shape prior when pairing eye candidates and choosing
        among the nose's and the mouth's (0: each feature at its own best
        place). Default 0.03 for ``score="dffs"`` and 1.0 for ``"decision"``
        (whose scores are log-odds, tens of times larger), each chosen for
        the eyes on faces held out from training. For the nose and mouth the
        prior is ``weight / 2`` times the squared distance from the training
        faces' mean offset in standard deviations, with ``"decision"`` or a
        weight given (it places wild faces' noses and mouths better; the
        lecture's DFFS(10) locator with its default has none: on IMM it
        changed nothing that mattered). The user guide's page on faces in
        photographs gives the measurements.
    score : {"dffs", "decision"}, default "dffs"
        What a window is scored by: its DFFS to the feature's space (the
        lecture's), or the log-odds of "feature" against "the face around
        it" from the log DFFS and DIFS to the feature space and to a space of
        patches mined around each training feature
        (:mod:`eigenvision.faces.decision`); ``confidence`` is then that
        probability; it places the eyes of varied (wild) faces far better
        than DFFS does.
    negatives_per_face : int, default 6
        With ``score="decision"``: patches mined per training view and
        feature, 0.15 to ``search_margin`` IODs from it.

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
    nonfeature_spaces_ : dict of str to Eigenspace
        ``score="decision"``: one per feature, of the patches mined around it.
    decision_ : (n_features, 5) ndarray
        ``score="decision"``: logistic weights of the four log distances, then
        the intercept.

    References
    ----------
    A. Pentland, B. Moghaddam and T. Starner (1994), View-based and modular
    eigenspaces for face recognition, CVPR.
    B. Moghaddam and A. Pentland (1997), Probabilistic visual learning for
    object representation, IEEE TPAMI 19(7).
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "features": Param("any"),
        "n_components": Param("int", 0, 1000),
        "iod": Param("int", 5, 400),
        "patch": Param("any"),
        "rotations": Param("reals", -90, 90),
        "scales": Param("reals", 0, 16, open_low=True),
        "mirror": Param("bool"),
        "search_scales": Param("reals", 0, 16, open_low=True),
        "search_margin": Param("real", 0, 5, open_low=True),
        "geometry_weight": Param("real", 0, 1e6, optional=True),
        "score": Param("choice", choices=("dffs", "decision")),
        "negatives_per_face": Param("int", 0, 1000),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "features_": State("strings"),
        "patch_shapes_": State(dtypes="iu", shape=("n", 2), low=1),
        "offsets_mean_": State(shape=("n", 2)),
        "offsets_std_": State(shape=("n", 2), low=0),
        "score_quantiles_": State(shape=("n", 101)),
        "decision_": State(shape=("n", 5), optional=True),
        "spaces_": State("models"),
        "nonfeature_spaces_": State("models", optional=True),
    }

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
        geometry_weight=None,
        score="dffs",
        negatives_per_face=6,
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
        self.score = score
        self.negatives_per_face = negatives_per_face

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

    def patch_shape(self, feature):
        """A feature's patch ``(height, width)`` in pixels at ``iod``.

        Parameters
        ----------
        feature : str

        Returns
        -------
        (int, int)
        """
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
        check_params(self)
        features = self._feature_list()
        groups = images.labels if isinstance(images, ImageSet) else None
        faces, marks = faces_and_landmarks(images, landmarks, {"left_eye", "right_eye", *features})
        folds = _two_folds(groups, len(faces))
        shapes = [self.patch_shape(f) for f in features]
        patches = {f: [] for f in features}
        negatives = {f: [] for f in features}
        rng = np.random.default_rng(0)
        patch_folds = {f: [] for f in features}
        offsets = {f: [] for f in features}
        for face, points, fold in zip(faces, _per_image(marks, len(faces)), folds, strict=True):
            origin, ex, ey, iod = eye_frame(points["left_eye"], points["right_eye"])
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
                    if self.score == "decision":
                        negatives[f] += self._mined(view, view_points[f], shape, rng)
                    for angle in self.rotations:
                        for scale in self.scales:
                            patches[f].append(_cut(view, view_points[f], shape, angle, scale))
                            patch_folds[f].append(fold)
        self.spaces_ = {}
        quantiles = []
        for f in features:
            stack = unit_norm(np.stack(patches[f]))
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
        if self.score == "decision":
            self._fit_decisions(features, patches, negatives)
        return self

    def _mined(self, view, center, shape, rng):
        """``negatives_per_face`` patches 0.15 to ``search_margin`` IODs from ``center``."""
        found = []
        while len(found) < self.negatives_per_face:
            offset = rng.uniform(-self.search_margin, self.search_margin, 2) * self.iod
            if np.hypot(*offset) > 0.15 * self.iod:
                found.append(_cut(view, np.asarray(center) + offset, shape, 0.0, 1.0))
        return found

    def _fit_decisions(self, features, patches, negatives):
        """The non-feature spaces and the logistic weights of each feature."""
        self.nonfeature_spaces_, weights = {}, []
        for f in features:
            inside = unit_norm(np.stack(patches[f]))
            outside = unit_norm(np.stack(negatives[f]))
            self.nonfeature_spaces_[f] = self._feature_space(outside)
            spaces = (self.spaces_[f], self.nonfeature_spaces_[f])
            weights.append(
                fit_decision(
                    log_distances(inside.reshape(len(inside), -1), spaces),
                    log_distances(outside.reshape(len(outside), -1), spaces),
                )
            )
        self.decision_ = np.array(weights)

    def _feature_space(self, stack):
        k = min(self.n_components, len(stack) - 1)
        space = Eigenspace(max(k, 1)).fit(stack)
        return _template_only(space) if self.n_components == 0 else space

    # --------------------------------------------------------------- search
    def feature_map(self, image, feature, *, factor=1.0, method=None):
        """The feature's score map over ``image`` rescaled by ``factor`` ("valid" windows).

        Parameters
        ----------
        image : (H, W) ndarray
            Grey.
        feature : str
        factor : float
            Resampling factor that brings the face to the detector's ``iod``.
        method : {"dffs", "ssd", "decision"}, optional
            DFFS of each normalised window, its squared distance to the
            mean patch (template matching; equals 1 - 2 NCC + const), or
            minus the log-odds of the feature (``score="decision"``
            detectors); default ``score``.

        Returns
        -------
        (H', W') ndarray
            ``H' = round(H * factor) - h + 1`` (window top-left indexing).
        """
        space = self.spaces_[self._known(feature)]
        if factor != 1.0:
            shape = (
                max(1, int(round(image.shape[0] * factor))),
                max(1, int(round(image.shape[1] * factor))),
            )
            image = resize(image, shape)
        method = self.score if method is None else method
        if method == "decision":
            check_fitted(self, "decision_")
            weights = self.decision_[self.features_.index(feature)]
            logs = log_distance_maps(image, (space, self.nonfeature_spaces_[feature]))
            with np.errstate(invalid="ignore"):  # flat windows: inf - inf, refused below
                odds = sum(w * m for w, m in zip(weights[:-1], logs, strict=True)) + weights[-1]
            return np.where(np.isfinite(odds), -odds, np.inf)
        maps = window_maps(image, space, normalize="window")
        if method == "ssd":
            return maps.residual_energy
        if method != "dffs":
            raise ValueError(f"method must be 'dffs' or 'ssd', got {method!r}")
        return maps.dffs

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
        wanted = ["left_eye", "right_eye", *self.features_]
        missing = [name for name in wanted if name not in positions]
        if missing:
            raise ValueError(
                f"locations lack {missing}: the patches of {list(self.features_)} are cut at "
                "the eyes' scale, so every one of them and both eyes need a position"
            )
        left, right = eye_points(positions["left_eye"], positions["right_eye"])
        _, ex, _, iod = eye_frame(left, right)
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
            out[f] = unit_norm(_cut(canonical, points[f], shape, angle, 1.0)[None])[0]
        return out

    # ---------------------------------------------------------------- helpers

    def _search(
        self, image, feature, center, half, base_factor, *, map_function=None, n=5, scales=None
    ):
        """Up to ``n`` best local minima of ``feature``'s map near ``center``, over ``scales``
        (default ``search_scales``) around ``base_factor``.

        Returns a list of :class:`~eigenvision.Detection`, best first, in
        ``image`` pixels; a detection's ``scale`` is the inverse of the
        resampling factor that brought it to the detector's ``iod``.
        """
        window = tuple(self.patch_shapes_[self.features_.index(feature)])
        # the detector's own maps score each window from its pixels: the scales in one call
        local_windows = map_function is None
        if map_function is None:
            map_function = self.feature_map
        multipliers = self.search_scales if scales is None else scales
        found = multiscale_minima(
            image,
            lambda scaled: map_function(scaled, feature),
            window,
            [1.0 / (base_factor * multiplier) for multiplier in multipliers],
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
        if image.dtype != np.float32:
            image = image.astype(np.float64, copy=False)  # read, never written: no copy
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

    def locate(self, face_image, *, box=None, scales=None) -> FeatureLocations:
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
        scales : sequence of float, optional
            The scales tried around the size the box predicts, for every
            feature; default ``search_scales``. Fewer for a box already
            fitted to the face (:func:`place_features`' ``relocate=False``).

        Returns
        -------
        FeatureLocations
            Positions in ``face_image`` pixels, scores and confidences.
        """
        image, box, iod = self._prepare(face_image, box)
        check_arguments(
            "FeatureDetector.locate",
            scales=(scales, replace(self._params["search_scales"], optional=True)),
        )
        base = self.iod / iod
        eyes = {}
        for f in ("left_eye", "right_eye"):
            center, half = self.search_region(f, box)
            eyes[f] = []
            if f in self.features_:
                eyes[f] = self._search(image, f, center, half, base, n=6, scales=scales)
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
            found = self._search(image, f, center, half, self.iod / found_iod, n=6, scales=scales)
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

    def _check_relations(self):
        """Its spaces are its features', at its patch shapes; its score quantiles ascend
        (:func:`~eigenvision._spec.check_model`)."""
        features = tuple(self.features_)
        if tuple(self.spaces_) != features:
            raise ValueError("FeatureDetector.spaces_ do not match features_")
        expected = np.array([self.patch_shape(f) for f in features])
        if not np.array_equal(self.patch_shapes_, expected):
            raise ValueError("FeatureDetector.patch_shapes_ do not match iod and the patch shapes")
        spaces = [("", self.spaces_)]
        if self.score == "decision":
            others = getattr(self, "nonfeature_spaces_", None) or {}
            if tuple(others) != features or getattr(self, "decision_", None) is None:
                raise ValueError(
                    "FeatureDetector: score='decision' needs nonfeature_spaces_ and a "
                    "decision_ for each feature"
                )
            spaces.append(("non-feature ", others))
        for kind, held in spaces:
            for feature, shape in zip(features, expected, strict=True):
                check_model(held[feature])
                if tuple(held[feature].image_shape_) != tuple(shape):
                    raise ValueError(
                        f"FeatureDetector: the {feature} {kind}space is not {tuple(shape)}"
                    )
        if np.any(np.diff(self.score_quantiles_, axis=1) < 0):
            raise ValueError("FeatureDetector.score_quantiles_ must not decrease along each row")


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


def _mirror(image, points):
    return image[:, ::-1], mirror_landmarks(points, image.shape[1])


def _cut(image, center, shape, angle, scale):
    """Bilinear patch of ``shape`` centred at ``center``, rotated by ``angle`` degrees, scaled."""
    h, w = shape
    theta = np.deg2rad(angle)
    cos, sin = np.cos(theta) / scale, np.sin(theta) / scale
    # patch pixel (i, j) lies (j - (w - 1) / 2, i - (h - 1) / 2) pixels from the centre, turned
    u, v = (w - 1) / 2, (h - 1) / 2
    affine = [
        [[cos, sin, center[1] - sin * u - cos * v], [-sin, cos, center[0] - cos * u + sin * v]]
    ]
    return sample_grids(image, affine, shape)[0]


def _template_only(space):
    """An eigenspace with no components: DFFS is the squared distance to the mean."""
    space.components_ = space.components_[:0]
    space.eigenvalues_ = space.eigenvalues_[:0]
    space.singular_values_ = space.singular_values_[:0]
    space.explained_variance_ratio_ = space.explained_variance_ratio_[:0]
    space.n_components_ = 0
    return space


def placement_locator():
    """The unfitted eye, nose and mouth detector that places a found face's features.

    :class:`~eigenvision.FaceFinder`'s ``placer_``: scored by decision, eye
    patches of :data:`~eigenvision.faces.geometry.PLACEMENT_EYE_PATCH` (the
    brows in: they place eyes better than eye-sized patches do).

    Returns
    -------
    FeatureDetector
    """
    eyes = {name: PLACEMENT_EYE_PATCH for name in ("left_eye", "right_eye")}
    return FeatureDetector(score="decision", patch=eyes)


#: The scales a placer tries in a box already fitted to the face (``relocate=False`` in
#: :func:`place_features`: :class:`~eigenvision.FaceFinder`'s windows, moved onto the face by
#: the refinement), around the size the box predicts; a box of unknown scale gets the
#: placer's ``search_scales``.
FITTED_BOX_SCALES = (0.92, 1.0, 1.08)


def place_features(placer, image, box, *, relocate=True):
    """Eyes, nose and mouth of the face in ``box``: located there, then in its eyes' box.

    A box's scale is often off by more than the detector searches around it,
    so the features are located again in the box of the eyes found first;
    when the first pass finds no eye pair (eye confidence under 0.02) its
    locations are returned. A box already fitted to the face is searched
    once, at :data:`FITTED_BOX_SCALES`.

    Parameters
    ----------
    placer : FeatureDetector
    image : (H, W) or (H, W, 3) ndarray
    box : (x, y, w, h)
    relocate : bool, default True
        Locate again in the box of the eyes found first. False for a box
        already fitted to the face (the finder's own, its window moved onto
        the face): one search instead of two, at :data:`FITTED_BOX_SCALES`
        instead of the placer's ``search_scales``.

    Returns
    -------
    FeatureLocations
        In ``image``'s pixels.
    """
    if not relocate:
        return placer.locate(image, box=box, scales=FITTED_BOX_SCALES)
    located = placer.locate(image, box=box)
    if located.eye_confidence < 0.02:
        return located
    eyes = (np.asarray(located[name], dtype=float) for name in ("left_eye", "right_eye"))
    return placer.locate(image, box=face_box(*eyes))


def feature_check(locator, image, eyes, score, *, eye_weight, feature_weight):
    """A candidate face's score after the eye-pair and nose-and-mouth check, in log-odds.

    Clutter that passes the face/non-face decision seldom holds two eyes, a
    nose and a mouth where a face has them: the check adds ``eye_weight (log
    p_left + log p_right) + feature_weight (log p_nose + log p_mouth)`` of the
    features ``locator`` finds in the candidate's box (never positive).

    Parameters
    ----------
    locator : FeatureDetector
    image : (H, W) ndarray
    eyes : ((x, y), (x, y))
        The candidate's eyes.
    score : float
        Its decision's log-odds.
    eye_weight, feature_weight : float

    Returns
    -------
    float
    """
    checked = locator.locate(image, box=face_box(*eyes))
    for weight, names in (
        (eye_weight, ("left_eye", "right_eye")),
        (feature_weight, ("nose", "mouth")),
    ):
        found = [checked.confidence[name] for name in names if name in checked.confidence]
        if weight and found:
            score = score + weight * float(np.log(np.maximum(found, 1e-12)).sum())
    return score
