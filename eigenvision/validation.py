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
from .descriptors import FisherVectors
from .eigenspace import Eigenspace
from .faces.features import FeatureDetector
from .faces.finder import FaceFinder
from .faces.geometry import window_shape
from .identity import PLDA, IdentityModel, PLDAFusion
from .identity.deep import CHIP_SHAPE
from .identity.model import _descriptor_width
from .recognize import Recognizer

__all__ = ["check_state", "LIMITS"]

#: Bounds on size parameters a model (or a file) may set.
LIMITS = {"side": 4096, "iod": 400, "jitter": 64, "scale": 16.0, "count": 64}


def check_state(model) -> None:
    """Raise ``ValueError`` naming the first inconsistency of a fitted model.

    Checks the model against its declarations (:mod:`eigenvision._spec`: its
    parameters, each fitted member's kind, shape and finiteness), then the
    relations between members that no single declaration states
    (``image_shape_`` against the features, a recogniser's blocks, a
    finder's perceptron against its cluster spaces), recursively into the
    models it holds.

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
    if hasattr(type(model), "_params"):
        check_params(model)
    check_declared_state(model)  # every savable class declares its state
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
    if isinstance(model, IdentityModel):
        _check_identity_model(model)
    if isinstance(model, PLDAFusion):
        _check_plda_fusion(model)
    if isinstance(model, PLDA):
        _check_plda(model)
    if isinstance(model, FisherVectors):
        _check_fisher_vectors(model)


def _shape(value, name, length=None):
    sides_ok = all(isinstance(v, Integral) and 1 <= v <= LIMITS["side"] for v in value)
    if not (isinstance(value, tuple) and (length is None or len(value) == length) and sides_ok):
        raise ValueError(
            f"{name} must be {length or 'some'} ints in [1, {LIMITS['side']}], got {value!r}"
        )
    return value


def _check_subspace(model):
    """``image_shape_`` holds the ``n_features_in_`` features (the declarations check the rest:
    ``components_`` (k, d) beside ``mean_`` (d,), ``n_features_in_`` d, ``n_components_`` k)."""
    name = type(model).__name__
    d = getattr(model, "n_features_in_", None)
    shape = getattr(model, "image_shape_", None)
    if d is None:
        return
    if shape is not None and int(np.prod(_shape(tuple(shape), f"{name}.image_shape_", 2))) != d:
        raise ValueError(f"{name}: image_shape_ {shape} does not hold its {d} features")


def _check_eigenspace(space):
    k = space.n_components_
    if len(space.eigenvalues_) < k:
        raise ValueError(f"Eigenspace.eigenvalues_ must hold at least its {k} components' values")


def _check_bayesian(space):
    for key in ("intra_variances_", "extra_variances_"):
        if not np.all(getattr(space, key) > 0):
            raise ValueError(f"BayesianSpace.{key} must be positive variances")
    if not (isinstance(space.intra_prior, Real) and 0 < space.intra_prior < 1):
        raise ValueError(f"BayesianSpace.intra_prior must lie in (0, 1), got {space.intra_prior!r}")
    calibration = getattr(space, "calibration_", None)
    if calibration is not None and not calibration[0] > 0:
        raise ValueError("BayesianSpace.calibration_ must be (a > 0, b)")
    check_state(space.pca_)


def _check_plda(model):
    """The steps chain: the PCA step's codes feed the LDA step (if any), whose codes the model
    reads; or one map, a compact model's ``step_``, in their place (each declaration binds only
    its own members' lengths)."""
    name = type(model).__name__
    _check_pair_basis(model, name)
    pca, step = getattr(model, "pca_", None), getattr(model, "step_", None)
    if (pca is None) == (step is None):
        raise ValueError(
            f"{name} needs its PCA step (pca_) or, compact, one map (step_) in its place; "
            f"the file holds {'both' if step is not None else 'neither'}"
        )
    lda = getattr(model, "lda_", None)
    _check_eight_bits(model, name, "step_", "step_scale_")
    if step is not None:
        if lda is not None:
            raise ValueError(f"{name}.step_ holds the LDA step already; lda_ must be None")
        return  # step_'s rows and the loadings' bind through their declarations (r)
    steps = pca.n_components_
    if lda is not None and lda.shape[0] != steps:
        raise ValueError(f"{name}.lda_ maps {lda.shape[0]} codes, the PCA step gives {steps}")
    width = steps if lda is None else lda.shape[1]
    if model.identity_loadings_.shape[0] != width:
        raise ValueError(
            f"{name}.identity_loadings_ has {model.identity_loadings_.shape[0]} rows, "
            f"its codes are {width} wide"
        )


