"""``eigenvision evaluate``: recognition rate by cross-validation."""

import numpy as np

from eigenvision.cli import main
from tests.cli.folders import _write_people


def test_evaluate_on_one_split_and_a_missing_dataset_speak_the_command_lines_language(
    tmp_path, capsys, monkeypatch
):
    """Regression: 'evaluate' printed '0.905 +- 0.000 over 1 fold(s)'; a missing dataset
    advised 'pass root= to the loader' to a command-line user."""
    rng = np.random.default_rng(0)
    _write_people(tmp_path / "people", rng)
    command = ["evaluate", str(tmp_path / "people"), "--n-components", "3"]
    assert main([*command, "--train-per-class", "2"]) == 0
    out = capsys.readouterr().out
    assert "+-" not in out and "one split: the first 2 images of each class train" in out
    monkeypatch.delenv("EIGENVISION_DATA", raising=False)
    from eigenvision import _fetch

    monkeypatch.setattr(_fetch, "data_home", lambda: None)
    assert main(["evaluate", "att"]) == 2
    error = capsys.readouterr().err
    assert "EIGENVISION_DATA" in error and not error.rstrip().endswith("pass root= to the loader")
