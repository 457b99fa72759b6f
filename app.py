"""eigenvision web demo: explore eigenspaces, recognise, detect, evaluate.

Run with ``streamlit run app.py``. Every number and figure comes from
``eigenvision``; this file only lays them out.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

import eigenvision as ev
from eigenvision import datasets, plot
from eigenvision._base import BoundedCache, counted, format_below
from eigenvision.codes import allowed_metrics
from eigenvision.faces.compare import (
    compare_crops,
    default_identity_name,
    identity_model_name,
    model_crop,
)
from eigenvision.faces.crops import face_thumbnail, identity_faces, identity_threshold
from eigenvision.faces.groups import (
    CALIBRATED_CUT,
    LEARNT_CUT,
    MIN_SET,
    faces_of_photo,
    group_codes,
    grouping_summary,
)
from eigenvision.identity import DEEP_INSTALL, deep_available
from eigenvision.openset import (
    GALLERY_CALIBRATION_PEOPLE,
    calibrated_threshold,
    reads_its_gallery,
)
from eigenvision.search import pyramid_scales

#: The share of strangers the Recognise page's default threshold lets in, when calibrated on the
#: enrolled people themselves.
GALLERY_FAR = 0.01

MAX_UPLOAD_PIXELS = 16_000_000  # refuse larger images before decoding them
MAX_PHOTO_PIXELS = 80_000_000  # decoded reduced (read_photo); under Pillow's 89 MP warning
DETECT_SIDE = 1024  # photos are searched at most this large (a 16 MP photo took 30-53 s and 3 GB)
MODEL_CACHE_BYTES = 512 << 20  # fitted models kept for all sessions together

st.set_page_config(page_title="eigenvision", page_icon=":material/face:", layout="wide")


# ------------------------------------------------------------------ data
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


def named_bytes(content: bytes, name: str) -> io.BytesIO:
    """An upload's bytes as a file object that carries the upload's name: what cannot be
    decoded is named by it (``ev.ImageLoadError``), not as ``<BytesIO>``."""
    buffer = io.BytesIO(content)
    buffer.name = name
    return buffer


def why_unread(name: str, error: Exception) -> str:
    """``error`` of reading the upload ``name``, which it names once."""
    return str(error) if isinstance(error, ev.ImageLoadError) else f"{name}: {error}"


def read_upload(
    upload, *, max_pixels=MAX_UPLOAD_PIXELS, max_side=None, colour=False
) -> np.ndarray | None:
    try:
        return ev.load_image(
            named_bytes(upload.getvalue(), upload.name),
            max_pixels=max_pixels,
            max_side=max_side,
            as_gray=not colour,
        )
    except (ev.ImageLoadError, ValueError, OSError) as exc:
        st.error(
            f"Could not read {why_unread(upload.name, exc)}. Upload a PNG, JPEG, PGM or TIFF image."
        )
        return None


def read_photo(upload, *, colour=False) -> tuple[np.ndarray | None, float]:
    """An uploaded photograph, decoded at most ``DETECT_SIDE`` pixels on its longer side (grey,
    or in colour for the identity models), and the upload's pixels per pixel of it (1.0 unless
    reduced; None on failure, with ``st.error``).

    JPEGs are decoded at a reduced scale directly, so a 50-megapixel photo costs about what its
    1024-pixel copy costs; photos up to ``MAX_PHOTO_PIXELS`` are taken.
    """
    from PIL import Image

    try:
        with Image.open(io.BytesIO(upload.getvalue())) as header:  # the size only, no pixels
            width, height = header.size
    except Exception:  # noqa: BLE001 - read_upload below says what is wrong with the file
        width = height = 0
    if width * height > MAX_PHOTO_PIXELS:
        st.error(
            f"{upload.name} has {width}x{height} pixels ({width * height / 1e6:.0f} "
            f"megapixels), more than the {MAX_PHOTO_PIXELS / 1e6:.0f} this page takes: "
            "upload a smaller copy of the photo."
        )
        return None, 1.0
    photo = read_upload(upload, max_pixels=MAX_PHOTO_PIXELS, max_side=DETECT_SIDE, colour=colour)
    if photo is None:
        return None, 1.0
    factor = width / photo.shape[1] if width else 1.0
    if factor != 1.0:
        st.caption(
            f"Searched at {1 / factor:.2f} of the upload's {width}x{height} pixels for speed."
        )
    return photo, factor


def in_upload(point, factor: float, digits: int | None = None) -> tuple:
    """A point ``(x, y)`` of the searched photo in the upload's pixels, rounded to ``digits``
    (pixel centres map to pixel centres)."""
    return tuple(round((v + 0.5) * factor - 0.5, digits) for v in point)


def upload_pixels_note(factor: float) -> None:
    """Say under a table that its positions are the upload's pixels (when it was reduced)."""
    if factor != 1.0:
        st.caption("Positions and sizes in the upload's pixels.")


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


