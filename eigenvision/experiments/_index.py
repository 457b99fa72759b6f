"""``experiments/README.md``: the index of the experiments, made from their ``results.json``.

One entry per stored run (``experiments/figures/<run>/results.json``): the
question (the experiment's first docstring line), the command that made it,
its figures and its summary line. Measured numbers live only in the
``results.json`` files; this page is regenerated from them
(``python experiments/index.py``), and a test checks it is current.
"""

from __future__ import annotations

import importlib
import json
import shlex
from pathlib import Path

from .._files import atomic_write

__all__ = ["render_index", "write_index"]

_HEADER = """# Experiments: the lecture's results, reproduced

Each experiment is one command (`eigenvision experiment NAME [options]`, or
`python experiments/NAME.py`); it writes its figures and `results.json` (every
number, the arguments, the package version, the time) into `--out`, and prints
one summary line. The runs below are stored in `figures/<run>/`; this page is
generated from their `results.json` by `python experiments/index.py` (do not
edit it by hand). The user guide (`docs/`) discusses the results; the history
of each number is in `HISTORY.md` and git.

| run | question | summary | seconds |
|---|---|---|---|
"""

_DEFAULTS = {"out", "seed", "quiet", "data"}


def _question(experiment: str) -> str:
    """The first line of an experiment module's docstring."""
    module = importlib.import_module(f"eigenvision.experiments.{experiment}")
    return (module.__doc__ or "").strip().splitlines()[0].rstrip(".")


def _command(run: dict) -> str:
    """The command line that repeats a run (its non-default options), quoted for a shell."""
    parts = [f"eigenvision experiment {run['experiment']}"]
    for name, value in run["arguments"].items():
        if name in _DEFAULTS or value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif isinstance(value, list):
            parts.append(f"{flag} {shlex.join(str(v) for v in value)}")
        else:
            parts.append(f"{flag} {shlex.quote(str(value))}")
    return " ".join(parts) + f" --out experiments/figures/{Path(run['arguments']['out']).name}"


def render_index(figures: Path) -> str:
    """The Markdown of ``experiments/README.md`` for the runs stored under ``figures``.

    Parameters
    ----------
    figures : Path
        The folder holding one sub-folder per run, each with ``results.json``.

    Returns
    -------
    str
    """
    runs = sorted(Path(figures).glob("*/results.json"))
    rows, sections = [], []
    for path in runs:
        run = json.loads(path.read_text())
        name = path.parent.name
        question = _question(run["experiment"])
        summary = run["summary"].replace("|", "/")
        rows.append(f"| [{name}](#{name}) | {question} | {summary} | {run['seconds']:.0f} |")
        images = "\n".join(f"![{image}](figures/{name}/{image})" for image in run["figures"])
        # the question and the summary are the table's row: a section shows how to run it again
        sections.append(f"## {name}\n\n```bash\n{_command(run)}\n```\n\n{images}\n")
    return _HEADER + "\n".join(rows) + "\n\n" + "\n".join(sections)


def write_index(figures: Path, out: Path) -> Path:
    """Write :func:`render_index` to ``out`` (atomically).

    Parameters
    ----------
    figures : Path
    out : Path

    Returns
    -------
    Path
    """
    text = render_index(figures)
    return atomic_write(out, lambda temporary: temporary.write_text(text))
