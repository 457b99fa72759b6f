"""Same person? Two photos' most confident faces compared by the identity model."""

from __future__ import annotations

import streamlit as st

from app_pages.shared.models import identity_choice, identity_model, trained_finder
from app_pages.shared.uploads import PHOTO_TYPES, read_photo
from eigenvision.faces.compare import compare_crops, model_crop
from eigenvision.faces.crops import face_thumbnail, identity_faces, identity_threshold


def compare_page() -> None:
    st.header("Same person?")
    columns = st.columns(2)
    photos = []
    for column, key in zip(columns, ("compare-a", "compare-b"), strict=True):
        upload = column.file_uploader("a photo", type=PHOTO_TYPES, key=key)
        photos.append(None if upload is None else (upload.name, read_photo(upload, colour=True)[0]))
    model_name = identity_choice("compare-identity")
    if any(photo is None for photo in photos):
        st.info(
            "Upload two photos: the most confident face of each is compared by the identity "
            "model chosen in the sidebar (trained on LFW's news photos)."
        )
        return
    if any(photo is None for _, photo in photos):
        return  # read_photo said what is wrong
    finder, model = trained_finder(), identity_model(model_name)
    crops = []
    for column, (name, photo) in zip(columns, photos, strict=True):
        with st.spinner(f"Finding the faces of {name} ..."):
            found = identity_faces(finder, photo)
        if not found:
            st.error(
                f"{name} shows no face at the identity threshold "
                f"{identity_threshold(finder):.2f}: upload a photo with the face large and frontal."
            )
            return
        shown = f"{name}: the most confident of {len(found)} faces" if len(found) > 1 else name
        column.image(face_thumbnail(photo, found[0]), width=160, caption=shown)
        crops.append(model_crop(photo, found[0], model))
    result = compare_crops(*crops, model)
    verdict = "the same person" if result.accepted else "two different people"
    st.subheader(f"{verdict.capitalize()}: P(same person) {result.probability:.2f}")
    st.caption(
        f"The {model_name} identity model, on faces of P(face) >= "
        f"{identity_threshold(finder):g}. Score {-result.distance:.2f}, the log-likelihood "
        f"ratio normalised against the model's cohort (the model decides 'same' from "
        f"{-result.threshold:.2f}). "
        "The probability is calibrated on LFW's news photos and checked on other sources (the "
        "calibration experiment); the Group page compares faces against each other instead."
    )


compare_page()
