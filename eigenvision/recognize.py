"""Recognition by nearest neighbour in component space: identify, verify, enrol.

A :class:`Recognizer` composes a feature (an eigenspace) and a
:class:`~eigenvision.NearestNeighbor` classifier over a gallery of codes, in
the spirit of bytefish/facerec's feature + classifier; the distances are
:data:`eigenvision.neighbors.METRICS`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import get_tags

from ._base import check_fitted
from ._spec import Param, State, check_params
from .bayesian import BayesianSpace
from .eigenspace import Eigenspace
from .evaluate import recognition_rate
from .faces.crops import FINDER, align_face, photo_faces
from .fisher import FisherSpace
from .identity import IdentityModel
from .imageset import ImageSet, as_image_set
from .neighbors import METRICS, NearestNeighbor, check_metric, squared_distances
from .openset import (
    SCORE_NORMS,
    Verification,
    best_per_class,
    calibrated_threshold,
    class_distances,
    normalized,
    reject_unknown,
    znorm_statistics,
)
from .transform import DEFAULT_EYE_POSITIONS
from .views import resized, view_count, virtual_views

__all__ = ["METHODS", "Recognizer"]

#: The recognition methods (presets of the feature a :class:`Recognizer` builds).
METHODS = ("eigenfaces", "fisherfaces", "bayesian", "modular", "combined", "plda")
_GLOBAL = "face"  # name of the whole-face block in block_names_


class Recognizer(ClassifierMixin, BaseEstimator):
    """Face (or any object) recognition by nearest neighbour in an eigenspace.

    Parameters
    ----------
    n_components : int or float, default 20
        Eigenspace size (for ``"fisherfaces"``: discriminant directions,
        at most classes - 1; for ``"bayesian"``: intrapersonal components;
        None means all).
    method : {"eigenfaces", "fisherfaces", "bayesian", "modular", "combined", "plda"}, \
