"""How a recogniser turns images into codes: the whole-face feature, eigenfeatures, their fusion.

:class:`CodesMixin` holds the feature half of :class:`~eigenvision.Recognizer`:
which subspace model each method trains (``feature`` or a preset), one
eigenspace per facial feature for the modular methods, the weights that fuse
their codes into one vector (the recognizer's Notes), and the metric the codes
are compared in (:data:`eigenvision.neighbors.METRICS`). The nearest-neighbour
search and the open-set decision (:mod:`eigenvision.openset`) read the codes
it gives.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import get_tags

from ._base import check_fitted, kept_on
from .bayesian import BayesianSpace
from .eigenspace import Eigenspace
from .fisher import FisherSpace
from .identity import IdentityModel, centred_on, centring_shift
from .neighbors import METRICS, check_metric, squared_distances
from .views import resized, view_count, virtual_views

__all__ = ["CodesMixin", "allowed_metrics"]

_GLOBAL = "face"  # name of the whole-face block in block_names_


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


class CodesMixin:
    """The feature half of :class:`~eigenvision.Recognizer`: images to fused, metric-ready codes.

    Reads the recognizer's parameters (``method``, ``feature``, ``metric``,
    ``shape``, ``mirror``, ``jitter``, ``detector``, ...) and sets its fitted
    ``feature_``, ``feature_spaces_``, ``block_names_`` and ``block_scales_``.
    """

    def _check_feature_options(self):
        """Refuse a feature, metric and detector that do not go together (``check_parameters``)."""
        if self.method == "plda":
            self._check_identity_model()
        check_metric(self.metric)
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
        if self._modular and (self.detector is None or not hasattr(self.detector, "spaces_")):
            raise ValueError(
                f"method={self.method!r} needs a fitted FeatureDetector: "
                "Recognizer(method=..., detector=FeatureDetector().fit(load_imm()))"
            )

    def check_component_count(self, images, *, option=None):
        """Refuse more eigenspace components than the images and their virtual views give.

        :meth:`fit` calls it first, before the face search of photos (seconds each).

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

    def _check_identity_model(self):
        """``"plda"`` needs a trained identity model as ``feature``, compared by its own ratio."""
        if not isinstance(self.feature, IdentityModel) or not hasattr(self.feature, "plda_"):
            raise ValueError(
                "method='plda' needs a trained IdentityModel as feature: "
                "Recognizer(method='plda', feature=ev.default_identity_model())"
            )
        if self.metric != "euclidean" or self.score_norm is not None:
            raise ValueError(
                "method='plda' compares faces by the identity model's log-likelihood ratio: "
                f"leave metric='euclidean' and score_norm=None (got {self.metric!r}, "
                f"{self.score_norm!r})"
            )

    @property
    def _modular(self):
        return self.method in ("modular", "combined")

    def _training_set(self, faces):
        """The training images at the working resolution, with their virtual views."""
        if not self._modular:
            faces = faces.replace(landmarks=None)
        return self._augmented(self._working_resolution(faces))

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
        if self._modular:
            k = self.n_components if self.modular_components is None else self.modular_components
            for name, patches in self._patches(faces).items():
                self.feature_spaces_[name] = Eigenspace(n_components=k).fit(patches)

    def _fit_block_scales(self, blocks):
        """Divisors that give each block (whole face, features) its share of the distance."""
        if not self._modular:
            self.block_names_ = (_GLOBAL,)
            self.block_scales_ = np.ones(1)
            return
        names, weights = [], []
        if self.feature_ is not None:
            names.append(_GLOBAL)
            weights.append(self.global_weight)
        share = (1.0 - self.global_weight) if self.method == "combined" else 1.0
        for name in self.feature_spaces_:
            names.append(name)
            weights.append(share / len(self.feature_spaces_))
        spread = np.array(
            [np.sqrt(2 * np.mean(np.sum((b - b.mean(0)) ** 2, axis=1))) for b in blocks]
        )
        weights = np.asarray(weights)
        self.block_names_ = tuple(names)
        self.block_scales_ = np.where(
            weights > 0, spread / np.sqrt(np.where(weights > 0, weights, 1)), np.inf
        )

    def _join(self, blocks):
        """Concatenate block codes, each divided by its scale (see Notes)."""
        if len(blocks) == 1 and self.block_scales_[0] == 1:
            return blocks[0]
        return np.hstack(
            [b / b.dtype.type(scale) for b, scale in zip(blocks, self.block_scales_, strict=True)]
        )

    def _patches(self, faces):
        """``{feature: (n, h, w)}`` patches of every face, at its landmarks or where located."""
        detector = self.detector
        cut = {f: [] for f in detector.features_}
        for i, image in enumerate(faces.images):
            positions = None
            if faces.landmarks and all(f in faces.landmarks for f in detector.features_):
                positions = {f: faces.landmarks[f][i] for f in detector.features_}
            found = detector.patches(image, box=self.face_box, locations=positions)
            for f, patch in found.items():
                cut[f].append(patch)
        return {f: np.stack(v) for f, v in cut.items()}

    def _codes_for_metric(self, codes, space):
        return check_metric(self.metric).encode(codes, space)

    def _working_resolution(self, faces):
        return faces if self.shape is None else resized(faces, tuple(self.shape))

    def _augmented(self, faces):
        """The faces with their translated copies (``jitter``), then all mirrored (``mirror``)."""
        return virtual_views(faces, jitter=self.jitter, mirror=self.mirror)

    def _block_codes(self, faces):
        """Metric-normalised codes of each block: the whole face, then each feature."""
        blocks = []
        if self.method == "plda":
            blocks.append(self.feature.encode(faces.images))
        elif self.feature_ is not None:
            codes = self.feature_.transform(faces.images)
            blocks.append(self._codes_for_metric(codes, self.feature_))
        patches = self._patches(faces) if self.feature_spaces_ else {}
        for name, space in self.feature_spaces_.items():
            blocks.append(self._codes_for_metric(space.transform(patches[name]), space))
        return blocks

    def _codes(self, faces):
        """Codes of face images (an ImageSet), brought to the trained size."""
        faces = self._working_resolution(faces)
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
        return self._join(self._block_codes(faces))

    def _pairwise_codes(self, codes_a, codes_b):
        """Metric distances between every pair of (metric-normalised) codes."""
        if self.method == "plda":
            gallery = codes_b is getattr(self, "gallery_", None)
            statistics = self._gallery_statistics() if gallery else None
            return -self.feature.pairwise_log_odds(codes_a, codes_b, statistics_b=statistics)
        return self._metric_distance(np.sqrt(squared_distances(codes_a, codes_b)))

    def centre_on_gallery(self):
        """Centre the identity model's codes on the enrolled faces (``method="plda"``).

        The enrolled faces stand in for the photos to come:
        ``feature`` becomes :func:`~eigenvision.identity.centred_on` of it by
        the gallery's codes (nothing is encoded again) and the gallery's codes
        move with it, so the recognizer answers as one fitted with the centred
        model would. Faces enrolled later are encoded by the centred model.
        With a few people, centring centres on them: enrol many first.

        Returns
        -------
        self
        """
        if self.method != "plda":
            raise ValueError(
                f"centre_on_gallery centres the identity model of method='plda', not "
                f"method={self.method!r}"
            )
        check_fitted(self, "gallery_")
        gallery = np.asarray(self.gallery_, dtype=np.float64)
        shift = centring_shift(self.feature, gallery)  # a fused model's descriptions stay put
        self.feature = centred_on(self.feature, codes=gallery)
        self.gallery_ = (gallery - shift).astype(self.gallery_.dtype)
        return self

    def _gallery_statistics(self):
        """The identity model's cohort statistics of ``gallery_``, kept between queries.

        Computed again when the gallery (enrolment makes a new array) or the
        identity model's state they read changes; None without a cohort.
        """
        model = self.feature
        # the cohort in pair coordinates, or its codes in files from before them
        cohort = (getattr(model, "cohort_coordinates_", None), getattr(model, "cohort_", None))
        if all(part is None for part in cohort):
            return None
        inputs = (self.gallery_, model.plda_, *cohort, getattr(model, "cohort_scale_", None))
        return kept_on(
            self,
            "gallery_statistics",
            (*inputs, model.cohort_top),
            lambda: model.cohort_statistics(self.gallery_),
        )

    def _metric_distance(self, euclidean):
        """Distances between metric-normalised codes, in the metric's own units."""
        return check_metric(self.metric).from_euclidean(euclidean)

    def pairwise_distances(self, images_a, images_b=None):
        """Distances (in the metric's units) between every pair of two sets of images.

        For verification protocols (every pair of a set: ``images_b=None``)
        and for comparing faces neither of which is enrolled.

        Parameters
        ----------
        images_a : (m, H, W) ndarray or ImageSet
        images_b : (n, H, W) ndarray or ImageSet, optional
            Default ``images_a``.

        Returns
        -------
        (m, n) ndarray
        """
        codes_a = self._probe_codes(images_a)
        return self._pairwise_codes(
            codes_a, codes_a if images_b is None else self._probe_codes(images_b)
        )
