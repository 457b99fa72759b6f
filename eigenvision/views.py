"""Virtual views of an image set: resized, translated and mirrored copies with their landmarks.

Extra training views model what varies between a gallery image and a probe
of the same face: the crop's position (Martinez 2002, Recognizing
imprecisely localized, partially occluded and expression variant faces from
a single sample per class, IEEE TPAMI 24(6)) and the face's side.
"""

from __future__ import annotations

import numpy as np

from .faces.geometry import mirror_landmarks
from .imageset import ImageSet
from .transform import resize, resize_points

__all__ = ["resized", "translated", "mirrored", "concatenate", "virtual_views", "view_count"]


def virtual_views(faces: ImageSet, *, jitter=0, mirror=False) -> ImageSet:
    """The faces, their translated copies, then all of those mirrored.

    Parameters
    ----------
    faces : ImageSet
    jitter : int, default 0
        Add 8 copies moved by ``jitter`` pixels in x, y or both (edges replicated).
    mirror : bool, default False
        Add the left-right mirror image of every view.

    Returns
    -------
    ImageSet
        ``(1 + 8 [jitter > 0]) (1 + [mirror])`` times as many images: the
        originals first, then the copies in the order (dy, dx) = (-j, -j),
        (-j, 0), ..., (j, j), then their mirrors.

    Examples
    --------
    >>> faces = ImageSet(np.zeros((2, 5, 4)), np.array([0, 1]))
    >>> len(virtual_views(faces, jitter=1, mirror=True))
    36
    """
    step = _checked_jitter(jitter)
    views = [faces]
    if step:
        offsets = [(dy, dx) for dy in (-step, 0, step) for dx in (-step, 0, step)]
        views += [translated(faces, dy, dx) for dy, dx in offsets if dy or dx]
    if mirror:
        views += [mirrored(view) for view in views]
    return concatenate(views)


def view_count(n_images: int, *, jitter=0, mirror=False) -> int:
    """How many images :func:`virtual_views` makes of ``n_images`` (before making them).

    Parameters
    ----------
    n_images : int
    jitter, mirror
        As :func:`virtual_views`.

    Returns
    -------
    int
        ``n_images (1 + 8 [jitter > 0]) (1 + [mirror])``.

    Examples
    --------
    >>> view_count(2, jitter=1, mirror=True)
    36
    """
    return n_images * (9 if _checked_jitter(jitter) else 1) * (2 if mirror else 1)


def _checked_jitter(jitter) -> int:
    step = int(jitter)
    if isinstance(jitter, bool) or step < 0 or step != jitter or step > 64:
        raise ValueError(f"jitter must be a whole number of pixels in [0, 64], got {jitter!r}")
    return step


def resized(faces, shape):
    """Every image resized to ``shape`` (antialiased), the landmarks moved with them.

    Parameters
    ----------
    faces : ImageSet
    shape : (H, W)

    Returns
    -------
    ImageSet
    """
    if faces.image_shape == tuple(shape):
        return faces
    landmarks = faces.landmarks and {
        k: resize_points(v, faces.image_shape, shape) for k, v in faces.landmarks.items()
    }
    return faces.replace(
        images=np.stack([resize(image, shape) for image in faces.images]), landmarks=landmarks
    )


def translated(faces, dy, dx):
    """The faces moved ``dy`` pixels down, ``dx`` right (edges replicated), with their landmarks.

    Parameters
    ----------
    faces : ImageSet
    dy, dx : int

    Returns
    -------
    ImageSet
    """
    pad = max(abs(dy), abs(dx))
    padded = np.pad(faces.images, ((0, 0), (pad, pad), (pad, pad)), mode="edge")
    height, width = faces.image_shape
    moved = padded[:, pad - dy : pad - dy + height, pad - dx : pad - dx + width]
    landmarks = faces.landmarks and {f: p + (dx, dy) for f, p in faces.landmarks.items()}
    return faces.replace(images=moved, landmarks=landmarks)


def mirrored(faces):
    """The faces' left-right mirror images, with their landmarks (left and right eye swapped).

    Parameters
    ----------
    faces : ImageSet

    Returns
    -------
    ImageSet
    """
    landmarks = faces.landmarks and mirror_landmarks(faces.landmarks, faces.image_shape[1])
    return faces.replace(images=faces.images[:, :, ::-1], landmarks=landmarks)


def concatenate(sets):
    """One ImageSet of several with the same landmarks, in order.

    Parameters
    ----------
    sets : sequence of ImageSet

    Returns
    -------
    ImageSet
    """
    if len(sets) == 1:
        return sets[0]
    first = sets[0]
    return first.replace(
        images=np.concatenate([s.images for s in sets]),
        labels=np.concatenate([s.labels for s in sets]),
        names=np.concatenate([s.names for s in sets]),
        landmarks=first.landmarks
        and {f: np.concatenate([s.landmarks[f] for s in sets]) for f in first.landmarks},
        points=None,
    )
