"""The forms a fitted identity model ships in: float16 maps, or 8-bit maps with a scale per row
(:func:`quantized`)."""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from .._base import check_fitted
from .fusion import PLDAFusion
from .model import IdentityModel, cohort_of
from .plda import PLDA

__all__ = ["half_precision", "quantized"]


def half_precision(model):
    """A copy of a fitted identity model whose large maps are kept in float16.

    Each description's map to its codes (a compact PLDA's ``step_``, ``(r, d)``)
    and the cohort's pair coordinates (``cohort_coordinates_``) are rounded
    to float16 and computed in float32 or wider, as before; each PLDA's
    copy of the training people's names (``classes_``, which scoring never
    reads) is left out. The rest (covariances, loadings, bases, the
    calibration) is kept as it is. Codes and ratios move by the round-off
    of float16, a relative ``2**-11`` in each weight; the calibration is
    the fitted model's. :func:`quantized` keeps the maps in 8 bits.

    Parameters
    ----------
    model : IdentityModel, PLDAFusion or PLDA
        Fitted; a PLDA with PCA and LDA steps is made :meth:`~PLDA.compact` first.

    Returns
    -------
    Same type as ``model``
    """
    return _shipped_form(model, "half_precision", _float16, _float16)


def quantized(model):
    """A copy of a fitted identity model whose large maps are kept in 8 bits: the form to ship.

    Each description's map to its codes (a compact PLDA's ``step_``, ``(r, d)``)
    is kept as 8-bit integers with one scale per row (``step_scale_``), the
    largest weight of a row at +-127 (symmetric per-channel quantisation,
    as Jacob et al. 2018 keep a layer's weights); the cohort's pair
    coordinates likewise with one scale per axis (``cohort_scale_``). Both
    are computed in float32 or wider, made once. The covariances, loadings
    and pair basis are kept in float32, each PLDA's copy of the training
    people's names (``classes_``, which scoring never reads) is left out,
    and the calibration is the fitted model's. A weight moves by at most
    half its row's step (``step_scale_ / 2``), the codes and ratios by the
    sum of those moves.

    Parameters
    ----------
    model : IdentityModel, PLDAFusion or PLDA
        Fitted (in any of these forms); a PLDA with PCA and LDA steps is made
        :meth:`~PLDA.compact` first.

    Returns
    -------
    Same type as ``model``

    References
    ----------
    B. Jacob, S. Kligys, B. Chen et al. (2018), Quantization and training of
    neural networks for efficient integer-arithmetic-only inference, CVPR.
    """
    return _shipped_form(
        model,
        "quantized",
        partial(_eight_bits, axis=1),
        partial(_eight_bits, axis=0),
        parameters=np.float32,
    )


def _shipped_form(model, name, store_map, store_cohort, *, parameters=None):
    """``model`` with each PLDA block's map kept by ``store_map`` and the cohort by
    ``store_cohort`` (each ``array -> (values, scale or None)``), and the blocks' covariances,
    loadings and pair basis in the dtype ``parameters`` (None: as they are)."""
    forms = (name, store_map, store_cohort)
    if isinstance(model, IdentityModel):
        check_fitted(model, "plda_")
        shipped = copy.copy(model)
        shipped.plda_ = _shipped_form(model.plda_, *forms, parameters=parameters)
        if getattr(model, "cohort_coordinates_", None) is not None:
            shipped.cohort_coordinates_, shipped.cohort_scale_ = store_cohort(cohort_of(model))
        return shipped
    if isinstance(model, PLDAFusion):
        check_fitted(model, "models_")
        shipped = copy.copy(model)
        shipped.models_ = {
            key: _shipped_form(block, *forms, parameters=parameters)
            for key, block in model.models_.items()
        }
        return shipped
    if not isinstance(model, PLDA):
        raise TypeError(
            f"{name} takes an IdentityModel, PLDAFusion or PLDA, got {type(model).__name__}"
        )
    shipped = model.compact()  # a copy
    shipped.step_, shipped.step_scale_ = store_map(shipped._step_map())
    for member in ("identity_loadings_", "within_covariance_", "pair_basis_"):
        value = getattr(shipped, member, None)
        if parameters is not None and value is not None:
            setattr(shipped, member, value.astype(parameters))
    shipped.classes_ = None
    return shipped


def _float16(values):
    """``values`` kept in float16, without a scale: ``(values, None)``."""
    return np.asarray(values).astype(np.float16), None


def _eight_bits(values, axis):
    """``values`` as int8 ``q`` and a float32 ``scale`` per slice along ``axis`` (1: per row, 0:
    per column), ``q * scale`` nearest ``values`` with each slice's largest magnitude at 127 (an
    all-zero slice: scale 1)."""
    values = np.asarray(values, dtype=np.float64)
    scale = np.abs(values).max(axis=axis, keepdims=True) / 127
    scale[scale == 0] = 1.0
    integers = np.rint(values / scale).astype(np.int8)
    return integers, scale.squeeze(axis).astype(np.float32)
