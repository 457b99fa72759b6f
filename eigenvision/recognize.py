"""Recognition by nearest neighbour in component space: identify, verify, enrol.

A :class:`Recognizer` composes a feature (an eigenspace) and a
:class:`~eigenvision.NearestNeighbor` classifier over a gallery of codes, in
the spirit of bytefish/facerec's feature + classifier; the distances are
:data:`eigenvision.neighbors.METRICS`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from ._base import check_fitted, counted, kept_on
from ._errors import AlreadyEnrolledWarning
from ._spec import Param, State, check_model, check_params, check_sides
from .codes import CodesMixin
from .evaluate import recognition_rate
from .faces.crops import FINDER, PhotoFacesMixin
from .neighbors import METRICS, NearestNeighbor
from .openset import SCORE_NORMS, OpenSetMixin

__all__ = ["METHODS", "Recognizer"]

#: The recognition methods (presets of the feature a :class:`Recognizer` builds).
METHODS = ("eigenfaces", "fisherfaces", "bayesian", "modular", "combined", "plda")


class Recognizer(PhotoFacesMixin, OpenSetMixin, CodesMixin, ClassifierMixin, BaseEstimator):
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
        ``"plda"``: a trained :class:`~eigenvision.IdentityModel` (``feature``)
        is the background, never refitted (:meth:`fit` and :meth:`add` only
        enrol); distances are minus its score, the log-likelihood ratio
        (Prince & Elder 2007) normalised against its cohort, so thresholds
        may be negative.
    feature : subspace model, optional
        Any unfitted model with ``fit`` and ``transform`` (an
        :class:`Eigenspace`, :class:`FisherSpace`, :class:`KernelPCA`,
        :class:`ProbabilisticPCA`, ...) to use as the whole-face feature
        instead of ``method``'s preset; it is cloned, then fitted on the
        training images (with their labels when it needs them). Not with
        ``method="modular"``, which has no whole-face feature. With
        ``method="plda"``: a trained :class:`~eigenvision.IdentityModel`,
        used as it is (shared by clones, never refitted); default the shipped
        one (:func:`~eigenvision.default_identity_model`). Its faces are its
        own crops: images of another size (face crops cut another way, AT&T's
        112 x 92) are cut again on the eyes of the shipped finder's likeliest
        face of each (:func:`~eigenvision.faces.compare.identity_crops`).
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
        (at the working resolution): virtual views of the crop's
        localisation error (Martinez 2002, IEEE TPAMI 24(6)). The gallery
        grows 9-fold.
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
        on_error : {"raise", "skip"} or callable, default "raise"
            With ``finder``: a photo without its one face stops the training,
            or is left out with a warning naming it, or is told to the callable
            (:func:`~eigenvision.faces.crops.photo_faces`).

        Returns
        -------
        self
        """
        if self.method == "plda" and self.feature is None:
            # the shipped model, a resource (never fitted); imported here: loading a model file
            # needs this class (persist imports recognize), so the loader cannot come first
            from .faces.compare import default_identity_model

            self.feature = default_identity_model()
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

    def _from_photos(self, images, labels=None, **options):
        """:meth:`PhotoFacesMixin._from_photos`; for ``"plda"`` without a finder, face images of
        another size than the identity model's crops are cut again for it."""
        faces = super()._from_photos(images, labels, **options)
        if (
            self.method == "plda"
            and self.finder is None
            and len(faces)
            and faces.image_shape != tuple(self.feature.shape)
        ):
            from .faces.compare import identity_crops  # as above: the finder is a model file

            faces = identity_crops(faces, self.feature)
        return faces

    def check_parameters(self):
        """Raise ``ValueError`` naming a parameter outside ``_params`` or two that disagree.

        ``fit`` and ``load`` call it.

        Returns
        -------
        None
        """
        check_params(self)
        if self.method != "plda" and (
            self.score_norm is None and self.threshold is not None and self.threshold < 0
        ):
            raise ValueError(
                f"Recognizer: threshold={self.threshold!r} is below every distance and would call "
                "everyone unknown; a distance threshold is >= 0 (negative ones only with "
                "score_norm), or use calibrate_threshold()"
            )
        self._check_feature_options()

    def _probe_codes(self, images):
        """Codes of probes as the public methods take them (photos, with ``finder``)."""
        check_fitted(self, "gallery_")
        return self._codes(self._from_photos(images))

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
        return kept_on(
            self,
            "index",
            (self.gallery_, self.chunk_size),
            lambda: NearestNeighbor(chunk_size=self.chunk_size).fit(self.gallery_),
        )

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

    def _enrolled_again(self, codes, labels) -> np.ndarray:
        """``(m,)`` bool: each code equal to an enrolled code of the same label (the same image
        enrolled again), up to float32 round-off of codes computed in another batch."""
        if len(codes) == 0:
            return np.zeros(0, dtype=bool)
        distances, nearest = self._index().kneighbors(codes.astype(self.gallery_.dtype), 1)
        scale = np.sqrt(np.mean(np.sum(self.gallery_.astype(np.float64) ** 2, axis=1)))
        scale += np.finfo(np.float64).tiny
        same_label = self.gallery_labels_[nearest[:, 0]] == labels
        return (distances[:, 0] <= 1e-5 * scale) & same_label

    def add(self, images, labels=None, *, names=None, on_error="raise"):
        """Enrol images (new people or new views) without refitting the features.

        An image enrolled already under the same label (its codes equal to
        enrolled ones up to float32 round-off) is not added again: enrolling
        a folder twice leaves the gallery as once, with an
        :class:`AlreadyEnrolledWarning` saying how many were left out.

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
        again = self._enrolled_again(codes, faces.labels)
        if again.any():
            warnings.warn(
                AlreadyEnrolledWarning(
                    f"{int(again.sum())} of the {counted(len(codes), 'code')} repeat images "
                    "enrolled already under the same label; left out"
                ),
                stacklevel=2,
            )
            codes, labels = codes[~again], faces.labels[~again]
        else:
            labels = faces.labels
        self.gallery_ = np.vstack([self.gallery_, codes.astype(self.gallery_.dtype)])
        self.gallery_labels_ = np.concatenate([self.gallery_labels_, labels])
        self.classes_ = np.unique(self.gallery_labels_)
        self._fit_score_norm()
        return self

    def _check_relations(self):
        """Its gallery's codes as wide as its features give, its blocks' scales, its parts
        (:func:`~eigenvision._spec.check_model`)."""
        self.check_parameters()
        statistics = getattr(self, "score_statistics_", None)
        if self.score_norm == "znorm" and (statistics is None or not np.all(statistics[:, 1] > 0)):
            raise ValueError(
                "Recognizer.score_statistics_ must be (n_classes, 2), std > 0, for znorm"
            )
        image_shape = check_sides(tuple(self.image_shape_), "Recognizer.image_shape_", 2)
        if self.shape is not None and tuple(self.shape) != image_shape:
            raise ValueError(
                f"Recognizer.shape {self.shape} differs from image_shape_ {image_shape}"
            )
        gallery = self.gallery_
        if len(gallery) == 0:
            raise ValueError("Recognizer.gallery_ is empty")
        scales = self.block_scales_
        if scales.shape != (len(self.block_names_),) or not np.all(scales > 0):
            raise ValueError("Recognizer.block_scales_ must be > 0, one per block")
        names = self.block_names_
        share = (1.0 - self.global_weight) if self.method == "combined" else 1.0
        face_weight = self.global_weight if self.method == "combined" else 1.0
        features = sum(name != "face" for name in names)
        weightless = np.array(
            [(face_weight if name == "face" else share / features) == 0 for name in names]
        )
        if not np.array_equal(np.isinf(scales), weightless):
            raise ValueError(
                "Recognizer.block_scales_ may be infinite only for a block of weight 0 (and "
                f"must be there): blocks {list(names)}, scales {scales.tolist()}"
            )
        width = 0
        if self.method == "plda":
            identity = self.feature  # check_parameters: a trained IdentityModel
            check_model(identity)
            if self.feature_ is not None:
                raise ValueError(
                    "Recognizer: method='plda' keeps its model in feature, not feature_"
                )
            if tuple(identity.shape) != image_shape:
                raise ValueError(
                    f"Recognizer: its identity model takes {tuple(identity.shape)} crops, "
                    f"not {image_shape}"
                )
            width += identity.code_width()
        elif self.feature_ is not None:
            check_model(self.feature_)
            if getattr(self.feature_, "n_features_in_", None) != int(np.prod(image_shape)):
                raise ValueError(f"Recognizer: its feature does not take {image_shape} images")
            width += self.feature_.n_components_
        for space in self.feature_spaces_.values():
            check_model(space)
            width += space.n_components_
        if gallery.shape[1] != width:
            raise ValueError(
                f"Recognizer: gallery_ codes have {gallery.shape[1]} dimensions, "
                f"its features give {width}"
            )
        for part in (self.detector, self.finder):
            if part is not None:
                check_model(part)
