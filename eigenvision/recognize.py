"""Recognition by nearest neighbour in component space: identify, verify, enrol.

A :class:`Recognizer` composes its fitted features (an :class:`~eigenvision.codes.Encoder`,
``encoder_``) and a :class:`~eigenvision.NearestNeighbor` search over a gallery of codes, in
the spirit of bytefish/facerec's feature + classifier; the distances are
:data:`eigenvision.neighbors.METRICS`, the open-set decision :mod:`eigenvision.openset`'s
functions over them, and photos are read through :mod:`eigenvision.faces.crops`.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import gen_batches

from ._base import check_fitted, cloned_sharing, counted, kept_on
from ._errors import AlreadyEnrolledWarning
from ._spec import Param, State, check_model, check_params
from .codes import ENCODER_PARAMS, METHODS, Encoder
from .evaluate import recognition_rate
from .faces.crops import FINDER, align_face, identity_faces, model_crop, photo_faces
from .identity import centred_on, centring_shift
from .imageset import ImageSet, as_image_set
from .neighbors import NearestNeighbor
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

__all__ = ["METHODS", "Recognizer"]


def _encoders(name: str, doc: str) -> property:
    """A recognizer's read-only view of its encoder's fitted member ``name``."""
    return property(lambda self: getattr(self.encoder_, name), doc=f"{doc} (The encoder's.)")


#: Enrolled images matched at once by :meth:`Recognizer.gallery_as_strangers` (bounds the
#: (rows, n) distances held).
_GALLERY_ROWS = 1024


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
    encoder_ : Encoder
        The fitted features (:class:`~eigenvision.codes.Encoder`): images to codes. The
        members below up to ``image_shape_`` are its, read through the recognizer.
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
        **ENCODER_PARAMS,
        "k": Param("int", 1, 1000),
        "threshold": Param("real", optional=True),
        "score_norm": Param("choice", choices=SCORE_NORMS, optional=True),
        "chunk_size": Param("int", 1, 1 << 24),
        "finder": replace(FINDER, optional=True),
        "aligned_shape": Param("shape", 1, 4096),
        "verbose": Param("bool"),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "encoder_": State("model"),
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
        return cloned_sharing(
            self, self._RESOURCES + (("feature",) if self.method == "plda" else ())
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
        encoder = self._encoder()
        faces = encoder.training_set(faces)
        self.gallery_ = encoder.fit_transform(faces)
        self.encoder_ = encoder
        self.gallery_labels_ = faces.labels
        self.classes_ = np.unique(faces.labels)
        self._fit_score_norm()
        return self

    def _from_photos(self, images, labels=None, **options):
        """:meth:`_faces_from_photos`; for ``"plda"`` without a finder, face images of
        another size than the identity model's crops are cut again for it."""
        faces = self._faces_from_photos(images, labels, **options)
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
        if self.method == "plda" and (self.metric != "euclidean" or self.score_norm is not None):
            raise ValueError(
                "method='plda' compares faces by the identity model's log-likelihood ratio: "
                f"leave metric='euclidean' and score_norm=None (got {self.metric!r}, "
                f"{self.score_norm!r})"
            )
        self._encoder().check_options()

    def _encoder(self) -> Encoder:
        """An unfitted :class:`~eigenvision.codes.Encoder` of this recognizer's parameters."""
        return Encoder(**{name: getattr(self, name) for name in ENCODER_PARAMS})

    image_shape_ = _encoders("image_shape_", "``(H, W)``: the size the features take.")
    feature_ = _encoders("feature_", "The fitted whole-face feature, or None.")
    feature_spaces_ = _encoders("feature_spaces_", "One fitted eigenspace per facial feature.")
    block_names_ = _encoders("block_names_", "The blocks of a code: the whole face, the features.")
    block_scales_ = _encoders("block_scales_", "Each block's divisor.")

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
        return self.encoder_.metric_distance(distances), indices

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
        faces = self.encoder_.training_set(faces)
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

    # ------------------------------------------------------------- the codes
    def check_component_count(self, images, *, option=None):
        """:meth:`Encoder.check_component_count <eigenvision.codes.Encoder.check_component_count>`
        of this recognizer's parameters: :meth:`fit` calls it first, before the face search of
        photos (seconds each).

        Parameters
        ----------
        images : sequence
        option : str, optional

        Returns
        -------
        None
        """
        self._encoder().check_component_count(images, option=option)

    def _codes(self, faces):
        """Codes of face images (an ImageSet), brought to the trained size."""
        return self.encoder_.transform(faces)

    def _pairwise_codes(self, codes_a, codes_b):
        """Distances between every pair of codes (the gallery's cohort statistics kept)."""
        gallery = self.method == "plda" and codes_b is getattr(self, "gallery_", None)
        statistics = self._gallery_statistics() if gallery else None
        return self.encoder_.pairwise(codes_a, codes_b, statistics_b=statistics)

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
        self.encoder_.feature = self.feature  # one model, the recognizer's and its encoder's
        self.gallery_ = (gallery - shift).astype(self.gallery_.dtype)
        return self

    def _gallery_statistics(self):
        """The identity model's cohort statistics of ``gallery_``, kept between queries.

        Computed again when the gallery (enrolment makes a new array) or the
        identity model's state they read changes; None without a cohort.
        """
        model = self.feature
        cohort = getattr(model, "cohort_coordinates_", None)
        if cohort is None:
            return None
        inputs = (self.gallery_, model.plda_, cohort, getattr(model, "cohort_scale_", None))
        return kept_on(
            self,
            "gallery_statistics",
            (*inputs, model.cohort_top),
            lambda: model.cohort_statistics(self.gallery_),
        )

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

    # ---------------------------------------------------------- the open set
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

    def _probability_ready(self, *, required=False):
        """Whether codes have a probability of one person: bayesian (Euclidean) or plda."""
        ready = self.encoder_.odds_model is not None
        if required and not ready:
            raise ValueError(
                "match probabilities need method='bayesian' with metric='euclidean', or 'plda' "
                f"(got method={self.method!r}, metric={self.metric!r})"
            )
        return ready

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
        return self.encoder_.odds_model.pairwise_log_odds(codes_a, codes_b)

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
        pairwise = self.encoder_.odds_model.pairwise_log_odds(codes, self.gallery_)
        best = best_per_class(pairwise, self.gallery_labels_, self.classes_)
        return best if log_odds else self.encoder_.odds_model.probability(best)

    def same_person(self, distances):
        """``P(same person)`` of decisions (:meth:`decide`'s distances), where users read one.

        The identity model's decisions (``"plda"``) are minus its normalised
        log-likelihood ratios, negative for good matches: users are shown its
        calibrated probability instead, in the command line, its JSON and the
        app alike. Other methods' distances are shown as they are.

        Parameters
        ----------
        distances : array-like

        Returns
        -------
        ndarray or None
            The probabilities (``"plda"``), else None.
        """
        if self.method != "plda":
            return None
        return self.feature.probability(-np.asarray(distances, dtype=np.float64))

    def distance_at(self, probability: float) -> float:
        """The decision whose :meth:`same_person` is ``probability`` (``"plda"``): a threshold
        chosen as a probability, in the units :attr:`threshold` takes.

        Parameters
        ----------
        probability : float
            In ``(0, 1)``.

        Returns
        -------
        float
        """
        if self.method != "plda":
            raise ValueError("only the identity model's decisions (method='plda') have one")
        if not 0.0 < probability < 1.0:
            raise ValueError(f"probability must lie in (0, 1), got {probability!r}")
        slope, intercept = self.feature.calibration_
        return float(-(np.log(probability / (1.0 - probability)) - intercept) / slope)

    def _checked_threshold(self):
        """``threshold`` as a float (None: no rejection), refused outside its declaration."""
        if not self._params["threshold"].accepts(self.threshold):
            raise ValueError(
                f"threshold must be a number or None, got {self.threshold!r}; "
                "calibrate_threshold() picks one from data"
            )
        return None if self.threshold is None else float(self.threshold)

    def calibrate_threshold(
        self, images=None, labels=None, *, far: float = 0.01, enrolled=None
    ) -> float:
        """Set ``threshold`` so that at most ``far`` of impostor probes are accepted.

        Impostors are probes whose label is not enrolled; the distance the
        decision judges (:meth:`decide`) is what a threshold must reject.
        Without images the enrolled people stand in for them, each one a
        stranger to the others (:meth:`gallery_as_strangers`): photographed
        as the probes will be, which strangers from elsewhere seldom are.
        Only for ``method="plda"``: every other method fits its feature to
        the enrolled people, who then look farther apart than strangers.
        Returns the threshold.

        Parameters
        ----------
        images : (m, H, W) ndarray or ImageSet, optional
            Probes; those whose label is not enrolled are the impostors.
            With ``finder``, uncropped photos: every face the finder finds
            in a photo counts, with the photo's label (the faces
            :meth:`identify` will name), and a photo without one adds none.
            Default (``method="plda"``): the gallery, one person left out at a
            time (at least two people enrolled).
        labels : (m,) array-like or None
            Their labels (an ImageSet brings its own).
        far : float, default 0.01
            False-accept rate to allow, in ``[0, 1)``. With ``m``
            impostors at most ``floor(far m)`` are accepted: a rate below
            ``1 / m`` accepts none of them.
        enrolled : bool, optional
            Count the enrolled people as strangers to each other too
            (``method="plda"``): with images of a few strangers, more
            impostors photographed as the probes are. Default: True without
            images, False with them.

        Returns
        -------
        float
            The new ``threshold``.
        """
        if not (isinstance(far, Real) and 0.0 <= far < 1.0):
            raise ValueError(f"far must lie in [0, 1), got {far!r}")
        check_fitted(self, "gallery_")
        enrolled = images is None if enrolled is None else bool(enrolled)
        if images is None and not enrolled:
            raise ValueError("calibration needs images of strangers, or enrolled=True")
        if images is None and labels is not None:
            raise ValueError("labels were given without images: pass the images they label")
        if enrolled and self.method != "plda":
            raise ValueError(
                f"method={self.method!r} fits its feature to the enrolled people, who then "
                "look farther apart than strangers do: calibrating on them lets strangers "
                "in. Pass images of strangers, or use method='plda' (a model trained on "
                "other people), which calibrates on the enrolled people without images"
            )
        decisions = [self.gallery_as_strangers()] if enrolled else []
        if images is not None:
            faces = self._from_photos(
                images, labels, labelled=True, every_face=True, min_images=int(self.finder is None)
            )  # photos may show none
            impostor = ~np.isin(faces.labels, self.gallery_labels_)
            if not impostor.any():
                raise ValueError(
                    "calibration needs impostor probes: images (with a finder, faces "
                    "found in photos) of people who are not enrolled, or none at all to "
                    "calibrate on the enrolled people themselves (method='plda')"
                )
            decisions.append(self._decide(self._codes(faces[impostor]))[1])
        self.threshold = calibrated_threshold(np.concatenate(decisions), far)
        return self.threshold

    def gallery_as_strangers(self):
        """Each enrolled image's decision as a stranger's: against everyone else enrolled.

        Leave one person out: the image is matched as :meth:`decide` matches
        a probe (its ``k`` nearest images voting, the distance or its
        ``score_norm``), with every image of its own person left out. Those
        decisions are the impostor distances of people photographed as the
        enrolled are, which :meth:`calibrate_threshold` reads without images.
        ``"znorm"``'s statistics are the gallery's own, so an image also
        counts among the impostors of the person it is matched with. A
        feature fitted to the enrolled people (every method but ``"plda"``)
        sets them farther apart than strangers: their decisions are then no
        stranger's.

        Returns
        -------
        (n,) ndarray
            One decision per enrolled image, in ``gallery_`` order.
        """
        check_fitted(self, "gallery_")
        labels, classes = self.gallery_labels_, self.classes_
        own = np.searchsorted(classes, labels)
        others = len(labels) - np.bincount(own, minlength=len(classes)).max()
        smallest = {None: 2, "znorm": 2, "tnorm": 4}[self.score_norm]
        if len(classes) < smallest or others < self.k:
            raise ValueError(
                f"calibrating on the gallery needs at least {smallest} enrolled people and, "
                f"for each, {self.k} (k) images of the others; got {len(classes)} people: "
                "enrol more people, or calibrate on images of strangers"
            )
        decisions = np.empty(len(labels))
        for rows in gen_batches(len(labels), _GALLERY_ROWS):
            distances = self._pairwise_codes(self.gallery_[rows], self.gallery_)
            distances[labels[rows, None] == labels[None]] = np.inf
            nearest = np.argsort(distances, axis=1, kind="stable")[:, : self.k]
            named = self._voted(labels[nearest])
            if self.score_norm is None:
                decisions[rows] = np.take_along_axis(distances, nearest[:, :1], axis=1)[:, 0]
                continue
            # each row's other classes, in class order: its own column taken out
            columns = np.arange(len(classes) - 1)[None]
            columns = columns + (columns >= own[rows, None])
            scores = np.take_along_axis(
                class_distances(distances, labels, classes), columns, axis=1
            )
            if self.score_norm == "znorm":
                statistics = self.score_statistics_[columns]
                scores = (scores - statistics[..., 0]) / statistics[..., 1]
            else:
                scores = normalized(scores, "tnorm")
            at = np.argmax(columns == np.searchsorted(classes, named)[:, None], axis=1)
            decisions[rows] = scores[np.arange(len(at)), at]
        return decisions

    # ------------------------------------------------------------ the photos
    def _faces_from_photos(
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
            return as_image_set(images, labels, min_images=min_images, colour=self._colour_crops)
        if labelled and labels is None and not isinstance(images, ImageSet):
            raise ValueError("labels are required, one per photo")
        shape, eye_positions = self.crop_geometry()
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
            as_gray=not self._colour_crops,
            cut=self._cut,
        )
        return as_image_set(crops, labels, min_images=min_images, colour=self._colour_crops)

    def identify(self, photo, *, faces=None):
        """Every face of an uncropped photo with its name (:data:`UNKNOWN` past ``threshold``).

        Parameters
        ----------
        photo : (H, W) or (H, W, 3) ndarray
        faces : list of Face, optional
            The faces to name (say, found at another probability); default
            every face ``finder`` finds at :func:`identity_threshold`.

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
        found = identity_faces(self.finder, photo) if faces is None else list(faces)
        if not found:
            return [], self.gallery_labels_[:0], np.zeros(0)
        crops = np.stack([self._cut(photo, face) for face in found])
        return (
            found,
            *self._decide(
                self._codes(as_image_set(crops, None, min_images=0, colour=self._colour_crops))
            ),
        )

    def _cut(self, photo, face):
        """A face cut from a photo as this recognizer's features read it (an identity model's
        own cut, :func:`model_crop`; else on the eyes at :meth:`crop_geometry`)."""
        if self.method == "plda":
            return model_crop(photo, face, self.feature)
        shape, eye_positions = self.crop_geometry()
        return align_face(
            photo, face, shape=shape, eye_positions=eye_positions, as_gray=not self._colour_crops
        )

    @property
    def _colour_crops(self):
        """Whether faces are cut in colour: an identity model with a learned description."""
        return self.method == "plda" and bool(getattr(self.feature, "colour", False))

    def crop_geometry(self):
        """How this recognizer cuts a face from a photo (for :func:`align_face`).

        Returns
        -------
        shape : (H, W) tuple of int
            The identity model's crop for ``"plda"``, else ``aligned_shape``.
        eye_positions : ((x, y), (x, y))
            Where the eyes go, as fractions of the width and height.
        """
        if self.method == "plda":
            positions = tuple(tuple(float(v) for v in eye) for eye in self.feature.eye_positions)
            return tuple(self.feature.shape), positions
        return tuple(self.aligned_shape), DEFAULT_EYE_POSITIONS

    def _check_relations(self):
        """Its encoder's parameters its own, its gallery's codes as wide as the encoder gives,
        its parts (:func:`~eigenvision._spec.check_model`)."""
        self.check_parameters()
        statistics = getattr(self, "score_statistics_", None)
        if self.score_norm == "znorm" and (statistics is None or not np.all(statistics[:, 1] > 0)):
            raise ValueError(
                "Recognizer.score_statistics_ must be (n_classes, 2), std > 0, for znorm"
            )
        encoder = self.encoder_
        if not isinstance(encoder, Encoder):
            raise ValueError(f"Recognizer.encoder_ is a {type(encoder).__name__}, not an Encoder")
        for name in ENCODER_PARAMS:
            ours, its = getattr(self, name), getattr(encoder, name)
            same = ours is its if hasattr(ours, "get_params") else _equal(ours, its)
            if not same:
                raise ValueError(f"Recognizer: its encoder's {name} {its!r} is not its {ours!r}")
        check_model(encoder)
        if len(self.gallery_) == 0:
            raise ValueError("Recognizer.gallery_ is empty")
        if self.gallery_.shape[1] != encoder.code_width():
            raise ValueError(
                f"Recognizer: gallery_ codes have {self.gallery_.shape[1]} dimensions, "
                f"its features give {encoder.code_width()}"
            )
        if self.finder is not None:
            check_model(self.finder)


def _vote(labels):
    counts = Counter(labels.tolist())
    top = max(counts.values())
    return next(label for label in labels.tolist() if counts[label] == top)


def _equal(a, b) -> bool:
    """Parameter values equal as a file keeps them (a tuple read back as a list is the same)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b
