"""Faces in, "same person?" out: :class:`IdentityModel` (a face description, a PLDA identity
subspace, a cohort for score normalisation and a calibration) and :func:`centred_on`."""

from __future__ import annotations

import copy

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.spatial.distance import cdist
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils import gen_batches

from .._base import NotFittedError, check_fitted, copied_with_parts, kept_on
from .._spec import Param, State, check_eight_bits, check_model, check_params
from ..imageset import check_labels
from .deep import CHIP_SHAPE
from .describe import FaceDescriber
from .fusion import PLDAFusion
from .plda import BLOCK_ROWS, PLDA, stored_values

#: The largest magnitude of a calibration's weights, threshold, temperature and distance weight.
CALIBRATION_MAGNITUDE = 1e6

__all__ = ["IdentityModel", "centred_on", "centring_shift", "tempered", "IDENTITY_EYE_POSITIONS"]

CROPS_AT_ONCE = 256  # crops described at a time by IdentityModel.encode

#: Where :class:`IdentityModel` puts the eyes in its crops, as fractions of width and height.
IDENTITY_EYE_POSITIONS = ((0.33, 0.42), (0.67, 0.42))


class IdentityModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Faces in, "same person?" out: descriptors, a PLDA identity subspace and a calibration.

    Aligned face crops (:func:`~eigenvision.align_face` at the describer's
    ``shape``) are described, by default, four times
    (:func:`~eigenvision.descriptors.face_descriptors`): by dense DAISY
    gradient histograms once normalised for illumination (Tan & Triggs 2010)
    and once as they are, by LBP histograms and HOG of the
    normalised crop, and by the Fisher vector of the normalised crop's local
    DAISY descriptors (:class:`~eigenvision.descriptors.FisherVectors`, its
    Gaussian mixture learnt by :meth:`fit`). Pairs are compared by the log-likelihood ratio of a
    :class:`PLDA` model of each description, summed (:class:`PLDAFusion`); a
    logistic calibration, fitted on people held out of the PLDA fit, turns
    the ratio into ``P(same person)``.

    Parameters
    ----------
    describer : FaceDescriber, optional
        What describes an aligned crop, and at what size
        (:class:`~eigenvision.identity.describe.FaceDescriber`: its
        ``shape``, ``descriptor``, ``illumination``, ``descriptor_scales``,
        ``lbp_cells``, ``lbp_radii``, ``hog_cell``, ``fisher_clusters``,
        ``mirror`` and ``seed``, reached as ``set_params(describer__mirror=False)``).
        Fitted in place by :meth:`fit_description`. None: one with its
        defaults (DAISY twice, LBP and HOG, Fisher vectors of DAISY), made by
        :meth:`fit_description`.
    eye_positions : ((u, v), (u, v)), default ((0.33, 0.42), (0.67, 0.42))
        Where :func:`~eigenvision.align_face` puts the eyes, as fractions of
        the crop's width and height: the default crop is three eye distances
        wide, the hair line and jaw inside it.
    alignment : {"eyes", "five_points"}, default "eyes"
        How a face is cut for the model (:func:`~eigenvision.faces.compare.model_crop`):
        on its eyes at ``eye_positions``, or, for the ``"deep"`` description
        at ``shape`` (150, 150), dlib's own chip on its 5-point landmarks
        found in the box the eyes give (:func:`~eigenvision.identity.deep.five_point_chip`).
    length_norm : bool, default True
        PLDA's ``length_norm``: the PCA step's codes whitened and brought to
        one length (Garcia-Romero & Espy-Wilson 2011).
    pca_components : int, default 500
        PLDA's PCA step.
    lda_components : int or None, default 200
        PLDA's LDA step (:class:`PLDA`'s ``lda_components``; the identity
        rank at most this): the PCA step's codes projected onto their leading
        Fisher directions before the length norm. None: no LDA step.
    n_components : int, default 100
        PLDA's identity rank.
    calibration_share : float, default 0.1
        Share of the people (with two or more crops) held out of the PLDA fit
        to calibrate the probability on; split by person, never by crop.
    distance_fusion : bool, default False
        Score a pair by PLDA's ratio fused with the Euclidean distance between
        the two descriptions: a learned description's own metric (its network
        was trained on it) holds what PLDA's Gaussian model of it misses. The
        calibration, a logistic regression over both scores on the held-out
        people, weighs the two (linear fusion as in speaker recognition,
        Brümmer et al. 2007); the codes (:meth:`encode`) then carry the
        descriptions after PLDA's codes.
    cohort_size : int, default 2000
        Faces of distinct training people kept as a cohort for adaptive
        symmetric score normalisation (Matějka et al. 2017): a pair's ratio
        ``s`` becomes ``((s - mu_a) / sigma_a + (s - mu_b) / sigma_b) / 2``,
        ``mu`` and ``sigma`` the mean and standard deviation of each face's
        ``cohort_top`` highest ratios against the cohort. A face that is
        like many strangers (a blurred, dark or common-looking face) no
        longer scores high against everyone. 0: raw ratios.
    cohort_top : int, default 100
        How many of a face's best cohort ratios its statistics read.
    seed : int, default 0
        Which people are held out, and which faces make the cohort.

    Attributes
    ----------
    plda_ : PLDA or PLDAFusion
        :class:`PLDAFusion` when there are several :meth:`descriptions`;
        :meth:`~PLDA.compact` (its PCA and LDA steps one map).
    calibration_ : (2,) ndarray
        ``(a, b)``: ``P(same) = 1 / (1 + exp(-(a s + b)))`` of a pair's score ``s``
        (the ratio, normalised when there is a cohort).
    threshold_ : float
        The score where ``P(same) = 1/2``: the model's decision.
    distance_weight_ : float, optional
        With ``distance_fusion``: a pair's score is its ratio minus this times
        the distance between its descriptions (normalised against the cohort
        as the ratio is, where there is one). Absent or None: the ratio.
    cohort_rows_ : (cohort_size, m) ndarray of float32 or None
        With ``distance_fusion`` and a cohort: the cohort's descriptor rows,
        against which each face's distances are normalised.
    temperature_ : float, optional
        Set by :func:`tempered`: the temperature ``calibration_`` was divided by.
    cohort_coordinates_ : (cohort_size, p) ndarray of float32 or None
        The cohort's faces in PLDA's pair coordinates (:meth:`PLDA.pair_coordinates`
        of their codes, where a ratio needs nothing else of them); None
        without normalisation. 8-bit integers in a :func:`quantized` model,
        the coordinates being ``cohort_coordinates_ * cohort_scale_``.
    cohort_scale_ : (p,) ndarray or None
        The scale of each axis of an 8-bit ``cohort_coordinates_``; None otherwise.

    References
    ----------
    X. Tan and B. Triggs (2010), Enhanced local texture feature sets for face
    recognition under difficult lighting conditions, IEEE TIP 19(6).
    K. Simonyan, O. Parkhi, A. Vedaldi and A. Zisserman (2013), Fisher vector
    faces in the wild, BMVC (descriptors of the face and its mirror image).
    N. Brümmer, L. Burget, J. Černocký, O. Glembek, F. Grézl, M. Karafiát,
    D. A. van Leeuwen, P. Matějka, P. Schwarz and A. Strasheim (2007), Fusion of
    heterogeneous speaker recognition systems in the STBU submission for the NIST
    speaker recognition evaluation 2006, IEEE TASLP 15(7).
    """

    _params = {
        "describer": Param("model", optional=True, needs=("describe", "descriptions")),
        "eye_positions": Param("any"),
        "alignment": Param("choice", choices=("eyes", "five_points")),
        "length_norm": Param("bool"),
        "pca_components": Param("int", 1, 100_000),
        "lda_components": Param("int", 1, 100_000, optional=True),
        "n_components": Param("int", 1, 100_000),
        "calibration_share": Param("real", 0, 1, open_low=True, open_high=True),
        "distance_fusion": Param("bool"),
        "cohort_size": Param("int", 0, 1_000_000),
        "cohort_top": Param("int", 1, 1_000_000),
        "seed": Param("int", 0, 2**32 - 1),
    }

    _state = {
        "plda_": State("model"),
        # a logistic calibration of normalised log-likelihood ratios and its decision: scores
        # of order 10, so any value beyond CALIBRATION_MAGNITUDE is a damaged file
        "calibration_": State(shape=(2,), magnitude=CALIBRATION_MAGNITUDE),
        "threshold_": State("real", magnitude=CALIBRATION_MAGNITUDE),
        # the temperature the calibration was divided by (tempered); absent: 1
        "temperature_": State("real", optional=True, low=1, magnitude=CALIBRATION_MAGNITUDE),
        # distance_fusion's weight of the distance between descriptions; absent: none
        "distance_weight_": State("real", optional=True, low=0, magnitude=CALIBRATION_MAGNITUDE),
        # distance_fusion's cohort: the descriptor rows of the cohort's faces
        "cohort_rows_": State(shape=("c", "*"), optional=True),
        # int8 in a quantized model, with its scales
        "cohort_coordinates_": State(dtypes="fi", shape=("c", "p"), optional=True),
        "cohort_scale_": State(shape=("p",), optional=True, low=0),
    }

    def __init__(
        self,
        describer=None,
        *,
        eye_positions=IDENTITY_EYE_POSITIONS,
        alignment="eyes",
        length_norm=True,
        pca_components=500,
        lda_components=200,
        n_components=100,
        calibration_share=0.1,
        distance_fusion=False,
        cohort_size=2000,
        cohort_top=100,
        seed=0,
    ):
        self.describer = describer
        self.eye_positions = eye_positions
        self.alignment = alignment
        self.length_norm = length_norm
        self.pca_components = pca_components
        self.lda_components = lda_components
        self.n_components = n_components
        self.calibration_share = calibration_share
        self.distance_fusion = distance_fusion
        self.cohort_size = cohort_size
        self.cohort_top = cohort_top
        self.seed = seed

    def __copy__(self):
        """A copy with settings of its own, its describer's too (their fitted members shared)."""
        return copied_with_parts(self, ("describer",))

    @property
    def description(self) -> FaceDescriber:
        """The describer, or, where none is given yet, the default one ``fit`` would make."""
        return FaceDescriber() if self.describer is None else self.describer

    @property
    def shape(self) -> tuple:
        """The aligned crops' size, ``(H, W)``: the describer's."""
        return tuple(self.description.shape)

    def describe(self, crops):
        """Descriptor rows of aligned crops (:meth:`FaceDescriber.describe`).

        Parameters
        ----------
        crops : (n, H, W) or (n, H, W, 3) ndarray
            Cut by :func:`~eigenvision.faces.compare.model_crop`.

        Returns
        -------
        (n, m) ndarray
        """
        return self.description.describe(crops)

    def fit_description(self, crops):
        """Learn what the descriptions learn from faces (:meth:`FaceDescriber.fit`, in place;
        a describer of its defaults made first where ``describer`` is None). :meth:`fit` calls
        it; call it alone to :meth:`describe` crops before fitting the rest on them
        (:meth:`fit_descriptors`).

        Parameters
        ----------
        crops : (n, H, W) or (n, H, W, 3) ndarray

        Returns
        -------
        self
        """
        check_params(self)
        if self.describer is None:
            self.describer = FaceDescriber()
        self.describer.fit(crops)
        return self

    def descriptions(self):
        """Each description of a crop, one PLDA model each (:meth:`FaceDescriber.descriptions`).

        Returns
        -------
        list of (str, bool, tuple of float)
        """
        return self.description.descriptions()

    def description_widths(self):
        """The width of each description's block of :meth:`describe`'s columns.

        Returns
        -------
        list of int
        """
        return self.description.description_widths()

    @property
    def colour(self):
        """Whether the model reads colour crops (the ``"deep"`` description)."""
        return self.description.colour

    def prepare(self):
        """Make what scoring derives from the fitted state (the maps and cohort of a shipped
        form in float, the pair forms) now, once: a model read once and scored many times
        makes none of it per call (shallow copies share it).

        Returns
        -------
        self
        """
        check_fitted(self, "plda_")
        codes = self.encode_descriptors(np.zeros((1, _descriptor_width(self.plda_))))
        self.paired_log_odds(codes, codes)
        return self

    def fit(self, crops, labels):
        """Fit PLDA on most people's crops and the calibration on the others'.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.
        labels : (n,) array-like
            Their people.

        Returns
        -------
        self
        """
        check_params(self)
        self.fit_description(crops)
        return self.fit_descriptors(self.describe(crops), labels)

    def fit_descriptors(self, X, labels):
        """:meth:`fit` on descriptor rows already computed by :meth:`describe`.

        A learned description (``"fisher"``) must be learned first
        (:meth:`fit_description`); it is kept as it is.

        Parameters
        ----------
        X : (n, m) ndarray
        labels : (n,) array-like

        Returns
        -------
        self
        """
        check_params(self)
        self._check_alignment()
        if self.describer is None:
            self.describer = FaceDescriber()
        check_params(self.describer)
        labels = check_labels(labels, len(X))
        people, counts = np.unique(labels, return_counts=True)
        repeated = people[counts >= 2]
        rng = np.random.default_rng(self.seed)
        n_held = max(2, int(round(self.calibration_share * len(repeated))))
        held = rng.permutation(repeated)[:n_held]
        calibrate = np.isin(labels, held)
        if len(repeated) < 4 or calibrate.all():
            raise ValueError(
                "the calibration needs at least two people with two or more crops beside those "
                f"the model learns from; got {len(repeated)} such people in all"
            )
        fitted = X[~calibrate]
        widths = self.description_widths() if len(self.descriptions()) > 1 else [X.shape[1]]
        if X.shape[1] != sum(widths):
            raise ValueError(
                f"X must be describe's rows: {len(widths)} descriptions {widths} wide, "
                f"{sum(widths)} columns, got {X.shape[1]}"
            )
        people = len(np.unique(labels[~calibrate]))
        pca = min(self.pca_components, len(fitted) - 1, *widths)
        rank = min(self.n_components, people - 1)
        lda = self.lda_components
        if lda is not None:  # the identity rank lives in the LDA step
            lda = min(lda, pca, people - 1)
            rank = min(rank, lda)
        options = dict(
            n_components=rank,
            pca_components=pca,
            length_norm=self.length_norm,
            lda_components=lda,
        )
        model = PLDA(**options) if len(widths) == 1 else PLDAFusion(tuple(widths), **options)
        # the PCA step is larger than the LDA step it feeds: a saved model holds their product
        self.plda_ = model.fit(fitted, labels[~calibrate]).compact()
        self.cohort_coordinates_, self.cohort_rows_ = None, None
        if self.cohort_size:
            rows = fitted[_one_face_each(labels[~calibrate], self.cohort_size, rng)]
            # float32: half the file
            cohort = self.plda_.encode(rows)
            self.cohort_coordinates_ = self.plda_.pair_coordinates(cohort).astype(np.float32)
            if self.distance_fusion:  # the distance is normalised against the same faces
                self.cohort_rows_ = rows.astype(np.float32)
        self.distance_weight_ = None
        scores, distances, same = _calibration_pairs(self, X[calibrate], labels[calibrate], rng)
        if self.distance_fusion:  # the fused score: the ratio, less the distance so weighed
            (ratio, distance), intercept = _monotone_logistic(
                np.column_stack([scores, -distances]), same
            )
            self.distance_weight_ = float(distance / ratio)
            self.calibration_ = np.array([ratio, intercept])
        else:
            model = LogisticRegression(C=1e6).fit(scores[:, None], same)
            self.calibration_ = np.array([model.coef_[0, 0], model.intercept_[0]])
        self.threshold_ = float(-self.calibration_[1] / self.calibration_[0])
        return self

    @property
    def _n_features_out(self):
        """:meth:`transform`'s width: the identity model's rank."""
        return self.plda_.n_components_

    def transform(self, crops):
        """Identity codes of aligned crops: PLDA's codes of their descriptors.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, k) ndarray
        """
        check_fitted(self, "plda_")
        return self.plda_.transform(self.describe(crops))

    def pairwise_scores(self, crops):
        """The log-likelihood ratio of one person for every pair of crops.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, n) ndarray
            Symmetric.
        """
        codes = self.encode(crops)
        return self.pairwise_log_odds(codes, codes)

    def pairwise_probability(self, crops):
        """``P(same person)`` of every pair of crops, by the calibration.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, n) ndarray
            Symmetric.
        """
        return self.probability(self.pairwise_scores(crops))

    def encode(self, crops):
        """Codes of aligned crops in PLDA's PCA step, for :meth:`pairwise_log_odds`.

        What a :class:`~eigenvision.Recognizer` with ``method="plda"`` enrols:
        comparing codes needs no descriptor again.

        Parameters
        ----------
        crops : (n, H, W) ndarray
            Aligned faces at ``shape``.

        Returns
        -------
        (n, r) ndarray of float64
        """
        check_fitted(self, "plda_")
        crops = np.asarray(crops)
        if crops.ndim not in (3, 4) or len(crops) <= CROPS_AT_ONCE:
            return self.encode_descriptors(self.describe(crops))  # describe checks the shape
        # a block of crops at a time: their descriptions are many times their size
        return np.concatenate(
            [
                self.encode_descriptors(self.describe(crops[rows]))
                for rows in gen_batches(len(crops), CROPS_AT_ONCE)
            ]
        )

    def encode_descriptors(self, X):
        """:meth:`encode` of descriptor rows already computed by :meth:`describe`.

        Parameters
        ----------
        X : (n, m) ndarray

        Returns
        -------
        (n, r) ndarray of float64
            PLDA's codes (:meth:`PLDA.encode`), then, with ``distance_fusion``,
            the descriptor rows themselves.
        """
        check_fitted(self, "plda_")
        codes = self.plda_.encode(X)
        if _distance_weight(self) is None:
            return codes
        return np.hstack([codes, np.asarray(X, dtype=np.float64)])

    def score_pairs(self, crops_a, crops_b):
        """The score of one person for each pair of crops (see :meth:`pairwise_log_odds`).

        Parameters
        ----------
        crops_a, crops_b : (n, H, W) ndarray

        Returns
        -------
        (n,) ndarray
        """
        return self.paired_log_odds(self.encode(crops_a), self.encode(crops_b))

    def probability(self, llr):
        """``P(same person)`` of log-likelihood ratios, by the calibration.

        Parameters
        ----------
        llr : array-like

        Returns
        -------
        ndarray
        """
        check_fitted(self, "calibration_")
        a, b = self.calibration_
        return expit(a * np.asarray(llr, dtype=np.float64) + b)

    def pairwise_log_odds(self, codes_a, codes_b, *, statistics_b=None):
        """The score of one person for every pair of codes (:meth:`encode`).

        PLDA's log-likelihood ratio, normalised against the cohort when the
        model has one (``cohort_size``); with ``distance_fusion``, less
        ``distance_weight_`` times the distance between the descriptions.

        Parameters
        ----------
        codes_a : (m, r) ndarray
        codes_b : (n, r) ndarray
        statistics_b : (mean, std) of (n,) ndarrays, optional
            :meth:`cohort_statistics` of ``codes_b`` when the caller keeps
            them (a gallery scored against query after query); computed here
            when not given.

        Returns
        -------
        (m, n) ndarray
        """
        check_fitted(self, "plda_")
        # a set against itself (pairwise_scores, the calibration, a gallery's own score
        # normalisation): prepared once
        set_b = self._prepared(codes_b, statistics_b)
        set_a = set_b if codes_a is codes_b else self._prepared(codes_a)
        return self._scored(set_a, set_b)

    def _prepared(self, codes, statistics=None):
        """A set of codes as :meth:`_scored` reads it: ``(pair coordinates, cohort statistics
        (None without a cohort), description rows, spread)``."""
        plda, cohort = self.plda_, cohort_of(self)
        codes, rows = _split(self, codes)
        coordinates = plda.pair_coordinates(codes)
        if cohort is None:
            statistics = None
        elif statistics is None:
            statistics = _cohort_statistics(plda, coordinates, cohort, self.cohort_top)
        elif any(np.shape(part) != (len(coordinates),) for part in statistics):
            raise ValueError(
                f"statistics_b must be the (mean, std) of the {len(coordinates)} codes_b, one "
                "value per code each (cohort_statistics(codes_b))"
            )
        return coordinates, statistics, rows, _spread(self, rows)

    def pair_scores_in_blocks(self, codes, *, rows_at_once=1024):
        """:meth:`pairwise_log_odds` of a set against itself, a block of rows at a time.

        The set's cohort statistics are computed once; memory is a block of
        ``rows_at_once x n`` scores, never ``n x n`` (grouping a photo
        library's faces keeps only the pairs it needs).

        Parameters
        ----------
        codes : (n, r) ndarray
            :meth:`encode`'s.
        rows_at_once : int, default 1024

        Yields
        ------
        rows : slice
        scores : (len(rows), n) ndarray
            ``pairwise_log_odds(codes, codes)[rows]``, up to round-off.
        """
        check_fitted(self, "plda_")
        whole = self._prepared(codes)
        for block in gen_batches(len(whole[0]), rows_at_once):
            part = tuple(None if value is None else _rows_of(value, block) for value in whole)
            yield block, self._scored(part, whole)

    def _scored(self, set_a, set_b):
        """The scores of two prepared sets: each ``(pair coordinates, cohort statistics or None,
        descriptor rows or None, their distance statistics or None)``."""
        (u, statistics_a, rows_a, spread_a), (v, statistics_b, rows_b, spread_b) = set_a, set_b
        scores = self.plda_.pairwise_log_odds(u, v, coordinates=True)
        if statistics_b is not None:
            by_row = tuple(part[:, None] for part in statistics_a)
            scores = _symmetric_normalized(scores, by_row, statistics_b)
        if rows_a is not None:
            # cdist: each distance from the differences, as paired_log_odds gives it
            distances = cdist(rows_a, rows_b)
            if spread_b is not None:
                by_row = tuple(part[:, None] for part in spread_a)
                distances = _symmetric_normalized(distances, by_row, spread_b)
            scores -= _distance_weight(self) * distances
        return scores

    def paired_log_odds(self, codes_a, codes_b):
        """:meth:`pairwise_log_odds` of the pairs ``(codes_a[i], codes_b[i])`` only.

        Parameters
        ----------
        codes_a, codes_b : (n, r) ndarray
            Paired row by row.

        Returns
        -------
        (n,) ndarray
        """
        check_fitted(self, "plda_")
        plda, cohort = self.plda_, cohort_of(self)
        (codes_a, rows_a), (codes_b, rows_b) = _split(self, codes_a), _split(self, codes_b)
        u, v = plda.pair_coordinates(codes_a), plda.pair_coordinates(codes_b)
        scores = plda.paired_log_odds(u, v, coordinates=True)
        if cohort is not None:
            scores = _symmetric_normalized(
                scores,
                _cohort_statistics(plda, u, cohort, self.cohort_top),
                _cohort_statistics(plda, v, cohort, self.cohort_top),
            )
        if rows_a is not None:
            distances = np.linalg.norm(rows_a - rows_b, axis=1)
            distances = _normalized_distances(self, distances, rows_a, rows_b)
            scores -= _distance_weight(self) * distances
        return scores

    def cohort_statistics(self, codes):
        """Mean and standard deviation of each face's ``cohort_top`` best ratios against the cohort.

        Parameters
        ----------
        codes : (n, r) ndarray

        Returns
        -------
        mean, std : (n,) ndarray
        """
        check_fitted(self, "plda_")
        cohort = cohort_of(self)
        if cohort is None:
            raise NotFittedError("this IdentityModel has no cohort: its scores are not normalised")
        coordinates = self.plda_.pair_coordinates(_split(self, codes)[0])
        return _cohort_statistics(self.plda_, coordinates, cohort, self.cohort_top)

    def code_width(self) -> int:
        """The width of :meth:`encode`'s codes: PLDA's (its blocks' together), then, with a
        distance fused, the descriptions'.

        Returns
        -------
        int
        """
        check_fitted(self, "plda_")
        width = _pair_width(self, axis=0)
        if getattr(self, "distance_weight_", None) is not None:
            width += _descriptor_width(self.plda_)
        return width

    def _check_alignment(self):
        """``alignment="five_points"`` only with the ``"deep"`` description at dlib's chip."""
        description = self.description
        if self.alignment == "five_points" and (
            description.descriptor != "deep" or tuple(description.shape) != CHIP_SHAPE
        ):
            raise ValueError(
                f"alignment='five_points' cuts dlib's {CHIP_SHAPE} chip for the network: it "
                f"takes a describer with descriptor='deep' and shape={CHIP_SHAPE}, got "
                f"descriptor={description.descriptor!r} and shape={tuple(description.shape)}"
            )

    def _check_relations(self):
        """Its PLDA is one per description, its Fisher vectors there exactly when a description
        reads them, its cohort as wide as PLDA's pair coordinates
        (:func:`~eigenvision._spec.check_model`)."""
        fused = isinstance(self.plda_, PLDAFusion)
        count = len(self.descriptions())
        if fused != (count > 1) or (fused and len(self.plda_.models_) != count):
            raise ValueError(
                f"IdentityModel(describer={self.describer!r}) needs "
                + (f"a PLDAFusion of {count} descriptions" if count > 1 else "a PLDA")
                + f" as plda_, got {type(self.plda_).__name__}"
                + (f" of {len(self.plda_.models_)}" if fused else "")
            )
        check_model(self.plda_)
        if not isinstance(self.describer, FaceDescriber):
            raise ValueError(
                "IdentityModel.describer must be a fitted FaceDescriber, not "
                f"{type(self.describer).__name__}"
            )
        check_model(self.describer)
        self._check_alignment()
        check_eight_bits(self, "cohort_coordinates_", "cohort_scale_")
        width = _pair_width(self, axis=1)
        cohort = getattr(self, "cohort_coordinates_", None)
        if cohort is not None and cohort.shape[1] != width:
            raise ValueError(
                f"IdentityModel.cohort_coordinates_ must hold pair coordinates as wide as PLDA's "
                f"({width}), got {cohort.shape[1]} columns"
            )