def _check_eight_bits(model, name, member, scale_member):
    """An integer ``member`` is int8 with its ``scale_member``
    (:func:`~eigenvision.identity.quantized`); a float one has none."""
    values, scale = getattr(model, member, None), getattr(model, scale_member, None)
    if values is None or values.dtype.kind == "f":
        if scale is not None:
            raise ValueError(f"{name}.{scale_member} scales an 8-bit {member}, the file's is float")
        return
    if values.dtype != np.int8 or scale is None:
        raise ValueError(
            f"{name}.{member} is {values.dtype}: integers must be int8 with their "
            f"{scale_member} (eigenvision.identity.quantized writes both); the file is damaged"
        )


def _check_pair_basis(model, name):
    """A kept ``pair_basis_`` makes both covariances diagonal, ``V^T S_w V = I`` and ``V^T S_b V``
    diagonal (:func:`~eigenvision.identity.diagonal_pair_scoring` reads only ``psi`` from it)."""
    basis = getattr(model, "pair_basis_", None)
    if basis is None:
        return
    basis = basis.astype(np.float64)  # a quantized model keeps them in float32
    within = basis.T @ model.within_covariance_.astype(np.float64) @ basis
    # V^T S_b V = projected^T projected
    projected = model.identity_loadings_.astype(np.float64).T @ basis
    between = projected.T @ projected
    off = between - np.diag(np.diag(between))
    scale = max(1.0, float(np.abs(between).max()))
    if not (
        np.allclose(within, np.eye(len(within)), atol=1e-6) and np.abs(off).max() <= 1e-6 * scale
    ):
        raise ValueError(
            f"{name}.pair_basis_ does not make its covariances diagonal (V^T S_w V = I, "
            "V^T S_b V diagonal): the file is damaged; fit the model again"
        )


def _check_plda_fusion(model):
    widths = [int(w) for w in model.widths]
    names = [f"block{i}" for i in range(len(widths))]
    if list(model.models_) != names:
        raise ValueError(
            f"PLDAFusion.models_ must be {names}, one per width, got {list(model.models_)}"
        )
    held = [part.n_features_in_ for part in model.models_.values()]
    if held != widths or sum(widths) != model.n_features_in_:
        raise ValueError(
            f"PLDAFusion's block models read {held} features, its widths say {widths} "
            f"({model.n_features_in_} in all)"
        )


def _check_identity_model(model):
    fused = isinstance(model.plda_, PLDAFusion)
    count = len(model.descriptions())
    if fused != (count > 1) or (fused and len(model.plda_.models_) != count):
        raise ValueError(
            f"IdentityModel(descriptor={model.descriptor!r}, "
            f"illumination={model.illumination!r}) needs "
            + (f"a PLDAFusion of {count} descriptions" if count > 1 else "a PLDA")
            + f" as plda_, got {type(model.plda_).__name__}"
            + (f" of {len(model.plda_.models_)}" if fused else "")
        )
    check_state(model.plda_)
    _check_fisher_description(model)
    if model.alignment == "five_points" and (
        model.descriptor != "deep" or tuple(model.shape) != CHIP_SHAPE
    ):
        raise ValueError(
            f"IdentityModel(alignment='five_points') cuts dlib's chip for descriptor='deep' at "
            f"shape {CHIP_SHAPE}, got descriptor={model.descriptor!r}, shape={model.shape}"
        )
    _check_eight_bits(model, "IdentityModel", "cohort_coordinates_", "cohort_scale_")
    width = _code_width(model, axis=1)
    cohort = getattr(model, "cohort_coordinates_", None)
    if cohort is not None and cohort.shape[1] != width:
        raise ValueError(
            f"IdentityModel.cohort_coordinates_ must hold pair coordinates as wide as PLDA's "
            f"({width}), got {cohort.shape[1]} columns"
        )


def _check_fisher_description(model):
    """An identity model has a fitted ``fisher_`` of ``fisher_clusters`` Gaussians exactly
    when one of its descriptions is ``"fisher"``."""
    wanted = any(kind == "fisher" for kind, _, _ in model.descriptions())
    encoder = getattr(model, "fisher_", None)
    if wanted != (encoder is not None):
        raise ValueError(
            "IdentityModel.fisher_ must be a fitted FisherVectors exactly when a description "
            f"is 'fisher' (descriptor={model.descriptor!r}), got {type(encoder).__name__}"
        )
    if encoder is None:
        return
    if not isinstance(encoder, FisherVectors):
        raise ValueError(f"IdentityModel.fisher_ must be a FisherVectors, got {type(encoder)}")
    check_state(encoder)
    if encoder.n_clusters != model.fisher_clusters:
        raise ValueError(
            f"IdentityModel.fisher_ has {encoder.n_clusters} Gaussians, its fisher_clusters "
            f"says {model.fisher_clusters}"
        )


