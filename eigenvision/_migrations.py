"""Older model files brought to today's format, in one place: no runtime code reads old forms.

:func:`~eigenvision.load` reads a file's description (its JSON header) and, for a file
written in an older format, hands it to :func:`upgrade` before any model is built. Format 1
files wrote the parameters a class had then: a parameter added later takes the value that
keeps the file's behaviour (:data:`FORMER_DEFAULTS`, by class), and a
:class:`~eigenvision.FaceFinder` saved before it had its own placer places with its locator.
Format 2 files record every parameter and member their class has.
"""

from __future__ import annotations

__all__ = ["FORMER_DEFAULTS", "upgrade"]

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


def upgrade(description: dict, version: int) -> dict:
    """A model description written in format ``version``, as format 2 writes it.

    Parameters
    ----------
    description : dict
        The ``"model"`` entry of a file's header (changed in place, nested models too).
    version : int
        The file's ``format_version``.

    Returns
    -------
    dict
        ``description``.
    """
    if version >= 2 or not isinstance(description, dict):
        return description
    params = description.get("params")
    if isinstance(params, dict):
        for name, value in FORMER_DEFAULTS.get(description.get("class"), {}).items():
            params.setdefault(name, value)
        for value in params.values():
            if isinstance(value, dict) and set(value) == {"model"}:
                upgrade(value["model"], version)
    children = description.get("children")
    if isinstance(children, dict):
        for child in children.values():
            if isinstance(child, dict) and set(child) == {"dict"}:
                for member in child["dict"].values():
                    upgrade(member, version)
            else:
                upgrade(child, version)
        if description.get("class") == "FaceFinder" and "locator_" in children:
            children.setdefault("placer_", children["locator_"])  # placed by its locator then
    return description
