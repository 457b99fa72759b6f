"""Group: the faces of uploaded photos grouped by person."""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from app_pages.shared.models import identity_choice, identity_model, trained_finder
from app_pages.shared.uploads import MAX_GROUP_PHOTOS, PHOTO_TYPES, uploaded_photos
from eigenvision._base import counted
from eigenvision.faces.crops import face_thumbnail, identity_threshold
from eigenvision.faces.groups import (
    CALIBRATED_CUT,
    LEARNT_CUT,
    MIN_SET,
    faces_of_photo,
    group_codes,
    grouping_summary,
)


def found_faces(photos, name: str) -> tuple[list, np.ndarray | None]:
    """Every face of the photos as ``(photo index, Face)`` and its code in the identity model
    ``name``, found and described once per upload and model (the sliders regroup them without
    either again)."""
    digest = hashlib.sha256(name.encode())
    for _, photo in photos:  # the whole pixels: two uploads alike at the top are not one
        digest.update(repr(photo.shape).encode())
        digest.update(np.ascontiguousarray(photo).tobytes())
    key = digest.hexdigest()
    cached = st.session_state.get("group-faces")
    if cached is not None and cached[0] == key:
        return cached[1], cached[2]
    finder, model = trained_finder(), identity_model(name)
    bar = st.progress(0.0, text="finding faces ...")
    owners, crops = [], []
    for index, (name, photo) in enumerate(photos):
        bar.progress(index / len(photos), text=f"finding faces: {name}")
        faces, cut, _ = faces_of_photo(photo, finder, model, name=name)
        owners += [(index, face) for face in faces]
        crops += cut
    codes = None
    if crops:
        bar.progress(1.0, text=f"describing {counted(len(crops), 'face')} ...")
        codes = model.encode(np.stack(crops))
    bar.progress(1.0, text=f"{len(owners)} faces in {len(photos)} photos")
    st.session_state["group-faces"] = (key, owners, codes)
    return owners, codes


def group_page() -> None:
    st.header("Group faces by person")
    uploads = st.sidebar.file_uploader(
        "photos, or a zip of photos",
        type=[*PHOTO_TYPES, "zip"],
        accept_multiple_files=True,
        key="group-upload",
    )
    if not uploads:
        st.info(
            "Upload photos (or a zip of them) with people in them: every face is found, and the "
            f"faces are grouped by person with the identity model in data/ (up to "
            f"{MAX_GROUP_PHOTOS} photos, about half a second each)."
        )
        return
    photos = uploaded_photos(uploads)
    if not photos:
        st.error("None of the uploads could be read as a photo: upload PNG or JPEG photos.")
        return
    name = identity_choice("group-identity")
    owners, codes = found_faces(photos, name)
    if not owners:
        st.warning(
            "No face was found in these photos. The finder looks for frontal faces at least "
            "about 20 pixels between the eyes: try larger or sharper photos."
        )
        return
    adapt = len(owners) >= MIN_SET and st.sidebar.checkbox(
        "Learn from the set",
        value=True,
        key="group-adapt",
        help="Learn the pairs of one person and of two from the uploaded faces themselves, so "
        "that photos taken in one place do not make everyone alike.",
    )
    threshold = st.sidebar.slider(
        "Merge while P(same person) is above",
        0.01,
        0.99,
        LEARNT_CUT if adapt else CALIBRATED_CUT,
        0.01,
        key="group-learnt" if adapt else "group-probability",
        help="Higher: purer, smaller groups.",
    )
    labels = group_codes(codes, identity_model(name), threshold=threshold, adapt=adapt)
    groups = [[owners[i] for i in np.flatnonzero(labels == g)] for g in range(labels.max() + 1)]
    alone = [group for group in groups if len(group) == 1]
    st.subheader(grouping_summary(groups, [label.rsplit("/", 1)[-1] for label, _ in photos]))
    st.caption(
        f"Grouped by the {name} identity model; faces taken at P(face) >= "
        f"{identity_threshold(trained_finder()):g} (the finder's identity threshold)."
    )
    for number, group in enumerate(groups[:30], start=1):
        if len(group) == 1:
            break
        st.markdown(f"**Person {number}**: {len(group)} faces")
        st.image(
            [face_thumbnail(photos[i][1], face) for i, face in group],
            width=84,
            caption=[photos[i][0].rsplit("/", 1)[-1] for i, _ in group],
        )
    if alone:
        st.markdown(f"**Seen once**: {counted(len(alone), 'face')}")
        st.image(
            [face_thumbnail(photos[group[0][0]][1], group[0][1]) for group in alone[:60]],
            width=64,
            caption=[photos[group[0][0]][0].rsplit("/", 1)[-1] for group in alone[:60]],
        )


group_page()
