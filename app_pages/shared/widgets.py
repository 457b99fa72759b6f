"""Controls and displays more than one page uses."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app_pages.shared.models import small_face_finder, trained_finder
from eigenvision._base import format_below
from eigenvision.faces.crops import identity_threshold


def component_slider(label: str, largest: int, default: int, key: str) -> int:
    """A slider from 1 to ``largest`` (a fixed 1 when the data allow no choice)."""
    if largest <= 1:
        st.sidebar.caption(f"{label}: 1 (the data allow no more)")
        return 1
    return st.sidebar.slider(label, 1, largest, min(default, largest), key=key)


def to_display(image: np.ndarray) -> np.ndarray:
    low, high = float(image.min()), float(image.max())
    return (image - low) / (high - low) if high > low else np.zeros_like(image)


def probability_text(probability: float) -> str:
    """A probability as users read it: two significant digits near 0, enough nines near 1
    (0.9995 is not "1.00")."""
    if probability < 0.5:
        return f"{probability:.2g}"
    return format_below(probability, 1.0, 2) if probability < 1 else "1"


@st.cache_data(show_spinner=False, max_entries=8)
def face_candidates(image: np.ndarray, small_faces: bool = False) -> list:
    """Every face the finder sees at any confidence (the slider filters without searching);
    with ``small_faces``, searched below its window too."""
    finder = small_face_finder() if small_faces else trained_finder()
    return finder.find(image, threshold=0.0, max_faces=20)


def faces_found(
    image: np.ndarray, key: str, *, identity: bool = False, small_faces: bool = False
) -> tuple[list, float]:
    """The finder's faces at the sidebar's probability (default: its calibrated threshold, or
    for naming them its stricter identity threshold); ``small_faces``: searched below its
    window too."""
    finder = trained_finder()
    least = st.sidebar.slider(
        "Smallest face probability" + (" to name" if identity else ""),
        0.0,
        1.0,
        float(round(identity_threshold(finder) if identity else finder.threshold, 4)),
        0.0001,
        format="%.4f",
        key=key,
    )
    with st.spinner("Searching the photo for faces (a few seconds) ..."):
        candidates = face_candidates(image, small_faces)
    found = [face for face in candidates if face.confidence >= least]
    if not found:
        best = max((face.confidence for face in candidates), default=None)
        hint = (
            ""
            if best is None
            else (
                f"; the likeliest candidate has probability {format_below(best, least, 4)}: "
                "lower the slider to see it"
            )
        )
        st.info(f"No face at probability {least:g} or more{hint}.")
    return found, least