def centred_on(model, crops=None, *, codes=None):
    """A copy of an identity model whose codes are centred on faces of another kind of photo.

    Unsupervised mean adaptation, as speaker verification moves an
    out-of-domain PLDA to unlabelled in-domain data (Garcia-Romero et al.
    2014): a model trained on news photos sees two studio photos of
    different people as alike, since the shared conditions (camera, light,
    pose, background) move both codes the same way from the training
    faces' mean. Centring the length-normalised codes on the new photos'
    own mean removes that shared offset. Each PLDA's ``code_mean_`` moves
    by the mean of the crops' codes (its part of them), and the cohort with
    it, so the adapted model encodes every face, the cohort's too, as one
    model; the covariances and the calibration are the model's.

    Parameters
    ----------
    model : IdentityModel
        Fitted, with ``length_norm`` (the codes are centred after it).
    crops : (n, H, W) ndarray
        Faces of many people photographed as the faces to compare are (a
        gallery, a set of strangers), cut for the model
        (:func:`~eigenvision.faces.compare.model_crop`); ``n >= 2``. Faces of
        one or two people would centre the codes on those people.
    codes : (n, r) ndarray, optional
        Instead of ``crops``, their codes (``model.encode(crops)``, e.g. a
        :class:`~eigenvision.Recognizer`'s ``gallery_``): nothing is encoded again.

    Returns
    -------
    IdentityModel

    References
    ----------
    D. Garcia-Romero, A. McCree, S. Shum, N. Brümmer and C. Vaquero (2014),
    Unsupervised domain adaptation for i-vector speaker recognition, Odyssey.
    """
    if not isinstance(model, IdentityModel):
        raise TypeError(f"centred_on takes an IdentityModel, got {type(model).__name__}")
    check_fitted(model, "plda_")
    if not model.length_norm:
        raise ValueError(
            "centred_on needs a model with length_norm=True: its codes are centred after "
            "the length normalisation"
        )
    if (crops is None) == (codes is None):
        raise ValueError("centred_on takes the faces' crops or their codes, one of the two")
    if codes is None:
        crops = np.asarray(crops)
        if crops.ndim != 3 or len(crops) < 2:
            raise ValueError(
                f"crops must be an (n, H, W) stack of at least 2 faces of many people, got "
                f"shape {crops.shape}"
            )
        codes = model.encode(crops)
    plda = model.plda_
    blocks = plda.models_.values() if isinstance(plda, PLDAFusion) else [plda]
    width = sum(len(block.code_mean_) for block in blocks)
    if _distance_weight(model) is not None:  # the descriptions after the codes
        width += _descriptor_width(plda)
    codes = np.asarray(codes, dtype=np.float64)
    if codes.shape[1:] != (width,) or len(codes) < 2 or not np.all(np.isfinite(codes)):
        raise ValueError(
            f"codes must be an (n, {width}) array of at least 2 finite codes of this model "
            f"(model.encode(crops)), got shape {codes.shape}"
        )
    shift = centring_shift(model, codes)[: sum(len(block.code_mean_) for block in blocks)]

    def moved(block, part):
        block = copy.copy(block)
        block.code_mean_ = block.code_mean_ + part
        return block

    adapted = copy.copy(model)
    if isinstance(plda, PLDAFusion):
        cuts = plda._cuts(len(shift), "codes")
        adapted.plda_ = copy.copy(plda)
        adapted.plda_.models_ = {
            name: moved(block, shift[cut])
            for (name, block), cut in zip(plda.models_.items(), cuts, strict=True)
        }
    else:
        adapted.plda_ = moved(plda, shift)
    cohort = cohort_of(model)
    if cohort is not None:
        dtype = np.float32 if cohort.dtype == np.float64 else cohort.dtype  # as fit keeps them
        cohort = cohort.astype(np.float64) - plda.pair_coordinates(shift[None])
        adapted.cohort_coordinates_ = cohort.astype(dtype)
        adapted.cohort_scale_ = None  # a quantized cohort is kept moved in float32
    return adapted


