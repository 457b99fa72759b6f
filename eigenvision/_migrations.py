"""Older model files brought to today's format, in one place: no runtime code reads old forms.

:func:`~eigenvision.load` reads a file's description (its JSON header) and, for a file
written in an older format, hands it to :func:`upgrade` before any model is built. Format 1
files wrote the parameters a class had then: a parameter added later takes the value that
keeps the file's behaviour (:data:`FORMER_DEFAULTS`, by class), and a
:class:`~eigenvision.FaceFinder` saved before it had its own placer places with its locator.
Format 2 files record every parameter and member their class has. Format 3 files hold a
:class:`~eigenvision.Recognizer`'s features in its encoder (``encoder_``, an
:class:`~eigenvision.codes.Encoder`) and write a model read twice once: a format 2
recognizer's features are moved there (:func:`_encoder_of_recognizer`). Format 4 files hold a
:class:`~eigenvision.FaceFinder`'s stages as its parameters (``search``, ``decision``,
``appearance``), each with its own settings and fitted members: a format 3 finder's are moved
there (:func:`_stages_of_finder`), and an :class:`~eigenvision.IdentityModel`'s description
parameters and mixture (``fisher_``) into its ``describer`` (:func:`_describer_of_identity_model`).
"""

from __future__ import annotations

import numpy as np

from ._errors import ModelFileError

__all__ = ["FORMER_DEFAULTS", "DERIVED", "upgrade"]

#: Parameters added after format 1 files were written, by class, with the value that keeps
#: such a file's behaviour (a class's default now may differ), in the header's JSON forms.
FORMER_DEFAULTS = {
    "FaceFinder": {
        "equalize": False,
        "n_networks": 1,
        "feature_weight": 0.0,
        "antialias": False,
        "n_refined": 0,
        "tilted_scale": 1.0,
        "prefilter_recall": None,
        "prefilter_stride": 1,
        "appearance_gate": -1.0,
    },
    "IdentityModel": {
        "mirror": False,
        "lbp_cells": {"tuple": [8, 8]},
        "lbp_radii": {"tuple": [1, 2]},
        "hog_cell": 8,
        "fisher_clusters": 128,
        "descriptor_scales": {"tuple": [1.0]},
        "cohort_size": 0,
        "length_norm": False,
        "lda_components": None,
        "distance_fusion": False,
        "alignment": "eyes",
    },
    "PLDA": {"lda_components": None},
    "PLDAFusion": {"lda_components": None},
}


#: Members format 1 files may hold that today's models make from others when asked
#: (PLDA's pair ratio forms and its posterior map, from its covariances): dropped on reading.
DERIVED = {
    "PLDA": ("quadratic_", "cross_", "offset_", "components_"),
    "JointBayesian": ("quadratic_", "cross_", "offset_", "components_"),
}

#: Members of format 1 files that no description-level step can make (they need the fitted
#: model and, for the cohort, faces the file no longer holds): such files are refused.
_REBUILD = {
    "PLDA": "pair_basis_",
    "JointBayesian": "pair_basis_",
}


def upgrade(description: dict, version: int, arrays: dict, path="the file") -> dict:
    """A model description written in format ``version``, as today's format writes it.

    Parameters
    ----------
    description : dict
        The ``"model"`` entry of a file's header (changed in place, nested models too).
    version : int
        The file's ``format_version``.
    arrays : dict of str to ndarray
        The file's arrays by member name (derived members are removed from it).
    path : path-like, optional
        How errors name the file.

    Returns
    -------
    dict
        ``description``.

    Raises
    ------
    ModelFileError
        A member today's models need cannot be made from the file (a PLDA from before its
        pair basis, an identity model whose cohort is stored as codes): train it again.
    """
    if not isinstance(description, dict):
        return description
    if version < 2:
        _from_format_1(description, version, arrays, path)
    if version < 3:
        _walk(description, lambda model: _encoder_of_recognizer(model, arrays))
    if version < 4:
        _walk(description, lambda model: _stages_of_finder(model, arrays))
        _walk(description, _describer_of_identity_model)
    return description


