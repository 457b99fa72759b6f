"""The demo's image sets: the built-in and found datasets, and zips of label folders."""

from __future__ import annotations

import streamlit as st

import eigenvision as ev
from app_pages.shared.uploads import MAX_UPLOAD_PIXELS
from eigenvision import datasets


def available_sets(labels=None) -> dict[str, str]:
    """Menu title -> dataset name of the sets that can be shown here (built in or found).

    ``labels``: only the sets whose labels are of these kinds (``Dataset.labels``).
    """
    return {
        datasets.REGISTRY[name].title: name
        for name in datasets.available()
        if datasets.REGISTRY[name].interactive
        and (labels is None or datasets.REGISTRY[name].labels in labels)
    }


@st.cache_resource(show_spinner="Loading the dataset ...")
def load_set(name: str) -> ev.ImageSet:
    return datasets.load(name)


@st.cache_resource(show_spinner="Reading the zip ...", max_entries=4)
def load_zip(data: bytes) -> ev.ImageSet:
    return ev.io.load_image_zip(data, size=(64, 64), on_error="skip", max_pixels=MAX_UPLOAD_PIXELS)


def choose_set(key: str, labels=None) -> ev.ImageSet | None:
    sets = available_sets(labels)
    choice = st.sidebar.selectbox("Dataset", [*sets, "upload a zip"], key=f"{key}-set")
    if choice != "upload a zip":
        return load_set(sets[choice])
    upload = st.sidebar.file_uploader("zip of label folders", type=["zip"], key=f"{key}-zip")
    if upload is None:
        st.info("Upload a .zip with one folder per label (e.g. alice/1.png, bob/1.png).")
        return None
    try:
        return load_zip(upload.getvalue())
    except (ev.ImageSetError, ev.ImageLoadError) as exc:
        st.error(f"Could not read that zip: {exc}")
        return None


def labelled_halves(key: str, purpose: str, labels=None):
    """The chosen set and its halves (first half of each class, the rest), or None."""
    images = choose_set(key, labels)
    if images is None:
        return None
    if len(images.classes) < 2:
        st.warning(f"{purpose} needs at least two labels; pick another dataset.")
        return None
    return (images, *images.split(0.5, order="name"))