def centring_shift(model, codes):
    """What :func:`centred_on` subtracts from each of ``codes``: their mean over PLDA's part.

    The descriptor rows a model with ``distance_fusion`` appends to its codes are not moved:
    the distance between two descriptions is the same wherever they are centred, and
    :meth:`IdentityModel.encode` of the centred model leaves them as they are. Codes
    encoded before centring (a gallery) are brought to the centred model's by subtracting
    this shift.

    Parameters
    ----------
    model : IdentityModel
        Fitted.
    codes : (n, r) ndarray
        ``model.encode(crops)``.

    Returns
    -------
    (r,) ndarray of float64
        The mean of PLDA's columns of ``codes``, zeros over the descriptor rows.
    """
    codes = np.asarray(codes, dtype=np.float64)
    pldas = _split(model, codes)[0]
    shift = np.zeros(codes.shape[1])
    shift[: pldas.shape[1]] = pldas.mean(axis=0)
    return shift


def tempered(model, scores, same, *, max_temperature=1000.0):
    """A copy of an identity model whose probabilities are tempered on pairs of another source.

    Temperature scaling (Guo, Pleiss, Sun & Weinberger 2017): the calibration's slope and
    intercept are divided by the temperature ``T >= 1`` that maximises the likelihood of the
    pairs' truth, same- and different-person pairs weighing alike (the probability's prior is
    one half). The decision (``P = 1/2``, ``threshold_``) is unchanged; the probabilities move
    toward one half, as far as the other source shows the model overconfident. A model fitted
    on one kind of photo (LFW's news photos) says less than it would about photos of other
    kinds, instead of 0.99 where it is wrong.

    Parameters
    ----------
    model : IdentityModel
        Fitted.
    scores : (n,) array-like
        The model's scores of pairs of faces from a source it was not fitted on
        (:meth:`IdentityModel.pairwise_log_odds` of their codes).
    same : (n,) array-like of bool
        Whether each pair shows one person; both kinds present.
    max_temperature : float, default 1000
        The largest temperature considered.

    Returns
    -------
    IdentityModel
        ``temperature_`` holds ``T``.
    """
    check_fitted(model, "calibration_")
    scores = np.asarray(scores, dtype=np.float64)
    same = np.asarray(same, dtype=bool)
    if scores.ndim != 1 or scores.shape != same.shape or not np.all(np.isfinite(scores)):
        raise ValueError(
            f"scores and same must be two (n,) arrays of finite scores and bools, got shapes "
            f"{scores.shape} and {same.shape}"
        )
    if same.all() or not same.any():
        raise ValueError("tempering needs pairs of one person and pairs of two, both")
    weights = np.where(same, 0.5 / same.sum(), 0.5 / (~same).sum())
    logits = model.calibration_[0] * scores + model.calibration_[1]
    sign = np.where(same, 1.0, -1.0)

    def loss(log_t):
        return float(np.sum(weights * np.logaddexp(0.0, -sign * logits / np.exp(log_t))))

    found = minimize_scalar(loss, bounds=(0.0, np.log(max_temperature)), method="bounded")
    temperature = float(np.exp(found.x))
    adjusted = copy.copy(model)
    adjusted.calibration_ = np.asarray(model.calibration_, dtype=np.float64) / temperature
    adjusted.temperature_ = temperature
    return adjusted


