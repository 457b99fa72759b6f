"""The named datasets: built-in ones and the real sets under ``$EIGENVISION_DATA``.

Built in (shipped with dependencies, always available):
:func:`load_digits` (scikit-learn) and :func:`load_lfw_subset` (scikit-image).

Read from ``$EIGENVISION_DATA/<folder>`` (or an explicit ``root``), else from the
folder the fetchers download into: :func:`load_att`, :func:`load_imm`,
:func:`load_usps`, :func:`load_mnist_test`, :func:`load_helen`, :func:`load_lfw`.

Downloaded, every file checked against its SHA-256 (pooch): :func:`fetch` and
:func:`fetch_att`, :func:`fetch_imm`, :func:`fetch_usps`, :func:`fetch_mnist_test`,
:func:`fetch_helen`, :func:`fetch_lfw`.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ._errors import DatasetNotFoundError, ImageSetError
from ._fetch import (  # the data home's catalogue and the fetcher, re-exported here
    DATA_ENV,
    DATASETS,
    DownloadError,
    cache_home,
    data_home,
    fetch,
    home_or_cache,
)
from .imageset import ImageSet
from .io import load_image, load_image_set
from .transform import eye_transform, resize_points, warp

__all__ = [
    "DATA_ENV",
    "DATASETS",
    "REGISTRY",
    "Dataset",
    "available",
    "load",
    "data_home",
    "cache_home",
    "fetch",
    "fetch_att",
    "fetch_imm",
    "fetch_usps",
    "fetch_mnist_test",
    "fetch_helen",
    "fetch_lfw",
    "DownloadError",
    "find_datasets",
    "load_digits",
    "load_lfw_subset",
    "lfw_files",
    "LFW_EYES",
    "load_att",
    "load_imm",
    "load_usps",
    "load_mnist_test",
    "load_helen",
    "load_helen_photo",
    "helen_files",
    "helen_other_faces",
    "HELEN_OTHER_FACES",
    "read_pts",
    "face_landmarks",
    "HELEN_CROP",
    "load_lsa_example",
    "load_lfw",
    "lfw_pairs",
]

# IMM point indices (image-left = the subject's right).
IMM_LANDMARKS = {"left_eye": 32, "right_eye": 33, "nose": 45, "mouth_left": 46, "mouth_right": 52}
IMM_SIZE = (600, 800)


def _dataset_dir(name: str, root) -> Path:
    folder, probe, layout = DATASETS[name]
    if root is not None:
        root = Path(root).expanduser()
        for candidate in (root, root / folder):
            if (candidate / probe).is_file():
                return candidate
        raise DatasetNotFoundError(
            f"the {name} dataset is not in {root}: expected {layout} (looked for {probe})"
        )
    home = home_or_cache()
    directory = home / folder
    if (directory / probe).is_file():
        return directory
    where = f"${DATA_ENV}={home}" if data_home() else f"{home} (${DATA_ENV} is not set)"
    raise DatasetNotFoundError(
        f"the {name} dataset is not under {where}: download it with "
        f"'eigenvision fetch {name}' (from Python, ev.datasets.fetch({name!r})), or set "
        f"${DATA_ENV} to the folder that holds {folder}/ (expected layout: {layout})"
    )


def _fetched(name, load, data_home, options, **load_options) -> ImageSet:
    return load(fetch(name, data_home, **options), **load_options)


def fetch_att(data_home=None, *, mirror=None, progress: bool = True) -> ImageSet:
    """The AT&T faces (:func:`load_att`), downloaded first where missing.

    Parameters
    ----------
    data_home, mirror, progress
        As :func:`fetch`.

    Returns
    -------
    ImageSet
    """
    return _fetched("att", load_att, data_home, dict(mirror=mirror, progress=progress))


def fetch_imm(data_home=None, *, as_gray=True, mirror=None, progress: bool = True) -> ImageSet:
    """The IMM faces with their landmarks (:func:`load_imm`), downloaded first where missing.

    Parameters
    ----------
    data_home, mirror, progress
        As :func:`fetch`.
    as_gray : bool, default True
        As :func:`load_imm`.

    Returns
    -------
    ImageSet
    """
    options = dict(mirror=mirror, progress=progress)
    return _fetched("imm", load_imm, data_home, options, as_gray=as_gray)


def fetch_usps(data_home=None, split="train", *, mirror=None, progress: bool = True) -> ImageSet:
    """The USPS digits (:func:`load_usps`), downloaded first where missing.

    Parameters
    ----------
    data_home, mirror, progress
        As :func:`fetch`.
    split : {"train", "test"}, default "train"
        As :func:`load_usps`.

    Returns
    -------
    ImageSet
    """
    options = dict(mirror=mirror, progress=progress)
    return _fetched("usps", load_usps, data_home, options, split=split)


def fetch_mnist_test(data_home=None, *, mirror=None, progress: bool = True) -> ImageSet:
    """The MNIST test digits (:func:`load_mnist_test`), downloaded first where missing.

    Parameters
    ----------
    data_home, mirror, progress
        As :func:`fetch`.

    Returns
    -------
    ImageSet
    """
    return _fetched(
        "mnist_test", load_mnist_test, data_home, dict(mirror=mirror, progress=progress)
    )


def fetch_helen(data_home=None, *, photo_ids=None, mirror=None, progress=True) -> ImageSet:
    """The HELEN faces in the wild (:func:`load_helen`), downloaded first where missing.

    Parameters
    ----------
    data_home, mirror, progress
        As :func:`fetch`.
    photo_ids : sequence of str, optional
        As :func:`load_helen`.

    Returns
    -------
    ImageSet
    """
    options = dict(mirror=mirror, progress=progress)
    return _fetched("helen", load_helen, data_home, options, photo_ids=photo_ids)


def fetch_lfw(data_home=None, *, min_photos=1, mirror=None, progress=True) -> ImageSet:
    """LFW's View 1 training people (:func:`load_lfw`), downloaded first where missing.

    Parameters
    ----------
    data_home, mirror, progress
        As :func:`fetch`.
    min_photos : int, default 1
        As :func:`load_lfw`.

    Returns
    -------
    ImageSet
    """
    options = dict(mirror=mirror, progress=progress)
    return _fetched("lfw_train", load_lfw, data_home, options, min_photos=min_photos)


def find_datasets(root=None) -> dict[str, Path | None]:
    """Which real datasets are present: name -> folder, or None where missing.

    Parameters
    ----------
    root : path, optional
        Where to look instead of ``$EIGENVISION_DATA``.

    Returns
    -------
    dict of str to Path or None
        For every dataset of :data:`DATASETS`.
    """
    found = {}
    for name in DATASETS:
        try:
            found[name] = _dataset_dir(
                name, None if root is None else Path(root) / DATASETS[name][0]
            )
        except DatasetNotFoundError:
            found[name] = None
    return found


def load_digits() -> ImageSet:
    """scikit-learn's handwritten digits: 1797 images of 8x8 pixels.

    Returns
    -------
    ImageSet
        ``images`` (1797, 8, 8) float32 in [0, 1] (the 0..16 counts divided
        by 16), ``labels`` (1797,) int64 in 0..9.

    References
    ----------
    UCI ML hand-written digits (Alpaydin & Kaynak, 1998), as shipped by
    scikit-learn.
    """
    from sklearn.datasets import load_digits as sk_load_digits

    bunch = sk_load_digits()
    images = (bunch.images / 16.0).astype(np.float32)
    names = np.array([f"digits/{i:04d}" for i in range(len(images))])
    return ImageSet(images, bunch.target.astype(np.int64), names, description="sklearn digits")


def load_lfw_subset() -> ImageSet:
    """scikit-image's LFW subset: 100 faces and 100 non-faces, 25x25 pixels.

    Returns
    -------
    ImageSet
        ``images`` (200, 25, 25) float32 in [0, 1]; ``labels`` ``"face"``
        for the first 100, ``"non-face"`` for the rest.

    References
    ----------
    Huang et al. (2007), Labeled Faces in the Wild, as shipped by scikit-image.
    """
    from skimage.data import lfw_subset

    images = np.asarray(lfw_subset(), dtype=np.float32)
    labels = np.array(["face"] * 100 + ["non-face"] * 100)
    names = np.array([f"lfw/{label}/{i:03d}" for i, label in enumerate(labels)])
    return ImageSet(images, labels, names, description="skimage lfw_subset")


def load_att(root=None) -> ImageSet:
    """The AT&T (ORL) Database of Faces: 40 people x 10 images of 112x92.

    Parameters
    ----------
    root : path-like, optional
        The ``att_faces`` folder; default ``$EIGENVISION_DATA/att_faces``.

    Returns
    -------
    ImageSet
        ``images`` (400, 112, 92) float32 in [0, 1]; ``labels`` the subject
        folders ``"s1"`` .. ``"s40"``; ``names`` like ``"s1/1.pgm"``, in
        natural order (image 1 .. 10 of each subject).

    References
    ----------
    F. Samaria and A. Harter (1994), Parameterisation of a stochastic model
    for human face identification, 2nd IEEE Workshop on Applications of
    Computer Vision. Credit: Olivetti Research Laboratory.
    """
    directory = _dataset_dir("att", root)
    images = load_image_set(directory, pattern="*.pgm")
    return images.replace(description="AT&T faces")


def load_lfw(root=None, *, min_photos: int = 1) -> ImageSet:
    """Labeled Faces in the Wild, View 1 training people: news photos, one folder per person.

    Parameters
    ----------
    root : path-like, optional
        The ``lfw_train`` folder; default ``$EIGENVISION_DATA/lfw_train``.
    min_photos : int, default 1
        Only the people with at least this many photos.

    Returns
    -------
    ImageSet
        ``images`` (n, 150, 150) float32 grey in [0, 1], not aligned (the face
        near the centre); ``labels`` the people (``"George_W_Bush"``); ``names``
        like ``"George_W_Bush/George_W_Bush_0001.jpg"``.

    References
    ----------
    G. B. Huang, M. Ramesh, T. Berg and E. Learned-Miller (2007), Labeled
    Faces in the Wild: a database for studying face recognition in
    unconstrained environments, UMass Amherst TR 07-49.
    """
    files = [path for _, path in lfw_files(root, min_photos=min_photos)]
    if not files:
        directory = _dataset_dir("lfw_train", root) / "images"
        raise ImageSetError(f"{directory}: no person has {min_photos} or more photos")
    images = np.stack([load_image(path) for path in files])
    labels = np.array([path.parent.name for path in files])
    names = np.array([f"{path.parent.name}/{path.name}" for path in files])
    return ImageSet(images, labels, names, description="LFW (View 1 training people)")


#: Typical eye centres ``(x, y)`` in LFW's 150 x 150 photos (the face near the centre): medians
#: of the eyes the shipped finder placed on every 300th photo.
LFW_EYES = ((62.6, 67.5), (86.9, 67.5))


def lfw_files(root=None, *, min_photos: int = 1) -> list[tuple[str, Path]]:
    """LFW's photos as ``(person, path)``, people sorted by name, each person's photos in order.

    Parameters
    ----------
    root : path-like, optional
        The ``lfw_train`` folder; default ``$EIGENVISION_DATA/lfw_train``.
    min_photos : int, default 1
        Only the people with at least this many photos.

    Returns
    -------
    list of (str, Path)
    """
    if isinstance(min_photos, bool) or not isinstance(min_photos, int) or min_photos < 1:
        raise ValueError(f"min_photos must be a positive int, got {min_photos!r}")
    directory = _dataset_dir("lfw_train", root) / "images"
    files = []
    for person in sorted(d for d in directory.iterdir() if d.is_dir()):
        photos = sorted(person.glob("*.jpg"))
        if len(photos) >= min_photos:
            files += [(person.name, path) for path in photos]
    return files


def lfw_pairs(root=None) -> list:
    """LFW's View 1 training pairs (``pairsDevTrain.txt``): 1,100 same, 1,100 different.

    Parameters
    ----------
    root : path-like, optional
        The ``lfw_train`` folder; default ``$EIGENVISION_DATA/lfw_train``.

    Returns
    -------
    list of (str, str, bool)
        The two photos as :func:`load_lfw`'s ``names``, and whether they show
        one person; pairs with a photo LFW's errata withdrew (``EXCLUDED.txt``)
        are left out.
    """
    directory = _dataset_dir("lfw_train", root)
    path = directory / "pairsDevTrain.txt"
    lines = path.read_text().split("\n")
    try:
        count = int(lines[0])
        pairs = []
        for line in lines[1:]:
            cells = line.split("\t")
            if len(cells) == 3:
                (person, a, b), other = cells, cells[0]
            elif len(cells) == 4:
                person, a, other, b = cells
            else:
                continue
            pairs.append(
                (
                    f"{person}/{person}_{int(a):04d}.jpg",
                    f"{other}/{other}_{int(b):04d}.jpg",
                    person == other,
                )
            )
    except ValueError as exc:
        raise ImageSetError(f"{path}: not LFW's pair format ({exc})") from exc
    if len(pairs) != 2 * count:
        raise ImageSetError(f"{path}: declares {count} pairs of each kind, holds {len(pairs)}")
    photos = directory / "images"
    return [pair for pair in pairs if (photos / pair[0]).is_file() and (photos / pair[1]).is_file()]


def _read_asf(path: Path) -> np.ndarray:
    lines = [ln for ln in path.read_text(encoding="latin-1").splitlines() if ln.strip()]
    content = [ln for ln in lines if not ln.lstrip().startswith("#")]
    try:
        count = int(content[0])
        rows = [ln.split() for ln in content[1 : 1 + count]]
        points = np.array([[float(r[2]), float(r[3])] for r in rows])
    except (IndexError, ValueError) as exc:
        raise ImageSetError(f"{path}: not a valid AAM .asf landmark file ({exc})") from exc
    if points.shape != (count, 2):
        raise ImageSetError(f"{path}: declares {count} points but holds {len(points)}")
    return points


def load_imm(root=None, *, as_gray: bool = True) -> ImageSet:
    """The IMM Frontal Face Database: 12 people x 10 images with 73 landmarks.

    Parameters
    ----------
    root : path-like, optional
        The ``imm_frontal`` folder; default ``$EIGENVISION_DATA/imm_frontal``.
    as_gray : bool, default True
        Grey (600, 800) images; with False, RGB (600, 800, 3).

    Returns
    -------
    ImageSet
        ``images`` (120, 600, 800) float32 in [0, 1]; ``labels`` the person
        ``"01"`` .. ``"12"``; ``points`` (120, 73, 2) all manual landmarks in
        pixels (relative coordinates times 800 and 600); ``landmarks`` the
        named ones: ``left_eye`` (point 32, the pupil on the image's left),
        ``right_eye`` (33), ``nose`` (45, the tip), ``mouth_left`` (46),
        ``mouth_right`` (52) and ``mouth`` (midpoint of 46 and 52).

    References
    ----------
    J. Fagertun and M. B. Stegmann (2005), The IMM Frontal Face Database,
    Technical University of Denmark, IMM publication no. 3943.
    """
    directory = _dataset_dir("imm", root)
    paths = sorted(p for p in directory.glob("*.jpg") if re.fullmatch(r"\d\d_\d\d\.jpg", p.name))
    if not paths:
        raise ImageSetError(f"{directory}: no PP_KK.jpg images found")
    images, points = [], []
    for path in paths:
        image = load_image(path, as_gray=as_gray)
        if image.shape[:2] != IMM_SIZE:
            raise ImageSetError(f"{path}: expected 800x600 pixels, got {image.shape[1::-1]}")
        asf = directory / "asf" / (path.stem + ".asf")
        if not asf.is_file():
            raise ImageSetError(f"{path.name} has no landmark file {asf}")
        images.append(image)
        points.append(_read_asf(asf) * [IMM_SIZE[1], IMM_SIZE[0]])
    points = np.stack(points)
    landmarks = {name: points[:, index] for name, index in IMM_LANDMARKS.items()}
    landmarks["mouth"] = 0.5 * (points[:, 46] + points[:, 52])
    labels = np.array([p.name[:2] for p in paths])
    names = np.array([p.name for p in paths])
    return ImageSet(
        np.stack(images), labels, names, landmarks, points, description="IMM frontal faces"
    )


#: The aligned HELEN crops: eyes 40 pixels apart, level, 64 pixels down a 160 x 160 crop.
HELEN_CROP = {"shape": (160, 160), "iod": 40, "eye_row": 64}


def read_pts(path) -> np.ndarray:
    """The 68 ``(x, y)`` points of a 300-W ``.pts`` file, 0-based pixel coordinates.

    Parameters
    ----------
    path : path-like
        ``x y`` lines (the ``version``/``{``/``}`` header lines, if any, are skipped).

    Returns
    -------
    (68, 2) ndarray of float64
        The file's 1-based coordinates minus 1 (the 300-W convention).
    """
    rows = []
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                rows.append((float(parts[0]), float(parts[1])))
            except ValueError:
                continue
    points = np.array(rows, dtype=np.float64)
    if points.shape != (68, 2) or not np.all(np.isfinite(points)):
        raise ImageSetError(f"{path}: expected 68 finite 'x y' lines, got {points.shape}")
    return points - 1.0


def face_landmarks(points) -> dict:
    """Eye centres, nose tip and mouth centre of 68-point (iBUG 300-W) annotations.

    Parameters
    ----------
    points : (..., 68, 2) array_like

    Returns
    -------
    dict of str to (..., 2) ndarray
        ``left_eye`` (mean of points 36-41, the image's left), ``right_eye``
        (42-47), ``nose`` (30, the tip), ``mouth`` (mean of the outer lip, 48-59).
    """
    points = np.asarray(points, dtype=np.float64)
    return {
        "left_eye": points[..., 36:42, :].mean(axis=-2),
        "right_eye": points[..., 42:48, :].mean(axis=-2),
        "nose": points[..., 30, :],
        "mouth": points[..., 48:60, :].mean(axis=-2),
    }


def helen_files(root=None) -> list[tuple[str, Path, Path]]:
    """``(photo id, image, points file)`` of every HELEN face, in name order.

    Parameters
    ----------
    root : path, optional
        The folder holding ``helen_train/`` (default ``$EIGENVISION_DATA``).

    Returns
    -------
    list of (str, Path, Path)
        Split by the photo id when holding faces out: two faces of one photo
        share it.
    """
    directory = _dataset_dir("helen", root)
    files = []
    for pts in sorted(directory.glob("*.pts")):
        image = pts.with_suffix(".jpg")
        if image.is_file():
            files.append((pts.stem.rsplit("_", 1)[0], image, pts))
    if not files:
        raise ImageSetError(f"{directory}: no <photo>_<k>.jpg / .pts pairs")
    return files


def load_helen_photo(image_path, pts_path, *, max_side=None):
    """One HELEN photograph, grey, and its 68 points in that image's pixels.

    Parameters
    ----------
    image_path, pts_path : path-like
        A pair from :func:`helen_files`.
    max_side : int, optional
        Reduce the photo so its longer side is at most this (the points follow).

    Returns
    -------
    image : (H, W) ndarray of float32
    points : (68, 2) ndarray of float64
    """
    image = load_image(image_path, max_side=max_side)
    with Image.open(image_path) as header:  # the stored size: the points' frame
        stored = header.size[::-1]
    return image, resize_points(read_pts(pts_path), stored, image.shape)


#: Faces in HELEN crops that carry no annotation (the README: "other people can appear,
#: unannotated, in a crop"), by crop (file stem): ``(x, y, w, h)`` face boxes in the stored
#: image's pixels. Labelled by eye among the detections that found no annotated face, at 640
#: pixels: in the held-out photos of :func:`~eigenvision.faces.photos.helen_split`
#: (2026-11-26), on the 40 of ``wild_detection``, the face finder's (with and without
#: ``n_refined``), OpenCV Haar's and scikit-image LBP's, on the 130 validation and calibration
#: photos, the finder's at log-odds >= 0 (with and without); in the 314 training photos that
#: calibrate the shipped threshold (2026-12-06,
#: :func:`~eigenvision.faces.recipes.fit_appearance_check`), the finder's at p >= 0.05, as
#: shipped and with its appearance check refitted. Detections on a face in part only (an eye
#: and a cheek) are not listed, nor faces no detector proposed: a detection of one stays an
#: alarm.
HELEN_OTHER_FACES = {
    "111835766_1": ((325.5, 186.3, 173.3, 176.5),),
    "129408727_1": ((783.3, 273.1, 299.1, 299.1),),
    "1394430375_1": ((298.1, 99.0, 224.8, 224.8),),
    "146978430_1": ((534.6, 374.3, 252.4, 257.1),),
    "146978430_2": ((-21.1, 217.8, 240.9, 245.4),),
    "1753941007_1": ((640.5, 32.0, 143.8, 146.4),),
    "175991309_2": ((-2.0, 101.3, 312.2, 318.0),),
    "200748267_1": ((84.6, 383.3, 206.7, 210.6),),
    "2082655557_2": ((618.2, 334.0, 217.1, 221.2),),
    "2091477588_1": ((867.1, 1006.9, 504.3, 513.7),),
    "2098713580_2": ((894.4, 594.1, 401.0, 408.5),),
    "2106937488_1": ((63.9, 179.6, 229.3, 233.6),),
    "212515669_1": ((480.3, 213.2, 318.8, 324.8),),
    "2134243149_1": ((-3.7, 544.2, 301.3, 306.9),),
    "2134243149_2": ((643.8, 190.3, 300.4, 306.0),),
    "2139691983_1": ((578.9, 189.3, 273.2, 278.2),),
    "2140620254_2": ((59.7, 118.3, 362.1, 368.8),),
    "214426541_2": ((915.5, 484.6, 671.5, 684.0),),
    "2164761297_1": ((6.9, 248.5, 221.3, 225.4),),
    "2165528796_1": ((-18.4, 307.3, 257.4, 262.2),),
    "2202089258_1": ((386.5, 210.4, 188.7, 192.2),),
    "2211542693_1": ((487.7, 754.0, 66.9, 68.1),),
    "2220556464_2": ((1800.8, 1555.7, 724.4, 737.9),),
    "2227646745_2": ((124.8, 61.6, 297.2, 302.7),),
    "2230569196_3": ((670.7, 60.9, 272.3, 277.4),),
    "2236814888_1": ((667.8, 117.6, 339.3, 345.6),),
    "2236814888_2": ((54.5, 672.4, 336.6, 342.8),),
    "2267947745_1": ((491.1, 112.2, 364.2, 371.0),),
    "2290385398_2": ((-49.4, 155.5, 804.7, 819.7), (1740.3, 616.3, 809.7, 824.7)),
    "230131544_1": ((949.0, 639.8, 302.4, 308.1),),
}


def helen_other_faces(image_path, shape) -> np.ndarray:
    """The unannotated faces of a HELEN crop (:data:`HELEN_OTHER_FACES`) in a loaded image's pixels.

    Parameters
    ----------
    image_path : path-like
        A crop from :func:`helen_files`.
    shape : (H, W)
        The shape it was loaded at (:func:`load_helen_photo`'s image).

    Returns
    -------
    (n, 4) ndarray
        ``(x, y, w, h)`` boxes; none for most crops.
    """
    boxes = np.array(HELEN_OTHER_FACES.get(Path(image_path).stem, ()), dtype=float).reshape(-1, 4)
    if not len(boxes):
        return boxes
    with Image.open(image_path) as header:
        stored = header.size[::-1]
    corners = resize_points(boxes[:, :2], stored, shape)
    sizes = boxes[:, 2:] * (np.array(shape[::-1], dtype=float) / np.array(stored[::-1]))
    return np.hstack([corners, sizes])


def load_helen(root=None, *, photo_ids=None) -> ImageSet:
    """HELEN faces in the wild (Le et al. 2012) with the 300-W points, aligned on the eyes.

    Each face is cut from its photograph by the similarity transform that
    puts its eye centres 40 pixels apart on a level line 64 pixels down a
    160 x 160 crop (:data:`HELEN_CROP`), after an antialiased reduction of the
    photograph: room around the face for detection windows, features and
    jitter, at one scale.

    Parameters
    ----------
    root : path, optional
        The folder holding ``helen_train/`` (default ``$EIGENVISION_DATA``).
    photo_ids : collection of str, optional
        Only these photos (split by photo id for validation).

    Returns
    -------
    ImageSet
        ``images`` (n, 160, 160) grey; ``labels`` the photo ids (no
        identities); ``landmarks`` ``left_eye``, ``right_eye``, ``nose``,
        ``mouth`` (see :func:`face_landmarks`); ``points`` (n, 68, 2), all in
        crop pixels.

    References
    ----------
    V. Le, J. Brandt, Z. Lin, L. Bourdev and T. S. Huang (2012), Interactive
    facial feature localization, ECCV. C. Sagonas et al. (2013), 300 Faces
    in-the-Wild Challenge, ICCV Workshops.
    """
    shape, iod, row = HELEN_CROP["shape"], HELEN_CROP["iod"], HELEN_CROP["eye_row"]
    left_x = (shape[1] - 1 - iod) / 2
    eye_positions = (
        (left_x / (shape[1] - 1), row / (shape[0] - 1)),
        ((left_x + iod) / (shape[1] - 1), row / (shape[0] - 1)),
    )
    images, points, labels, names = [], [], [], []
    for photo, image_path, pts_path in helen_files(root):
        if photo_ids is not None and photo not in photo_ids:
            continue
        marks = read_pts(pts_path)
        eyes = face_landmarks(marks)
        true_iod = float(np.linalg.norm(eyes["right_eye"] - eyes["left_eye"]))
        with Image.open(image_path) as header:
            full = header.size[::-1]
        # Decode at about twice the crop's scale (antialiased), then warp: no aliasing.
        factor = min(1.0, 2.0 * iod / max(true_iod, 1e-9))
        photo_image = load_image(image_path, max_side=max(8, round(max(full) * factor)))
        scaled = resize_points(marks, full, photo_image.shape)
        eyes = face_landmarks(scaled)
        transform = eye_transform(
            eyes["left_eye"], eyes["right_eye"], shape=shape, eye_positions=eye_positions
        )
        images.append(_warp_crop(photo_image, transform, shape))
        points.append(transform(scaled))
        labels.append(photo)
        names.append(image_path.name)
    if not images:
        raise ImageSetError("no HELEN faces match photo_ids")
    points = np.stack(points)
    return ImageSet(
        np.stack(images),
        np.array(labels),
        np.array(names),
        face_landmarks(points),
        points,
        description="HELEN faces, aligned",
    )


def _warp_crop(image, transform, shape):
    """A float32 crop of ``image`` through ``transform``, bilinear and unsmoothed (the crops
    the shipped models were trained on)."""
    return warp(image, transform, shape, antialias=False).astype(np.float32)


def load_usps(root=None, split: str = "train") -> ImageSet:
    """USPS handwritten digits (the ESL ``zip.train`` / ``zip.test`` split), 16x16.

    Parameters
    ----------
    root : path-like, optional
        The ``usps`` folder; default ``$EIGENVISION_DATA/usps``.
    split : {"train", "test"}

    Returns
    -------
    ImageSet
        ``images`` (7291, 16, 16) for train or (2007, 16, 16) for test,
        float32 in [0, 1] (the original [-1, 1] values mapped by
        ``(x + 1) / 2``, background 0); ``labels`` int64 in 0..9.

    References
    ----------
    Y. LeCun et al. (1990), Handwritten digit recognition with a
    back-propagation network, NIPS 2; J. J. Hull (1994), A database for
    handwritten text recognition research, IEEE TPAMI 16(5). Split from
    Hastie, Tibshirani & Friedman, The Elements of Statistical Learning.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    directory = _dataset_dir("usps", root)
    with np.load(directory / "usps_zip.npz", allow_pickle=False) as data:
        X = np.asarray(data[f"x_{split}"], dtype=np.float64)
        y = np.asarray(data[f"y_{split}"], dtype=np.int64)
    if X.ndim != 2 or X.shape[1] != 256 or len(X) != len(y):
        raise ImageSetError(f"usps_zip.npz: unexpected shapes {X.shape}, {y.shape}")
    images = ((X + 1.0) / 2.0).reshape(-1, 16, 16).astype(np.float32)
    names = np.array([f"usps/{split}/{i:04d}" for i in range(len(images))])
    return ImageSet(images, y, names, description=f"USPS {split}")


def _read_idx(path: Path, magic: int, ndim: int) -> np.ndarray:
    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    header = 4 + 4 * ndim
    if len(raw) < header or int.from_bytes(raw[:4], "big") != magic:
        raise ImageSetError(f"{path}: not an IDX file with magic {magic:#x}")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    if len(raw) != header + int(np.prod(shape)):
        raise ImageSetError(f"{path}: holds {len(raw) - header} bytes, header declares {shape}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def load_mnist_test(root=None) -> ImageSet:
    """The MNIST test split: 10000 handwritten digits of 28x28.

    Parameters
    ----------
    root : path, optional
        The folder holding ``mnist_t10k/`` (default ``$EIGENVISION_DATA``).

    Returns
    -------
    ImageSet
        ``images`` (10000, 28, 28) float32 in [0, 1] (bytes / 255),
        ``labels`` int64 in 0..9.

    References
    ----------
    Y. LeCun, C. Cortes and C. J. C. Burges, The MNIST database of
    handwritten digits.
    """
    directory = _dataset_dir("mnist_test", root)
    images = _read_idx(directory / "t10k-images-idx3-ubyte.gz", 0x803, 3)
    labels = _read_idx(directory / "t10k-labels-idx1-ubyte.gz", 0x801, 1)
    if len(images) != len(labels):
        raise ImageSetError(f"MNIST: {len(images)} images but {len(labels)} labels")
    names = np.array([f"mnist/test/{i:05d}" for i in range(len(images))])
    return ImageSet(
        images.astype(np.float32) / np.float32(255),
        labels.astype(np.int64),
        names,
        description="MNIST test",
    )


def load_lsa_example():
    """The lecture's latent semantic analysis example (Deerwester et al. 1990).

    Twelve terms in nine technical-memo titles (c1-c5 about human-computer
    interaction, m1-m4 about graphs).

    Returns
    -------
    X : (12, 9) ndarray
        Term counts, terms x titles.
    terms : list of str
    titles : list of str
    """
    terms = [
        "human",
        "interface",
        "computer",
        "user",
        "system",
        "response",
        "time",
        "EPS",
        "survey",
        "trees",
        "graph",
        "minors",
    ]
    titles = ["c1", "c2", "c3", "c4", "c5", "m1", "m2", "m3", "m4"]
    X = np.array(
        [
            [1, 0, 0, 1, 0, 0, 0, 0, 0],
            [1, 0, 1, 0, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0, 0, 0, 0],
            [0, 1, 1, 0, 1, 0, 0, 0, 0],
            [0, 1, 1, 2, 0, 0, 0, 0, 0],
            [0, 1, 0, 0, 1, 0, 0, 0, 0],
            [0, 1, 0, 0, 1, 0, 0, 0, 0],
            [0, 0, 1, 1, 0, 0, 0, 0, 0],
            [0, 1, 0, 0, 0, 0, 0, 0, 1],
            [0, 0, 0, 0, 0, 1, 1, 1, 0],
            [0, 0, 0, 0, 0, 0, 1, 1, 1],
            [0, 0, 0, 0, 0, 0, 0, 1, 1],
        ],
        dtype=float,
    )
    return X, terms, titles


@dataclass(frozen=True)
class Dataset:
    """One entry of :data:`REGISTRY`: a named set of labelled images.

    Attributes
    ----------
    name : str
        What the CLI, the app and the experiments call it.
    title : str
        A human label for menus.
    load : callable
        ``load() -> ImageSet``.
    builtin : bool
        Shipped with a dependency (no download); otherwise it is read from
        ``$EIGENVISION_DATA`` (:data:`DATASETS` says where).
    interactive : bool
        Small enough for the web demo's pages to refit on every change.
    labels : {"people", "digits", "face or not", "photos"}
        What the labels name: the person in a face image (a set to recognise
        faces with), a digit, whether the image is a face at all, or the
        photo a face was cut from (no identities).
    """

    name: str
    title: str
    load: Callable[[], ImageSet]
    builtin: bool
    interactive: bool = True
    labels: str = "people"


#: Every named image set: the one place a new dataset is added.
REGISTRY = {
    entry.name: entry
    for entry in (
        Dataset("att", "AT&T faces", load_att, False),
        Dataset("digits", "digits (built in)", load_digits, True, labels="digits"),
        Dataset("lfw", "LFW faces (built in)", load_lfw_subset, True, labels="face or not"),
        Dataset("imm", "IMM faces", load_imm, False, interactive=False),  # 600 x 800 images
        Dataset("usps", "USPS digits", load_usps, False, labels="digits"),
        Dataset(
            "mnist_test",
            "MNIST test digits",
            load_mnist_test,
            False,
            interactive=False,
            labels="digits",
        ),
        Dataset(
            "helen",
            "HELEN faces in the wild",
            load_helen,
            False,
            interactive=False,
            labels="photos",
        ),
        Dataset("lfw_train", "LFW people in the wild", load_lfw, False, interactive=False),
    )
}


def available(root=None) -> list[str]:
    """Names of the datasets that can be loaded here: the built-in ones and those found.

    Parameters
    ----------
    root : path, optional
        Where to look instead of ``$EIGENVISION_DATA``.

    Returns
    -------
    list of str
        Keys of :data:`REGISTRY`, in its order.
    """
    found = find_datasets(root)
    return [name for name, entry in REGISTRY.items() if entry.builtin or found.get(name)]


def load(name: str) -> ImageSet:
    """The dataset called ``name`` (a key of :data:`REGISTRY`).

    Parameters
    ----------
    name : str

    Returns
    -------
    ImageSet

    Examples
    --------
    >>> load("digits").images.shape
    (1797, 8, 8)
    """
    if name not in REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; use one of {sorted(REGISTRY)}")
    return REGISTRY[name].load()
