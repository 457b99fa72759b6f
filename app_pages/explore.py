"""Explore: an eigenspace's mean, eigen-images, spectrum and a morph along its components."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app_pages.shared.data import choose_set
from app_pages.shared.models import fitted_space, model_download, rank_selection
from app_pages.shared.widgets import component_slider, to_display
from eigenvision import plot


def explorer() -> None:
    st.header("Eigenspace explorer")
    images = choose_set("explore")
    if images is None:
        return
    largest = int(min(100, len(images) - 1, np.prod(images.image_shape)))
    if largest < 1:
        st.warning("The explorer needs at least two images; pick another dataset.")
        return
    k = component_slider("Components", largest, 20, "explore-k")
    space = fitted_space(images, k)
    st.caption(
        f"{len(images)} images of {images.image_shape[0]} x {images.image_shape[1]} pixels; "
        f"{k} components keep {100 * space.explained_variance_ratio_.sum():.1f}% of the variance."
    )
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Mean and eigen-images")
        st.pyplot(plot.eigenimages(space, n=min(11, k), ncols=6))
    with right:
        st.subheader("Spectrum")
        rank = rank_selection(images)
        shown = min(60, len(rank.spectrum))
        st.pyplot(
            plot.spectrum(
                rank.spectrum[:shown],
                reference=rank.reference[:, :shown],
                rank=rank.rank,
                labels=("data", "column-permuted"),
            )
        )
        st.caption(f"Parallel analysis keeps {rank.rank} components.")
    st.subheader("Morph: m + z1 s1 u1 + ... + z5 s5 u5")
    n_sliders = min(5, k)
    columns = st.columns(n_sliders + 1)
    z = np.zeros(k)
    for i in range(n_sliders):
        with columns[i]:
            z[i] = st.slider(f"z{i + 1} (std)", -3.0, 3.0, 0.0, 0.1, key=f"z{i + 1}")
    codes = (z * np.sqrt(space.eigenvalues_[:k]))[None]
    morph = space.inverse_transform(codes)[0].reshape(space.image_shape_)
    with columns[-1]:
        st.image(np.clip(to_display(morph), 0, 1), caption="reconstruction", width=160)
    model_download(space, "eigenspace.npz")


explorer()
