"""The people the Recognise page knows: from a model file, a model trained here on a dataset, or
photos of the user's own."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

import eigenvision as ev
from app_pages.shared.models import (
    fitted_recognizer,
    fitted_space,
    identity_choice,
    identity_model,
    trained_finder,
)
from app_pages.shared.uploads import uploaded_photos
from app_pages.shared.widgets import component_slider
from eigenvision._base import counted
from eigenvision.codes import allowed_metrics
from eigenvision.faces.compare import model_crop
from eigenvision.openset import reads_its_gallery

#: The share of strangers the Recognise page's default threshold lets in, when calibrated on the
#: enrolled people themselves.
GALLERY_FAR = 0.01


#: The whole-face methods the Recognise page offers, and the most components each allows
#: for n enrolled images of c people.
WHOLE_FACE_METHODS = {
    "eigenfaces": lambda n, c: n - 1,
    "fisherfaces": lambda n, c: c - 1,
    "bayesian": lambda n, c: n - c - 1,
}


def uploaded_recognizer() -> ev.Recognizer | None:
    """The Recognizer of the sidebar's model file, or None (none given, or refused: st.error)."""
    upload = st.sidebar.file_uploader(
        "Model file (.npz, optional)", type=["npz"], key="recognise-model"
    )
    if upload is None:
        return None
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "model.npz"
            path.write_bytes(upload.getvalue())
            model = ev.load(path)
        if not isinstance(model, ev.Recognizer):
            raise ev.ModelFileError(f"it holds a {type(model).__name__}, not a Recognizer")
    except ev.ModelFileError as exc:
        st.error(f"That model file was refused: {exc}. Using a model trained here instead.")
        return None
    feature = (
        "the identity model's score"
        if model.method == "plda"
        else f"{model.n_components} components, {model.metric} metric"
    )
    st.sidebar.caption(f"Using the uploaded model: {model.method}, {feature}.")
    return model


def sidebar_recognizer(images: ev.ImageSet, gallery: ev.ImageSet) -> ev.Recognizer | None:
    """A Recognizer trained on ``gallery`` with the sidebar's method, components and metric
    (None, with a warning, when the split cannot train that method)."""
    method = st.sidebar.selectbox("Method", list(WHOLE_FACE_METHODS), key="method")
    people = len(np.unique(gallery.labels))
    limit = WHOLE_FACE_METHODS[method](len(gallery), people)
    if method == "bayesian" and limit >= 1:  # the intrapersonal model lives in the data's span
        limit = min(limit, fitted_space(gallery, None).n_components_ - 1)
    largest = int(min(150, limit, np.prod(images.image_shape)))
    if largest < 1:
        needs = {
            "eigenfaces": "at least two enrolled images",
            "fisherfaces": "at least two people",
            "bayesian": "two or more images of some people (differences of one person's images)",
        }[method]
        st.warning(
            f"{method} needs {needs}; this split enrols {len(gallery)} images of "
            f"{people} people. Pick another method or dataset."
        )
        return None
    k = component_slider("Components", largest, 40 if method != "bayesian" else 20, "recognise-k")
    metrics = list(allowed_metrics(method))
    metric = st.sidebar.selectbox("Metric", metrics, key="metric")
    return fitted_recognizer(gallery, k, metric, method)


#: Where the Recognise page takes the people it knows from.
GALLERIES = ("a dataset or a model file", "photos of my own (zip)")


def photo_gallery() -> ev.Recognizer | None:
    """A Recognizer of the people in an uploaded zip of photos (a folder per person, one face
    a photo), enrolled with the shipped identity model: nothing is trained on the photos."""
    upload = st.sidebar.file_uploader(
        "Photos of the people (zip: a folder per person)", type=["zip"], key="gallery-zip"
    )
    if upload is None:
        st.info(
            "Upload a zip with one folder per person, named after them, holding one or more "
            "photos of that person (one face each, any size). Each face is found, aligned and "
            "enrolled with the identity model in data/ (trained on other people: nothing is "
            "trained on yours); then upload a photo and every face in it is named."
        )
        return None
    name = identity_choice("gallery-identity")
    key = hashlib.sha256(upload.getvalue()).hexdigest() + name
    cached = st.session_state.get("gallery-model")
    if cached is not None and cached[0] == key:
        return cached[1]
    finder = trained_finder()
    model = identity_model(name)
    recognizer = ev.Recognizer(method="plda", feature=model)
    photos, left_out = [], []
    for name, photo in uploaded_photos([upload]):
        person = Path(name).parent.name
        if person == upload.name:  # at the top of the zip: whose is it?
            left_out.append(f"{name} (not in a person's folder)")
        else:
            photos.append((person, name, photo))
    bar = st.progress(0.0, text="finding faces ...")
    crops, labels = [], []
    for index, (person, name, photo) in enumerate(photos):
        bar.progress(index / len(photos), text=f"finding faces: {name}")
        try:
            face = ev.single_face(finder, photo, name=name)
        except ev.NoFaceError:  # the library's advice names settings this page does not have
            left_out.append(f"{name} (no face found: a larger, frontal face helps)")
            continue
        except ev.FaceCountError:
            left_out.append(f"{name} (several faces: crop the photo to the one person)")
            continue
        crops.append(model_crop(photo, face, model))
        labels.append(person)
    bar.progress(1.0, text=f"{len(crops)} faces of {len(set(labels))} people")
    if left_out:
        st.warning("Left out: " + "; ".join(left_out[:10]) + (" ..." if len(left_out) > 10 else ""))
    if len(crops) < 2:
        st.error(
            f"The zip gave {counted(len(crops), 'usable photo')}; enrolling needs at least two "
            "photos with one face each, in folders named after the people "
            "(people.zip/Alice/1.jpg)."
        )
        return None
    recognizer.fit(np.stack(crops), labels)
    if reads_its_gallery(recognizer):  # as `eigenvision train --photos`: the download keeps it
        recognizer.centre_on_gallery()  # the enrolled photos' conditions are the probes'
        recognizer.calibrate_threshold(far=GALLERY_FAR)
    recognizer.set_params(finder=finder)  # probes are photos, cut as the faces above
    st.session_state["gallery-model"] = (key, recognizer)
    return recognizer
