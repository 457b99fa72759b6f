"""Consistency checks of a fitted model's parameters and state, for models read from files.

A model file is untrusted input: its arrays and parameters may disagree with
each other (a 40000 x 40000 working shape beside a 10304-pixel eigenspace, a
negative block scale, NaN in a gallery). :func:`check_state` refuses such a
model when it is loaded, so that nothing downstream allocates, divides or
answers on the strength of it.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._spec import check_declared_state, check_params
from .bayesian import BayesianSpace
from .eigenspace import Eigenspace
from .faces.features import FeatureDetector
from .faces.finder import FaceFinder
from .faces.geometry import window_shape
from .recognize import Recognizer

__all__ = ["check_state", "LIMITS"]

#: Bounds on size parameters a model (or a file) may set.
LIMITS = {"side": 4096, "iod": 400, "jitter": 64, "scale": 16.0, "count": 64}


def check_state(model) -> None:
    """Raise ``ValueError`` naming the first inconsistency of a fitted model.

    Checks every float array for NaN (and infinity, except where a model
    gives it a meaning), subspace shapes against each other and against
    ``image_shape_``, and each model's own parameters and state, recursively
    into the models it holds.

    Parameters
    ----------
    model : fitted estimator

    Returns
    -------
    None

    Examples
    --------
    >>> space = Eigenspace(1).fit(np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]]))
    >>> check_state(space)
    >>> space.mean_ = np.array([np.nan, 0.0])
    >>> check_state(space)
    Traceback (most recent call last):
    ...
    ValueError: Eigenspace.mean_ holds NaN or infinite values
    """
    name = type(model).__name__
    if hasattr(type(model), "_params"):
        check_params(model)
    if hasattr(type(model), "_state"):
        check_declared_state(model)
    else:
        for key, value in vars(model).items():
            if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
                if not np.all(np.isfinite(value)):
                    raise ValueError(f"{name}.{key} holds NaN or infinite values")
    _check_subspace(model)
    if isinstance(model, Eigenspace):
        _check_eigenspace(model)
    if isinstance(model, BayesianSpace):
        _check_bayesian(model)
    if isinstance(model, Recognizer):
        _check_recognizer(model)
    if isinstance(model, FeatureDetector):
        _check_feature_detector(model)
    if isinstance(model, FaceFinder):
        _check_face_finder(model)


def _shape(value, name, length=None):
    sides_ok = all(isinstance(v, Integral) and 1 <= v <= LIMITS["side"] for v in value)
    if not (isinstance(value, tuple) and (length is None or len(value) == length) and sides_ok):
        raise ValueError(
            f"{name} must be {length or 'some'} ints in [1, {LIMITS['side']}], got {value!r}"
        )
    return value


def _check_subspace(model):
    """``components_`` (k, d) beside ``mean_`` (d,), ``n_features_in_`` and ``image_shape_``."""
    name = type(model).__name__
    if not (hasattr(model, "components_") and hasattr(model, "mean_")):
        return
    components, mean = model.components_, model.mean_
    if components.dtype.kind != "f" or mean.dtype.kind != "f":
        raise ValueError(f"{name}: components_ and mean_ must be floating point")
    if components.ndim != 2 or mean.shape != (components.shape[1],):
        raise ValueError(f"{name}: components_ {components.shape} and mean_ {mean.shape} disagree")
    d = components.shape[1]
    if getattr(model, "n_features_in_", d) != d:
        raise ValueError(f"{name}: n_features_in_={model.n_features_in_}, components_ have {d}")
    if getattr(model, "n_components_", len(components)) != len(components):
        raise ValueError(
            f"{name}: n_components_={model.n_components_}, components_ has {len(components)} rows"
        )
    shape = getattr(model, "image_shape_", None)
    if shape is not None and int(np.prod(_shape(tuple(shape), f"{name}.image_shape_", 2))) != d:
        raise ValueError(f"{name}: image_shape_ {shape} does not hold its {d} features")


def _check_eigenspace(space):
    k = space.components_.shape[0]
    eigenvalues = space.eigenvalues_
    if eigenvalues.ndim != 1 or len(eigenvalues) < k or np.any(eigenvalues < 0):
        raise ValueError(f"Eigenspace.eigenvalues_ must be >= 0 with at least {k} values")
    if space.explained_variance_ratio_.shape != (k,):
        raise ValueError("Eigenspace.explained_variance_ratio_ does not match its components")
    if not (isinstance(space.noise_variance_, Real) and space.noise_variance_ >= 0):
        raise ValueError(f"Eigenspace.noise_variance_ must be >= 0, got {space.noise_variance_!r}")


def _check_bayesian(space):
    m = space.components_.shape[0]
    for key in ("intra_variances_", "extra_variances_"):
        values = getattr(space, key)
        if values.shape != (m,) or not np.all(values > 0):
            raise ValueError(f"BayesianSpace.{key} must be ({m},) positive variances")
    if space.intra_to_extra_.shape != (m, m):
        raise ValueError(f"BayesianSpace.intra_to_extra_ must be ({m}, {m})")
    if not (isinstance(space.intra_prior, Real) and 0 < space.intra_prior < 1):
        raise ValueError(f"BayesianSpace.intra_prior must lie in (0, 1), got {space.intra_prior!r}")
    calibration = getattr(space, "calibration_", np.array([1.0, 0.0]))
    if calibration.shape != (2,) or not calibration[0] > 0:
        raise ValueError("BayesianSpace.calibration_ must be (a > 0, b)")
    check_state(space.pca_)


def _check_recognizer(model):
    model._check_options()
    statistics = getattr(model, "score_statistics_", None)
    if model.score_norm == "znorm" and (statistics is None or not np.all(statistics[:, 1] > 0)):
        raise ValueError("Recognizer.score_statistics_ must be (n_classes, 2), std > 0, for znorm")
    image_shape = _shape(tuple(model.image_shape_), "Recognizer.image_shape_", 2)
    if model.shape is not None and tuple(model.shape) != image_shape:
        raise ValueError(f"Recognizer.shape {model.shape} differs from image_shape_ {image_shape}")
    gallery, labels = model.gallery_, model.gallery_labels_
    if gallery.dtype.kind != "f":
        raise ValueError(f"Recognizer.gallery_ must be floating point, not {gallery.dtype}")
    if gallery.ndim != 2 or labels.shape != (len(gallery),) or len(gallery) == 0:
        raise ValueError(f"Recognizer: gallery_ {gallery.shape} and labels {labels.shape} disagree")
    scales = model.block_scales_
    if scales.shape != (len(model.block_names_),) or not np.all(scales > 0):
        raise ValueError("Recognizer.block_scales_ must be > 0, one per block")
    if not model._modular and not np.array_equal(scales, [1.0]):
        raise ValueError(
            f"Recognizer.block_scales_ must be [1.0] for method={model.method!r} (one block), "
            f"got {scales.tolist()}"
        )
    weightless = _weightless_blocks(model)
    if not np.array_equal(np.isinf(scales), weightless):
        raise ValueError(
            "Recognizer.block_scales_ may be infinite only for a block of weight 0 (and must be "
            f"there): blocks {list(model.block_names_)}, scales {scales.tolist()}"
        )
    width = 0
    if model.feature_ is not None:
        check_state(model.feature_)
        if getattr(model.feature_, "n_features_in_", None) != int(np.prod(image_shape)):
            raise ValueError(f"Recognizer: its feature does not take {image_shape} images")
        width += model.feature_.n_components_
    for space in model.feature_spaces_.values():
        check_state(space)
        width += space.n_components_
    if gallery.shape[1] != width:
        raise ValueError(
            f"Recognizer: gallery_ codes have {gallery.shape[1]} dimensions, "
            f"its features give {width}"
        )
    for part in (model.detector, model.finder):
        if part is not None:
            check_state(part)


def _weightless_blocks(model):
    """Which of a recogniser's blocks weigh nothing in its distance (their scales are infinite)."""
    names = model.block_names_
    features = [name for name in names if name != "face"]
    share = (1.0 - model.global_weight) if model.method == "combined" else 1.0
    weights = [
        (model.global_weight if model.method == "combined" else 1.0)
        if name == "face"
        else share / len(features)
        for name in names
    ]
    return np.array([weight == 0 for weight in weights])


