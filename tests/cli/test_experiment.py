"""``eigenvision experiment``: the lecture's experiments by name."""

import pytest

from eigenvision.cli import main


def test_experiment_without_a_name_lists_the_experiments_one_line_each(capsys):
    """Issue 80: `eigenvision experiment` demanded "name, arguments" and its --help listed the
    names without a word on each."""
    from eigenvision.experiments import EXPERIMENTS, summaries

    assert main(["experiment"]) == 2
    err = capsys.readouterr().err
    assert "name an experiment" in err
    for name in EXPERIMENTS:
        assert f"\n  {name} " in err
    with pytest.raises(SystemExit):
        main(["experiment", "--help"])
    out = capsys.readouterr().out
    lfw = summaries()["lfw_verification"]
    assert lfw.startswith("LFW verification") and "lfw_verification" in out
    assert all(name in out for name in EXPERIMENTS)