def _distance_weight(model):
    """The weight of the distance between descriptions in a pair's score, or None."""
    return getattr(model, "distance_weight_", None)


def _normalized_distances(model, distances, rows_a, rows_b):
    """Distances of paired descriptions normalised against the cohort's rows, as the ratio is
    (adaptive symmetric normalisation: each side's distances to its ``cohort_top`` nearest
    cohort faces standardise it); as they are without ``cohort_rows_``."""
    spread_a = _spread(model, rows_a)
    if spread_a is None:
        return distances
    return _symmetric_normalized(distances, spread_a, _spread(model, rows_b))


def _spread(model, rows):
    """``(mean, std)`` of each description's distances to its nearest cohort descriptions, or
    None (no descriptions, or no cohort of them)."""
    cohort = getattr(model, "cohort_rows_", None)
    if rows is None or cohort is None:
        return None
    return _distance_statistics(rows, cohort, model.cohort_top)


def _rows_of(value, rows):
    """Rows ``rows`` of an array, or of each array of a ``(mean, std)`` pair."""
    return tuple(part[rows] for part in value) if isinstance(value, tuple) else value[rows]


def _distance_statistics(rows, cohort, top):
    """Mean and spread of each row's ``top`` smallest distances to the cohort's rows."""
    cohort = np.asarray(cohort, dtype=np.float64)
    mean, std = _best_statistics(len(rows), lambda block: -cdist(rows[block], cohort), top)
    return -mean, std