def _check_feature_detector(detector):
    if not (isinstance(detector.iod, Integral) and 5 <= detector.iod <= LIMITS["iod"]):
        raise ValueError(f"FeatureDetector.iod must be an int in [5, {LIMITS['iod']}]")
    for key in ("search_scales", "scales"):
        values = np.asarray(getattr(detector, key), dtype=float)
        if not (
            0 < values.size <= LIMITS["count"]
            and np.all(np.isfinite(values))
            and np.all((values > 0) & (values <= LIMITS["scale"]))
        ):
            raise ValueError(
                f"FeatureDetector.{key} must be 1-{LIMITS['count']} numbers in "
                f"(0, {LIMITS['scale']}]"
            )
    if not (isinstance(detector.search_margin, Real) and 0 < detector.search_margin <= 5):
        raise ValueError("FeatureDetector.search_margin must lie in (0, 5]")
    features = tuple(detector.features_)
    if tuple(detector.spaces_) != features:
        raise ValueError("FeatureDetector.spaces_ do not match features_")
    expected = np.array([detector.patch_shape(f) for f in features])
    if not np.array_equal(detector.patch_shapes_, expected):
        raise ValueError("FeatureDetector.patch_shapes_ do not match iod and the patch shapes")
    for feature, shape in zip(features, expected, strict=True):
        space = detector.spaces_[feature]
        check_state(space)
        if tuple(space.image_shape_) != tuple(shape):
            raise ValueError(f"FeatureDetector: the {feature} space is not {tuple(shape)}")
    n = len(features)
    if getattr(detector, "score", "dffs") not in ("dffs", "decision"):
        raise ValueError(
            f"FeatureDetector.score must be 'dffs' or 'decision', not {detector.score!r}"
        )
    if detector.score == "decision":
        spaces = getattr(detector, "nonfeature_spaces_", {})
        if tuple(spaces) != features or getattr(detector, "decision_", np.zeros(0)).shape != (n, 5):
            raise ValueError(
                "FeatureDetector: score='decision' needs nonfeature_spaces_ and a "
                f"decision_ of shape ({n}, 5)"
            )
        for feature, shape in zip(features, expected, strict=True):
            check_state(spaces[feature])
            if tuple(spaces[feature].image_shape_) != tuple(shape):
                raise ValueError(
                    f"FeatureDetector: the {feature} non-feature space is not {tuple(shape)}"
                )
    quantiles = detector.score_quantiles_
    if (
        detector.offsets_mean_.shape != (n, 2)
        or detector.offsets_std_.shape != (n, 2)
        or quantiles.shape != (n, 101)
        or np.any(np.diff(quantiles, axis=1) < 0)
    ):
        raise ValueError("FeatureDetector: offsets_ or score_quantiles_ are malformed")


