"""The README's first look runs as written (with the datasets), as a newcomer would paste it."""

import os
import re
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_dataset

README = Path(__file__).resolve().parents[1] / "README.md"
DATA = README.parent / "data"


def _first_look():
    text = README.read_text()
    return text.split("<!-- first-look")[1].split("```python\n", 1)[1].split("```", 1)[0]


def test_the_first_look_runs_as_written(tmp_path, monkeypatch):
    """Regression: the README's snippet used names it never defined (``others``, ``image``) and
    said predict answers "unknown" beyond a threshold that no line had set."""
    require_dataset("att")
    require_dataset("imm")
    monkeypatch.chdir(tmp_path)  # it saves faces.npz where it runs
    namespace: dict = {}
    exec(compile(_first_look(), str(README), "exec"), namespace)  # noqa: S102 - our own README
    rec, strangers, test = namespace["rec"], namespace["strangers"], namespace["test"]
    assert (tmp_path / "faces.npz").is_file()
    assert np.mean(rec.predict(strangers.images) == "unknown") >= 0.99  # 1% allowed in
    named_at_threshold = np.mean(rec.predict(test.images) == test.labels)
    rec.threshold = None  # closed set: everyone gets the nearest name
    assert np.mean(rec.predict(test.images) == test.labels) > 0.9
    assert named_at_threshold < 0.9  # eigenfaces reject many of the enrolled too: said so
    assert namespace["codes"].shape == (150, 40)
    assert len(namespace["found"]) >= 1 and os.path.getsize(tmp_path / "faces.npz") > 0


def test_the_shipped_models_sizes_are_stated_as_they_are():
    """Issue 78: the README states each shipped model file's size (to a tenth of a MB)."""
    stated = dict(re.findall(r"rebuild (data/\w+\.npz) \((\d+\.\d) MB\)", README.read_text()))
    shipped = sorted(p.relative_to(README.parent).as_posix() for p in DATA.glob("*.npz"))
    assert shipped and sorted(stated) == shipped
    for path, megabytes in stated.items():
        assert (README.parent / path).stat().st_size / 1e6 == pytest.approx(
            float(megabytes), abs=0.05
        )
