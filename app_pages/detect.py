"""Detect: every face of a photo by the trained finder, or the lecture's DFFS map."""

from __future__ import annotations

import numpy as np
import streamlit as st

import eigenvision as ev
from app_pages.shared.models import face_space, feature_detector
from app_pages.shared.uploads import IMAGE_TYPES, in_upload, read_photo, upload_pixels_note
from app_pages.shared.widgets import faces_found
from eigenvision import plot
from eigenvision._base import counted
from eigenvision.search import pyramid_scales


def find_faces_view(image: np.ndarray, factor: float = 1.0) -> None:
    """Every face of the photo by the trained finder, with its eyes, nose and mouth; the table
    in the upload's pixels (``factor`` of them per pixel of ``image``)."""
    small_faces = st.sidebar.checkbox(
        "Small faces too",
        key="detect-small-faces",
        help=(
            "Also search for faces smaller than the finder's window (eyes 10 to 16 pixels "
            "apart), the photo enlarged: slower."
        ),
    )
    found, least = faces_found(image, "detect-probability", small_faces=small_faces)
    names = [f"{i + 1}: p {face.confidence:.3f}" for i, face in enumerate(found)]
    st.pyplot(
        plot.faces(
            image,
            found,
            names=names,
            title=f"{counted(len(found), 'face')} at probability >= {least:g}",
        )
    )
    st.dataframe(
        [
            {
                "face": i + 1,
                **dict(zip("xy", in_upload(face.box[:2], factor), strict=True)),
                "size": round(face.box[2] * factor),
                "probability": round(face.confidence, 4),
                "left eye": in_upload(face.left_eye, factor),
                "right eye": in_upload(face.right_eye, factor),
            }
            for i, face in enumerate(found)
        ]
    )
    upload_pixels_note(factor)


def detect_page() -> None:
    st.header("Detect")
    upload = st.sidebar.file_uploader("image", type=IMAGE_TYPES, key="detect-upload")
    if upload is None:
        from skimage import data

        image, factor = ev.normalize.to_gray(data.astronaut()).astype(np.float64), 1.0
        st.caption("scikit-image's astronaut() (upload your own in the sidebar)")
    else:
        image, factor = read_photo(upload)
        if image is None:
            return
    mode = st.radio(
        "Search",
        ["every face (trained finder)", "DFFS map (the lecture's)"],
        captions=[
            "faces, each with its probability",
            "the windows nearest the face space, face or not",
        ],
        horizontal=True,
        key="detect-mode",
    )
    if mode.startswith("every face"):
        find_faces_view(image, factor)
        return
    k = st.sidebar.slider("Face-space components", 1, 30, 10, key="detect-k")
    smallest = st.sidebar.slider("Smallest face (pixels)", 25, 400, 25, 5, key="smallest")
    space, aligned = face_space(k)
    if not aligned:
        st.info(
            "Face space: scikit-image's LFW crops. Set EIGENVISION_DATA to the folder with "
            "imm_frontal/ for the aligned IMM face space, which finds faces far better."
        )
    h, w = space.image_shape_
    if image.shape[0] < h or image.shape[1] < w:
        st.error(
            f"The image {image.shape} is smaller than the {h} x {w} face window; use a larger one."
        )
        return
    scales = pyramid_scales(image.shape, (h, w), min_size=smallest * h / w)
    if len(scales) == 0:  # the smallest face asked for is larger than the image
        scales = pyramid_scales(image.shape, (h, w))[-1:]
    found = ev.detect(image, space, scales=scales, max_detections=5)
    best_scale = found[0].scale if found else 1.0
    small = ev.transform.resize(
        image, (int(image.shape[0] / best_scale), int(image.shape[1] / best_scale))
    )
    heat = ev.dffs_map(small, space, normalize="window", mode="same")
    finite = np.isfinite(heat)  # NaN where no window fits, +inf on flat windows
    heat = np.where(finite, heat, heat[finite].max() if finite.any() else 0.0)
    heat = ev.transform.resize(heat, image.shape)
    st.warning(
        f"These {len(found)} boxes are not faces found: they are the windows nearest the face "
        "space (the lowest distance from feature space, DFFS), whatever they show. DFFS ranks "
        "windows; it does not decide which of them are faces, so a picture without a face "
        "gets boxes too. For faces, choose 'every face (trained finder)'."
    )
    st.pyplot(
        plot.heatmap(
            image,
            heat,
            detections=found,
            title=f"DFFS at the nearest window's scale ({best_scale:.2f})",
        )
    )
    rows = [
        {
            **dict(zip("xy", in_upload((d.x, d.y), factor), strict=True)),
            "size": round(d.width * factor),
            "DFFS": round(d.score, 4),
        }
        for d in found
    ]
    st.dataframe(rows)
    upload_pixels_note(factor)
    st.subheader("Eyes, nose and mouth, where they would be in a window")
    detector = feature_detector()
    if detector is None:
        st.info(
            "Set EIGENVISION_DATA to the folder with imm_frontal/ to train the feature detector."
        )
        return
    if not found:
        return
    box_choice = st.selectbox("Window", [f"window {i + 1}" for i in range(len(found))])
    d = found[int(box_choice.split()[-1]) - 1]
    # An IMM face window knows where the eyes are; an LFW window is roughly the face box.
    box = ev.face_box(*ev.window_eyes(d)) if aligned else (d.x, d.y, d.width, d.height)
    located = detector.locate(image, box=box)
    figure = plot.heatmap(
        image,
        heat,
        points=located.positions,
        detections=[d],
        title="located features (confidence in the table)",
    )
    st.pyplot(figure)
    st.dataframe(
        [
            {
                "feature": f,
                **dict(zip("xy", in_upload((x, y), factor, 1), strict=True)),
                "confidence": round(located.confidence[f], 3),
            }
            for f, (x, y) in located.positions.items()
        ]
    )


detect_page()
