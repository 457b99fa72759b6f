"""Naming faces against a gallery: the unknown threshold, its slider and the names shown."""

from __future__ import annotations

import numpy as np
import streamlit as st

import eigenvision as ev
from app_pages.shared.galleries import GALLERY_FAR
from app_pages.shared.widgets import faces_found, probability_text, to_display
from eigenvision import plot
from eigenvision._base import counted
from eigenvision.openset import GALLERY_CALIBRATION_PEOPLE, calibrated_threshold, reads_its_gallery

#: The probabilities the identity model's threshold slider offers besides its default: fine
#: near 0 and 1, where a calibrated model's probabilities crowd.
SAME_PERSON_STEPS = (
    0.0001,
    0.001,
    0.01,
    0.05,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    0.95,
    0.99,
    0.995,
    0.999,
    0.9995,
    0.9999,
    0.99999,
    0.999999,
    0.9999999,
    0.99999999,
    0.999999999,
)


def threshold_slider(
    recognizer: ev.Recognizer, probes: ev.ImageSet | None, distances: np.ndarray, *, key: str
) -> float:
    """The "unknown beyond distance" slider, from its default (:func:`unknown_beyond`) over the
    probes' distances; below 0 too where distances are (minus the identity model's scores, plda)."""
    default, meaning = unknown_beyond(recognizer, probes, distances)
    if recognizer.method == "plda":  # minus scores, negative for good matches: a probability
        least = float(recognizer.same_person([default])[0])
        choices = sorted({*SAME_PERSON_STEPS, least})
        chosen = st.select_slider(
            "Unknown below P(same person)",
            choices,
            value=least,
            format_func=probability_text,
            key=key,
            help=meaning,
        )
        return default if chosen == least else recognizer.distance_at(chosen)
    low = min(0.0, 2 * float(distances.min()), 2 * default)
    high = max(0.0, 2 * float(distances.max()), default) + 1e-6
    return st.slider("Unknown beyond distance", low, high, default, key=key, help=meaning)


def nearness(recognizer: ev.Recognizer, distance: float, digits: int = 3) -> str:
    """A match as users read it: ``P(same person)`` for the identity model, else the distance
    (as the command line shows them)."""
    same = recognizer.same_person([distance])
    if same is None:
        return f"{float(distance):.{digits}f}"
    return "P same " + probability_text(float(same[0]))


def unknown_beyond(
    recognizer: ev.Recognizer, probes: ev.ImageSet | None, distances: np.ndarray
) -> tuple[float, str]:
    """The default distance beyond which a face is unknown, and what it means: the model's
    calibrated threshold; for the identity model (plda), the one calibrated on the enrolled
    people as strangers to each other (:meth:`~eigenvision.Recognizer.gallery_as_strangers`)
    with enough of them, else its own decision; for the others (their features are fitted to
    the enrolled people, who look farther apart than strangers), the one that accepts 95% of
    the held-out images of the enrolled people, else (an uploaded model without them) the
    model's closed set, every face named.

    A stranger was named before: the default was the median of the probe's own ``distances``,
    so the one face of a photo always got a name. The identity model's own decision, the
    default for plda galleries before, accepted nearly every studio stranger."""
    if recognizer.threshold is not None:
        return float(recognizer.threshold), (
            "The model's calibrated threshold: on strangers, or (plda, "
            f"{GALLERY_CALIBRATION_PEOPLE} people or more) on the enrolled people as strangers "
            f"to each other, about {GALLERY_FAR:.0%} of strangers let in."
        )
    if reads_its_gallery(recognizer):
        threshold = calibrated_threshold(recognizer.gallery_as_strangers(), GALLERY_FAR)
        return (
            float(np.floor(100 * threshold) / 100),  # rounded down: no more strangers let in
            f"Calibrated on the {len(recognizer.classes_)} enrolled people, each a stranger "
            f"to the others: about {GALLERY_FAR:.0%} of strangers photographed as they are "
            "get a name.",
        )
    if recognizer.method == "plda":
        decision = -recognizer.feature.threshold_  # rounded up: the slider must reach it
        return (
            float(np.ceil(100 * decision) / 100),
            "The identity model's own decision: beyond it, another person is likelier "
            "(P(same person) below 1/2, as calibrated on LFW's held-out people). With "
            f"{GALLERY_CALIBRATION_PEOPLE} people or more enrolled, the default is calibrated "
            "on them.",
        )
    if probes is not None and len(probes) and probes.image_shape == tuple(recognizer.image_shape_):
        nearest = recognizer.kneighbors(probes.images, k=1)[0][:, 0]
        return (
            float(np.ceil(100 * np.quantile(nearest, 0.95)) / 100),
            f"Accepts 95% of the {len(probes)} held-out images of the enrolled people; "
            "strangers beyond it are unknown.",
        )
    return (
        float(np.ceil(100 * np.max(distances)) / 100),
        "This model has no threshold (train it with --unknown FOLDER): every face gets "
        "the nearest name until you lower the slider.",
    )


def name_every_face(
    photo: np.ndarray, recognizer: ev.Recognizer, probes: ev.ImageSet | None = None
) -> None:
    """Find every face of a photo, cut each on its eyes to the recognizer's size, name it
    (``probes``: held-out images of the enrolled people, for the default threshold)."""
    found, _ = faces_found(photo, "photo-probability", identity=True)
    if not found:
        return
    if recognizer.finder is None:
        crops = np.stack(
            [ev.align_face(photo, face, shape=recognizer.image_shape_) for face in found]
        )
        named, distances = recognizer.decide(crops)
    else:  # a model trained on photos cuts each face the way it enrolled them
        shape, eyes = recognizer.crop_geometry()
        crops = np.stack(
            [ev.align_face(photo, face, shape=shape, eye_positions=eyes) for face in found]
        )
        _, named, distances = recognizer.decide_faces(photo, faces=found)  # the slider decides
    threshold = threshold_slider(recognizer, probes, distances, key="photo-threshold")
    names = [
        f"{label if distance <= threshold else ev.UNKNOWN} ({nearness(recognizer, distance, 2)})"
        for label, distance in zip(named, distances, strict=True)
    ]
    known = int(np.sum(distances <= threshold))
    title = f"{counted(len(found), 'face')}: {known} named, {len(found) - known} unknown"
    st.pyplot(plot.faces(photo, found, names=names, title=title))
    columns = st.columns(min(len(found), 6))
    for index, crop in enumerate(crops[:6]):
        columns[index].image(to_display(crop), caption=names[index], width=90)