#: The whole-face methods the Recognise page offers, and the most components each allows
#: for n enrolled images of c people.
WHOLE_FACE_METHODS = {
    "eigenfaces": lambda n, c: n - 1,
    "fisherfaces": lambda n, c: c - 1,
    "bayesian": lambda n, c: n - c - 1,
}


def rank_selection(images: ev.ImageSet) -> ev.RankSelection:
    return fitted("rank selection", images, lambda: ev.select_rank(images, n_permutations=5))


def component_slider(label: str, largest: int, default: int, key: str) -> int:
    """A slider from 1 to ``largest`` (a fixed 1 when the data allow no choice)."""
    if largest <= 1:
        st.sidebar.caption(f"{label}: 1 (the data allow no more)")
        return 1
    return st.sidebar.slider(label, 1, largest, min(default, largest), key=key)


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


def to_display(image: np.ndarray) -> np.ndarray:
    low, high = float(image.min()), float(image.max())
    return (image - low) / (high - low) if high > low else np.zeros_like(image)


def labelled_halves(key: str, purpose: str, labels=None):
    """The chosen set and its halves (first half of each class, the rest), or None."""
    images = choose_set(key, labels)
    if images is None:
        return None
    if len(images.classes) < 2:
        st.warning(f"{purpose} needs at least two labels; pick another dataset.")
        return None
    return (images, *images.split(0.5, order="name"))


