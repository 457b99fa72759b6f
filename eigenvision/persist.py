"""Model files: ``.npz`` with a JSON header, no pickle, checked before reading, written atomically.

Layout: an uncompressed zip of ``.npy`` members (numpy's ``.npz``). The
member ``__header__.npy`` holds UTF-8 JSON: format version, eigenvision
version, the model's class and parameters, its scalar attributes and, for
every array member, its dtype and shape. :func:`load` checks the member
names, every ``.npy`` header (dtype, shape) and sizes against that
declaration before reading any array, reads with ``allow_pickle=False``, and
only builds classes from a fixed list. Files of an older format are brought to
today's by :mod:`eigenvision._migrations` before any model is built.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from ._base import NotFittedError
from ._errors import ModelFileError
from ._files import atomic_write
from ._migrations import upgrade
from ._spec import MissingMemberError, check_declared_state
from ._version import __version__
from .bayesian import BayesianSpace
from .codes import Encoder
from .descriptors import FisherVectors
from .eigenspace import Eigenspace
from .faces.appearance import AppearanceCheck
from .faces.candidates import CandidateSearch
from .faces.decision import FaceDecision
from .faces.eyes import EyeRegressor
from .faces.features import FeatureDetector
from .faces.finder import FaceFinder
from .fisher import FisherSpace
from .identity import PLDA, IdentityModel, JointBayesian, PLDAFusion
from .identity.describe import FaceDescriber
from .kernel import KernelPCA
from .normalize import PixelStandardizer
from .ppca import ProbabilisticPCA
from .recognize import Recognizer
from .validation import check_state

__all__ = ["save", "load", "FORMAT_VERSION"]

FORMAT_VERSION = 4
_HEADER = "__header__"
_MODELS = {
    cls.__name__: cls
    for cls in (
        Eigenspace,
        FisherSpace,
        BayesianSpace,
        PLDA,
        JointBayesian,
        PLDAFusion,
        IdentityModel,
        FaceDescriber,
        KernelPCA,
        ProbabilisticPCA,
        PixelStandardizer,
        Recognizer,
        Encoder,
        FeatureDetector,
        FaceFinder,
        CandidateSearch,
        FaceDecision,
        AppearanceCheck,
        EyeRegressor,
        FisherVectors,
    )
}
_ALLOWED_KINDS = "biufU"  # bool, integers, floats, fixed-width unicode; never objects
_MAX_HEADER_BYTES = 1 << 20
_MAX_SIDE_LENGTH = 1 << 40  # no array of a model has a side this long (10^30 rows overflowed)


def save(model, path) -> Path:
    """Write a fitted model to ``path`` (``.npz``), atomically.

    The file is written to a temporary file in the same folder, flushed to
    disk and renamed over ``path`` (:func:`eigenvision._files.atomic_write`):
    a crash mid-save leaves any previous file intact, the next save removes
    the crashed one's temporary, and a replaced file keeps its mode. A model
    :func:`load` would refuse (its members at odds, :func:`~eigenvision.validation.check_state`)
    is refused here with a ``ValueError``, and nothing is written.

    Parameters
    ----------
    model : fitted estimator
        An :class:`Eigenspace`, :class:`FisherSpace`, :class:`BayesianSpace`, :class:`KernelPCA`,
        :class:`ProbabilisticPCA`, :class:`PixelStandardizer`,
        :class:`Recognizer` or :class:`FeatureDetector`.
    path : path-like
        The file to write; ``.npz`` is the convention.

    Returns
    -------
    Path
    """
    name = type(model).__name__
    if name not in _MODELS:
        raise TypeError(f"cannot save a {name}; savable models: {sorted(_MODELS)}")
    arrays: dict[str, np.ndarray] = {}
    description = _describe(model, "", arrays)
    try:  # what load would refuse is never written: the file in place stays
        check_state(model)
    except ValueError as exc:
        raise ValueError(
            f"cannot save this {name}: {exc}; fit it again (or undo the change) before saving"
        ) from exc
    return _write(description, arrays, path)


def _write(description, arrays, path) -> Path:
    """Write a model's description and arrays to ``path``, atomically (no checks)."""
    header = {
        "format": "eigenvision-model",
        "format_version": FORMAT_VERSION,
        "eigenvision_version": __version__,
        "model": description,
        "arrays": {key: [value.dtype.str, list(value.shape)] for key, value in arrays.items()},
    }
    payload = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)

    def write(temporary):
        with open(temporary, "wb") as stream:
            np.savez(stream, **{_HEADER: payload}, **arrays)

    return atomic_write(path, write)


