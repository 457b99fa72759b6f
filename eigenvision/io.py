"""Reading images and labelled image sets from disk.

Pillow is the single decoder. Every image comes back as ``float32`` in
``[0, 1]``: ``(H, W)`` grey or ``(H, W, 3)`` colour. Every failure to read a
file raises :class:`~eigenvision.ImageLoadError` naming the file and the
reason; no other exception escapes :func:`load_image`.
"""

from __future__ import annotations

import io
import os
import tempfile
import warnings
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO, Union

import numpy as np
from PIL import Image, ImageOps

from ._errors import ImageLoadError, ImageSetError, UnreadableFilesWarning
from ._spec import Param, check_arguments
from .imageset import ImageSet, natural_key
from .transform import MAX_SIDE, check_shape, resize

__all__ = [
    "ImageSet",
    "load_image",
    "load_image_set",
    "load_image_zip",
    "read_zip_images",
    "load_photos",
    "iter_image_batches",
    "IMAGE_EXTENSIONS",
    "image_entries",
]

PathLike = Union[str, "os.PathLike[str]"]

#: File endings treated as images by :func:`load_image_set` (all that Pillow reads).
IMAGE_EXTENSIONS = frozenset(
    ext.lower() for ext, fmt in Image.registered_extensions().items() if fmt in Image.OPEN
)

#: Default budget of decoded pixels for a whole set (1 GiB of float32).
MAX_TOTAL_PIXELS = 1 << 28

# ITU-R BT.601 luma, the weights Pillow and OpenCV use for RGB -> L.
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def load_image(
    source: PathLike | IO[bytes],
    *,
    as_gray: bool = True,
    max_pixels: int | None = None,
    max_side: int | None = None,
) -> np.ndarray:
    """Read one image as float32 in ``[0, 1]``.

    Parameters
    ----------
    source : str, path-like or binary file object
        The file to read.
    as_gray : bool, default True
        Return ``(H, W)`` luminance (ITU-R BT.601 weights, computed in float,
        not rounded to 8 bits). With ``False`` colour images come back as
        ``(H, W, 3)`` RGB and grey images as ``(H, W)``.
    max_pixels : int, optional
        Refuse images with more pixels than this (decompression bombs),
        checked from the header before decoding. The default is Pillow's
        ``Image.MAX_IMAGE_PIXELS`` (about 89 megapixels). Pillow's own check
        (an error beyond twice that setting) stays in force: the function
        changes no process-wide setting, so it is safe in threads.
    max_side : int, optional
        Shrink larger images so their longer side is ``max_side`` pixels
        (antialiased; JPEGs are decoded at a reduced scale directly, so a
        16-megapixel photo costs a fraction of its full decode in time and
        memory). The pixel limit applies to the stored size.

    Returns
    -------
    image : (H, W) or (H, W, 3) ndarray of float32
        Values in ``[0, 1]``; EXIF orientation applied.

    Raises
    ------
    ImageLoadError
        The file is missing, empty, not an image, truncated, has a corrupt
        header or declares more than ``max_pixels`` pixels.

    Notes
    -----
    Modes are mapped as follows. ``1``, ``L``, ``P`` (palette: the colours the
    indices stand for, not the indices), ``RGB``, ``CMYK``, ``YCbCr``: 8-bit
    values divided by 255. ``LA``, ``RGBA`` and palettes with transparency
    are composited on white. ``I;16*`` is divided by 65535. ``I`` (32-bit
    integers) is divided by 65535 when its values lie in ``[0, 65535]`` (how
    Pillow reads 16-bit PNGs) and min-max rescaled otherwise. ``F`` is kept
    when it lies in ``[0, 1]`` and min-max rescaled otherwise. Nothing is
    clipped.

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> buffer = io.BytesIO()
    >>> Image.new("L", (3, 2), color=255).save(buffer, format="PNG")
    >>> _ = buffer.seek(0)
    >>> load_image(buffer)
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)
    """
    name = _describe(source)
    _check_max_side(max_side)
    check_arguments(
        "load_image",
        as_gray=(as_gray, Param("bool")),
        max_pixels=(max_pixels, Param("int", 1, optional=True)),
    )
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise ImageLoadError(f"{name}: file not found; check the path")
        if path.is_dir():
            raise ImageLoadError(f"{name}: is a folder, not an image file; use load_image_set")
        if path.stat().st_size == 0:
            raise ImageLoadError(f"{name}: the file is empty (0 bytes)")
    if max_pixels is None:
        limit = Image.MAX_IMAGE_PIXELS or np.iinfo(np.int64).max  # None: Pillow's check is off
    else:
        limit = int(max_pixels)
    try:
        return _decode(source, as_gray=as_gray, max_pixels=limit, name=name, max_side=max_side)
    except ImageLoadError:
        raise
    except Image.DecompressionBombError as exc:
        raise ImageLoadError(
            f"{name}: refused as a decompression bomb ({exc}); Pillow refuses images over twice "
            "PIL.Image.MAX_IMAGE_PIXELS whatever max_pixels says: raise that setting once at "
            "start-up to read larger images"
        ) from exc
    except Image.UnidentifiedImageError as exc:
        raise ImageLoadError(f"{name}: not an image Pillow can identify") from exc
    except MemoryError as exc:
        raise ImageLoadError(f"{name}: too large to decode in memory") from exc
    except Exception as exc:  # noqa: BLE001 - any decoder failure becomes one documented error
        reason = str(exc) or type(exc).__name__
        if "truncated" in reason or isinstance(exc, EOFError):
            reason = f"truncated or incomplete image data ({reason})"
        raise ImageLoadError(f"{name}: cannot decode image: {reason}") from exc