def model_download(model, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = ev.save(model, Path(folder) / name)
        st.download_button("Download the model (.npz)", path.read_bytes(), file_name=name)


# ----------------------------------------------------------------- pages
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
    upload = st.file_uploader(
        "photo", type=["png", "jpg", "jpeg", "bmp", "tif", "tiff"], key="recognise-photo"
    )
    photo = None if upload is None else read_photo(upload, colour=True)[0]
    if photo is not None:
        name_every_face(photo, recognizer)
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
        upload = st.file_uploader(
            "photo", type=["png", "jpg", "jpeg", "bmp", "tif", "tiff"], key="recognise-photo"
        )
        photo = None if upload is None else read_photo(upload, colour=True)[0]
        if photo is not None:
            name_every_face(photo, recognizer, enrolled_held_out)
        return
    if source == "upload an image":
        upload = st.file_uploader(
            "probe image", type=["png", "jpg", "jpeg", "pgm", "bmp", "tif", "tiff"]
        )
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


@st.cache_resource(show_spinner=False)
def trained_finder() -> ev.FaceFinder:
    return ev.faces.photos.default_finder()


@st.cache_data(show_spinner=False, max_entries=8)
def face_candidates(image: np.ndarray) -> list:
    """Every face the finder sees at any confidence (the slider filters without searching)."""
    return trained_finder().find(image, threshold=0.0, max_faces=20)


def faces_found(image: np.ndarray, key: str, *, identity: bool = False) -> tuple[list, float]:
    """The finder's faces at the sidebar's probability (default: its calibrated threshold, or
    for naming them its stricter identity threshold)."""
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
        candidates = face_candidates(image)
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


def find_faces_view(image: np.ndarray, factor: float = 1.0) -> None:
    """Every face of the photo by the trained finder, with its eyes, nose and mouth; the table
    in the upload's pixels (``factor`` of them per pixel of ``image``)."""
    found, least = faces_found(image, "detect-probability")
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


def probability_text(probability: float) -> str:
    """A probability as users read it: two significant digits near 0, enough nines near 1
    (0.9995 is not "1.00")."""
    if probability < 0.5:
        return f"{probability:.2g}"
    return format_below(probability, 1.0, 2) if probability < 1 else "1"


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


def detect_page() -> None:
    st.header("Detect")
    upload = st.sidebar.file_uploader(
        "image", type=["png", "jpg", "jpeg", "pgm", "bmp", "tif", "tiff"], key="detect-upload"
    )
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


def evaluate_page() -> None:
    st.header("Evaluate")
    chosen = labelled_halves("evaluate", "Evaluation")
    if chosen is None:
        return
    images, train, test = chosen
    largest = int(min(60, len(train) - 1, np.prod(images.image_shape) - 1))
    ranks = sorted({r for r in (1, 2, 5, 10, 20, 40, 60) if r <= largest})
    if not st.button("Run the studies", type="primary"):
        st.caption(
            f"Recognition rate against r for r in {ranks}, and the ROC of 'is it class "
            f"{train.classes[0]}?' by DFFS, on {len(train)} training / {len(test)} test images."
        )
        return
    progress = st.progress(0.0, text="recognition rate ...")
    smallest_class = int(np.min(np.unique(train.labels, return_counts=True)[1]))
    nearest, per_class = [], []
    for i, r in enumerate(ranks):
        recognizer = ev.Recognizer(r).fit(train)
        nearest.append(ev.evaluate.recognition_rate(test.labels, recognizer.predict(test)))
        if smallest_class >= 2:  # a per-class eigenspace needs two images of every class
            predicted, _ = ev.nearest_subspace(train, test, r)
            per_class.append(ev.evaluate.recognition_rate(test.labels, predicted))
        progress.progress((i + 1) / (len(ranks) + 1), text=f"recognition rate, r = {r}")
    curves = {"1-NN in component space": nearest}
    if per_class:
        curves["per-class eigenspace"] = per_class
    else:
        st.info("The per-class eigenspace needs two training images of every class; not shown.")
    left, right = st.columns(2)
    left.pyplot(plot.rate_curves(ranks, curves))
    target = train.classes[0]
    members = train[train.labels == target]
    progress.progress(1.0, text="done")
    if len(members) < 2:
        st.info(f"The ROC needs two training images of {target}; not shown.")
        return
    space = ev.Eigenspace(min(10, len(members) - 1)).fit(members)
    flat = test.images.reshape(len(test), -1)
    fpr, tpr, _ = ev.evaluate.roc_curve(test.labels == target, -space.dffs(flat))
    area = ev.evaluate.auc(fpr, tpr)
    right.pyplot(plot.roc({f"DFFS (AUC {area:.3f})": (fpr, tpr)}, title=f"is it {target}?"))


MAX_GROUP_PHOTOS = 200  # photos one grouping takes (about half a second each)


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


def uploaded_photos(uploads) -> list[tuple[str, np.ndarray]]:
    """``(name, photo)`` of uploaded images and of the images inside uploaded zips, decoded
    reduced to ``DETECT_SIDE``; what cannot be read is named in one warning."""
    photos, unread = [], []
    for upload in uploads:
        if not upload.name.lower().endswith(".zip"):
            members = [(upload.name, upload.getvalue())]
        else:
            try:  # the library's reader: hostile paths, bombs and broken members handled there
                members = ev.io.read_zip_images(
                    upload.getvalue(),
                    on_error=lambda name, exc, zip_name=upload.name: unread.append(
                        why_unread(f"{zip_name}/{name}", exc)
                    ),
                )
            except ev.ImageSetError as exc:
                unread.append(f"{upload.name} ({exc})")
                continue
            members = [(f"{upload.name}/{name}", content) for name, content in members]
        for name, content in members:
            if len(photos) >= MAX_GROUP_PHOTOS:
                unread.append(f"{name} (beyond {MAX_GROUP_PHOTOS} photos)")
                continue
            try:
                photo = ev.load_image(
                    named_bytes(content, name),
                    as_gray=False,
                    max_pixels=MAX_PHOTO_PIXELS,
                    max_side=DETECT_SIDE,
                )
            except (ev.ImageLoadError, ValueError, OSError) as exc:
                unread.append(why_unread(name, exc))
                continue
            photos.append((name, photo))
    if unread:
        st.warning("Left out: " + "; ".join(unread[:10]) + (" ..." if len(unread) > 10 else ""))
    return photos


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
        type=["png", "jpg", "jpeg", "bmp", "tif", "tiff", "zip"],
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


def compare_page() -> None:
    st.header("Same person?")
    columns = st.columns(2)
    photos = []
    for column, key in zip(columns, ("compare-a", "compare-b"), strict=True):
        upload = column.file_uploader(
            "a photo", type=["png", "jpg", "jpeg", "bmp", "tif", "tiff"], key=key
        )
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


PAGES = {
    "Explore": explorer,
    "Recognise": recognise,
    "Detect": detect_page,
    "Compare": compare_page,
    "Group": group_page,
    "Evaluate": evaluate_page,
}


def show(page: str) -> None:
    """Run a page; what goes wrong is said in words with the fix, never as a traceback."""
    try:
        PAGES[page]()
    except (ev.EigenvisionError, ValueError, TypeError) as exc:
        st.error(f"{exc}\n\nChange the settings in the sidebar or pick another dataset.")
    except MemoryError:
        st.error("Not enough memory for this; use fewer or smaller images, or fewer components.")


st.sidebar.title("eigenvision")
show(st.sidebar.radio("Page", list(PAGES), key="page"))