def _describe(model, prefix: str, arrays: dict, *, fitted_only: bool = True, written=None) -> dict:
    """Class, parameters and fitted state; arrays go to ``arrays`` under ``prefix``.

    A model given as a parameter (e.g. ``Recognizer(feature=Eigenspace(5))``)
    may be unfitted (``fitted_only=False``): then only its class and
    parameters are written. A model met twice (a recognizer's identity model, which its
    encoder reads too) is written once: the second time as ``{"same_as": prefix}``, the
    prefix it was written under (``written``: id of each model written -> its prefix).
    """
    written = {} if written is None else written
    if id(model) in written:
        return {"same_as": written[id(model)]}
    written[id(model)] = prefix
    fitted = {key: value for key, value in vars(model).items() if key.endswith("_")}
    if not fitted and fitted_only:
        raise NotFittedError(f"this {type(model).__name__} is not fitted; fit it before saving")
    params = model.get_params(deep=False)
    # the parameters first: a model read twice is read first where it is a parameter
    described_params = {
        k: {"model": _describe(v, f"{prefix}@{k}/", arrays, fitted_only=False, written=written)}
        if type(v).__name__ in _MODELS
        else _to_json(v)
        for k, v in params.items()
    }
    state, children = {}, {}
    for key, value in fitted.items():
        if type(value).__name__ in _MODELS:
            children[key] = _describe(value, f"{prefix}{key}/", arrays, written=written)
        elif (
            isinstance(value, dict)
            and value
            and all(type(v).__name__ in _MODELS for v in value.values())
        ):
            if not all(isinstance(name, str) and name.isidentifier() for name in value):
                raise TypeError(f"{key}: model dictionaries need identifier keys")
            children[key] = {
                "dict": {
                    name: _describe(v, f"{prefix}{key}/{name}/", arrays, written=written)
                    for name, v in value.items()
                }
            }
        elif isinstance(value, np.ndarray):
            if value.dtype.kind not in _ALLOWED_KINDS:
                raise TypeError(f"{key} has dtype {value.dtype}; only plain arrays are saved")
            arrays[f"{prefix}{key}"] = value
        else:
            state[key] = _to_json(value)
    return {
        "class": type(model).__name__,
        "params": described_params,
        "state": state,
        "children": children,
        "prefix": prefix,
    }


def _to_json(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, tuple):
        return {"tuple": [_to_json(v) for v in value]}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: _to_json(v) for k, v in value.items()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store {type(value).__name__} in a model file")


