"""Downloading the real datasets with pooch: where each comes from, checked file by file.

Every file a fetcher writes is checked against its SHA-256 in ``_registry.txt.gz``
(written by ``tools/make_registry.py`` from a verified copy) before it is moved into
place, so a download is either complete and exact or absent. The addresses are the
datasets' own (MNIST, the ESL book's USPS files, LFW's site repository) or the public
copies pinned to a commit that the data README names as the provenance of each file.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

import numpy as np

from ._errors import EigenvisionError
from ._files import atomic_write
from ._progress import progress as show_progress

REGISTRY_PATH = Path(__file__).with_name("_registry.txt.gz")

#: Environment variable naming the folder that holds the real datasets.
DATA_ENV = "EIGENVISION_DATA"

#: Dataset name -> (folder under $EIGENVISION_DATA, a file that must exist, expected layout).
DATASETS = {
    "att": ("att_faces", "s1/1.pgm", "att_faces/s1/1.pgm ... att_faces/s40/10.pgm"),
    "imm": ("imm_frontal", "asf/01_01.asf", "imm_frontal/PP_KK.jpg and imm_frontal/asf/PP_KK.asf"),
    "usps": ("usps", "usps_zip.npz", "usps/usps_zip.npz (x_train, y_train, x_test, y_test)"),
    "helen": (
        "helen_train",
        "100032540_1.pts",
        "helen_train/<photo>_<k>.jpg with <photo>_<k>.pts (68 points)",
    ),
    "lfw_train": (
        "lfw_train",
        "pairsDevTrain.txt",
        "lfw_train/images/<Person_Name>/<Person_Name>_0001.jpg and lfw_train/pairsDevTrain.txt",
    ),
    "mnist_test": (
        "mnist_t10k",
        "t10k-images-idx3-ubyte.gz",
        "mnist_t10k/t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz",
    ),
}


class DownloadError(EigenvisionError, OSError):
    """A dataset file could not be downloaded, or did not match its checksum."""


#: A download may take ``GRACE_SECONDS`` plus its size at ``MIN_BYTES_PER_SECOND``: a server
#: that trickles (a byte every few seconds never trips a socket's timeout) is given up on.
GRACE_SECONDS = 60.0
MIN_BYTES_PER_SECOND = 50_000

#: The most bytes read from a source whose files' sizes are not registered (ESL's USPS files).
UNREGISTERED_MAX_BYTES = 64 << 20


class Registered(NamedTuple):
    """A registered file: its SHA-256 and its size in bytes."""

    sha256: str
    size: int


def _github(repository: str, commit: str, folder: str) -> str:
    return f"https://raw.githubusercontent.com/{repository}/{commit}/{quote(folder)}/"


@dataclass(frozen=True)
class Source:
    """Where a dataset's files are downloaded from.

    Parameters
    ----------
    folder : str
        The dataset's folder under the data home (``att_faces``).
    urls : tuple of str
        Base addresses, tried in order; a file's address is a base followed by
        its path in the folder (or its name in ``renames``).
    renames : dict of str to str
        Local path -> the path at the source, where they differ.
    made_here : tuple of str
        Local files the source does not hold (written when the data was staged).
    """

    folder: str
    urls: tuple
    renames: dict = field(default_factory=dict)
    made_here: tuple = ()

    def includes(self, relative: str) -> bool:
        """Whether the file at ``relative`` (a path in the folder) is downloaded."""
        return relative not in self.made_here

    def addresses(self, relative: str) -> list[str]:
        """The addresses of one file, in the order they are tried."""
        remote = quote(self.renames.get(relative, relative))
        return [base + remote for base in self.urls]


SOURCES = {
    "att": Source(
        "att_faces",
        (
            _github(
                "Vescana/imagemproc",
                "4eaf8aabd7c448f2e85cab46d8a70bb1ee4adab9",
                "trunk/docs/att_faces",
            ),
        ),
    ),
    "imm": Source(
        "imm_frontal",
        (
            _github(
                "VipulRamtekkar/Active-Appearance-Models",
                "ca591b224896270b2b82b8aec2dec640e51baf24",
                "data/imm3943/IMM-Frontal Face DB SMALL",
            ),
        ),
    ),
    "usps": Source(
        "usps",
        ("https://hastie.su.domains/ElemStatLearn/datasets/",),
        made_here=("usps.h5",),
    ),
    "mnist_test": Source(
        "mnist_t10k",
        ("http://yann.lecun.com/exdb/mnist/", "https://ossci-datasets.s3.amazonaws.com/mnist/"),
    ),
    "helen": Source(
        "helen_train",
        (
            _github(
                "Spinkoo/Face-alignement",
                "e08a16aa91ad771df34e75f70bc5aaf20238ff6a",
                "helen/trainset",
            ),
        ),
    ),
    "lfw_train": Source(
        "lfw_train",
        (
            _github(
                "umass-vis-lfw/umass-vis-lfw.github.io",
                "2a620cd8cceb10430f8c7012fe9fa5f0837759e9",
                "",
            ),
        ),
        renames={"LFW_README.txt": "README.txt"},
        made_here=("EXCLUDED.txt", "README.md", "MANIFEST.sha256"),
    ),
}

#: The arrays of ``usps_zip.npz`` (ESL's ``zip.train`` / ``zip.test``): their SHA-256, as built.
USPS_DIGESTS = {
    "x_train": "46de94974cd3a88bb45ab10d68e4587a8d5b383f8960e4031da7f1c598432760",
    "y_train": "d2205a402e10ef9785bcb548e666f1fdc5d719287eac6d14327f77964ca173c1",
    "x_test": "d72a1fc667f3c1e8bb4e743921bc79d8560d6e787b9e4ac7928baaa4388567e6",
    "y_test": "83d5538087f38b4aa9a64e4c69e47ae24d1b4eaa601c3d41c4a32d7c2739d831",
}


def registry(folder: str) -> dict[str, Registered]:
    """The files of one dataset folder, their SHA-256 and their sizes.

    Parameters
    ----------
    folder : str
        A :class:`Source`'s ``folder``.

    Returns
    -------
    dict of str to Registered
        Path in the folder -> ``(sha256, size)``.
    """
    prefix = folder + "/"
    with gzip.open(REGISTRY_PATH, "rt", encoding="utf-8") as lines:
        entries = (line.split() for line in lines)
        return {
            path[len(prefix) :]: Registered(digest, int(size))
            for path, digest, size in entries
            if path.startswith(prefix)
        }


def fetch_file(address: str, target: Path, *, sha256=None, size=None) -> Path:
    """Download ``address`` to ``target``: bounded in bytes and time, checked, written atomically.

    The body is streamed to a temporary beside ``target`` and moved into place
    only when complete and matching ``sha256``; a temporary a killed fetch
    left is removed by the next (:func:`~eigenvision._files.atomic_write`).
    A body longer than ``size`` (declared or sent) is refused as it comes, and
    the download is given up after ``GRACE_SECONDS`` plus ``size`` at
    ``MIN_BYTES_PER_SECOND``.

    Parameters
    ----------
    address : str
    target : Path
    sha256 : str, optional
        The content's hex digest.
    size : int, optional
        The content's size in bytes (default: at most ``UNREGISTERED_MAX_BYTES``).

    Returns
    -------
    Path
        ``target``.

    Raises
    ------
    DownloadError
        Too long, too slow, or another content.
    OSError
        Network and HTTP errors (``requests``' exceptions).
    """
    import requests

    most = UNREGISTERED_MAX_BYTES if size is None else size
    seconds = GRACE_SECONDS + most / MIN_BYTES_PER_SECOND

    def write(temporary: Path) -> None:
        start, received, digest = time.monotonic(), 0, hashlib.sha256()
        with requests.get(address, stream=True, timeout=(10, 30)) as response:
            response.raise_for_status()
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > most:
                raise DownloadError(f"{address} sends {int(declared)} bytes; the file has {most}")
            with open(temporary, "wb") as out:
                while chunk := response.raw.read1(1 << 16, decode_content=True):
                    received += len(chunk)
                    if received > most:
                        raise DownloadError(f"{address} sent more than the file's {most} bytes")
                    if time.monotonic() - start > seconds:
                        raise DownloadError(
                            f"{address} took more than {seconds:.0f} s ({received} of {most} "
                            "bytes): the server is too slow"
                        )
                    digest.update(chunk)
                    out.write(chunk)
        if sha256 is not None and digest.hexdigest() != sha256:
            raise DownloadError(f"{address} sent another file (SHA-256 {digest.hexdigest()})")

    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(target, write)


def _is_registered(path: Path, registered: Registered) -> bool:
    """Whether the file at ``path`` is there and is the registered one."""
    if not path.is_file() or path.stat().st_size != registered.size:
        return False
    return hashlib.sha256(path.read_bytes()).hexdigest() == registered.sha256


def cache_home() -> Path:
    """The folder the fetchers download into when ``$EIGENVISION_DATA`` is not set.

    Returns
    -------
    Path
        The user's cache folder for eigenvision (``~/.cache/eigenvision`` on Linux).
    """
    import pooch

    return Path(pooch.os_cache("eigenvision"))


def download(name: str, home: Path, *, mirror=None, progress=True, workers=8) -> Path:
    """Download the dataset ``name`` into ``home / folder``, every file checked.

    Files already there with the right checksum are kept; others are downloaded
    again. Each file is written to a temporary name and moved into place only
    once its checksum matches.

    Parameters
    ----------
    name : str
        A key of :data:`SOURCES`.
    home : Path
        The data home (``$EIGENVISION_DATA`` or :func:`cache_home`).
    mirror : str, optional
        A base address laid out as a data home (``<mirror>/att_faces/s1/1.pgm``),
        used instead of the dataset's own addresses.
    progress : bool, default True
        Show progress over the files.
    workers : int, default 8
        Downloads at once.

    Returns
    -------
    Path
        The dataset's folder.
    """
    source = SOURCES[name]
    folder = Path(home).expanduser() / source.folder
    files = registry(source.folder)
    if name == "usps" and mirror is None:
        _build_usps(source, folder, progress=progress)
        return folder

    def fetch_one(relative: str) -> None:
        target = folder / relative
        registered = files[relative]
        if _is_registered(target, registered):
            return
        if mirror is None:
            addresses = source.addresses(relative)
        else:
            addresses = [f"{mirror.rstrip('/')}/{source.folder}/{quote(relative)}"]
        errors = []
        for address in addresses:
            try:
                fetch_file(address, target, sha256=registered.sha256, size=registered.size)
                return
            except Exception as exc:  # network, HTTP and checksum errors alike: try the next
                errors.append(f"{address}: {exc}")
        raise DownloadError(
            f"could not download {source.folder}/{relative} ({'; '.join(errors)}); check the "
            f"connection and run the fetch again (files already checked are kept), or put the "
            f"dataset under ${{EIGENVISION_DATA}} yourself"
        )

    wanted = list(files)  # the registry holds the files the source has, no others
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = pool.map(fetch_one, wanted)
        for _ in show_progress(done, total=len(wanted), desc=f"fetching {name}", enabled=progress):
            pass
    return folder


def _build_usps(source: Source, folder: Path, *, progress: bool) -> None:
    """USPS from the ESL book's text files, kept only if its arrays match the registry's."""
    arrays = {}
    with tempfile.TemporaryDirectory() as scratch:
        for split in show_progress(("train", "test"), desc="fetching usps", enabled=progress):
            address = source.addresses(f"zip.{split}.gz")[0]
            try:
                path = fetch_file(address, Path(scratch) / f"zip.{split}.gz")
            except Exception as exc:
                raise DownloadError(
                    f"could not download {address} ({exc}); check the connection and run the "
                    f"fetch again"
                ) from exc
            arrays[f"x_{split}"], arrays[f"y_{split}"] = read_esl_digits(path)
    for key, array in arrays.items():
        if hashlib.sha256(array.tobytes()).hexdigest() != USPS_DIGESTS[key]:
            raise DownloadError(
                f"USPS from {source.urls[0]}: {key} differs from the registered copy; the "
                f"source changed, so nothing was written"
            )
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(
        folder / "usps_zip.npz", lambda path: np.savez_compressed(path, **arrays), suffix=".npz"
    )


def read_esl_digits(path) -> tuple[np.ndarray, np.ndarray]:
    """ESL's ``zip.train`` / ``zip.test``: a row per digit, its label then 256 grey values.

    Parameters
    ----------
    path : path-like
        The gzipped text file.

    Returns
    -------
    X : ndarray of shape (n, 256), float64
        Values in [-1, 1].
    y : ndarray of shape (n,), int64
    """
    with gzip.open(path, "rt") as text:
        table = np.loadtxt(text, dtype=np.float64, ndmin=2)
    if table.shape[1] != 257:
        raise DownloadError(f"{path}: expected 257 columns (label + 16x16), got {table.shape[1]}")
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def data_home() -> Path | None:
    """The folder named by ``$EIGENVISION_DATA``, or None when it is not set.

    Returns
    -------
    Path or None
    """
    value = os.environ.get(DATA_ENV)
    return Path(value).expanduser() if value else None


def home_or_cache() -> Path:
    """Where the datasets are looked for and fetched to: ``$EIGENVISION_DATA``, else the cache.

    Returns
    -------
    Path
    """
    return data_home() or cache_home()


def fetch(name: str, data_home=None, *, mirror=None, progress: bool = True) -> Path:
    """Download a real dataset, every file checked against its SHA-256.

    Files already present and correct are kept, so a broken download resumes.
    Each file is moved into place only once its checksum matches: a folder
    never holds a partial or altered file.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`: ``"att"``, ``"imm"``, ``"usps"``,
        ``"mnist_test"``, ``"helen"`` or ``"lfw_train"``.
    data_home : path-like, optional
        Where to put it; default ``$EIGENVISION_DATA`` when set, else
        :func:`cache_home` (where the loaders look next).
    mirror : str, optional
        A base address laid out as a data home (``<mirror>/att_faces/s1/1.pgm``),
        used instead of the dataset's own addresses (a local copy, a proxy).
    progress : bool, default True
        Show progress over the files (a bar on a terminal, lines in a log).

    Returns
    -------
    Path
        The dataset's folder; the loader's ``root``.

    Raises
    ------
    DownloadError
        A file could not be downloaded from any address, or did not match its
        checksum; the files already checked stay.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r} to fetch; use one of {sorted(DATASETS)}")
    home = home_or_cache() if data_home is None else Path(data_home)
    return download(name, home, mirror=mirror, progress=progress)