def _check_face_finder(finder):
    finder.check_parameters()
    window = tuple(int(v) for v in finder.window_)
    if window != window_shape(finder.iod):
        raise ValueError(f"FaceFinder: window_ {window} is not the window of iod {finder.iod}")
    spaces = [
        finder.face_space_,
        *finder.face_clusters_.values(),
        *finder.nonface_clusters_.values(),
    ]
    for space in spaces:
        check_state(space)
        if tuple(space.image_shape_) != window:
            raise ValueError(f"FaceFinder: a space of {space.image_shape_} windows, not {window}")
    features = 2 * (len(spaces) - 1)
    hidden = finder.network_hidden_bias_.shape
    if (
        finder.network_mean_.shape != (features,)
        or finder.network_scale_.shape != (features,)
        or np.any(finder.network_scale_ <= 0)
        or len(hidden) != 1
        or finder.network_hidden_weights_.shape != (features, *hidden)
        or finder.network_output_weights_.shape != hidden
        or not np.isfinite(finder.network_output_bias_)
    ):
        raise ValueError(
            f"FaceFinder: the perceptron's weights do not fit {features} features "
            "(2 per cluster space)"
        )
    for name in ("locator_", "placer_"):
        part = getattr(finder, name, None)
        if part is None and name == "placer_":  # older model files have none
            continue
        if not isinstance(part, FeatureDetector):
            raise ValueError(
                f"FaceFinder.{name} must be a FeatureDetector, not {type(part).__name__}"
            )
        check_state(part)