def _from_format_1(description: dict, version: int, arrays: dict, path) -> dict:
    """A format 1 description as format 2 writes it (nested models too)."""
    name = description.get("class")
    prefix = description.get("prefix", "")
    state = description.get("state")
    if isinstance(state, dict):
        for member in DERIVED.get(name, ()):
            state.pop(member, None)
            arrays.pop(f"{prefix}{member}", None)
        needed = _REBUILD.get(name)
        has = (isinstance(state, dict) and needed in state) or f"{prefix}{needed}" in arrays
        stale = name == "IdentityModel" and (
            f"{prefix}cohort_" in arrays or state.get("cohort_") is not None
        )
        if (needed and not has and _fitted(state, arrays, prefix)) or stale:
            raise ModelFileError(
                f"{path}: a {name} written before eigenvision kept "
                f"{'its cohort in pair coordinates' if stale else needed}; train the model "
                "again with this eigenvision (for the shipped models: eigenvision build-models)"
            )
        if name == "IdentityModel":
            state.pop("cohort_", None)
    params = description.get("params")
    if isinstance(params, dict):
        for name, value in FORMER_DEFAULTS.get(description.get("class"), {}).items():
            params.setdefault(name, value)
        for value in params.values():
            if isinstance(value, dict) and set(value) == {"model"}:
                _from_format_1(value["model"], version, arrays, path)
    children = description.get("children")
    if isinstance(children, dict):
        for child in children.values():
            if isinstance(child, dict) and set(child) == {"dict"}:
                for member in child["dict"].values():
                    _from_format_1(member, version, arrays, path)
            else:
                _from_format_1(child, version, arrays, path)
        if description.get("class") == "FaceFinder" and "locator_" in children:
            children.setdefault("placer_", children["locator_"])  # placed by its locator then
    return description


def _fitted(state, arrays, prefix) -> bool:
    """Whether a description holds fitted members (an unfitted parameter model has none)."""
    return bool(state) or any(
        key.startswith(prefix) and "/" not in key[len(prefix) :] for key in arrays
    )


#: The parameters a :class:`~eigenvision.Recognizer`'s encoder shares with it (format 3).
ENCODER_PARAMS = (
    "n_components",
    "method",
    "feature",
    "metric",
    "shape",
    "mirror",
    "jitter",
    "resize",
    "detector",
    "modular_components",
    "global_weight",
    "face_box",
)

#: The members of a format 2 recognizer that are its encoder's in format 3.
_ENCODER_MEMBERS = ("image_shape_", "feature_", "feature_spaces_", "block_names_", "block_scales_")


def _move_members(source: dict, target: dict, names: dict, arrays: dict) -> None:
    """Fitted members of the model ``source`` describes moved to ``target``'s description,
    ``names`` mapping each old name to its new one: JSON state, child models and arrays (the
    arrays renamed under ``target``'s prefix)."""
    state, children = source.setdefault("state", {}), source.setdefault("children", {})
    prefix = source.get("prefix", "")
    for old, new in names.items():
        if old in state:
            target["state"][new] = state.pop(old)
        if old in children:
            target["children"][new] = children.pop(old)
        if f"{prefix}{old}" in arrays:
            arrays[f"{target['prefix']}{new}"] = arrays.pop(f"{prefix}{old}")


def _walk(description, visit):
    """Call ``visit`` on a description and every model description nested in it."""
    if not isinstance(description, dict) or "class" not in description:
        return
    visit(description)
    for value in (description.get("params") or {}).values():
        if isinstance(value, dict) and set(value) == {"model"}:
            _walk(value["model"], visit)
    for child in (description.get("children") or {}).values():
        members = (
            child["dict"].values()
            if isinstance(child, dict) and set(child) == {"dict"}
            else [child]
        )
        for member in members:
            _walk(member, visit)


def _encoder_of_recognizer(description: dict, arrays: dict) -> None:
    """A fitted format 2 recognizer's features (and their arrays) moved into ``encoder_``, whose
    model parameters are the recognizer's own (read once)."""
    if description.get("class") != "Recognizer":
        return
    prefix = description.get("prefix", "")
    state, children = description.setdefault("state", {}), description.setdefault("children", {})
    if "gallery_" not in state and f"{prefix}gallery_" not in arrays:
        return  # unfitted
    params = description.get("params") or {}
    encoder_prefix = f"{prefix}encoder_/"
    encoder = {
        "class": "Encoder",
        "params": {
            name: {"model": {"same_as": f"{prefix}@{name}/"}}
            if isinstance(params.get(name), dict) and set(params[name]) == {"model"}
            else params.get(name)
            for name in ENCODER_PARAMS
        },
        "state": {},
        "children": {},
        "prefix": encoder_prefix,
    }
    _move_members(description, encoder, {member: member for member in _ENCODER_MEMBERS}, arrays)
    children["encoder_"] = encoder


