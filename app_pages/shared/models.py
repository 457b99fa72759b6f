"""The demo's models: one cache of the models fitted here, for all sessions, and the shipped
finder and identity models."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

import eigenvision as ev
from eigenvision import datasets
from eigenvision._base import BoundedCache
from eigenvision.faces.compare import default_identity_name
from eigenvision.identity import DEEP_INSTALL, deep_available

MODEL_CACHE_BYTES = 512 << 20  # fitted models kept for all sessions together


def model_bytes(value) -> int:
    """Bytes of the arrays a model (or a result) holds, models inside it included."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        return sum(model_bytes(v) for v in value.values())
    if hasattr(value, "__dict__"):
        return sum(model_bytes(v) for v in vars(value).values())
    return 0


@st.cache_resource
def model_cache() -> BoundedCache:
    """Fitted models of every session, keyed by the content they were fitted on."""
    return BoundedCache(MODEL_CACHE_BYTES, sizeof=model_bytes)


def fingerprint(images: ev.ImageSet) -> str:
    """A digest of an image set's pixels and labels: equal sets share fitted models, and
    one session's upload never answers for another's."""
    digest = hashlib.sha256(np.ascontiguousarray(images.images).tobytes())
    digest.update(repr(images.labels.tolist()).encode())
    return digest.hexdigest()


def fitted(kind: str, images: ev.ImageSet, compute, *options):
    with st.spinner(f"Fitting the {kind} ..."):
        return model_cache().get((kind, fingerprint(images), *options), compute)


def fitted_space(images: ev.ImageSet, n_components: int) -> ev.Eigenspace:
    return fitted(
        "eigenspace", images, lambda: ev.Eigenspace(n_components).fit(images.images), n_components
    )


def fitted_recognizer(
    train: ev.ImageSet, n_components: int, metric: str, method: str = "eigenfaces"
) -> ev.Recognizer:
    return fitted(
        "recognizer",
        train,
        lambda: ev.Recognizer(n_components, metric=metric, method=method).fit(train),
        n_components,
        metric,
        method,
    )


def rank_selection(images: ev.ImageSet) -> ev.RankSelection:
    return fitted("rank selection", images, lambda: ev.select_rank(images, n_permutations=5))


@st.cache_resource(show_spinner="Training the face space ...")
def face_space(n_components: int) -> tuple[ev.Eigenspace, bool]:
    """The face space for detection and whether it is the IMM face-window space.

    With IMM: the aligned face interiors of :func:`ev.face_windows` (finds the
    astronaut's face); without: scikit-image's 25 x 25 LFW crops (weaker).
    """
    if datasets.find_datasets().get("imm"):
        windows = ev.face_windows(datasets.load_imm())
        aligned = True
    else:
        faces = datasets.load_lfw_subset()
        faces = faces.images[faces.labels == "face"]
        windows = np.concatenate([faces, faces[:, :, ::-1]])
        aligned = False
    space = ev.Eigenspace(n_components).fit(ev.normalize_images(windows, standardize="norm"))
    return space, aligned


@st.cache_resource(show_spinner="Training the eye, nose and mouth detector on IMM ...")
def feature_detector() -> ev.FeatureDetector | None:
    if not datasets.find_datasets().get("imm"):
        return None
    return ev.FeatureDetector().fit(datasets.load_imm())


@st.cache_resource(show_spinner=False)
def trained_finder() -> ev.FaceFinder:
    return ev.faces.photos.default_finder()


@st.cache_resource(show_spinner=False)
def small_face_finder() -> ev.FaceFinder:
    """The trained finder searching below its window too (``photos.small_face_finder``)."""
    return ev.faces.photos.small_face_finder()


@st.cache_resource(show_spinner=False)
def identity_model(name: str) -> ev.IdentityModel:
    return ev.default_identity_model(name)


#: What the identity model choice says of each shipped model.
IDENTITY_CHOICES = {
    "deep": "deep: dlib's learned embedding under PLDA",
    "classical": "classical: LBP, HOG, DAISY and Fisher vectors under PLDA",
}


def identity_choice(key: str) -> str:
    """The identity model the user picks in the sidebar (``"deep"`` offered when installed)."""
    names = ["deep", "classical"] if deep_available() else ["classical"]
    default = default_identity_name()
    name = st.sidebar.radio(
        "Identity model",
        names,
        index=names.index(default) if default in names else 0,
        format_func=IDENTITY_CHOICES.get,
        key=key,
        help="Both are trained on LFW's news photos; the deep one tells people apart far "
        "better (the user guide compares them).",
    )
    if not deep_available():
        st.sidebar.caption(f"The deep model needs its packages: {DEEP_INSTALL}")
    return name


def model_download(model, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = ev.save(model, Path(folder) / name)
        st.download_button("Download the model (.npz)", path.read_bytes(), file_name=name)
