"""The labelled image set every stage of the package passes along."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ._errors import ImageSetError, refuse_complex

__all__ = ["ImageSet", "as_image_set", "check_labels", "natural_key"]


def _label_kind(value) -> str:
    if isinstance(value, (str, np.str_, bytes)):
        return "text"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    return type(value).__name__


def check_labels(labels, n_samples: int | None = None) -> np.ndarray:
    """Labels as one ``(n,)`` array of one sortable kind, or a ``ValueError`` saying what is wrong.

    The one check every labelled input passes (image sets, ``fit(X, y)``,
    identity models): one label per sample, no missing (None, NaN) label,
    and not strings mixed with numbers (``np.asarray([1, "1"])`` would make
    both the same string ``"1"``; sorting them raises).

    Parameters
    ----------
    labels : (n,) array-like
    n_samples : int, optional
        The number of samples the labels must match.

    Returns
    -------
    (n,) ndarray

    Examples
    --------
    >>> check_labels(["ann", "bob"]).tolist()
    ['ann', 'bob']
    >>> check_labels([1, "a"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: labels mix number and text (e.g. 1 and 'a'); give every label one kind, ...
    """
    values = labels
    if not isinstance(labels, np.ndarray) or labels.dtype == object:
        values = list(np.ravel(np.asarray(labels, dtype=object)))
        kinds = {}
        for value in values:
            kinds.setdefault(_label_kind(value), value)
        if "NoneType" in kinds:
            where = next(i for i, v in enumerate(values) if v is None)
            raise ValueError(f"label {where} is None; give every sample a label")
        if len(kinds) > 1:
            (a, first), (b, second) = list(kinds.items())[:2]
            raise ValueError(
                f"labels mix {a} and {b} (e.g. {first!r} and {second!r}); give every label one "
                "kind, e.g. str(label)"
            )
    labels = np.asarray(labels)
    if labels.dtype == object and len(labels):  # one kind: numbers or strings as numpy holds them
        labels = np.asarray(labels.tolist())
    if labels.ndim != 1:
        raise ValueError(f"labels must be one per sample, shape (n,), got shape {labels.shape}")
    if n_samples is not None and len(labels) != n_samples:
        raise ValueError(f"labels must be one per sample: {len(labels)} for {n_samples} samples")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        where = int(np.flatnonzero(~np.isfinite(labels))[0])
        raise ValueError(f"label {where} is {labels[where]}; give every sample a finite label")
    return labels


def natural_key(text: str) -> list:
    """Sort key putting ``s2`` before ``s10`` and ``2.pgm`` before ``10.pgm``.

    Parameters
    ----------
    text : str

    Returns
    -------
    list
        Text and number parts, numbers as ints.

    Examples
    --------
    >>> sorted(["s10", "s2", "S1"], key=natural_key)
    ['S1', 's2', 's10']
    """
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


@dataclass(eq=False)
class ImageSet:
    """A labelled stack of equally sized images.

    Parameters
    ----------
    images : (n, H, W) or (n, H, W, 3) ndarray of float32
        Grey (or RGB) images in ``[0, 1]``.
    labels : (n,) ndarray
        One label per image (strings for folder sets, integers for digits).
    names : (n,) ndarray of str
        Each image's path relative to the dataset root, e.g. ``"s1/1.pgm"``.
    landmarks : dict of str to (n, 2) ndarray, optional
        Named points ``(x, y)`` in pixels, origin top-left, pixel centres at
        integer coordinates. ``"left_eye"`` is the eye on the image's left.
    points : (n, p, 2) ndarray, optional
        All annotated points of a dataset (e.g. IMM's 73), same convention.

    Examples
    --------
    >>> import numpy as np
    >>> s = ImageSet(np.zeros((4, 2, 3), np.float32), np.array([0, 0, 1, 1]))
    >>> len(s), s.image_shape, s[s.labels == 1].names.tolist()
    (4, (2, 3), ['2', '3'])
    """

    images: np.ndarray
    labels: np.ndarray
    names: np.ndarray | None = None
    landmarks: dict[str, np.ndarray] | None = None
    points: np.ndarray | None = None
    description: str = field(default="", repr=False)

    def __post_init__(self):
        images = np.asarray(self.images)
        refuse_complex(images, "images")
        if not (images.ndim == 3 or (images.ndim == 4 and images.shape[3] == 3)):
            raise ImageSetError(
                "images must be a grey stack (n, H, W) or a colour stack (n, H, W, 3), "
                f"got an array of shape {images.shape}"
            )
        if images.dtype != np.float32:
            images = images.astype(np.float32)
        self.images = images
        n = len(images)
        try:
            self.labels = check_labels(self.labels, n)
        except ValueError as error:
            raise ImageSetError(str(error)) from None
        if self.names is None:
            self.names = np.array([str(i) for i in range(n)])
        self.names = np.asarray(self.names, dtype=str)
        if self.names.shape != (n,):
            raise ImageSetError(f"names must have shape ({n},), got {self.names.shape}")
        if self.landmarks is not None:
            self.landmarks = {k: np.asarray(v, dtype=np.float64) for k, v in self.landmarks.items()}
            for key, value in self.landmarks.items():
                if value.shape != (n, 2):
                    raise ImageSetError(
                        f"landmark {key!r} must have shape ({n}, 2), got {value.shape}"
                    )
        if self.points is not None:
            self.points = np.asarray(self.points, dtype=np.float64)
            if self.points.ndim != 3 or self.points.shape[0] != n or self.points.shape[2] != 2:
                raise ImageSetError(f"points must have shape ({n}, p, 2), got {self.points.shape}")

    def __len__(self) -> int:
        return len(self.images)

    def __repr__(self) -> str:
        marks = sorted(self.landmarks) if self.landmarks else None
        return (
            f"ImageSet(n={len(self)}, image_shape={self.image_shape}, "
            f"classes={len(self.classes)}, landmarks={marks})"
        )

    @property
    def image_shape(self) -> tuple[int, int]:
        """``(H, W)`` of every image."""
        return tuple(self.images.shape[1:3])

    @property
    def classes(self) -> np.ndarray:
        """The distinct labels, sorted."""
        return np.unique(self.labels)

    @property
    def X(self) -> np.ndarray:  # noqa: N802 - the scikit-learn name for flattened data
        """The images flattened to ``(n, H * W)`` (a view, no copy)."""
        return self.images.reshape(len(self), -1)

    def __getitem__(self, index) -> ImageSet:
        """Select images by integer, slice, index array or boolean mask."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        index = np.arange(len(self))[index]
        return ImageSet(
            images=self.images[index],
            labels=self.labels[index],
            names=self.names[index],
            landmarks=None
            if self.landmarks is None
            else {k: v[index] for k, v in self.landmarks.items()},
            points=None if self.points is None else self.points[index],
            description=self.description,
        )

    def replace(self, **changes) -> ImageSet:
        """A copy with some fields replaced (as :func:`dataclasses.replace`).

        Parameters
        ----------
        **changes
            New values of ``images``, ``labels``, ``names``, ``landmarks``,
            ``points`` or ``description``.

        Returns
        -------
        ImageSet
        """
        fields = dict(
            images=self.images,
            labels=self.labels,
            names=self.names,
            landmarks=self.landmarks,
            points=self.points,
            description=self.description,
        )
        fields.update(changes)
        return ImageSet(**fields)

    def split(
        self,
        n_train: int | float,
        *,
        order: str = "random",
        seed: int | None = 0,
    ) -> tuple[ImageSet, ImageSet]:
        """Split per class into a training and a test set.

        Parameters
        ----------
        n_train : int or float
            Training images per class: a count (int >= 1), or a fraction in
            ``(0, 1)`` of each class (rounded, at least one image kept on
            each side when the class has two or more).
        order : {"random", "name"}
            ``"random"`` draws the training images with ``seed``; ``"name"``
            takes the first ones in natural name order (``2.pgm`` before
            ``10.pgm``), e.g. images 1-5 of each AT&T subject.
        seed : int, default 0
            Seed of the random draw; the same seed gives the same split.

        Returns
        -------
        train, test : ImageSet
        """
        if order not in ("random", "name"):
            raise ValueError(f"order must be 'random' or 'name', got {order!r}")
        if isinstance(n_train, (float, np.floating)) and not float(n_train).is_integer():
            if not 0.0 < n_train < 1.0:
                raise ValueError(f"a fractional n_train must lie in (0, 1), got {n_train}")
        elif int(n_train) < 1:
            raise ValueError(f"n_train must be at least 1, got {n_train}")
        rng = np.random.default_rng(seed)
        train_mask = np.zeros(len(self), dtype=bool)
        for label in self.classes:
            members = np.flatnonzero(self.labels == label)
            if order == "name":
                keys = [natural_key(name) for name in self.names[members]]
                members = members[sorted(range(len(members)), key=keys.__getitem__)]
            else:
                members = rng.permutation(members)
            if isinstance(n_train, (float, np.floating)) and n_train < 1.0:
                count = int(round(n_train * len(members)))
                count = min(max(count, 1), max(len(members) - 1, 1))
            else:
                count = int(n_train)
                if count > len(members):
                    raise ValueError(
                        f"class {label!r} has {len(members)} images, fewer than n_train={count}"
                    )
            train_mask[members[:count]] = True
        return self[train_mask], self[~train_mask]


def as_image_set(images, labels, *, min_images, colour=False):
    """An ImageSet of grey images from an ImageSet or a ``(H, W)`` / ``(n, H, W)`` array.

    Parameters
    ----------
    images : ImageSet or (H, W) or (n, H, W) array-like
    labels : (n,) array-like or None
        Replace an ImageSet's labels; required for arrays unless
        ``min_images`` is 0 (probes need no labels: zeros are given).
    min_images : int
        Fewer images are an error.
    colour : bool, default False
        Colour crops ``(n, H, W, 3)`` are what is expected (an identity model with a learned
        description reads them); grey ones are refused then, as colour ones are otherwise.

    Returns
    -------
    ImageSet
        Without ``points``; landmarks kept.
    """
    if isinstance(images, ImageSet):
        faces = images.replace(points=None, **({} if labels is None else {"labels": labels}))
        if faces.images.ndim != (4 if colour else 3):
            raise ValueError(
                f"images must be colour (n, H, W, 3) crops, got shape {faces.images.shape}; cut "
                "them with model_crop(photo, face, model)"
                if colour
                else f"images must be grey (n, H, W), got shape {faces.images.shape}; "
                "load them with as_gray=True"
            )
    else:
        stack = np.asarray(images)
        if stack.ndim == 2:
            stack = stack[None]
        if colour and stack.ndim == 3:  # one colour crop, or grey crops in three channels
            stack = stack[None] if stack.shape[-1] == 3 else np.repeat(stack[..., None], 3, 3)
        if stack.ndim != (4 if colour else 3):
            expected = "(n, H, W, 3) colour crops" if colour else "(H, W) or (n, H, W)"
            raise ValueError(f"images must be {expected}, got shape {stack.shape}")
        if labels is None:
            if min_images:
                raise ValueError("labels are required: pass labels= or an ImageSet")
            labels = np.zeros(len(stack), dtype=np.int64)
        faces = ImageSet(stack, check_labels(labels, len(stack)))
    if len(faces) < min_images:
        raise ValueError(f"need at least {min_images} images, got {len(faces)}")
    return faces
