"""Recognise: name a held-out or uploaded image, or every face of a photo."""

from __future__ import annotations

import numpy as np
import streamlit as st

import eigenvision as ev
from app_pages.shared.data import available_sets, labelled_halves
from app_pages.shared.galleries import (
    GALLERIES,
    photo_gallery,
    sidebar_recognizer,
    uploaded_recognizer,
)
from app_pages.shared.models import model_download
from app_pages.shared.naming import name_every_face, nearness, threshold_slider
from app_pages.shared.uploads import IMAGE_TYPES, PHOTO_TYPES, read_photo, read_upload
from app_pages.shared.widgets import to_display
from eigenvision.faces.compare import identity_model_name


def name_faces_of_an_upload(recognizer: ev.Recognizer, probes: ev.ImageSet | None = None) -> None:
    """An uploaded photo with every face named (``probes``: held-out images of the enrolled
    people, for the default threshold)."""
    upload = st.file_uploader("photo", type=PHOTO_TYPES, key="recognise-photo")
    photo = None if upload is None else read_photo(upload, colour=True)[0]
    if photo is not None:
        name_every_face(photo, recognizer, probes)


def recognise_from_photos() -> None:
    """The Recognise page with a gallery of the user's own photos."""
    recognizer = photo_gallery()
    if recognizer is None:
        return
    people = recognizer.classes_
    st.caption(
        f"The {identity_model_name(recognizer.feature)} identity model enrolled "
        f"{len(recognizer.gallery_labels_)} photos of {len(people)} people: "
        + ", ".join(map(str, people[:20]))
        + (" ..." if len(people) > 20 else "")
    )
    name_faces_of_an_upload(recognizer)
    model_download(recognizer, "recognizer.npz")


def recognise() -> None:
    st.header("Recognise")
    if st.sidebar.radio("People to recognise", GALLERIES, key="gallery") == GALLERIES[1]:
        recognise_from_photos()
        return
    recognizer = uploaded_recognizer()
    trained_here = recognizer is None
    enrolled_held_out = None  # held-out images of the people a model trained here enrols
    if not trained_here and recognizer.finder is not None:  # needs no dataset
        st.info(
            "This model was trained on photos (train --photos): it finds, cuts and names "
            "every face of an uploaded photo."
        )
        source = st.radio("Probe", ["upload a photo (every face)"], horizontal=True)
    else:
        # recognition names people or digits: the face / non-face set names no one
        chosen = labelled_halves("recognise", "Recognition", labels=("people", "digits"))
        if chosen is None:
            return
        images, gallery, probes = chosen
        if trained_here:  # the sidebar's options train one; an uploaded model brings its own
            recognizer = sidebar_recognizer(images, gallery)
            if recognizer is None:
                return
            enrolled_held_out = probes
        sources = ["a held-out image", "upload an image", "upload a photo (every face)"]
        if len(probes) == 0:  # one image per person: every image is enrolled, none held out
            st.info(
                "Each person has a single image: all are enrolled and none is held out to try. "
                "Upload an image or a photo to recognise, or add a second image per person."
            )
            sources = sources[1:]
        if st.session_state.get("recognise-set") in available_sets(("digits",)):
            sources.remove("upload a photo (every face)")
            st.caption(
                "Naming the faces of a photo needs faces by person: the AT&T faces "
                "('eigenvision fetch att', then set EIGENVISION_DATA) or a zip of your own."
            )
        source = st.radio("Probe", sources, horizontal=True)
    if source == "upload a photo (every face)":
        name_faces_of_an_upload(recognizer, enrolled_held_out)
        return
    if source == "upload an image":
        upload = st.file_uploader("probe image", type=IMAGE_TYPES)
        if upload is None:
            return
        probe = read_upload(upload)
        if probe is None:
            return
        probe = ev.transform.resize(probe, recognizer.image_shape_)
        truth = None
    else:
        index = 0
        if len(probes) > 1:
            index = st.slider("Held-out image", 0, len(probes) - 1, 0, key="probe-index")
        probe, truth = probes.images[index], probes.labels[index]
        if probe.shape != recognizer.image_shape_:  # a model file made for other images
            st.info(f"The model takes {recognizer.image_shape_} images; the probe is resized.")
            probe = ev.transform.resize(probe, recognizer.image_shape_)
    distances, labels, indices = recognizer.kneighbors(
        probe[None], k=min(15, len(recognizer.gallery_)), return_indices=True
    )
    threshold = threshold_slider(recognizer, enrolled_held_out, distances[0], key="threshold")
    decision = labels[0, 0] if distances[0, 0] <= threshold else ev.UNKNOWN
    verdict = f"**{decision}**" + ("" if truth is None else f" (truth: {truth})")
    st.markdown(f"Decision: {verdict}, nearest {nearness(recognizer, distances[0, 0])}")
    probability = recognizer.verify(probe, labels[0, 0]).probability
    if probability is not None:
        st.markdown(
            f"P(same person as {labels[0, 0]}) = {probability:.3f} "
            "(Bayesian MAP similarity, prior 0.5)"
        )
    space = recognizer.feature_
    if isinstance(space, ev.Eigenspace):
        flat = probe.reshape(1, -1)
        reconstruction = space.reconstruct(flat)[0].reshape(recognizer.image_shape_)
        a, b = st.columns(2)
        a.image(to_display(probe), caption="probe", width=140)
        b.image(
            np.clip(to_display(reconstruction), 0, 1),
            caption=f"reconstruction (DFFS {space.dffs(flat)[0]:.3f})",
            width=140,
        )
    st.subheader("Nearest enrolled images")
    columns = st.columns(5)
    for rank, (label, distance, index) in enumerate(
        zip(labels[0], distances[0], indices[0], strict=True)
    ):
        with columns[rank % 5]:
            if trained_here and index < len(gallery):
                st.image(to_display(gallery.images[index]), width=90)
            st.caption(f"{rank + 1}. {label}: {nearness(recognizer, distance)}")
    model_download(recognizer, "recognizer.npz")


recognise()
