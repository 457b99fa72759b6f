"""Reading what users upload: images, photographs (decoded reduced) and zips of photos."""

from __future__ import annotations

import io

import numpy as np
import streamlit as st

import eigenvision as ev

MAX_UPLOAD_PIXELS = 16_000_000  # refuse larger images before decoding them
MAX_PHOTO_PIXELS = 80_000_000  # decoded reduced (read_photo); under Pillow's 89 MP warning
DETECT_SIDE = 1024  # photos are searched at most this large: time and memory bounded per upload
MAX_GROUP_PHOTOS = 200  # photos one grouping takes


#: What the photo uploaders take (colour photos), and the image uploaders besides (PGM faces).
PHOTO_TYPES = ["png", "jpg", "jpeg", "bmp", "tif", "tiff"]
IMAGE_TYPES = [*PHOTO_TYPES, "pgm"]


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


def in_upload(point, factor: float, digits: int | None = None) -> tuple:
    """A point ``(x, y)`` of the searched photo in the upload's pixels, rounded to ``digits``
    (pixel centres map to pixel centres)."""
    return tuple(round((v + 0.5) * factor - 0.5, digits) for v in point)


def upload_pixels_note(factor: float) -> None:
    """Say under a table that its positions are the upload's pixels (when it was reduced)."""
    if factor != 1.0:
        st.caption("Positions and sizes in the upload's pixels.")