#: A format 3 finder's parameters by the stage that holds them in format 4, with their names
#: there (``None``: the finder keeps it).
FINDER_PARAMS = {
    "search": {
        "n_components": "n_components",
        "search_components": "search_components",
        "rotations": "rotations",
        "step": "step",
        "min_iod": "min_iod",
        "tilted_scale": "tilted_scale",
        "n_candidates": "n_candidates",
        "prefilter_recall": "prefilter_recall",
        "dffs_weight": "dffs_weight",
        "prefilter_stride": "prefilter_stride",
        "candidate_overlap": "overlap",
        "min_contrast": "min_contrast",
    },
    "decision": {
        "n_components": "n_components",
        "n_clusters": "n_clusters",
        "hidden_units": "hidden_units",
        "n_networks": "n_networks",
        "negatives_per_image": "negatives_per_image",
        "equalize": "equalize",
        "antialias": "antialias",
    },
    "appearance": {"appearance_gate": "gate"},
}

#: A format 3 finder's fitted members by the stage that holds them in format 4, with their names.
FINDER_MEMBERS = {
    "search": {
        "face_space_": "face_space_",
        "prefilter_weights_": "prefilter_weights_",
        "prefilter_bias_": "prefilter_bias_",
        "prefilter_cut_": "prefilter_cut_",
    },
    "decision": {
        "face_clusters_": "face_clusters_",
        "nonface_clusters_": "nonface_clusters_",
        **{
            f"network_{name}_": f"network_{name}_"
            for name in (
                "mean",
                "scale",
                "hidden_weights",
                "hidden_bias",
                "output_weights",
                "output_bias",
            )
        },
        "n_negatives_": "n_negatives_",
    },
    "appearance": {
        "appearance_weights_": "weights_",
        "appearance_bias_": "bias_",
        "appearance_offsets_": "offsets_",
        "appearance_fusion_": "fusion_",
    },
}

_STAGE_CLASSES = {
    "search": "CandidateSearch",
    "decision": "FaceDecision",
    "appearance": "AppearanceCheck",
}


def _stages_of_finder(description: dict, arrays: dict) -> None:
    """A format 3 finder's stage parameters and fitted members (and their arrays) moved into
    its stages, the ``search``, ``decision`` and ``appearance`` parameters of format 4."""
    params = description.get("params")
    if description.get("class") != "FaceFinder" or not isinstance(params, dict):
        return
    if any(name in params for name in FINDER_PARAMS):
        return  # its stages are there already: nothing to move
    prefix = description.get("prefix", "")
    state, children = description.setdefault("state", {}), description.setdefault("children", {})
    for stage, names in FINDER_PARAMS.items():
        stage_prefix = f"{prefix}@{stage}/"
        model = {
            "class": _STAGE_CLASSES[stage],
            "params": {new: params[old] for old, new in names.items() if old in params},
            "state": {},
            "children": {},
            "prefix": stage_prefix,
        }
        _move_members(description, model, FINDER_MEMBERS[stage], arrays)
        if stage == "decision" and "iod" in params and (model["children"] or model["state"]):
            model["state"]["iod_"] = params["iod"]
        if stage == "appearance":
            fitted = f"{stage_prefix}weights_" in arrays
            if fitted and f"{stage_prefix}offsets_" not in arrays:
                arrays[f"{stage_prefix}offsets_"] = np.array([[1.0, 0.0, 0.0]])  # its crop alone
        description["params"][stage] = {"model": model}
    for names in FINDER_PARAMS.values():
        for old in names:
            params.pop(old, None)
    if "eye_regressor_" not in children:
        state.setdefault("eye_regressor_", None)  # a file from before it had one


#: The parameters a format 3 identity model held that are its describer's in format 4.
DESCRIBER_PARAMS = (
    "shape",
    "descriptor",
    "illumination",
    "descriptor_scales",
    "lbp_cells",
    "lbp_radii",
    "hog_cell",
    "fisher_clusters",
    "mirror",
    "seed",
)


def _describer_of_identity_model(description: dict) -> None:
    """A format 3 identity model's description parameters and its mixture (``fisher_``) moved
    into its ``describer``, a :class:`~eigenvision.identity.describe.FaceDescriber`, of format
    4 (``seed`` stays the model's too: it also holds out the calibration's people)."""
    params = description.get("params")
    if description.get("class") != "IdentityModel" or not isinstance(params, dict):
        return
    if "describer" in params:
        return  # its describer is there already: nothing to move
    prefix = description.get("prefix", "")
    state, children = description.setdefault("state", {}), description.setdefault("children", {})
    describer = {
        "class": "FaceDescriber",
        "params": {name: params[name] for name in DESCRIBER_PARAMS if name in params},
        "state": {},
        "children": {},
        "prefix": f"{prefix}@describer/",
    }
    fitted = bool(state) or bool(children)
    if "fisher_" in children:
        describer["children"]["fisher_"] = children.pop("fisher_")
    elif fitted:
        describer["state"]["fisher_"] = state.pop("fisher_", None)
    for name in DESCRIBER_PARAMS:
        if name != "seed":
            params.pop(name, None)
    description["params"] = {"describer": {"model": describer}, **params}