def _pair_width(identity, axis):
    """The width of an identity model's PLDA codes (``axis`` 0) or pair coordinates (1): its
    PLDA's, or its blocks' together."""
    plda = identity.plda_
    parts = plda.models_.values() if hasattr(plda, "models_") else [plda]
    return sum(part.identity_loadings_.shape[axis] for part in parts)


def _descriptor_width(plda):
    """How many descriptor values a PLDA (or each block of a PLDAFusion, together) reads."""
    blocks = plda.models_.values() if isinstance(plda, PLDAFusion) else [plda]
    return sum(len(block.mean_) for block in blocks)


def _split(model, codes):
    """Codes (:meth:`IdentityModel.encode`) as ``(PLDA's codes, descriptor rows or None)``."""
    if _distance_weight(model) is None:
        return codes, None
    codes = np.asarray(codes)
    width = _descriptor_width(model.plda_)
    if codes.ndim != 2 or codes.shape[1] <= width:
        raise ValueError(
            f"codes must be (n, r + {width}) rows of model.encode(crops): PLDA's codes, then "
            f"the {width} descriptor values; got shape {codes.shape}"
        )
    return codes[:, :-width], codes[:, -width:]


def cohort_of(model):
    """An :class:`IdentityModel`'s cohort in PLDA's pair coordinates, or None:
    ``cohort_coordinates_`` (a :func:`quantized` one in float32, made once)."""
    cohort = getattr(model, "cohort_coordinates_", None)
    scale = getattr(model, "cohort_scale_", None)
    if cohort is None or scale is None:
        return cohort
    return kept_on(
        model,
        "cohort",
        (cohort, scale),
        lambda: stored_values(cohort, scale, np.float32, axis=0),
    )