def _check_fisher_vectors(model):
    """The PCA's and the mixture's shapes agree with each other and the parameters; the
    weights are a distribution and the variances positive."""
    kept, width = model.pca_map_.shape[0], model.means_.shape[1]
    if kept != model.n_components or width != kept + 3:
        raise ValueError(
            f"FisherVectors: pca_map_ must have n_components ({model.n_components}) rows and "
            f"the means that many columns and 3 more; got {kept} rows and {width} columns"
        )
    if len(model.means_) != model.n_clusters or len(model.weights_) != model.n_clusters:
        raise ValueError(
            f"FisherVectors: means_, variances_ and weights_ must hold n_clusters "
            f"({model.n_clusters}) Gaussians, got {len(model.means_)} and {len(model.weights_)}"
        )
    if not (np.all(model.variances_ > 0) and abs(float(model.weights_.sum()) - 1.0) < 1e-6):
        raise ValueError("FisherVectors: variances_ must be positive and weights_ sum to 1")


def _code_width(identity, axis=0):
    """The width of an identity model's codes (``axis`` 0; 1: of its pair coordinates): its
    PLDA's, or its blocks' together."""
    plda = identity.plda_
    parts = plda.models_.values() if hasattr(plda, "models_") else [plda]
    return sum(part.identity_loadings_.shape[axis] for part in parts)


def _encoded_width(identity):
    """The width of :meth:`IdentityModel.encode`'s codes: PLDA's, then, with a distance fused,
    the descriptions."""
    width = _code_width(identity)
    if getattr(identity, "distance_weight_", None) is not None:
        width += _descriptor_width(identity.plda_)
    return width


def _check_recognizer(model):
    model.check_parameters()
    statistics = getattr(model, "score_statistics_", None)
    if model.score_norm == "znorm" and (statistics is None or not np.all(statistics[:, 1] > 0)):
        raise ValueError("Recognizer.score_statistics_ must be (n_classes, 2), std > 0, for znorm")
    image_shape = _shape(tuple(model.image_shape_), "Recognizer.image_shape_", 2)
    if model.shape is not None and tuple(model.shape) != image_shape:
        raise ValueError(f"Recognizer.shape {model.shape} differs from image_shape_ {image_shape}")
    gallery = model.gallery_
    if len(gallery) == 0:
        raise ValueError("Recognizer.gallery_ is empty")
    scales = model.block_scales_
    if scales.shape != (len(model.block_names_),) or not np.all(scales > 0):
        raise ValueError("Recognizer.block_scales_ must be > 0, one per block")
    weightless = _weightless_blocks(model)
    if not np.array_equal(np.isinf(scales), weightless):
        raise ValueError(
            "Recognizer.block_scales_ may be infinite only for a block of weight 0 (and must be "
            f"there): blocks {list(model.block_names_)}, scales {scales.tolist()}"
        )
    width = 0
    if model.method == "plda":
        identity = model.feature  # check_parameters: a trained IdentityModel
        check_state(identity)
        if model.feature_ is not None:
            raise ValueError("Recognizer: method='plda' keeps its model in feature, not feature_")
        if tuple(identity.shape) != image_shape:
            raise ValueError(
                f"Recognizer: its identity model takes {tuple(identity.shape)} crops, "
                f"not {image_shape}"
            )
        width += _encoded_width(identity)
    elif model.feature_ is not None:
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
    if detector.score == "decision":
        spaces = getattr(detector, "nonfeature_spaces_", None) or {}
        if tuple(spaces) != features or getattr(detector, "decision_", None) is None:
            raise ValueError(
                "FeatureDetector: score='decision' needs nonfeature_spaces_ and a "
                "decision_ for each feature"
            )
        for feature, shape in zip(features, expected, strict=True):
            check_state(spaces[feature])
            if tuple(spaces[feature].image_shape_) != tuple(shape):
                raise ValueError(
                    f"FeatureDetector: the {feature} non-feature space is not {tuple(shape)}"
                )
    if np.any(np.diff(detector.score_quantiles_, axis=1) < 0):
        raise ValueError("FeatureDetector.score_quantiles_ must not decrease along each row")


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
    weights = getattr(finder, "prefilter_weights_", None)
    if weights is not None and weights.shape != window:
        raise ValueError(
            f"FaceFinder: prefilter_weights_ of shape {weights.shape}, not the window {window}"
        )
    features = 2 * (len(spaces) - 1)
    if len(finder.network_mean_) != features or np.any(finder.network_scale_ <= 0):
        raise ValueError(
            f"FaceFinder: the perceptron's weights do not fit {features} features "
            "(2 per cluster space)"
        )
    for name in ("locator_", "placer_"):
        part = getattr(finder, name, None)
        if not isinstance(part, FeatureDetector):
            raise ValueError(
                f"FaceFinder.{name} must be a FeatureDetector, not {type(part).__name__}"
            )
        check_state(part)
