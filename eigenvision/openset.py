"""The open-set decision over distances: thresholds, score normalisation, verification.

Recognition names the nearest enrolled person; the open set asks whether
that person is there at all. Everything here is a function over distances
(or log-odds), so every feature model shares it: :class:`~eigenvision.Recognizer`
computes distances and delegates the decision.

Score normalisation: a raw nearest distance means different things for different people (a
person whose images vary a lot sits far from everyone) and for different
probes (a blurred probe sits far from everyone). Normalising it by the
distribution of *impostor* distances makes one threshold fit all
(Auckenthaler, Carey & Lloyd-Thomas 2000, Score normalization for
text-independent speaker verification systems, Digital Signal Processing
10(1-3)).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.utils import gen_batches

from ._base import check_fitted
from ._errors import refuse_complex

__all__ = [
    "OpenSetMixin",
    "UNKNOWN",
    "GALLERY_CALIBRATION_PEOPLE",
    "reads_its_gallery",
    "SCORE_NORMS",
    "Verification",
    "class_distances",
    "znorm_statistics",
    "normalized",
    "reject_unknown",
    "calibrated_threshold",
    "threshold_at",
    "best_per_class",
]

#: The label a probe farther than the threshold from everyone enrolled gets.
UNKNOWN = "unknown"

#: The fewest enrolled people from which the command line (``train``) and the app centre
#: the identity model on the gallery (``method="plda"``,
#: :meth:`~eigenvision.Recognizer.centre_on_gallery`) and, without strangers, calibrate the
#: threshold on it (each person a stranger to the others,
#: :meth:`OpenSetMixin.gallery_as_strangers`) by default, for ``"plda"`` alone.
GALLERY_CALIBRATION_PEOPLE = 5


def reads_its_gallery(recognizer) -> bool:
    """Whether the command line and the app centre ``recognizer`` on its gallery and calibrate
    it there by default: ``method="plda"`` (a model of other people) with at least
    :data:`GALLERY_CALIBRATION_PEOPLE` people enrolled.

    Parameters
    ----------
    recognizer : Recognizer
        Fitted.

    Returns
    -------
    bool
    """
    return recognizer.method == "plda" and len(recognizer.classes_) >= GALLERY_CALIBRATION_PEOPLE


#: Enrolled images matched at once by :meth:`OpenSetMixin.gallery_as_strangers` (bounds the
#: (rows, n) distances held).
_GALLERY_ROWS = 1024

#: The normalisations :func:`normalized` knows.
SCORE_NORMS = ("znorm", "tnorm")


def class_distances(distances, gallery_labels, classes):
    """The nearest distance from each probe to each class's enrolled images.

    Parameters
    ----------
    distances : (m, n) ndarray
        Probe-to-gallery distances.
    gallery_labels : (n,) ndarray
    classes : (c,) ndarray
        Sorted; every gallery label among them.

    Returns
    -------
    (m, c) ndarray
    """
    columns = np.searchsorted(classes, gallery_labels)
    nearest = np.full((len(distances), len(classes)), np.inf)
    np.minimum.at(nearest.T, columns, np.asarray(distances, dtype=np.float64).T)
    return nearest


def znorm_statistics(gallery_class_distances, gallery_labels, classes):
    """Mean and standard deviation of each class's impostor distances, from the gallery itself.

    Class ``c``'s impostors are the enrolled images of every other class;
    their nearest distances to ``c`` are its Z-norm cohort.

    Parameters
    ----------
    gallery_class_distances : (n, c) ndarray
        :func:`class_distances` of the gallery to itself.
    gallery_labels : (n,) ndarray
    classes : (c,) ndarray

    Returns
    -------
    (c, 2) ndarray
        ``[mean, std]`` per class; the std floored at a millionth of the
        mean's magnitude (a class all others sit equally far from).
    """
    own = np.searchsorted(classes, gallery_labels)
    impostor = own[:, None] != np.arange(len(classes))[None]
    if not impostor.any(axis=0).all():
        raise ValueError("Z-norm needs at least two enrolled people (each one's impostors)")
    values = np.where(impostor, gallery_class_distances, np.nan)
    mean = np.nanmean(values, axis=0)
    spread = np.nanstd(values, axis=0)
    floor = 1e-6 * np.maximum(np.abs(mean), np.finfo(np.float64).tiny)
    return np.column_stack([mean, np.maximum(spread, floor)])


def normalized(class_distances_, method, statistics=None):
    """Normalised distances (lower: more alike), in impostor standard deviations.

    Parameters
    ----------
    class_distances_ : (m, c) ndarray
        :func:`class_distances` of the probes.
    method : {"znorm", "tnorm"}
        ``"znorm"``: ``(d - mean_c) / std_c`` with each class's impostor
        statistics (:func:`znorm_statistics`); ``"tnorm"``: ``(d_c -
        mean) / std`` over the probe's distances to every *other* class
        (the probe's own impostor cohort).
    statistics : (c, 2) ndarray, optional
        Required for ``"znorm"``.

    Returns
    -------
    (m, c) ndarray

    Examples
    --------
    >>> d = np.array([[1.0, 5.0, 7.0]])
    >>> normalized(d, "tnorm").round(3).tolist()
    [[-5.0, 0.333, 2.0]]
    """
    d = np.asarray(class_distances_, dtype=np.float64)
    if method == "znorm":
        if statistics is None:
            raise ValueError("Z-norm needs the classes' impostor statistics")
        return (d - statistics[:, 0]) / statistics[:, 1]
    if method == "tnorm":
        c = d.shape[1]
        if c < 3:
            raise ValueError(f"T-norm needs at least 3 enrolled people (a cohort of 2), got {c}")
        total, squares = d.sum(axis=1, keepdims=True), (d * d).sum(axis=1, keepdims=True)
        mean = (total - d) / (c - 1)
        variance = np.maximum((squares - d * d) / (c - 1) - mean * mean, 0.0)
        floor = 1e-6 * np.maximum(np.abs(mean), np.finfo(np.float64).tiny)
        return (d - mean) / np.maximum(np.sqrt(variance), floor)
    raise ValueError(f"score_norm must be one of {SCORE_NORMS} or None, got {method!r}")


@dataclass(frozen=True)
class Verification:
    """The answer to "is this person X?".

    Attributes
    ----------
    accepted : bool
    distance : float
        To the nearest enrolled image of the claimed label, in the metric's units.
    threshold : float or None
        The threshold the decision used (None: every claim is accepted).
    probability : float or None
        ``P(same person | difference)`` of the best-matching image of the
        claimed label, where the method has one (``"bayesian"`` with the
        Euclidean metric: the MAP similarity); None otherwise.
    model : str or None
        Which identity model answered, for photos compared by one
        (:func:`~eigenvision.compare_faces`: ``"deep"``, ``"classical"``, ...); None otherwise.
    faces : tuple of Face or None
        The face compared in each photo (:func:`~eigenvision.compare_faces`), in the photo's
        pixels; None otherwise.
    face_counts : tuple of int or None
        How many faces each photo showed (the most confident was compared); None otherwise.
    """

    accepted: bool
    distance: float
    threshold: float | None
    probability: float | None = None
    model: str | None = None
    faces: tuple | None = None
    face_counts: tuple | None = None


def reject_unknown(named, decision, threshold):
    """``named`` with :data:`UNKNOWN` where ``decision`` exceeds ``threshold``.

    Parameters
    ----------
    named : (m,) ndarray
        Each probe's label.
    decision : (m,) array-like
        The distance (or normalised score) the threshold judges.
    threshold : float or None
        None: every name stands.

    Returns
    -------
    (m,) ndarray
        Strings stay strings (wide enough for :data:`UNKNOWN`); other labels
        become dtype object so they can hold it.

    Examples
    --------
    >>> reject_unknown(np.array(["ann", "bob"]), [0.2, 0.9], 0.5).tolist()
    ['ann', 'unknown']
    """
    if threshold is None:
        return named
    rejected = np.asarray(decision) > threshold
    if named.dtype.kind not in "US":
        predicted = named.astype(object)
    else:
        predicted = named.astype(f"<U{max(named.dtype.itemsize // 4, len(UNKNOWN))}")
    predicted[rejected] = UNKNOWN
    return predicted


def calibrated_threshold(impostor_decisions, far):
    """The threshold that accepts at most a fraction ``far`` of impostors.

    Accepts distances strictly below the ``(allowed + 1)``-th smallest
    impostor distance (:func:`threshold_at`).

    Parameters
    ----------
    impostor_decisions : (m,) array-like
        What the threshold judges, for probes of people not enrolled.
    far : float
        In ``[0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> calibrated_threshold([1.0, 2.0, 3.0, 4.0], 0.0) < 1.0
    True
    """
    return float(-threshold_at(-np.asarray(impostor_decisions, dtype=float), far))


def best_per_class(log_odds, gallery_labels, classes):
    """Each probe's best log-odds against each class's enrolled images.

    Parameters
    ----------
    log_odds : (m, n) ndarray
        Probe-to-gallery log-odds of the same identity.
    gallery_labels : (n,) ndarray
    classes : (c,) ndarray
        Sorted; every gallery label among them.

    Returns
    -------
    (m, c) ndarray
    """
    return -class_distances(-np.asarray(log_odds), gallery_labels, classes)


def threshold_at(impostor_scores, far: float) -> float:
    """The lowest threshold that accepts at most ``far`` of the impostors (``score >= t``).

    Calibrates an open-set decision from impostor probes (people not
    enrolled): with ``n`` of them, ``floor(far n)`` may be accepted.

    Parameters
    ----------
    impostor_scores : (n,) array-like
        Higher: more confident (pass ``-distance``).
    far : float
        False-accept rate allowed, in ``[0, 1)``.

    Returns
    -------
    float
        Just above the ``(floor(far n) + 1)``-th highest impostor score ``s``:
        by ``1e-6 |s|`` (or one float64 step, the larger), float32 codes'
        round-off, so that the same probes described in another batch (BLAS
        blocks the products differently) stay on the same side.

    Examples
    --------
    >>> threshold_at([0.1, 0.9, 0.5, 0.3], far=0.25) > 0.5
    True
    """
    if not (isinstance(far, (int, float, np.floating)) and 0.0 <= far < 1.0):
        raise ValueError(f"far must lie in [0, 1), got {far!r}")
    refuse_complex(impostor_scores, "impostor_scores")
    scores = np.asarray(impostor_scores, dtype=np.float64).ravel()
    if scores.size == 0 or np.isnan(scores).any():
        raise ValueError("calibration needs impostor scores, none of them NaN")
    allowed = int(np.floor(far * scores.size))
    kth = np.sort(scores)[::-1][allowed]
    return float(max(np.nextafter(kth, np.inf), kth + 1e-6 * abs(kth)))


class OpenSetMixin:
    """The open-set half of :class:`~eigenvision.Recognizer`: names, thresholds, verification.

    The functions above, applied to the recognizer's codes: the voted name
    and the distance a threshold judges (:func:`normalized` with
    ``score_norm``), rejection as :data:`UNKNOWN`, verification with a
    probability where the feature model has one, calibration on impostors.
    Reads the recognizer's gallery (``gallery_``, ``gallery_labels_``,
    ``classes_``) and its codes (``_codes``, ``_pairwise_codes``,
    ``_nearest``).
    """

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


def _vote(labels):
    counts = Counter(labels.tolist())
    top = max(counts.values())
    return next(label for label in labels.tolist() if counts[label] == top)