def _cohort_statistics(plda, coordinates, cohort, top):
    """:meth:`IdentityModel.cohort_statistics` of faces in pair coordinates: the mean and spread
    of each face's ``top`` best ratios against the cohort."""
    return _best_statistics(
        len(coordinates),
        lambda rows: plda.pairwise_log_odds(coordinates[rows], cohort, coordinates=True),
        top,
    )


def _best_statistics(count, against, top):
    """Mean and spread of each of ``count`` faces' ``top`` highest values against the cohort,
    ``against(rows)`` giving a block of faces' values (a block at a time: never all at once)."""
    mean, std = np.empty(count), np.empty(count)
    for rows in gen_batches(count, BLOCK_ROWS):
        values = against(rows)
        best = -np.partition(-values, min(top, values.shape[1]) - 1, axis=1)[:, :top]
        mean[rows], std[rows] = best.mean(axis=1), best.std(axis=1)
    return mean, np.maximum(std, 1e-12)


def _symmetric_normalized(scores, statistics_a, statistics_b):
    """Adaptive symmetric normalisation: the mean of ``scores`` standardised by each side's,
    written over ``scores`` (a set's (n, n) scores: one temporary as large, not four)."""
    (mean_a, std_a), (mean_b, std_b) = statistics_a, statistics_b
    by_a = scores - mean_a
    by_a /= std_a
    scores -= mean_b
    scores /= std_b
    scores += by_a
    scores /= 2
    return scores