def _describe(source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return getattr(source, "name", None) or f"<{type(source).__name__}>"


def _decode(source, *, as_gray: bool, max_pixels: int, name: str, max_side=None) -> np.ndarray:
    # No process-wide Pillow setting is changed here (loads run in threads): Pillow's own
    # bomb check (Image.MAX_IMAGE_PIXELS, read by Image.open) stays in force, and ours,
    # from the header, runs before any pixel is decoded.
    with Image.open(source) as img:
        width, height = img.size
        if width <= 0 or height <= 0:
            raise ImageLoadError(f"{name}: corrupt header, size {width}x{height}")
        if width * height > max_pixels:
            raise ImageLoadError(
                f"{name}: declares {width}x{height} = {width * height} pixels, more "
                f"than the limit of {max_pixels} (a possible decompression bomb); "
                "pass max_pixels= to allow larger images"
            )
        target = None
        if max_side is not None and max(width, height) > int(max_side):
            factor = int(max_side) / max(width, height)
            target = (max(1, round(width * factor)), max(1, round(height * factor)))
            img.draft(img.mode if img.mode in ("L", "RGB") else None, target)  # JPEG: 1/2-1/8
        img.load()  # force the full decode so truncation is found here
        img = ImageOps.exif_transpose(img)
        try:
            image = _to_float(img, as_gray=as_gray)
        except ImageLoadError as exc:  # what is wrong with the pixels, said of this file
            raise ImageLoadError(f"{name}: {exc}") from exc
        if target is not None:  # EXIF may have turned it: fit the side as it now stands
            image = resize(image, _fit_side(image.shape[:2], int(max_side)))
        return image


#: The smallest ``max_side`` a photo may be reduced to (a smaller one holds no face to find).
MIN_SIDE = 16


def _check_max_side(max_side):
    """Refuse a ``max_side`` that is not None or a whole number of pixels >= :data:`MIN_SIDE`."""
    if max_side is None:
        return
    if isinstance(max_side, bool) or not isinstance(max_side, (int, np.integer)):
        raise ValueError(f"max_side must be a whole number of pixels or None, got {max_side!r}")
    if not MIN_SIDE <= max_side <= MAX_SIDE:
        raise ValueError(
            f"max_side must lie in [{MIN_SIDE}, {MAX_SIDE}] pixels, got {max_side}: "
            "photos reduced further hold nothing to find"
        )


def _fit_side(shape, max_side):
    """``shape`` scaled so its longer side is ``max_side``."""
    factor = max_side / max(shape)
    return tuple(max(1, round(side * factor)) for side in shape)


def _to_float(img: Image.Image, *, as_gray: bool) -> np.ndarray:
    mode = img.mode
    if mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
        mode = img.mode
    if mode == "PA":
        img = img.convert("RGBA")
        mode = "RGBA"
    if mode in ("1", "L"):
        return np.asarray(img.convert("L"), dtype=np.float32) / np.float32(255)
    if mode.startswith("I;16"):
        return np.asarray(img, dtype=np.float32) / np.float32(65535)
    if mode == "I":
        values = np.asarray(img, dtype=np.int64)
        if values.size and values.min() >= 0 and values.max() <= 65535:
            return (values / 65535.0).astype(np.float32)
        return _rescale(values)
    if mode == "F":
        values = np.asarray(img, dtype=np.float32)
        if not np.all(np.isfinite(values)):
            raise ImageLoadError("floating-point image holds NaN or infinite values")
        if values.size and values.min() >= 0.0 and values.max() <= 1.0:
            return values
        return _rescale(values)
    if mode in ("LA", "RGBA"):
        rgba = np.asarray(img.convert("RGBA"), dtype=np.float32) / np.float32(255)
        alpha = rgba[..., 3:]
        rgb = rgba[..., :3] * alpha + (1.0 - alpha)  # composite on white
    else:
        rgb = np.asarray(img.convert("RGB"), dtype=np.float32) / np.float32(255)
    if as_gray:
        return np.clip(rgb @ _LUMA, 0.0, 1.0).astype(np.float32)
    return np.ascontiguousarray(rgb, dtype=np.float32)


def _rescale(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    if high == low:
        return np.zeros(values.shape, dtype=np.float32)
    return ((values - low) / (high - low)).astype(np.float32)


def load_image_set(
    folder: PathLike,
    *,
    size: tuple[int, int] | None = None,
    pattern: str = "*",
    on_error: str = "raise",
    max_pixels: int | None = None,
    max_total_pixels: int = MAX_TOTAL_PIXELS,
) -> ImageSet:
    """Read a folder of labelled images: one sub-folder per label.

    Parameters
    ----------
    folder : str or path-like
        ``folder/<label>/<image>``. Images lying directly in ``folder`` get
        the folder's own name as label.
    size : (H, W), optional
        Resize every image to this shape. Without it, images of different
        sizes are an error.
    pattern : str, default "*"
        Glob pattern the file names must match, e.g. ``"*.pgm"``.
    on_error : {"raise", "skip"} or callable, default "raise"
        Unreadable images: ``"raise"`` one :class:`ImageSetError` listing
        every bad file; ``"skip"`` leave them out with a warning; a callable
        ``on_error(path, error)`` is told of each one left out instead
        (whatever the warning filters let through).
    max_pixels : int, optional
        Passed to :func:`load_image`.
    max_total_pixels : int, default 2**28
        Refuse a set whose images would hold more pixels than this in memory
        (1 GiB of float32), judged from the files' headers before any is
        decoded: small compressed files can declare huge images (12 PNGs of
        9000 x 9000 pixels take 0.94 MB on disk and 3.9 GB decoded). With
        ``size`` only the resized images are held.

    Returns
    -------
    ImageSet
        Grey images in natural name order (``s2`` before ``s10``); ``names``
        are paths relative to ``folder``.

    Raises
    ------
    ImageSetError
        No images, unreadable images (with ``on_error="raise"``), or mixed
        sizes without ``size``.
    """
    _check_on_error(on_error)
    root = Path(folder)
    if not root.is_dir():
        raise ImageSetError(
            f"{root}: not a folder; pass the folder holding one sub-folder per label"
        )
    entries = image_entries(root, pattern)
    if size is not None:
        size = check_shape(size, "size")
    _check_total_pixels(root, entries, size, max_total_pixels)

    def read(path):
        image = load_image(path, max_pixels=max_pixels)
        return image if size is None else resize(image, size)

    images, labels, names = _read_entries(root, entries, read, on_error=on_error, pattern=pattern)
    shapes = sorted({im.shape for im in images})
    if len(shapes) > 1:
        raise ImageSetError(
            f"{root}: images have different sizes {shapes[:4]}; pass size=(H, W) to resize them"
        )
    return ImageSet(np.stack(images), np.array(labels), np.array(names), description=str(root))


def load_photos(
    folder: PathLike,
    *,
    pattern: str = "*",
    on_error: str = "raise",
    max_side: int = 1024,
    max_pixels: int | None = None,
):
    """Read a folder of labelled photos of any sizes, in colour: one sub-folder per person.

    For enrolment from uncropped photos (``Recognizer(finder=...)``), where
    each photo keeps its own size.

    Parameters
    ----------
    folder : str or path-like
        ``folder/<label>/<photo>``; photos directly in ``folder`` get the
        folder's own name as label.
    pattern : str, default "*"
    on_error : {"raise", "skip"} or callable, default "raise"
        As :func:`load_image_set`.
    max_side : int, default 1024
        Photos are decoded reduced so that their longer side is at most this
        (:func:`load_image`): memory stays bounded by the number of photos.
    max_pixels : int, optional
        Passed to :func:`load_image`.

    Returns
    -------
    photos : list of (H_i, W_i, 3) or (H_i, W_i) ndarray
    labels : (n,) ndarray of str
    names : (n,) ndarray of str
        Paths relative to ``folder``.

    Raises
    ------
    ImageSetError
        Not a folder, no photos, or unreadable photos (``on_error="raise"``).
    """
    _check_on_error(on_error)
    _check_max_side(max_side)
    root = Path(folder)
    if not root.is_dir():
        raise ImageSetError(f"{root}: not a folder; pass the one holding a sub-folder per person")
    photos, labels, names = _read_entries(
        root,
        image_entries(root, pattern),
        lambda path: load_image(path, as_gray=False, max_pixels=max_pixels, max_side=max_side),
        on_error=on_error,
        pattern=pattern,
    )
    return photos, np.array(labels), np.array(names)


def _check_on_error(on_error) -> None:
    if not callable(on_error) and on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise', 'skip' or a callable, got {on_error!r}")


def _read_entries(root, entries, read, *, on_error, pattern):
    """``(images, labels, names)`` of the ``(label, path)`` entries read by ``read``; unreadable
    files raise one :class:`ImageSetError` naming them all, or are skipped with a warning."""
    images, labels, names, failures = [], [], [], {}
    for label, path in entries:
        try:
            images.append(read(path))
        except ImageLoadError as exc:
            failures[path] = exc
            continue
        labels.append(label)
        names.append(path.relative_to(root).as_posix())
    if failures and callable(on_error):
        for path, error in failures.items():
            on_error(path, error)
    elif failures and on_error == "raise":
        raise ImageSetError(
            f"{len(failures)} unreadable image(s) in {root}:\n  "
            + "\n  ".join(str(error) for error in failures.values())
            + "\nfix or remove them, or pass on_error='skip'"
        )
    elif failures:
        warnings.warn(UnreadableFilesWarning.of(failures), stacklevel=3)
    if not images:
        raise ImageSetError(f"{root}: no images found matching {pattern!r}")
    return images, labels, names


def _check_total_pixels(root, entries, size, max_total_pixels):
    """Refuse a set whose decoded images would exceed the budget (from headers only)."""
    if size is not None:
        total = len(entries) * size[0] * size[1]
    else:
        total = 0
        for _, path in entries:
            try:
                with Image.open(path) as img:  # reads the header, decodes nothing
                    width, height = img.size
            except Exception:  # noqa: BLE001 - unreadable files are reported when decoded
                continue
            total += width * height
    if total > max_total_pixels:
        raise ImageSetError(
            f"{root}: the images hold {total} pixels, more than max_total_pixels="
            f"{max_total_pixels} ({max_total_pixels * 4 >> 20} MiB of float32); pass size=(H, W) "
            "to shrink them as they are read, or raise max_total_pixels"
        )


def _is_image(path: Path) -> bool:
    """An image by its ending, or else by its content (Yale's files have no ending)."""
    if path.suffix.lower() in IMAGE_EXTENSIONS:
        return True
    try:
        with Image.open(path):  # reads the header only
            return True
    except Exception:  # noqa: BLE001 - whatever Pillow cannot identify is not an image here
        return False


def image_entries(root, pattern: str = "*") -> list[tuple[str, Path]]:
    """The image files of a folder and of its sub-folders, each with its folder's name.

    Files are images by their ending or, failing that, by their content; others
    are left out with one warning naming them.

    Parameters
    ----------
    root : path-like
        A folder.
    pattern : str, default "*"
        File names to take inside each folder (e.g. ``"*.jpg"``).

    Returns
    -------
    list of (str, Path)
        ``(label, path)``: the folder's own files labelled with its name, then
        each sub-folder's, in natural order (``2.png`` before ``10.png``).

    Raises
    ------
    ImageSetError
        ``root`` is not a folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise ImageSetError(f"{root}: not a folder; pass the folder holding the images")
    if not isinstance(pattern, str) or any(part in pattern for part in ("/", "\\", "..")):
        raise ValueError(
            f"pattern matches file names inside each folder (e.g. '*.jpg'), got {pattern!r}: "
            "point the folder argument at the images instead"
        )
    entries: list[tuple[str, Path]] = []
    skipped: list[str] = []
    for label, directory in [(root.name, root)] + [
        (d.name, d)
        for d in sorted(root.iterdir(), key=lambda p: natural_key(p.name))
        if d.is_dir() and not d.name.startswith(".")
    ]:
        for path in sorted(directory.glob(pattern), key=lambda p: natural_key(p.name)):
            if not path.is_file() or path.name.startswith("."):
                continue
            if not _is_image(path):
                skipped.append(str(path.relative_to(root)))
                continue
            entries.append((label, path))
    if skipped:
        warnings.warn(
            f"skipped {len(skipped)} file(s) that are not images: {', '.join(skipped[:5])}"
            + (" ..." if len(skipped) > 5 else ""),
            stacklevel=3,
        )
    return entries


def iter_image_batches(
    folder: PathLike,
    *,
    batch_size: int = 256,
    size=None,
    pattern="*",
    max_pixels: int | None = None,
    max_batch_pixels: int = 1 << 27,
):
    """Read a folder of images lazily, ``batch_size`` at a time (for streaming fits).

    Parameters
    ----------
    folder : path-like
        Laid out as for :func:`load_image_set`.
    batch_size : int, default 256
    size : (H, W), optional
        Resize every image; without it all images must share the first one's size.
    pattern : str, default "*"
    max_pixels : int, optional
    max_batch_pixels : int, default 2**27
        A batch holds at most this many pixels (512 MiB of float32): large
        images come in smaller batches, so memory stays bounded whatever
        the files decode to.

    Yields
    ------
    (b, H, W) float32 ndarray
        ``b <= batch_size``. Only one batch is in memory at a time.
        Unreadable files raise :class:`ImageLoadError` naming them.

    Examples
    --------
    >>> batches = iter_image_batches("faces/", size=(64, 64))  # doctest: +SKIP
    >>> space = Eigenspace(50).fit_stream(batches)  # doctest: +SKIP
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if not isinstance(max_batch_pixels, (int, np.integer)) or max_batch_pixels < 1:
        raise ValueError(f"max_batch_pixels must be a positive int, got {max_batch_pixels!r}")
    root = Path(folder)
    if not root.is_dir():
        raise ImageSetError(f"{root}: not a folder")
    entries = image_entries(root, pattern)
    if not entries:
        raise ImageSetError(f"{root}: no images found matching {pattern!r}")
    shape = None if size is None else check_shape(size, "size")
    batch = []
    for _, path in entries:
        image = load_image(path, max_pixels=max_pixels)
        if shape is None:
            shape = image.shape
        if image.shape != shape:
            if size is None:
                raise ImageSetError(
                    f"{path}: {image.shape} differs from the first image's {shape}; "
                    "pass size=(H, W)"
                )
            image = resize(image, shape)
        if batch and (len(batch) + 1) * image.size > max_batch_pixels:
            yield np.stack(batch)
            batch = []
        batch.append(image.astype(np.float32, copy=False))
        if len(batch) == batch_size:
            yield np.stack(batch)
            batch = []
    if batch:
        yield np.stack(batch)


def load_image_zip(
    source,
    *,
    size: tuple[int, int] | None = None,
    max_files: int = 5000,
    max_bytes: int = 200 << 20,
    max_pixels: int | None = None,
    on_error: str = "raise",
    max_total_pixels: int = MAX_TOTAL_PIXELS,
) -> ImageSet:
    """Read a zip of labelled folders (``label/image.png``), e.g. an upload; safe on hostile zips.

    Members outside a label folder, paths that try to leave the archive
    (``..``, absolute) and non-images are ignored; more than ``max_files``
    members or more than ``max_bytes`` unpacked is refused before anything
    is unpacked. The images are read through a temporary folder that is
    removed before returning.

    Parameters
    ----------
    source : path-like, bytes or binary file
    size, max_pixels, on_error, max_total_pixels
        As :func:`load_image_set`.
    max_files : int, default 5000
    max_bytes : int, default 200 MiB

    Returns
    -------
    ImageSet
        Labels from the folder names, names ``label/file``.

    Raises
    ------
    ImageSetError
        Not a zip, too large, or no images in label folders.
    """
    archive, members = _open_zip(source, max_files, max_bytes, "one folder per label")
    with archive:
        wanted = _zip_images(members)
        with tempfile.TemporaryDirectory(prefix="eigenvision-zip-") as folder:
            # Members are written under numbered names (labels and file names of any length or
            # alphabet), in natural order, and their real names put back after reading.
            originals = {}
            labels = sorted({label for label, _, _ in wanted}, key=natural_key)
            for label_index, label in enumerate(labels):
                files = sorted((f, m) for lab, f, m in wanted if lab == label)
                files.sort(key=lambda item: natural_key(item[0]))
                for file_index, (file_name, member) in enumerate(files):
                    suffix = PurePosixPath(file_name).suffix.lower()
                    relative = f"{label_index:05d}/{file_index:05d}{suffix}"
                    target = Path(folder) / relative
                    target.parent.mkdir(exist_ok=True)
                    try:
                        target.write_bytes(_read_member(archive, member))
                    except ImageLoadError as exc:
                        raise ImageSetError(str(exc)) from exc
                    originals[relative] = (label, f"{label}/{file_name}")
            images = load_image_set(
                folder,
                size=size,
                max_pixels=max_pixels,
                on_error=on_error,
                max_total_pixels=max_total_pixels,
            )
    restored = [originals[name] for name in images.names]
    return images.replace(
        labels=np.array([label for label, _ in restored]),
        names=np.array([name for _, name in restored]),
        description="zip",
    )


def read_zip_images(source, *, max_files: int = 5000, max_bytes: int = 200 << 20, on_error="raise"):
    """The image files of a zip as bytes, in natural name order; safe on hostile zips.

    The reader behind :func:`load_image_zip`, for photos of any size (the
    app's group upload): more than ``max_files`` members or more than
    ``max_bytes`` unpacked is refused before anything is unpacked; paths
    that try to leave the archive and non-images are ignored; a corrupt,
    encrypted or unusually compressed member is an :class:`ImageLoadError`
    naming it.

    Parameters
    ----------
    source : path-like, bytes or binary file
    max_files : int, default 5000
    max_bytes : int, default 200 MiB
    on_error : {"raise", "skip"} or callable, default "raise"
        A member that cannot be unpacked: raise, leave it out with a warning,
        or tell ``on_error(name, error)`` (as :func:`load_image_set`).

    Returns
    -------
    list of (str, bytes)
        Each image's name in the zip and its content.

    Raises
    ------
    ImageSetError
        Not a zip, or too large.
    ImageLoadError
        A member that cannot be unpacked (``on_error="raise"``).
    """
    _check_on_error(on_error)
    archive, members = _open_zip(source, max_files, max_bytes, "images")
    images, failures = [], {}
    with archive:
        for member in sorted(members, key=lambda member: natural_key(member.filename)):
            parts = PurePosixPath(member.filename).parts
            if member.filename.startswith("/") or ".." in parts:
                continue
            if PurePosixPath(member.filename).suffix.lower() not in IMAGE_EXTENSIONS:
                continue
            try:
                images.append((member.filename, _read_member(archive, member)))
            except ImageLoadError as exc:
                if on_error == "raise":
                    raise
                if callable(on_error):
                    on_error(member.filename, exc)
                else:
                    failures[member.filename] = exc
    if failures:
        warnings.warn(UnreadableFilesWarning.of(failures), stacklevel=2)
    return images


def _open_zip(source, max_files, max_bytes, holding):
    """``(archive, members)`` of a zip within the bounds, or an ImageSetError saying why not."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise ImageSetError(f"not a zip file ({exc}); give a .zip of {holding}") from exc
    members = [m for m in archive.infolist() if not m.is_dir()]
    if len(members) > max_files:
        archive.close()
        raise ImageSetError(f"the zip holds {len(members)} files; at most {max_files} are read")
    if sum(m.file_size for m in members) > max_bytes:
        archive.close()
        raise ImageSetError(f"the zip unpacks to more than {max_bytes >> 20} MiB")
    return archive, members


def _read_member(archive, member) -> bytes:
    """A member's bytes, or an ImageLoadError naming it (corrupt, encrypted, odd compression)."""
    try:
        return archive.read(member)
    except (
        zipfile.BadZipFile,
        RuntimeError,
        NotImplementedError,
        OSError,
        EOFError,
        zlib.error,
    ) as exc:
        raise ImageLoadError(
            f"cannot unpack {member.filename!r} from the zip ({exc}); encrypted, corrupt or "
            "unusually compressed members cannot be read: re-zip the files without a password"
        ) from exc


def _zip_images(members):
    """``(label, file name, member)`` of the images in label folders, hostile paths left out.

    Two members that land on the same ``label/file`` (``a/x/1.png`` and
    ``b/x/1.png``) are an error, not an overwrite.
    """
    wanted, seen = [], {}
    for member in members:
        parts = PurePosixPath(member.filename).parts
        if len(parts) < 2 or member.filename.startswith("/") or ".." in parts:
            continue
        if PurePosixPath(parts[-1]).suffix.lower() not in IMAGE_EXTENSIONS:
            continue
        key = (parts[-2], parts[-1])
        if key in seen:
            raise ImageSetError(
                f"the zip holds {seen[key]!r} and {member.filename!r}, which are both image "
                f"{parts[-1]!r} of label {parts[-2]!r}; rename one of them"
            )
        seen[key] = member.filename
        wanted.append((parts[-2], parts[-1], member))
    if not wanted:
        raise ImageSetError("the zip holds no images in label folders (label/image.png)")
    return wanted
