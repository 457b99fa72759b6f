"""Object / non-object decisions from eigenspaces: the log DFFS and DIFS to each, weighed.

A single eigenspace's DFFS is a poor detector where the object varies more
than the clutter around it: wild eyes are explained worse by ten components
than smooth cheeks are (measured on three HELEN training faces: the true
eye's DFFS 0.08-0.33, the map's minimum, on skin, 0.05-0.08). Sung &
Poggio (1998) and Moghaddam & Pentland (1997) answer with models of what is
*not* the object. Two recipes share :func:`log_distances`: the feature
locator weighs the four log distances to the object space and to one space
of mined non-object windows by logistic regression (:func:`fit_decision`);
the face finder, as Sung & Poggio, clusters faces and non-faces
(:func:`cluster_spaces`, an eigenspace per cluster) and weighs the distances
to all of them with a small perceptron (:func:`fit_network`,
:func:`network_log_odds`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from .. import _compiled  # numba's loops: numba imported at their first call
from .._base import check_fitted
from .._base import progress as show_progress
from .._errors import EigenvisionError
from .._parallel import n_threads, run_on_row_parts
from .._spec import Param, State, check_model, check_params
from ..detection import standardized_correlations
from ..eigenspace import Eigenspace
from ..normalize import equalize_windows, unit_norm
from .geometry import face_windows_at, window_shape

__all__ = [
    "log_distances",
    "log_distance_maps",
    "fit_decision",
    "cluster_spaces",
    "fit_network",
    "network_log_odds",
    "decision_windows",
    "mine_nonfaces",
    "decision_cuts",
    "NETWORK",
    "FaceDecision",
]

#: The perceptron's weights (:func:`fit_network`), each held by :class:`FaceDecision` as
#: ``network_<name>_``.
NETWORK = ("mean", "scale", "hidden_weights", "hidden_bias", "output_weights", "output_bias")

_FLOOR = 1e-12  # log of an exact fit
_PARALLEL_WINDOWS = 256  # candidates from which the decision is shared between two threads


def log_distances(X, spaces) -> np.ndarray:
    """``log`` DFFS and DIFS of zero-mean, unit-norm rows to each space.

    All spaces are projected in one product: with ``z_s = U_s (x - m_s)``,
    ``DFFS_s = ||x||^2 - 2 m_s . x + ||m_s||^2 - ||z_s||^2`` (orthonormal
    ``U_s``) and ``DIFS_s = sum_i z_si^2 / lambda_si``. On the finder's 12
    spaces and a photo's 5,900 candidates this is 14x faster than each
    space's own ``dffs`` and ``difs`` (which project twice and reconstruct)
    and 7.6x faster than scikit-learn's ``PCA`` per space, equal to both
    within 3.2e-13 in the logarithm (``benchmarks/bench_decision.py``).

    Parameters
    ----------
    X : (n, d) ndarray
        Finite.
    spaces : sequence of Eigenspace
        Fitted on ``d`` features.

    Returns
    -------
    (n, 2 len(spaces)) ndarray
        ``[log dffs_1, log difs_1, log dffs_2, ...]``.
    """
    X = np.asarray(X, dtype=np.float64)
    components = np.concatenate([space.components_ for space in spaces]).astype(np.float64)
    means = np.stack([space.mean_ for space in spaces]).astype(np.float64)
    bounds = np.cumsum([0] + [space.n_components_ for space in spaces])
    projected = X @ components.T  # (n, sum k_s): U_s x
    towards_means = X @ means.T  # (n, s): m_s . x
    squared_norms = np.einsum("ij,ij->i", X, X)
    out = np.empty((len(X), 2 * len(spaces)))
    for s, (space, start, stop) in enumerate(zip(spaces, bounds[:-1], bounds[1:], strict=True)):
        codes = projected[:, start:stop] - components[start:stop] @ means[s]  # U_s (x - m_s)
        energy = np.einsum("ij,ij->i", codes, codes)
        out[:, 2 * s] = squared_norms - 2 * towards_means[:, s] + means[s] @ means[s] - energy
        out[:, 2 * s + 1] = (codes**2) @ (1.0 / space.explained_variance_.astype(np.float64))
    return np.log(np.maximum(out, _FLOOR))


def log_distance_maps(image, spaces) -> list:
    """:func:`log_distances` of every window of ``image`` (each made zero-mean, unit-norm).

    Every space's components and mean are correlated with the image at once
    (:func:`~eigenvision.detection.standardized_correlations`: one transform of
    the image for all), then each space's distances follow as in
    :func:`log_distances`: ``DFFS_s = 1 - 2 m_s . x + ||m_s||^2 - ||z_s||^2``.

    Parameters
    ----------
    image : (H, W) ndarray
    spaces : sequence of Eigenspace
        Fitted on windows of one shape ``(h, w)``.

    Returns
    -------
    list of (H - h + 1, W - w + 1) ndarray
        In :func:`log_distances`' order; ``+inf`` DFFS on flat windows.
    """
    shape = tuple(spaces[0].image_shape_)
    templates = np.concatenate(
        [space.components_ for space in spaces] + [space.mean_[None] for space in spaces]
    ).reshape(-1, *shape)
    products, flat = standardized_correlations(image, templates)
    components = [space.components_.astype(np.float64) for space in spaces]
    means = [space.mean_.astype(np.float64) for space in spaces]
    # the maps from the products in one compiled pass over the windows
    out = _compiled.log_distance_pixels(
        products,
        flat,
        np.concatenate([c @ m for c, m in zip(components, means, strict=True)]),
        np.cumsum([0] + [space.n_components_ for space in spaces]),
        np.array([m @ m for m in means]),
        np.concatenate([1.0 / space.explained_variance_ for space in spaces]).astype(np.float64),
        _FLOOR,
        np.empty((2 * len(spaces), *flat.shape)),
    )
    return list(out)


def fit_decision(positive, negative):
    """Logistic weights separating positive from negative feature rows (classes balanced).

    Parameters
    ----------
    positive, negative : (n, f) ndarray
        :func:`log_distances` of object and non-object windows.

    Returns
    -------
    (f + 1,) ndarray
        The ``f`` weights, then the intercept: log-odds of "object" are
        ``features @ w[:-1] + w[-1]``.
    """
    X = np.vstack([positive, negative])
    y = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
    model = LogisticRegression(class_weight="balanced", max_iter=1000).fit(X, y)
    return np.r_[model.coef_[0], model.intercept_[0]].astype(np.float64)


def cluster_spaces(X, n_clusters, n_components, *, random_state=0) -> list:
    """An eigenspace for each k-means cluster of ``X`` (Sung & Poggio 1998's face and non-face
    clusters, each modelled by its own principal subspace).

    Parameters
    ----------
    X : (n, h, w) or (n, d) ndarray
        Zero-mean, unit-norm windows.
    n_clusters : int
        At most ``n // 4`` are used (every cluster keeps a few windows).
    n_components : int
        Components per cluster's space (fewer where a cluster is small).
    random_state : int, default 0

    Returns
    -------
    list of Eigenspace
    """
    n_clusters = max(1, min(int(n_clusters), len(X) // 4))
    if n_clusters == 1:
        labels = np.zeros(len(X), dtype=int)
    else:
        labels = KMeans(n_clusters, n_init=3, random_state=random_state).fit_predict(
            X.reshape(len(X), -1)
        )
    return [
        Eigenspace(max(1, min(n_components, int(np.sum(labels == c)) - 1))).fit(X[labels == c])
        for c in range(n_clusters)
    ]


def fit_network(positive, negative, *, hidden=32, n_networks=1, random_state=0) -> dict:
    """A one-hidden-layer perceptron on standardised features (Sung & Poggio's classifier).

    Trained by scikit-learn's :class:`~sklearn.neural_network.MLPClassifier`
    (ReLU, early stopping on a tenth of the rows); the weights come back as
    plain arrays, for :func:`network_log_odds` and for model files. With
    ``n_networks`` > 1, that many perceptrons (seeds ``random_state`` on,
    each with its own initial weights and early-stopping rows) are averaged
    in log-odds, as Rowley, Baluja & Kanade (1998) combine several networks
    against one network's idiosyncratic false alarms; the average is itself
    one perceptron with ``n_networks * hidden`` hidden units (their hidden
    layers side by side, output weights divided by ``n_networks``), so it is
    stored and evaluated as one.

    Parameters
    ----------
    positive, negative : (n, f) ndarray
        Feature rows (e.g. :func:`log_distances`) of objects and non-objects.
    hidden : int, default 32
        Hidden units of each perceptron.
    n_networks : int, default 1
    random_state : int, default 0

    Returns
    -------
    dict
        ``mean`` (f,), ``scale`` (f,), ``hidden_weights`` (f, m),
        ``hidden_bias`` (m,), ``output_weights`` (m,), ``output_bias``
        (float), with ``m = n_networks * hidden``.

    References
    ----------
    H. A. Rowley, S. Baluja and T. Kanade (1998), Neural network-based face
    detection, IEEE TPAMI 20(1).
    """
    X = np.vstack([positive, negative])
    y = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    networks = [
        MLPClassifier(
            (int(hidden),), alpha=1e-3, max_iter=500, early_stopping=True, random_state=seed
        ).fit((X - mean) / scale, y)
        for seed in range(random_state, random_state + int(n_networks))
    ]
    return {
        "mean": mean,
        "scale": scale,
        "hidden_weights": np.concatenate([net.coefs_[0] for net in networks], axis=1),
        "hidden_bias": np.concatenate([net.intercepts_[0] for net in networks]),
        "output_weights": np.concatenate([net.coefs_[1][:, 0] for net in networks]) / len(networks),
        "output_bias": float(np.mean([net.intercepts_[1][0] for net in networks])),
    }


def network_log_odds(features, weights) -> np.ndarray:
    """Log-odds of "object" from :func:`fit_network`'s weights.

    Parameters
    ----------
    features : (n, f) ndarray
    weights : dict
        As :func:`fit_network` returns.

    Returns
    -------
    (n,) ndarray
    """
    hidden = (features - weights["mean"]) / weights["scale"] @ weights["hidden_weights"]
    hidden = np.maximum(hidden + weights["hidden_bias"], 0.0)
    return hidden @ weights["output_weights"] + weights["output_bias"]


def decision_windows(windows, *, equalize=True) -> np.ndarray:
    """Windows as the face/non-face decision sees them.

    Histogram-equalised (their grey levels replaced by their ranks,
    :func:`~eigenvision.normalize.equalize_windows`), as Sung & Poggio do, so
    the decision ignores any increasing change of contrast; or, with
    ``equalize=False``, only made zero-mean; then of unit norm.

    Parameters
    ----------
    windows : (n, h, w) ndarray
        As cut from a photo, any grey levels.
    equalize : bool, default True

    Returns
    -------
    (n, h, w) ndarray
    """
    return equalize_windows(windows) if equalize else unit_norm(windows)


def mine_nonfaces(backgrounds, pools, cut, *, per_image, decide=None, progress=False):
    """Non-face windows from the candidates of photos without faces (Sung & Poggio 1998).

    Round 1 samples each background's candidates at random; round 2
    (bootstrapping) keeps those the decision fitted so far still likes best.

    Parameters
    ----------
    backgrounds : sequence of ((H, W) ndarray, boxes)
        Photos (and the boxes their faces are in, already left out of ``pools``).
    pools : sequence of lists of (left_eye, right_eye, value)
        Each background's stage-1 candidates.
    cut : callable
        ``cut(image, candidates) -> (n, h, w)`` windows.
    per_image : int
        Windows kept per background.
    decide : callable, optional
        ``decide(windows) -> (n,)`` log-odds of a face: round 2. Default: round 1.
    progress : bool, default False

    Returns
    -------
    (m, h, w) ndarray or None
        None when no background gave a candidate.
    """
    found, rng = [], np.random.default_rng(0)
    rounds = show_progress(
        zip(backgrounds, pools, strict=True),
        total=len(pools),
        desc=f"mining non-faces, round {1 if decide is None else 2}",
        enabled=progress,
    )
    for (image, _), candidates in rounds:
        if not candidates:
            continue
        windows = cut(image, candidates)
        order = rng.permutation(len(windows)) if decide is None else np.argsort(-decide(windows))
        found.append(windows[order[:per_image]])
    return np.concatenate(found) if found else None


def decision_cuts(image, candidates, *, iod, antialias=True) -> np.ndarray:
    """The candidates' face windows as the decision reads them, before normalising.

    Parameters
    ----------
    image : (H, W) ndarray or HalfOctaves
    candidates : sequence of (left_eye, right_eye, ...)
    iod : int
        The window's eye distance.
    antialias : bool, default True
        Cut from antialiased half-octave reductions
        (:func:`~eigenvision.faces.geometry.face_windows_at`).

    Returns
    -------
    (n, h, w) ndarray
    """
    eyes = [(left, right) for left, right, *_ in candidates]
    return face_windows_at(image, eyes, iod=iod, antialias=antialias)


class FaceDecision(BaseEstimator):
    """Stage 2 of :class:`~eigenvision.FaceFinder`: face or not, a perceptron on the distances
    to clusters of faces and of mined non-faces (Sung & Poggio 1998).

    Parameters
    ----------
    n_components : int, default 20
        Components of each cluster's space.
    n_clusters : int, default 6
        Clusters of faces and of non-faces (Sung & Poggio's six and six).
    hidden_units : int, default 32
        Hidden units of the perceptron.
    n_networks : int, default 5
        Perceptrons (seeds) averaged in log-odds (:func:`fit_network`): one
        fit's seed moves the detection rate by a few points.
    negatives_per_image : int, default 200
        Candidates of each background kept as non-faces in each of the two
        bootstrap rounds (random ones, then the most face-like:
        :func:`mine_nonfaces`), when the finder trains it.
    equalize : bool, default True
        Histogram-equalise every window (:func:`decision_windows`), as Sung &
        Poggio do, so the decision ignores any increasing change of contrast.
    antialias : bool, default True
        Cut the windows from antialiased half-octave reductions of the photo
        (:func:`decision_cuts`), so a face many times larger than the window
        is not sampled a pixel here and there.

    Attributes
    ----------
    iod_ : int
        The eye distance of the windows it reads.
    face_clusters_, nonface_clusters_ : dict of Eigenspace
        ``{"c0": ..., "c1": ...}``: the spaces of the face and non-face clusters.
    network_mean_, network_scale_, network_hidden_weights_, network_hidden_bias_, \
network_output_weights_, network_output_bias_
        The perceptron on ``log`` (DFFS, DIFS) to every cluster space
        (:func:`fit_network`): ``(f,)``, ``(f,)``, ``(f, hidden_units)``,
        ``(hidden_units,)``, ``(hidden_units,)``, float, with
        ``f = 2 (face + non-face clusters)``.
    n_negatives_ : int
        Non-face windows it was fitted on.

    References
    ----------
    K.-K. Sung and T. Poggio (1998), Example-based learning for view-based
    human face detection, IEEE TPAMI 20(1).
    """

    #: Each parameter's kind and range (:func:`~eigenvision._spec.check_params`).
    _params = {
        "n_components": Param("int", 1, 1000),
        "n_clusters": Param("int", 1, 64),
        "hidden_units": Param("int", 1, 1024),
        "n_networks": Param("int", 1, 64),
        "negatives_per_image": Param("int", 1, 10_000),
        "equalize": Param("bool"),
        "antialias": Param("bool"),
    }

    #: Each fitted member's kind, dtype, shape rule and finiteness
    #: (:func:`~eigenvision._spec.check_declared_state`).
    _state = {
        "iod_": State("int", low=1),
        "face_clusters_": State("models"),
        "nonface_clusters_": State("models"),
        "network_mean_": State(shape=("f",)),
        "network_scale_": State(shape=("f",), low=0),
        "network_hidden_weights_": State(shape=("f", "m")),
        "network_hidden_bias_": State(shape=("m",)),
        "network_output_weights_": State(shape=("m",)),
        "network_output_bias_": State("real"),
        "n_negatives_": State("int", low=0),
    }

    def __init__(
        self,
        n_components=20,
        *,
        n_clusters=6,
        hidden_units=32,
        n_networks=5,
        negatives_per_image=200,
        equalize=True,
        antialias=True,
    ):
        self.n_components = n_components
        self.n_clusters = n_clusters
        self.hidden_units = hidden_units
        self.n_networks = n_networks
        self.negatives_per_image = negatives_per_image
        self.equalize = equalize
        self.antialias = antialias

    def fit(self, faces, nonfaces, *, iod):
        """The face and non-face clusters and the perceptron between them.

        Parameters
        ----------
        faces, nonfaces : (n, h, w) ndarray, (m, h, w) ndarray
            Windows as cut (:func:`decision_cuts`; any grey levels): normalised here.
        iod : int
            Their eye distance: the windows :meth:`windows` cuts.

        Returns
        -------
        self
        """
        check_params(self)
        if len(nonfaces) < 2:
            raise EigenvisionError(
                f"only {len(nonfaces)} non-face windows were found in the backgrounds; "
                "give more (or larger) photos"
            )
        faces, nonfaces = self.normalized(faces), self.normalized(nonfaces)
        self.iod_ = int(iod)
        self.face_clusters_ = _named(cluster_spaces(faces, self.n_clusters, self.n_components))
        self.nonface_clusters_ = _named(
            cluster_spaces(nonfaces, self.n_clusters, self.n_components)
        )
        network = fit_network(
            self._describe(faces),
            self._describe(nonfaces),
            hidden=self.hidden_units,
            n_networks=self.n_networks,
        )
        for name in NETWORK:
            setattr(self, f"network_{name}_", network[name])
        self.n_negatives_ = len(nonfaces)
        return self

    def windows(self, image, candidates) -> np.ndarray:
        """The candidates' windows cut from a photo on their eyes (:func:`decision_cuts`).

        Parameters
        ----------
        image : (H, W) ndarray or HalfOctaves
            A :class:`~eigenvision.faces.geometry.HalfOctaves` keeps its reductions.
        candidates : sequence of (left_eye, right_eye, ...)

        Returns
        -------
        (n, h, w) ndarray
            As cut: :meth:`decision_function` normalises them.
        """
        check_fitted(self, "iod_")
        return decision_cuts(image, candidates, iod=self.iod_, antialias=self.antialias)

    def normalized(self, windows) -> np.ndarray:
        """Windows as the decision sees them (:func:`decision_windows`).

        Parameters
        ----------
        windows : (n, h, w) ndarray
            As cut.

        Returns
        -------
        (n, h, w) ndarray
        """
        return decision_windows(windows, equalize=self.equalize)

    def _describe(self, windows):
        """``log`` DFFS and DIFS of normalised windows to every face and non-face cluster."""
        spaces = [*self.face_clusters_.values(), *self.nonface_clusters_.values()]
        return log_distances(windows.reshape(len(windows), -1), spaces)

    def candidate_scores(self, image, candidates) -> np.ndarray:
        """The log-odds of the candidates' windows in ``image`` (many candidates in two parts,
        on two threads: cutting, ranking and projecting release the GIL).

        Parameters
        ----------
        image : (H, W) ndarray or HalfOctaves
        candidates : sequence of (left_eye, right_eye, ...)

        Returns
        -------
        (n,) ndarray
        """
        parts = min(n_threads(), 2) if len(candidates) >= _PARALLEL_WINDOWS else 1
        return run_on_row_parts(
            lambda part: self.decision_function(self.windows(image, [candidates[i] for i in part])),
            len(candidates),
            parts,
        )

    def decision_function(self, windows):
        """Log-odds that windows are faces.

        Parameters
        ----------
        windows : (n, h, w) ndarray
            Face windows of the clusters' shape, as cut from a photo
            (:func:`decision_cuts`; any grey levels): each is normalised here
            (:func:`decision_windows`).

        Returns
        -------
        (n,) ndarray
        """
        check_fitted(self, "network_hidden_weights_")
        network = {name: getattr(self, f"network_{name}_") for name in NETWORK}
        return network_log_odds(self._describe(self.normalized(windows)), network)

    def _check_relations(self):
        """Its cluster spaces are of its window and its perceptron fits them
        (:func:`~eigenvision._spec.check_model`)."""
        check_params(self)
        window = window_shape(self.iod_)
        spaces = [*self.face_clusters_.values(), *self.nonface_clusters_.values()]
        for space in spaces:
            check_model(space)
            if tuple(space.image_shape_) != window:
                raise ValueError(
                    f"FaceDecision: a space of {space.image_shape_} windows, not {window} "
                    f"(iod_ {self.iod_})"
                )
        features = 2 * len(spaces)
        if len(self.network_mean_) != features or np.any(self.network_scale_ <= 0):
            raise ValueError(
                f"FaceDecision: the perceptron's weights do not fit {features} features "
                "(2 per cluster space)"
            )


def _named(spaces):
    """Cluster spaces as the dictionary a model file holds."""
    return {f"c{index}": space for index, space in enumerate(spaces)}