def _one_face_each(labels, size, rng):
    """Indices of one random face of each of ``size`` random people (all people if fewer)."""
    order = rng.permutation(len(labels))
    _, first = np.unique(labels[order], return_index=True)
    chosen = order[first]
    return np.sort(rng.permutation(chosen)[:size])


def _monotone_logistic(features, same, floor=1e-6):
    """A logistic regression whose weights are not negative: ``(weights, intercept)``.

    Each feature is a score that never makes a pair less likely one person as it grows (the
    ratio, minus the distance); where two are nearly collinear an unconstrained fit may weigh
    one against the other. The mean log-loss is minimised by L-BFGS-B (the weights bounded
    below by ``floor`` times the features' scale, so that the first weight divides the others).
    """
    scale = features.std(axis=0)
    scale[scale == 0] = 1.0
    standard = features / scale
    sign = np.where(same, 1.0, -1.0)
    weights = np.full(len(same), 0.5 / same.sum())
    weights[~same] = 0.5 / (~same).sum()

    def loss(theta):
        logits = standard @ theta[:-1] + theta[-1]
        margin = sign * logits
        value = np.sum(weights * np.logaddexp(0.0, -margin))
        gradient_logits = -weights * sign * expit(-margin)
        return value, np.append(standard.T @ gradient_logits, gradient_logits.sum())

    start = np.append(np.ones(features.shape[1]), 0.0)
    bounds = [(floor, None)] * features.shape[1] + [(None, None)]
    found = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds)
    return found.x[:-1] / scale, float(found.x[-1])


def _calibration_pairs(model, X, labels, rng, max_pairs=20_000):
    """Scores (PLDA's ratios, normalised) and descriptor distances of the same-person pairs
    of held-out people and as many others, and which are of one person."""
    rows, cols = np.triu_indices(len(X), 1)
    same = labels[rows] == labels[cols]
    positive = np.flatnonzero(same)
    negative = np.flatnonzero(~same)
    take = min(len(positive), max_pairs // 2)
    positive = rng.choice(positive, take, replace=False)
    negative = rng.choice(negative, min(len(negative), take), replace=False)
    chosen = np.concatenate([positive, negative])
    codes = model.plda_.encode(X)  # the ratio alone: distance_weight_ is not set yet
    scores = model.pairwise_log_odds(codes, codes)[rows[chosen], cols[chosen]]
    first, second = X[rows[chosen]], X[cols[chosen]]
    distances = np.linalg.norm(first - second, axis=1)
    return scores, _normalized_distances(model, distances, first, second), same[chosen]
