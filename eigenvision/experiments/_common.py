"""What every experiment shares: its command line, its outputs, its summary line."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from .. import datasets
from .._base import progress
from .._files import atomic_write
from ..faces.compare import model_crop
from ..faces.photos import default_finder
from ..faces.recipes import lfw_eyes
from ..io import load_image
from ..plot import save_figure


def parser(name: str, description: str, *, data: bool = True) -> argparse.ArgumentParser:
    """The common options: ``--out``, ``--seed`` and (for real data) ``--data``."""
    command = argparse.ArgumentParser(
        prog=f"eigenvision experiment {name}", description=description
    )
    command.add_argument(
        "--out",
        type=Path,
        default=Path("experiments/out") / name,
        help="folder for figure.png and results.json (default: %(default)s)",
    )
    command.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    command.add_argument("-q", "--quiet", action="store_true", help="no progress bars on stderr")
    if data:
        command.add_argument(
            "--data", type=Path, default=None, help="dataset folder (default: $EIGENVISION_DATA)"
        )
    return command


def steps(iterable, args, desc, total=None):
    """A progress bar over an experiment's loop (on stderr, off with ``--quiet``).

    Parameters
    ----------
    iterable : iterable
    args : argparse.Namespace
        The experiment's arguments (``quiet``).
    desc : str
    total : int, optional

    Returns
    -------
    iterable
    """
    return progress(iterable, total=total, desc=desc, enabled=not args.quiet)


def digits_split(name: str):
    """``(train, test)`` ImageSets of a digit dataset.

    ``"digits"``: scikit-learn's 8x8 digits, first 898 train / last 899 test
    (the split of the usual 1-NN reference, 3.9% error). ``"usps"``: the
    ESL train and test files (16x16; 1-NN error about 5.6%).
    """
    if name == "digits":
        digits = datasets.load_digits()
        return digits[:898], digits[898:]
    if name == "usps":
        return datasets.load_usps(split="train"), datasets.load_usps(split="test")
    raise ValueError(f"unknown digit dataset {name!r}; use 'digits' or 'usps'")


def add_digit_options(command, *, digit: bool = False) -> None:
    command.add_argument(
        "--dataset",
        choices=["digits", "usps"],
        default="digits",
        help="scikit-learn's 8x8 digits (built in) or USPS 16x16 (default: %(default)s)",
    )
    if digit:
        command.add_argument("--digit", type=int, default=3, help="the digit (default: 3)")


def data_env(args) -> None:
    """Point the dataset loaders at ``--data`` when given."""
    if getattr(args, "data", None) is not None:
        os.environ["EIGENVISION_DATA"] = str(args.data)


class Run:
    """Collects an experiment's figures and numbers and writes them at the end."""

    def __init__(self, name: str, args: argparse.Namespace):
        self.name = name
        self.args = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.results: dict = {}
        self.figures: list[str] = []
        self.started = time.perf_counter()

    def figure(self, figure, filename: str = "figure.png") -> Path:
        self.figures.append(filename)
        return save_figure(figure, self.out / filename)

    def finish(self, summary: str) -> dict:
        """Write ``results.json`` atomically, print the summary line, return the results."""
        arguments = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(self.args).items()}
        payload = {
            "experiment": self.name,
            "arguments": arguments,
            "seconds": round(time.perf_counter() - self.started, 2),
            "figures": self.figures,
            "summary": summary,
            "results": _plain(self.results),
        }
        path = self.out / "results.json"
        atomic_write(path, lambda temporary: temporary.write_text(json.dumps(payload, indent=2)))
        print(f"{self.name}: {summary} ({payload['seconds']} s; {self.out})")
        return payload


def _plain(value):
    """JSON-ready copy: arrays to lists, numpy scalars to Python, non-finite to None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if np.isfinite(value) else None
    return value


def add_eyes_option(command) -> None:
    """``--eyes FILE``: a cache of the eyes the shipped finder places on every LFW photo."""
    command.add_argument(
        "--eyes",
        type=Path,
        default=None,
        help="a cache (.npz) of the eyes the shipped finder places on LFW's photos: read when "
        "it exists, written when not (placing them takes minutes)",
    )


def lfw_crops(args, model):
    """LFW's photos, their eyes (placed by the shipped finder, or read from ``--eyes``) and the
    crops ``model`` is cut for (:func:`~eigenvision.faces.compare.model_crop`).

    Returns
    -------
    lfw : ImageSet
    eyes : (n, 2, 2) ndarray
    crops : (n, H, W) ndarray
    """
    lfw = datasets.load_lfw()
    cache = getattr(args, "eyes", None)
    if cache is not None and Path(cache).is_file():
        cached = np.load(cache)
        position = {name: i for i, name in enumerate(cached["names"])}
        eyes = cached["eyes"][[position[name] for name in lfw.names]]
    else:
        eyes = lfw_eyes(lfw.images, default_finder(), progress=not args.quiet)
        if cache is not None:
            atomic_write(
                Path(cache),
                lambda temporary: np.savez(temporary, names=lfw.names, eyes=eyes),
                suffix=".npz",
            )
    crops = np.stack(
        [model_crop(im, pair, model) for im, pair in zip(lfw.images, eyes, strict=True)]
    )
    return lfw, eyes, crops


def add_embeddings_option(command) -> None:
    """``--embeddings FILE``: a cache of the learned description of every LFW photo."""
    command.add_argument(
        "--embeddings",
        type=Path,
        default=None,
        help="a cache (.npz) of dlib's embeddings of LFW's photos, cut on the placed eyes: read "
        "when it exists, written when not (describing them takes minutes)",
    )


def lfw_deep_rows(args, eyes, model):
    """The learned description (``model``'s ``"deep"`` rows) of every LFW photo, cut in colour
    on ``eyes`` (:func:`lfw_crops`'s order), or read from ``--embeddings``.

    Returns
    -------
    (n, 128) ndarray
    """
    files = datasets.lfw_files()
    names = np.array([f"{person}/{path.name}" for person, path in files])
    cache = getattr(args, "embeddings", None)
    if cache is not None and Path(cache).is_file():
        cached = np.load(cache)
        alignment = str(cached["alignment"]) if "alignment" in cached.files else "eyes"
        if alignment != model.alignment:
            raise SystemExit(
                f"--embeddings {cache} holds chips aligned on {alignment!r}, the model cuts "
                f"them on {model.alignment!r}: give another file (it is written anew)"
            )
        position = {name: i for i, name in enumerate(cached["names"])}
        return cached["rows"][[position[name] for name in names]]
    rows = np.empty((len(files), sum(model.description_widths())))
    blocks = range(0, len(files), 256)
    for start in steps(blocks, args, "describing faces (deep)"):
        chips = [
            model_crop(load_image(path, as_gray=False), eyes[start + i], model)
            for i, (_, path) in enumerate(files[start : start + 256])
        ]
        rows[start : start + len(chips)] = model.describe(np.stack(chips))
    if cache is not None:
        atomic_write(
            Path(cache),
            lambda temporary: np.savez(
                temporary, names=names, rows=rows, alignment=model.alignment
            ),
            suffix=".npz",
        )
    return rows