default "eigenfaces"
        The feature: :class:`Eigenspace` of the whole face (Turk & Pentland
        1991), :class:`FisherSpace` (Belhumeur et al. 1997),
        :class:`BayesianSpace` (whitened intrapersonal codes, whose nearest
        neighbour is the maximum-likelihood match of Moghaddam, Jebara &
        Pentland 2000; :meth:`match_probability` and :meth:`verify` give
        their MAP similarity), one eigenspace
        per facial feature ("eigenfeatures": the eyes, nose and mouth cut by
        ``detector``; Pentland, Moghaddam & Starner 1994), or both whole
        face and features ("combined"). The presets of ``feature``.
        ``"plda"``: a trained :class:`~eigenvision.IdentityModel` (``feature``,
        e.g. :func:`~eigenvision.default_identity_model`, trained on other
        people) is the background and is never refitted: :meth:`fit` and
        :meth:`add` only enrol, so one photo per person works; distances are
        minus its log-likelihood ratio of one person (Prince & Elder 2007),
        so thresholds may be negative, and :meth:`match_probability` and
        :meth:`verify` give its calibrated probability. Images are crops as
        the model was trained on (with ``finder``, photos are cut so).
    feature : subspace model, optional
        Any unfitted model with ``fit`` and ``transform`` (an
        :class:`Eigenspace`, :class:`FisherSpace`, :class:`KernelPCA`,
        :class:`ProbabilisticPCA`, ...) to use as the whole-face feature
        instead of ``method``'s preset; it is cloned, then fitted on the
        training images (with their labels when it needs them). Not with
        ``method="modular"``, which has no whole-face feature. With
        ``method="plda"``: a trained :class:`~eigenvision.IdentityModel`,
        used as it is (shared by clones, never refitted).
    metric : {"euclidean", "cosine", "mahalanobis"}, default "euclidean"
        Distance between codes, one of :data:`eigenvision.neighbors.METRICS`.
        ``"cosine"`` is ``1 - cos`` (angle between codes);
        ``"mahalanobis"`` is Euclidean on whitened codes (each component
        divided by its standard deviation; features with
        ``explained_variance_``, e.g. eigenspaces).
    k : int, default 1
        Neighbours voting in :meth:`predict` (majority; ties go to the
        nearest).
    threshold : float, optional
        Probes whose nearest distance exceeds it are :data:`UNKNOWN`;
        :meth:`calibrate_threshold` picks one from data.
    score_norm : {None, "znorm", "tnorm"}, default None
        What the threshold compares (:mod:`eigenvision.openset`): the raw
        distance to the named person, or that distance in impostor standard
        deviations, by person (``"znorm"``: the other enrolled people's
        distances to them) or by probe (``"tnorm"``: the probe's distances to
        the other enrolled people). The names (nearest neighbours) are the
        same either way; :meth:`verify`, :meth:`predict` and
        :meth:`calibrate_threshold` decide on the normalised value.
    shape : (H, W), optional
        Working resolution: every image (training, enrolled, probe) is
        resized to it first. Lower resolutions smooth away pixel noise.
    mirror : bool, default False
        Also train on and enrol each image's left-right mirror image, a
        free second view of a roughly symmetric face.
    jitter : int, default 0
        Also train on and enrol 8 copies of each image (and of its mirror)
        translated by ``jitter`` pixels in x, y or both, edges replicated
        (at the working resolution). Virtual views that model the
        localisation error of the crop, the error eigenfaces are most
        sensitive to (Martinez 2002, Recognizing imprecisely localized,
        partially occluded and expression variant faces from a single sample
        per class, IEEE TPAMI 24(6)). The gallery grows 9-fold.
    resize : bool, default False
        Without ``shape``: resize probes of another size than the training
        images (otherwise a clear error).
    chunk_size : int, default 1024
        Gallery chunk of the exact search (:class:`NearestNeighbor`).
    detector : FeatureDetector, optional
        A fitted :class:`~eigenvision.FeatureDetector`; required by
        ``"modular"`` and ``"combined"``. It cuts the feature patches at the
        images' landmarks when an ImageSet has them, else where it locates
        the features (the whole image taken as the face box).
    modular_components : int, optional
        Components per feature eigenspace (default ``n_components``).
    global_weight : float, default 0.5
        ``"combined"``: share of the whole face in the fused distance.
    face_box : (x, y, w, h), optional
        Where the face (brows to chin, see :func:`~eigenvision.face_box`)
        lies in every image at the working resolution, for locating the
        features; default the whole image. For a cropped set such as AT&T
        (92 x 112, head and shoulders) about ``(10, 34, 72, 75)``.
    finder : FaceFinder, optional
        Work on uncropped photos: every method that takes images (:meth:`fit`,
        :meth:`add`, :meth:`predict`, :meth:`score`, :meth:`kneighbors`,
        :meth:`verify`, :meth:`calibrate_threshold`, ...) takes photos with
        one face each (:func:`~eigenvision.single_face`: none or several is
        an error; a list, or an array whose first axis runs over photos),
        cut it on its eyes to ``aligned_shape``
        (:func:`~eigenvision.align_face`); :meth:`identify` names every face
        of a photo.
    aligned_shape : (H, W), default (56, 46)
        The canonical crop of photo faces (with ``finder``).
    verbose : bool, default False
        Show progress while photos are searched for faces (seconds each).

    Notes
    -----
    Modular and combined distances fuse blocks (the whole face, each
    feature) by one rule: each block's codes are divided by that block's
    root-mean-square distance between training images (so every block has
    unit typical distance) and by the square root of its weight, and
    concatenated. The Euclidean distance between concatenations is then
    ``d^2 = w_face d_face^2 / s_face^2 + sum_f w_f d_f^2 / s_f^2`` with
    ``w_face = global_weight`` and the features sharing the rest equally
    (all of it for ``"modular"``), and the exact search runs unchanged.

    Attributes
    ----------
    feature_ : fitted subspace model or None
        The whole-face feature (None for ``"modular"``, and for ``"plda"``,
        whose trained model is ``feature`` itself).
    feature_spaces_ : dict of str to Eigenspace
        ``"modular"``/``"combined"``: one eigenspace per facial feature.
    block_names_ : tuple of str
    block_scales_ : (n_blocks,) ndarray
        Divisor of each block's codes (RMS training distance over the
        square root of the block's weight).
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

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("real", 0, 100_000, open_low=True, optional=True),
        "method": Param("choice", choices=METHODS),
        "feature": Param("model", optional=True),
        "metric": Param("choice", choices=tuple(METRICS)),
        "k": Param("int", 1, 1000),
        "threshold": Param("real", optional=True),
        "score_norm": Param("choice", choices=SCORE_NORMS, optional=True),
        "shape": Param("shape", 1, 4096, optional=True),
        "mirror": Param("bool"),
        "jitter": Param("int", 0, 64),
        "resize": Param("bool"),
        "chunk_size": Param("int", 1, 1 << 24),
        "detector": Param("model", optional=True),
        "modular_components": Param("int", 1, 100_000, optional=True),
        "global_weight": Param("real", 0, 1),
        "face_box": Param("reals", min_length=4, max_length=4, optional=True),
        "finder": replace(FINDER, optional=True),
        "aligned_shape": Param("shape", 1, 4096),
        "verbose": Param("bool"),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "image_shape_": State("shape"),
        "feature_": State("model", optional=True),
        "feature_spaces_": State("models"),
        "block_names_": State("strings"),
        "block_scales_": State(shape=("b",), finite="posinf", low=0),
        "gallery_": State(shape=("n", "q")),
        "gallery_labels_": State(dtypes="biufU", shape=("n",)),
        "classes_": State(dtypes="biufU", shape=("c",)),
        "score_statistics_": State(shape=("c", 2), optional=True),
    }

    def __init__(
        self,
        n_components=20,
        *,
        method="eigenfaces",
        feature=None,
        metric="euclidean",
        k=1,
        threshold=None,
        score_norm=None,
        shape=None,
        mirror=False,
        jitter=0,
        resize=False,
        chunk_size=1024,
        detector=None,
        modular_components=None,
        global_weight=0.5,
        face_box=None,
        finder=None,
        aligned_shape=(56, 46),
        verbose=False,
    ):
        self.n_components = n_components
        self.method = method
        self.feature = feature
        self.metric = metric
        self.k = k
        self.threshold = threshold
        self.score_norm = score_norm
        self.shape = shape
        self.mirror = mirror
        self.jitter = jitter
        self.resize = resize
        self.chunk_size = chunk_size
        self.detector = detector
        self.modular_components = modular_components
        self.global_weight = global_weight
        self.face_box = face_box
        self.finder = finder
        self.aligned_shape = aligned_shape
        self.verbose = verbose

    #: :func:`~eigenvision.evaluate.cross_validate` passes it ImageSets (with landmarks).
    accepts_image_sets = True
    #: Parameters that are fitted resources, shared by clones rather than unfitted.
    _RESOURCES = ("detector", "finder")

    def __sklearn_clone__(self):
        """scikit-learn's ``clone``, keeping ``detector`` and ``finder`` fitted.

        They are trained models the recognizer reads (never refits); cloning
        them unfitted broke ``cross_validate`` and ``GridSearchCV`` for the
        modular methods and for photos.

        Returns
        -------
        Recognizer
            Unfitted, with the same parameters.
        """
        params = self.get_params(deep=False)
        shared = self._RESOURCES + (("feature",) if self.method == "plda" else ())
        return type(self)(
            **{
                name: value if name in shared else clone(value, safe=False)
                for name, value in params.items()
            }
        )

    # ------------------------------------------------------------------ fit
    def fit(self, images, labels=None, *, names=None, on_error="raise"):
        """Train the features on ``images`` and enrol them with ``labels``.

        The steps: check the options, bring the images to the working
        resolution and add their virtual views (:meth:`_training_set`), fit
        the whole-face and per-feature spaces (:meth:`_fit_features`), weigh
        the blocks (:meth:`_fit_block_scales`), enrol the codes.

        Parameters
        ----------
        images : (n, H, W) ndarray or ImageSet
            An ImageSet brings its own labels (and landmarks, where the
            modular methods cut the features).
        labels : (n,) array-like, optional
        names : (n,) sequence of str, optional
            With ``finder``: how messages name the photos (their files).
        on_error : {"raise", "skip"}, default "raise"
            With ``finder``: a photo without its one face stops the training,
            or is left out with a warning naming it
            (:func:`~eigenvision.faces.crops.photo_faces`).

        Returns
        -------
        self
        """
        self.check_parameters()
        self.check_component_count(images)  # before the face search of photos (s each)
        faces = self._from_photos(
            images, labels, min_images=2, labelled=True, names=names, on_error=on_error
        )
        if self.finder is not None:
            self.check_component_count(faces.images)  # photos may have been left out
        faces = self._training_set(faces)
        self.image_shape_ = faces.image_shape
        self._fit_features(faces)
        blocks = self._block_codes(faces)
        self._fit_block_scales(blocks)
        self.gallery_ = self._join(blocks)
        self.gallery_labels_ = faces.labels
        self.classes_ = np.unique(faces.labels)
        self._fit_score_norm()
        return self

    def _fit_score_norm(self):
        """Each enrolled person's impostor statistics (``"znorm"``), from the gallery itself."""
        self.score_statistics_ = None
        if self.score_norm == "znorm":
            own = class_distances(
                self._pairwise_codes(self.gallery_, self.gallery_),
                self.gallery_labels_,
                self.classes_,
            )
            self.score_statistics_ = znorm_statistics(own, self.gallery_labels_, self.classes_)

    def _from_photos(
        self,
        images,
        labels=None,
        *,
        min_images=0,
        labelled=False,
        every_face=False,
        names=None,
        on_error="raise",
    ):
        """An ImageSet of the images, or (with ``finder``) of the aligned faces of the photos.

        Enrolment, probes and calibration cut each face the same way
        (:func:`~eigenvision.faces.crops.photo_faces`), so a photo is never
        squashed whole into the face's frame.
        """
        if self.finder is None:
            return as_image_set(images, labels, min_images=min_images)
        if labelled and labels is None and not isinstance(images, ImageSet):
            raise ValueError("labels are required, one per photo")
        shape, eye_positions = self._crop_geometry()
        crops, labels = photo_faces(
            self.finder,
            images,
            labels,
            shape=shape,
            eye_positions=eye_positions,
            every_face=every_face,
            names=names,
            on_error=on_error,
            progress=self.verbose,
        )
        return as_image_set(crops, labels, min_images=min_images)

    def identify(self, photo, *, faces=None):
        """Every face of an uncropped photo with its name (:data:`UNKNOWN` past ``threshold``).

        Parameters
        ----------
        photo : (H, W) or (H, W, 3) ndarray
        faces : list of Face, optional
            The faces to name (say, found at another probability); default
            every face ``finder`` finds at its threshold.

        Returns
        -------
        list of (Face, label, distance)
            In the order of ``faces`` (the finder's: most confident first);
            empty when the photo shows none.
        """
        found, named, decision = self.decide_faces(photo, faces=faces)
        names = self._rejected_as_unknown(named, decision)
        return [
            (face, name, float(distance))
            for face, name, distance in zip(found, names, decision, strict=True)
        ]

    def decide_faces(self, photo, *, faces=None):
        """:meth:`identify` without the threshold: each face's nearest name and its distance.

        Parameters
        ----------
        photo : (H, W) or (H, W, 3) ndarray
        faces : list of Face, optional
            As :meth:`identify`.

        Returns
        -------
        faces : list of Face
        named : (m,) ndarray
            The voted label of each face (as :meth:`decide`).
        distances : (m,) ndarray
            The distance ``threshold`` judges.
        """
        check_fitted(self, "gallery_")
        if self.finder is None and faces is None:
            raise ValueError(
                "naming the faces of a photo needs Recognizer(finder=ev.faces.photos."
                "default_finder()) or the faces to name (faces=)"
            )
        found = self.finder.find(photo) if faces is None else list(faces)
        if not found:
            return [], self.gallery_labels_[:0], np.zeros(0)
        shape, eye_positions = self._crop_geometry()
        crops = np.stack(
            [align_face(photo, face, shape=shape, eye_positions=eye_positions) for face in found]
        )
        return (found, *self._decide(self._codes(as_image_set(crops, None, min_images=0))))

    def _crop_geometry(self):
        """``(shape, eye_positions)`` of the crops cut from photos: the identity model's for
        ``"plda"``, else ``aligned_shape`` with the eyes where :func:`align_face` puts them."""
        if self.method == "plda":
            positions = tuple(tuple(float(v) for v in eye) for eye in self.feature.eye_positions)
            return tuple(self.feature.shape), positions
        return tuple(self.aligned_shape), DEFAULT_EYE_POSITIONS

    def check_parameters(self):
        """Raise ``ValueError`` naming a parameter outside ``_params`` or two that disagree.

        ``fit`` and ``load`` call it.

        Returns
        -------
        None
        """
        check_params(self)
        if self.method == "plda":
            self._check_identity_model()
        elif self.score_norm is None and self.threshold is not None and self.threshold < 0:
            raise ValueError(
                f"Recognizer: threshold={self.threshold!r} is below every distance and would call "
                "everyone unknown; a distance threshold is >= 0 (negative ones only with "
                "score_norm), or use calibrate_threshold()"
            )
        metric = check_metric(self.metric)
        if (
            metric.needs_variances
            and self.method in ("fisherfaces", "bayesian")
            and self.feature is None
        ):
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

    def _probe_codes(self, images):
        """Codes of probes as the public methods take them (photos, with ``finder``)."""
        check_fitted(self, "gallery_")
        return self._codes(self._from_photos(images))

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

    def _nearest(self, codes, k):
        """``(distances, indices)`` of the ``k`` nearest enrolled codes of each probe code.

        Exact: the search index (:class:`NearestNeighbor`), or for ``"plda"`` every
        enrolled code scored by the identity model's ratio.
        """
        k = min(k, len(self.gallery_))
        if self.method == "plda":
            distances = self._pairwise_codes(codes, self.gallery_)
            order = np.argsort(distances, axis=1, kind="stable")[:, :k]
            return np.take_along_axis(distances, order, axis=1), order
        distances, indices = self._index().kneighbors(codes, k)
        return self._metric_distance(distances), indices

    def _index(self) -> NearestNeighbor:
        """The search index of ``gallery_``, built on first use and again after it changes."""
        index = getattr(self, "_nn_index", None)
        if index is None or index.raw_gallery_ is not self.gallery_:
            index = NearestNeighbor(chunk_size=self.chunk_size).fit(self.gallery_)
            self._nn_index = index
        return index

    def _metric_distance(self, euclidean):
        """Distances between metric-normalised codes, in the metric's own units."""
        return check_metric(self.metric).from_euclidean(euclidean)

    # --------------------------------------------------------------- queries
    def kneighbors(self, images, k=5, *, return_indices=False):
        """The ``k`` nearest enrolled images of each probe (the lecture's top-15 search).

        Parameters
        ----------
        images : (H, W) or (m, H, W) ndarray or ImageSet
            Probes, at the training size (or any size with ``shape`` or ``resize=True``);
            with ``finder``, uncropped photos of one face each.
        k : int, default 5
            Neighbours to return (at most the gallery's size).
        return_indices : bool, default False

        Returns
        -------
        distances : (m, k) ndarray, nearest first
        labels : (m, k) ndarray
        indices : (m, k) ndarray
            Only with ``return_indices=True``: rows of ``gallery_`` (the
            enrolment order; the copies made by ``jitter`` and ``mirror`` follow
            the originals).
        """
        codes = self._probe_codes(images)
        distances, indices = self._nearest(codes, k)
        result = (distances, self.gallery_labels_[indices])
        return (*result, indices) if return_indices else result

    def predict(self, images):
        """Labels of the probes; :data:`UNKNOWN` beyond ``threshold``.

        Parameters
        ----------
        images : (H, W) or (m, H, W) ndarray or ImageSet
            Probes (see :meth:`kneighbors`).

        Returns
        -------
        (m,) ndarray
            With a threshold set and labels that are not strings, the result
            has dtype object so it can hold :data:`UNKNOWN`.
        """
        return self._rejected_as_unknown(*self._decide(self._probe_codes(images)))

    def decide(self, images):
        """Each probe's name and the distance its threshold judges, without the threshold.

        Parameters
        ----------
        images : (H, W) or (m, H, W) ndarray or ImageSet
            Probes (see :meth:`kneighbors`).

        Returns
        -------
        named : (m,) ndarray
            The voted label (:meth:`predict` without rejection).
        distances : (m,) ndarray
            The nearest distance (with ``score_norm``: the distance to the
            named person, normalised); :meth:`predict` answers
            :data:`UNKNOWN` where it exceeds ``threshold``.
        """
        return self._decide(self._probe_codes(images))

    def _decide(self, codes):
        """``(named, decision)``: each probe's voted label and the distance its threshold judges."""
        distances, indices = self._nearest(codes, self.k)
        named = self._voted(self.gallery_labels_[indices])
        if self.score_norm is None:
            return named, distances[:, 0]
        scores = self._class_scores(codes)
        return named, scores[np.arange(len(codes)), np.searchsorted(self.classes_, named)]

    def _class_scores(self, codes):
        """(m, n_classes) nearest distance to each enrolled person, normalised by ``score_norm``."""
        nearest = class_distances(
            self._pairwise_codes(codes, self.gallery_), self.gallery_labels_, self.classes_
        )
        return normalized(nearest, self.score_norm, self.score_statistics_)

    def _voted(self, labels):
        if self.k == 1:
            return labels[:, 0].copy()
        return np.array([_vote(row) for row in labels[:, : self.k]], dtype=labels.dtype)

    def predict_from_neighbors(self, distances, labels):
        """The decision of :meth:`predict` from :meth:`kneighbors`' output, without searching again.

        Parameters
        ----------
        distances, labels : (m, r) ndarray
            Nearest first, ``r >= k``; only the first ``k`` columns vote.

        Returns
        -------
        (m,) ndarray
            As :meth:`predict`.
        """
        if self.score_norm is not None:
            raise ValueError(
                f"with score_norm={self.score_norm!r} the decision needs the probes' "
                "distances to every enrolled person: call predict(images)"
            )
        named = self._voted(np.asarray(labels))
        return self._rejected_as_unknown(named, np.asarray(distances)[:, 0])

    def _rejected_as_unknown(self, named, decision):
        """``named`` with :data:`UNKNOWN` where ``decision`` exceeds the threshold."""
        return reject_unknown(named, decision, self._checked_threshold())

    def score(self, images, labels):
        """Recognition rate on labelled probes (an :data:`UNKNOWN` answer is wrong).

        scikit-learn's classifier ``score``, so ``cross_val_score`` works.

        Parameters
        ----------
        images : (m, H, W) ndarray or ImageSet
            Probes (see :meth:`kneighbors`).
        labels : (m,) array-like

        Returns
        -------
        float
        """
        check_fitted(self, "gallery_")
        faces = self._from_photos(images, labels, min_images=1, labelled=True)
        return recognition_rate(
            faces.labels, self._rejected_as_unknown(*self._decide(self._codes(faces)))
        )

    def verify(self, image, label) -> Verification:
        """Is ``image`` (H, W) the enrolled ``label``? Uses the nearest image of that label.

        Parameters
        ----------
        image : (H, W) ndarray
            With ``finder``, an uncropped photo of one face ((H, W) or (H, W, 3)).
        label
            An enrolled label.

        Returns
        -------
        Verification
            ``accepted`` when the nearest image of ``label`` lies within
            ``threshold`` (always, without a threshold) and that distance.
        """
        check_fitted(self, "gallery_")
        mask = self.gallery_labels_ == label
        if not mask.any():
            raise ValueError(f"label {label!r} is not enrolled; enrol it with add() first")
        code = self._probe_codes(np.asarray(image)[None])[0].astype(np.float64)
        # A person has a handful of codes: the exact distance directly, no index needed.
        distance = float(self._pairwise_codes(code[None], self.gallery_[mask]).min())
        if self.score_norm is not None:
            scores = self._class_scores(code[None])
            distance = float(scores[0, np.searchsorted(self.classes_, label)])
        threshold = self._checked_threshold()
        probability = None
        if self.method == "plda":
            probability = float(self.feature.probability(-distance))
        elif self._probability_ready():
            difference = self.gallery_[mask].astype(np.float64) - code
            probability = float(self.feature_.probability(self.feature_.log_odds(difference).max()))
        return Verification(
            threshold is None or distance <= threshold, distance, threshold, probability
        )

    @property
    def _odds_model(self):
        """The model whose log odds and probability of one person the codes have."""
        return self.feature if self.method == "plda" else self.feature_

    def _probability_ready(self, *, required=False):
        """Whether codes have a probability of one person: bayesian (Euclidean) or plda."""
        ready = self.method == "plda" or (
            hasattr(self.feature_, "log_odds")
            and not self.feature_spaces_
            and self.metric == "euclidean"
        )
        if required and not ready:
            raise ValueError(
                "match probabilities need method='bayesian' with metric='euclidean', or 'plda' "
                f"(got method={self.method!r}, metric={self.metric!r})"
            )
        return ready

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

    def _pairwise_codes(self, codes_a, codes_b):
        """Metric distances between every pair of (metric-normalised) codes."""
        if self.method == "plda":
            return -self.feature.pairwise_log_odds(codes_a, codes_b)
        return self._metric_distance(np.sqrt(squared_distances(codes_a, codes_b)))

    def pairwise_log_odds(self, images_a, images_b=None):
        """``log P(same) / P(different)`` of every pair of two sets of images (``"bayesian"``).

        Parameters
        ----------
        images_a : (m, H, W) ndarray or ImageSet
        images_b : (n, H, W) ndarray or ImageSet, optional
            Default ``images_a``.

        Returns
        -------
        (m, n) ndarray
            The MAP similarity's log odds (:meth:`BayesianSpace.log_odds`).
        """
        codes_a = self._probe_codes(images_a)
        self._probability_ready(required=True)
        codes_b = codes_a if images_b is None else self._probe_codes(images_b)
        return self._odds_model.pairwise_log_odds(codes_a, codes_b)

    def match_probability(self, images, *, log_odds=False):
        """``P(same person | difference)`` of each probe and each enrolled person.

        The MAP similarity (Moghaddam, Jebara & Pentland 2000) of the
        probe's best-matching enrolled image of each person; for
        ``method="bayesian"`` with the Euclidean metric. Each entry answers
        "is the probe this person?" on its own: rows need not sum to 1, and
        a row of small values says "none of them".

        Parameters
        ----------
        images : (H, W) or (m, H, W) ndarray or ImageSet
            Probes (see :meth:`kneighbors`).
        log_odds : bool, default False
            Return ``log P(same) / P(different)`` instead of the probability
            (it keeps its resolution where the probability rounds to 0 or 1).

        Returns
        -------
        (m, n_classes) ndarray
            Columns in the order of ``classes_``.
        """
        codes = self._probe_codes(images)
        self._probability_ready(required=True)
        pairwise = self._odds_model.pairwise_log_odds(codes, self.gallery_)
        best = best_per_class(pairwise, self.gallery_labels_, self.classes_)
        return best if log_odds else self._odds_model.probability(best)

    def _checked_threshold(self):
        """``threshold`` as a float (None: no rejection), refused outside its declaration."""
        if not self._params["threshold"].accepts(self.threshold):
            raise ValueError(
                f"threshold must be a number or None, got {self.threshold!r}; "
                "calibrate_threshold() picks one from data"
            )
        return None if self.threshold is None else float(self.threshold)

    def add(self, images, labels=None, *, names=None, on_error="raise"):
        """Enrol images (new people or new views) without refitting the features.

        Parameters
        ----------
        images : (n, H, W) ndarray or ImageSet
            At the training images' size (or any size with ``shape`` or
            ``resize=True``); they get the same virtual views as training.
        labels : (n,) array-like, optional
            Of the same kind as the enrolled ones; an ImageSet brings its own.
        names, on_error
            With ``finder``: as in :meth:`fit`.

        Returns
        -------
        self
        """
        check_fitted(self, "gallery_")
        faces = self._from_photos(
            images, labels, min_images=1, labelled=True, names=names, on_error=on_error
        )
        faces = self._training_set(faces)
        codes = self._codes(faces)
        if faces.labels.dtype.kind != self.gallery_labels_.dtype.kind:
            raise ValueError(
                f"labels of dtype {faces.labels.dtype} do not match the enrolled "
                f"{self.gallery_labels_.dtype}; use labels of the same kind"
            )
        self.gallery_ = np.vstack([self.gallery_, codes.astype(self.gallery_.dtype)])
        self.gallery_labels_ = np.concatenate([self.gallery_labels_, faces.labels])
        self.classes_ = np.unique(self.gallery_labels_)
        self._fit_score_norm()
        return self

    def calibrate_threshold(self, images, labels=None, *, far: float = 0.01) -> float:
        """Set ``threshold`` so that at most ``far`` of impostor probes are accepted.

        Impostors are probes whose label is not enrolled; their nearest
        distance is what a threshold must reject. Returns the threshold.

        Parameters
        ----------
        images : (m, H, W) ndarray or ImageSet
            Probes; those whose label is not enrolled are the impostors.
            With ``finder``, uncropped photos: every face the finder finds
            in a photo counts, with the photo's label (the faces
            :meth:`identify` will name), and a photo without one adds none.
        labels : (m,) array-like or None
            Their labels (an ImageSet brings its own).
        far : float, default 0.01
            False-accept rate to allow, in ``[0, 1)``.

        Returns
        -------
        float
            The new ``threshold``.
        """
        if not (isinstance(far, Real) and 0.0 <= far < 1.0):
            raise ValueError(f"far must lie in [0, 1), got {far!r}")
        check_fitted(self, "gallery_")
        faces = self._from_photos(
            images, labels, labelled=True, every_face=True, min_images=int(self.finder is None)
        )  # photos may show none
        impostor = ~np.isin(faces.labels, self.gallery_labels_)
        if not impostor.any():
            raise ValueError(
                "calibration needs impostor probes: images (with a finder, faces "
                "found in photos) of people who are not enrolled"
            )
        _, decision = self._decide(self._codes(faces[impostor]))
        self.threshold = calibrated_threshold(decision, far)
        return self.threshold


def _vote(labels):
    counts = Counter(labels.tolist())
    top = max(counts.values())
    return next(label for label in labels.tolist() if counts[label] == top)