def _from_json(value):
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(_from_json(v) for v in value["tuple"])
    if isinstance(value, dict) and set(value) == {"dict"} and isinstance(value["dict"], dict):
        return {str(k): _from_json(v) for k, v in value["dict"].items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def load(path, *, max_bytes: int = 4 << 30):
    """Read a model written by :func:`save`; safe on untrusted files.

    Parameters
    ----------
    path : path-like
    max_bytes : int, default 4 GiB
        Refuse files whose arrays declare more than this in total.

    Raises
    ------
    ModelFileError
        Not a model file, truncated, corrupt, from a newer format version,
        declaring unknown classes, object arrays or sizes that do not match.

    Returns
    -------
    model
        The fitted estimator, of one of the classes :func:`save` writes.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    try:
        with zipfile.ZipFile(path) as archive:
            return _load_checked(path, archive, max_bytes)
    except ModelFileError:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        ValueError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        raise ModelFileError(f"{path}: not a readable eigenvision model file ({exc})") from exc


def _load_checked(path, archive: zipfile.ZipFile, max_bytes: int):
    members = {info.filename: info for info in archive.infolist()}
    for info in members.values():
        # save() stores members uncompressed: a compressed one (a zip bomb's tool) is refused
        # before anything is inflated, so no member can grow beyond its size on disk.
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise ModelFileError(
                f"{path}: member {info.filename!r} is compressed; eigenvision writes model "
                "files uncompressed and refuses others"
            )
    header_info = members.get(f"{_HEADER}.npy")
    if header_info is None:
        raise ModelFileError(f"{path}: no {_HEADER} member; not an eigenvision model file")
    if header_info.file_size > _MAX_HEADER_BYTES:
        raise ModelFileError(f"{path}: header of {header_info.file_size} bytes is implausible")
    raw_header = _read_member(archive, header_info, path, max_bytes)
    if raw_header.dtype != np.uint8 or raw_header.ndim != 1:
        raise ModelFileError(f"{path}: malformed header")
    try:
        header = json.loads(raw_header.tobytes().decode("utf-8"))
        if not isinstance(header, dict) or not isinstance(header.get("arrays"), dict):
            raise TypeError("the header and its 'arrays' must be JSON objects")
        version = header["format_version"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise TypeError(f"format_version must be an integer, got {version!r}")
        declared = {}
        for key, (dtype, shape) in header["arrays"].items():
            if not (
                isinstance(shape, list)
                and all(isinstance(s, int) and not isinstance(s, bool) for s in shape)
                and all(0 <= s <= _MAX_SIDE_LENGTH for s in shape)
            ):
                raise TypeError(f"array {key!r} declares shape {shape!r}")
            declared[key] = (np.dtype(dtype), tuple(shape))
        description = header["model"]
        if not isinstance(description, dict):
            raise TypeError("the model description must be a JSON object")
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        raise ModelFileError(f"{path}: malformed header ({exc})") from exc
    if header.get("format") != "eigenvision-model":
        raise ModelFileError(f"{path}: not an eigenvision model file")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: written in model format {version} by eigenvision "
            f"{header.get('eigenvision_version')}; this eigenvision ({__version__}) reads up "
            f"to format {FORMAT_VERSION}: upgrade eigenvision"
        )
    expected = {f"{key}.npy" for key in declared} | {f"{_HEADER}.npy"}
    if set(members) != expected:
        extra, missing = sorted(set(members) - expected), sorted(expected - set(members))
        raise ModelFileError(
            f"{path}: members do not match the header (extra {extra}, missing {missing})"
        )
    total = 0
    for key, (dtype, shape) in declared.items():
        if dtype.kind not in _ALLOWED_KINDS or any(int(s) < 0 for s in shape):
            raise ModelFileError(f"{path}: member {key} declares {dtype} {shape}")
        total += int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if total > max_bytes:
        raise ModelFileError(f"{path}: arrays declare {total} bytes, above max_bytes={max_bytes}")
    arrays = {}
    for key, (dtype, shape) in declared.items():
        array = _read_member(archive, members[f"{key}.npy"], path, max_bytes, dtype, shape)
        arrays[key] = array
    try:
        model = _build(upgrade(description, version, arrays, path), arrays, path)
        check_state(model)
    except RecursionError as exc:
        raise ModelFileError(f"{path}: the model description nests too deeply") from exc
    except AttributeError as exc:  # a file of another version (e.g. the finder before #18's)
        raise ModelFileError(
            f"{path}: the model lacks {exc.name!r}: it was written by another version of "
            f"eigenvision ({header.get('eigenvision_version', 'unknown')}); train it again with "
            "this one, or for data/face_finder.npz run 'eigenvision build-models'"
        ) from exc
    except ValueError as exc:
        if isinstance(exc, ModelFileError):
            raise
        raise ModelFileError(f"{path}: the model is inconsistent: {exc}") from exc
    return model


def _read_member(archive, info, path, max_bytes, dtype=None, shape=None) -> np.ndarray:
    """Read one ``.npy`` member in one pass: header checked before any data is read."""
    with archive.open(info) as stream:
        try:
            major, _ = np.lib.format.read_magic(stream)
            if major == 1:
                file_shape, fortran, file_dtype = np.lib.format.read_array_header_1_0(stream)
            else:
                file_shape, fortran, file_dtype = np.lib.format.read_array_header_2_0(stream)
        except ValueError as exc:
            raise ModelFileError(f"{path}: member {info.filename} is not a .npy array") from exc
        if file_dtype.kind not in _ALLOWED_KINDS or file_dtype.hasobject:
            raise ModelFileError(f"{path}: member {info.filename} has dtype {file_dtype}")
        if dtype is not None and (file_dtype != dtype or tuple(file_shape) != shape):
            raise ModelFileError(
                f"{path}: member {info.filename} is {file_dtype} {file_shape}, the header "
                f"declares {dtype} {shape}"
            )
        n_bytes = int(np.prod(file_shape, dtype=np.int64)) * file_dtype.itemsize
        if n_bytes > max_bytes:
            raise ModelFileError(f"{path}: member {info.filename} declares {n_bytes} bytes")
        data = stream.read(n_bytes)
    if len(data) != n_bytes:
        raise ModelFileError(f"{path}: member {info.filename} is truncated")
    order = "F" if fortran else "C"
    # copied in the file's own layout: a C copy of a Fortran array changes BLAS's summation order
    return np.frombuffer(data, dtype=file_dtype).reshape(file_shape, order=order).copy(order="K")


def _attribute_name(name: str, path) -> str:
    """A fitted attribute's name as a file may give it: public, trailing underscore."""
    if not (name.isidentifier() and name.endswith("_") and not name.startswith("_")):
        raise ModelFileError(f"{path}: unexpected attribute {name!r}")
    return name


def _build(description: dict, arrays: dict, path, built=None):
    """The model a description holds (``built``: each model built so far, by its prefix, for
    the ``{"same_as": prefix}`` of a model written once and read twice)."""
    built = {} if built is None else built
    if set(description) == {"same_as"}:
        if description["same_as"] not in built:
            raise ModelFileError(f"{path}: a model refers to {description['same_as']!r}, not read")
        return built[description["same_as"]]
    try:
        cls = _MODELS[description["class"]]
        params = {
            k: _build(v["model"], arrays, path, built)
            if isinstance(v, dict) and set(v) == {"model"}
            else _from_json(v)
            for k, v in description["params"].items()
        }
        model = cls(**params)
        built[description["prefix"]] = model
        for key, value in description["state"].items():
            setattr(model, _attribute_name(key, path), _from_json(value))
        prefix = description["prefix"]
        for key, array in arrays.items():
            if key.startswith(prefix) and "/" not in key[len(prefix) :]:
                setattr(model, _attribute_name(key[len(prefix) :], path), array)
        for key, child in description["children"].items():
            if set(child) == {"dict"}:
                value = {}
                for name, member in child["dict"].items():
                    if not (isinstance(name, str) and name.isidentifier()):
                        raise ModelFileError(f"{path}: unexpected model key {name!r}")
                    value[name] = _build(member, arrays, path, built)
            else:
                value = _build(child, arrays, path, built)
            setattr(model, _attribute_name(key, path), value)
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"{path}: the model description is invalid ({exc})") from exc
    fitted = any(key.endswith("_") for key in vars(model))
    if fitted and hasattr(cls, "_state"):
        for name, state in cls._state.items():  # an optional member left out reads as None
            if state.optional and not hasattr(model, name):
                setattr(model, name, None)
        where = prefix.rstrip("/") or "the model"
        try:
            check_declared_state(model)
        except MissingMemberError as exc:
            raise ModelFileError(
                f"{path}: {where}: {exc}: the file was written by another version of "
                "eigenvision; train the model again with this one (for data/face_finder.npz: "
                "eigenvision build-models)"
            ) from exc
        except ValueError as exc:
            raise ModelFileError(f"{path}: {where}: {exc}") from exc
    return model
