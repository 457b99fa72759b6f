"""How a recogniser's codes are made: the :class:`Encoder` (its fitted features, a
recognizer's ``encoder_``), the metrics each method allows, eigenfeature patches, and the
fusion of blocks (the whole face, each facial feature) into one code.

The functions are over arrays, each testable alone; the :class:`~eigenvision.Recognizer`'s
Notes say how the blocks are weighed.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import get_tags

from ._base import check_fitted, cloned_sharing
from ._spec import Param, State, check_model, check_params, check_sides
from .bayesian import BayesianSpace
from .eigenspace import Eigenspace
from .fisher import FisherSpace
from .identity import IdentityModel
from .neighbors import METRICS, check_metric, squared_distances
from .views import resized, view_count, virtual_views

__all__ = [
    "ENCODER_PARAMS",
    "Encoder",
    "METHODS",
    "WHOLE_FACE",
    "allowed_metrics",
    "block_scales",
    "feature_patches",
    "fused_codes",
]


def allowed_metrics(method, feature=None):
    """The metrics a recognizer of ``method`` takes (the app offers these; fit refuses others).

    Parameters
    ----------
    method : str
        One of :data:`~eigenvision.recognize.METHODS`.
    feature : subspace model, optional
        The recognizer's ``feature``: with one, any metric its fit allows
        (``"mahalanobis"`` needs ``explained_variance_``, checked on fit).

    Returns
    -------
    tuple of str
        Names in :data:`eigenvision.neighbors.METRICS`: the presets whose
        codes have no eigenvalues (``"fisherfaces"``, ``"bayesian"``) leave out
        the metrics that need them; ``"plda"`` compares by its ratio alone.
    """
    if method == "plda":
        return ("euclidean",)
    if feature is None and method in ("fisherfaces", "bayesian"):
        return tuple(name for name, metric in METRICS.items() if not metric.needs_variances)
    return tuple(METRICS)


def block_scales(blocks, weights) -> np.ndarray:
    """Divisors that give each block of codes its share of the fused distance.

    Each block's root-mean-square distance between its rows, over the square
    root of its weight, so that every block has the typical distance its
    weight asks for (the recognizer's Notes).

    Parameters
    ----------
    blocks : sequence of (n, q_b) ndarray
        The training codes of each block.
    weights : sequence of float
        Each block's share of the squared distance, >= 0.

    Returns
    -------
    (n_blocks,) ndarray
        ``inf`` for a block of weight 0 (its codes then count for nothing).

    Examples
    --------
    >>> blocks = [np.array([[0.0], [2.0]]), np.array([[0.0], [4.0]])]
    >>> block_scales(blocks, [0.5, 0.0]).tolist()
    [2.0, inf]
    """
    spread = np.array([np.sqrt(2 * np.mean(np.sum((b - b.mean(0)) ** 2, axis=1))) for b in blocks])
    weights = np.asarray(weights, dtype=np.float64)
    return np.where(weights > 0, spread / np.sqrt(np.where(weights > 0, weights, 1)), np.inf)


def fused_codes(blocks, scales) -> np.ndarray:
    """Block codes side by side, each divided by its scale (:func:`block_scales`).

    Parameters
    ----------
    blocks : sequence of (n, q_b) ndarray
    scales : (n_blocks,) ndarray

    Returns
    -------
    (n, sum q_b) ndarray
        The one block itself when it is alone with scale 1.
    """
    if len(blocks) == 1 and scales[0] == 1:
        return blocks[0]
    return np.hstack([b / b.dtype.type(scale) for b, scale in zip(blocks, scales, strict=True)])


def feature_patches(detector, faces, face_box=None) -> dict:
    """The eigenfeature patches of every face: at its landmarks, or where ``detector`` finds them.

    Parameters
    ----------
    detector : FeatureDetector
        Fitted.
    faces : ImageSet
        Its landmarks are used where they name every feature of the detector.
    face_box : (x, y, w, h), optional
        Where the face lies in each image, for locating (default the whole image).

    Returns
    -------
    dict of str to (n, h, w) ndarray
        One stack of patches per feature of the detector.
    """
    cut = {feature: [] for feature in detector.features_}
    for i, image in enumerate(faces.images):
        positions = None
        if faces.landmarks and all(f in faces.landmarks for f in detector.features_):
            positions = {f: faces.landmarks[f][i] for f in detector.features_}
        found = detector.patches(image, box=face_box, locations=positions)
        for feature, patch in found.items():
            cut[feature].append(patch)
    return {feature: np.stack(patches) for feature, patches in cut.items()}


#: The recognition methods (presets of the feature an :class:`Encoder` builds).
METHODS = ("eigenfaces", "fisherfaces", "bayesian", "modular", "combined", "plda")

#: The name of the whole-face block in ``block_names_``.
WHOLE_FACE = "face"

#: The encoder's parameters, as a :class:`~eigenvision.Recognizer` takes them too.
ENCODER_PARAMS = {
    "n_components": Param("real", 0, 100_000, open_low=True, optional=True),
    "method": Param("choice", choices=METHODS),
    "feature": Param("model", optional=True),
    "metric": Param("choice", choices=tuple(METRICS)),
    "shape": Param("shape", 1, 4096, optional=True),
    "mirror": Param("bool"),
    "jitter": Param("int", 0, 64),
    "resize": Param("bool"),
    "detector": Param("model", optional=True),
    "modular_components": Param("int", 1, 100_000, optional=True),
    "global_weight": Param("real", 0, 1),
    "face_box": Param("reals", min_length=4, max_length=4, optional=True),
}


class Encoder(BaseEstimator):
    """Images to fused, metric-ready codes: the features of a :class:`~eigenvision.Recognizer`.

    Fits the whole-face feature (``feature`` or ``method``'s preset) and, for the modular
    methods, one eigenspace per facial feature; weighs the blocks (the recognizer's Notes)
    and encodes images into codes whose Euclidean distances are the metric's. A recognizer
    holds its fitted encoder as ``encoder_``; every parameter means what it means there.

    Parameters
    ----------
    n_components : int or float, default 20
        The preset feature's size (``"bayesian"``: intrapersonal components).
    method : str, default "eigenfaces"
        One of :data:`METHODS`.
    feature : subspace model or IdentityModel, optional
        The whole-face feature instead of the preset (cloned, then fitted); for ``"plda"``
        a trained :class:`~eigenvision.IdentityModel`, used as it is.
    metric : str, default "euclidean"
        One of :data:`eigenvision.neighbors.METRICS`.
    shape : (H, W), optional
        The working resolution every image is resized to first.
    mirror : bool, default False
        Train on each image's mirror image too.
    jitter : int, default 0
        Train on copies translated by this many pixels too.
    resize : bool, default False
        Resize images of another size than the training ones (else an error).
    detector : FeatureDetector, optional
        Fitted; cuts the eigenfeatures of ``"modular"`` and ``"combined"``.
    modular_components : int, optional
        Components per feature eigenspace (default ``n_components``).
    global_weight : float, default 0.5
        ``"combined"``: the whole face's share of the fused distance.
    face_box : (x, y, w, h), optional
        Where the face lies in each image, for locating its features.

    Attributes
    ----------
    image_shape_ : (H, W)
    feature_ : fitted subspace model or None
    feature_spaces_ : dict of str to Eigenspace
    block_names_ : tuple of str
    block_scales_ : (n_blocks,) ndarray
    """

    _params = ENCODER_PARAMS

    _state = {
        "image_shape_": State("shape"),
        "feature_": State("model", optional=True),
        "feature_spaces_": State("models"),
        "block_names_": State("strings"),
        "block_scales_": State(shape=("b",), finite="posinf", low=0),
    }

    def __init__(
        self,
        n_components=20,
        *,
        method="eigenfaces",
        feature=None,
        metric="euclidean",
        shape=None,
        mirror=False,
        jitter=0,
        resize=False,
        detector=None,
        modular_components=None,
        global_weight=0.5,
        face_box=None,
    ):
        self.n_components = n_components
        self.method = method
        self.feature = feature
        self.metric = metric
        self.shape = shape
        self.mirror = mirror
        self.jitter = jitter
        self.resize = resize
        self.detector = detector
        self.modular_components = modular_components
        self.global_weight = global_weight
        self.face_box = face_box

    def __sklearn_clone__(self):
        """scikit-learn's ``clone``, keeping the fitted ``detector`` (and ``"plda"``'s trained
        ``feature``): models the encoder reads, never refits.

        Returns
        -------
        Encoder
            Unfitted, with the same parameters.
        """
        return cloned_sharing(self, ("detector",) + (("feature",) if self.method == "plda" else ()))

    @property
    def modular(self) -> bool:
        """Whether the codes hold eigenfeatures (``"modular"``, ``"combined"``)."""
        return self.method in ("modular", "combined")

    def check_options(self):
        """Refuse a feature, metric and detector that do not go together.

        Returns
        -------
        None
        """
        check_params(self)
        if self.method == "plda":
            if not isinstance(self.feature, IdentityModel) or not hasattr(self.feature, "plda_"):
                raise ValueError(
                    "method='plda' needs a trained IdentityModel as feature: "
                    "Recognizer(method='plda', feature=ev.default_identity_model())"
                )
            if self.metric != "euclidean":
                raise ValueError(
                    "method='plda' compares faces by the identity model's log-likelihood "
                    f"ratio: leave metric='euclidean' (got {self.metric!r})"
                )
        if self.metric not in allowed_metrics(self.method, self.feature):
            raise ValueError(
                f"metric={self.metric!r} needs eigenspaces (their eigenvalues), not "
                f"{self.method} (bayesian codes are whitened already: use 'euclidean')"
            )
        if self.feature is not None and self.method == "modular":
            raise ValueError(
                "feature= is the whole-face feature, and method='modular' has none; "
                "use method='eigenfaces' (the feature alone) or 'combined'"
            )
        if self.modular and (self.detector is None or not hasattr(self.detector, "spaces_")):
            raise ValueError(
                f"method={self.method!r} needs a fitted FeatureDetector: "
                "Recognizer(method=..., detector=FeatureDetector().fit(load_imm()))"
            )

    def check_component_count(self, images, *, option=None):
        """Refuse more eigenspace components than the images and their virtual views give.

        Parameters
        ----------
        images : sequence
            The training images or photos (their number counts).
        option : str, optional
            The name the caller gave the component count (the CLI's
            ``"--n-components"``), for the message.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            Naming the count to ask for instead.
        """
        n_images = len(images) if hasattr(images, "__len__") else 0  # 0: as_image_set says
        views = view_count(n_images, jitter=self.jitter, mirror=self.mirror)
        k = (
            self.modular_components
            if self.method == "modular" and self.modular_components
            else self.n_components
        )
        if (
            self.method in ("eigenfaces", "modular", "combined")
            and self.feature is None
            and isinstance(k, Integral)
            and k > views
            and n_images >= 2
        ):
            with_views = "" if views == n_images else f" ({n_images} with their virtual views)"
            asked, fix = (
                (f"{k} components are", f"ask for {views}")
                if option is None
                else (f"{option} {k} is", f"pass {option} {views}")
            )
            raise ValueError(
                f"{asked} more than the {views} training images{with_views} give: "
                f"{fix} or fewer, or train on more images"
            )

    def training_set(self, faces):
        """The training images at the working resolution, with their virtual views.

        Parameters
        ----------
        faces : ImageSet

        Returns
        -------
        ImageSet
            Landmarks kept only where the eigenfeatures are cut at them.
        """
        if not self.modular:
            faces = faces.replace(landmarks=None)
        faces = faces if self.shape is None else resized(faces, tuple(self.shape))
        return virtual_views(faces, jitter=self.jitter, mirror=self.mirror)

    def fit_transform(self, faces):
        """Fit the features and the blocks' weights on ``faces`` and give their codes.

        Parameters
        ----------
        faces : ImageSet
            The training set as :meth:`training_set` gives it.

        Returns
        -------
        (n, q) ndarray
            The faces' fused codes.
        """
        self.check_options()
        self.image_shape_ = faces.image_shape
        self._fit_features(faces)
        blocks = self._block_codes(faces)
        self._fit_block_scales(blocks)
        return fused_codes(blocks, self.block_scales_)

    def fit(self, faces):
        """Fit the features and the blocks' weights on ``faces``.

        Parameters
        ----------
        faces : ImageSet

        Returns
        -------
        self
        """
        self.fit_transform(faces)
        return self

    def transform(self, faces):
        """The fused, metric-ready codes of face images, brought to the trained size.

        Parameters
        ----------
        faces : ImageSet

        Returns
        -------
        (n, q) ndarray
        """
        check_fitted(self, "block_scales_")
        faces = faces if self.shape is None else resized(faces, tuple(self.shape))
        if faces.image_shape != self.image_shape_:
            if not self.resize:
                raise ValueError(
                    f"probe images are {faces.image_shape}, the recognizer was "
                    f"trained on {self.image_shape_}; pass resize=True or call "
                    f"normalize_images(images, shape={self.image_shape_}) first"
                )
            faces = resized(faces, self.image_shape_)
        if not self.feature_spaces_:
            faces = faces.replace(landmarks=None)
        return fused_codes(self._block_codes(faces), self.block_scales_)

    def pairwise(self, codes_a, codes_b, *, statistics_b=None):
        """Distances between every pair of codes, in the metric's units (``"plda"``: minus the
        identity model's normalised log-likelihood ratio).

        Parameters
        ----------
        codes_a : (m, q) ndarray
        codes_b : (n, q) ndarray
        statistics_b : optional
            ``"plda"``: the identity model's cohort statistics of ``codes_b``, computed once
            for many queries (:meth:`~eigenvision.IdentityModel.cohort_statistics`).

        Returns
        -------
        (m, n) ndarray
        """
        if self.method == "plda":
            return -self.feature.pairwise_log_odds(codes_a, codes_b, statistics_b=statistics_b)
        return self.metric_distance(np.sqrt(squared_distances(codes_a, codes_b)))

    def metric_distance(self, euclidean):
        """Euclidean distances between codes, in the metric's own units.

        Parameters
        ----------
        euclidean : ndarray

        Returns
        -------
        ndarray
        """
        return check_metric(self.metric).from_euclidean(euclidean)

    @property
    def odds_model(self):
        """The model whose log odds and probability of one person the codes have, or None:
        ``"plda"``'s identity model, or a ``"bayesian"`` feature with the Euclidean metric."""
        if self.method == "plda":
            return self.feature
        if (
            hasattr(self.feature_, "log_odds")
            and not self.feature_spaces_
            and self.metric == "euclidean"
        ):
            return self.feature_
        return None

    def code_width(self) -> int:
        """How many values a code has: what the features give together.

        Returns
        -------
        int
        """
        width = self.feature.code_width() if self.method == "plda" else 0
        if self.feature_ is not None:
            width += self.feature_.n_components_
        return width + sum(space.n_components_ for space in self.feature_spaces_.values())

    def _whole_face_model(self):
        """An unfitted whole-face feature: ``feature`` or ``method``'s preset (None: modular,
        and ``"plda"``, whose trained model stays in ``feature``: a resource, never refitted)."""
        if self.method == "plda":
            return None
        if self.feature is not None:
            return clone(self.feature)
        preset = {
            "fisherfaces": FisherSpace,
            "bayesian": BayesianSpace,
            "eigenfaces": Eigenspace,
            "combined": Eigenspace,
        }.get(self.method)
        return None if preset is None else preset(n_components=self.n_components)

    def _fit_features(self, faces):
        """Fit ``feature_`` (the whole face) and ``feature_spaces_`` (one per facial feature)."""
        self.feature_ = self._whole_face_model()
        if self.feature_ is not None:
            if get_tags(self.feature_).target_tags.required:
                self.feature_.fit(faces.images, faces.labels)
            else:
                self.feature_.fit(faces.images)
            if check_metric(self.metric).needs_variances and not hasattr(
                self.feature_, "explained_variance_"
            ):
                raise ValueError(
                    f"metric={self.metric!r} needs a feature with explained_variance_ "
                    f"(an Eigenspace), not a {type(self.feature_).__name__}"
                )
        self.feature_spaces_ = {}
        if self.modular:
            k = self.n_components if self.modular_components is None else self.modular_components
            for name, patches in feature_patches(self.detector, faces, self.face_box).items():
                self.feature_spaces_[name] = Eigenspace(n_components=k).fit(patches)

    def _fit_block_scales(self, blocks):
        """Divisors that give each block (whole face, features) its share of the distance."""
        if not self.modular:
            self.block_names_ = (WHOLE_FACE,)
            self.block_scales_ = np.ones(1)
            return
        names, weights = [], []
        if self.feature_ is not None:
            names.append(WHOLE_FACE)
            weights.append(self.global_weight)
        share = (1.0 - self.global_weight) if self.method == "combined" else 1.0
        for name in self.feature_spaces_:
            names.append(name)
            weights.append(share / len(self.feature_spaces_))
        self.block_names_ = tuple(names)
        self.block_scales_ = block_scales(blocks, weights)

    def _block_codes(self, faces):
        """Metric-normalised codes of each block: the whole face, then each feature."""
        metric = check_metric(self.metric)
        blocks = []
        if self.method == "plda":
            blocks.append(self.feature.encode(faces.images))
        elif self.feature_ is not None:
            blocks.append(metric.encode(self.feature_.transform(faces.images), self.feature_))
        patches = (
            feature_patches(self.detector, faces, self.face_box) if self.feature_spaces_ else {}
        )
        for name, space in self.feature_spaces_.items():
            blocks.append(metric.encode(space.transform(patches[name]), space))
        return blocks

    def _check_relations(self):
        """Its blocks' scales and weights, its features' widths and inputs
        (:func:`~eigenvision._spec.check_model`)."""
        self.check_options()
        image_shape = check_sides(tuple(self.image_shape_), "Encoder.image_shape_", 2)
        if self.shape is not None and tuple(self.shape) != image_shape:
            raise ValueError(f"Encoder.shape {self.shape} differs from image_shape_ {image_shape}")
        scales, names = self.block_scales_, self.block_names_
        if scales.shape != (len(names),) or not np.all(scales > 0):
            raise ValueError("Encoder.block_scales_ must be > 0, one per block")
        share = (1.0 - self.global_weight) if self.method == "combined" else 1.0
        face_weight = self.global_weight if self.method == "combined" else 1.0
        features = sum(name != WHOLE_FACE for name in names)
        weightless = np.array(
            [(face_weight if name == WHOLE_FACE else share / features) == 0 for name in names]
        )
        if not np.array_equal(np.isinf(scales), weightless):
            raise ValueError(
                "Encoder.block_scales_ may be infinite only for a block of weight 0 (and "
                f"must be there): blocks {list(names)}, scales {scales.tolist()}"
            )
        if self.method == "plda":
            check_model(self.feature)
            if self.feature_ is not None:
                raise ValueError("Encoder: method='plda' keeps its model in feature, not feature_")
            if tuple(self.feature.shape) != image_shape:
                raise ValueError(
                    f"Encoder: its identity model takes {tuple(self.feature.shape)} crops, "
                    f"not {image_shape}"
                )
        elif self.feature_ is not None:
            check_model(self.feature_)
            if getattr(self.feature_, "n_features_in_", None) != int(np.prod(image_shape)):
                raise ValueError(f"Encoder: its feature does not take {image_shape} images")
        for space in self.feature_spaces_.values():
            check_model(space)
        if self.detector is not None:
            check_model(self.detector)
