"""The command line as a whole: its help, its parser's refusals, its messages and its JSON."""

import json
import subprocess
import sys

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.cli import main


def test_version_and_help(capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert ev.__version__ in capsys.readouterr().out
    assert main([]) == 0
    assert "info" in capsys.readouterr().out


def test_console_script_runs():
    result = subprocess.run(
        [sys.executable, "-m", "eigenvision", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and ev.__version__ in result.stdout


def test_cli_errors_are_messages_not_tracebacks(tmp_path, capsys):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    assert main(["recognize", str(tmp_path / "none.npz"), str(bad)]) == 2
    assert "no such model file" in capsys.readouterr().err


def test_bad_numbers_are_refused_by_the_parser(tmp_path, capsys):
    """Regression: --threshold nan accepted every impostor; --top 0 and --n-components -1
    were accepted."""

    for argv in (
        ["recognize", "m.npz", "x.png", "--threshold", "nan"],
        ["recognize", "m.npz", "x.png", "--threshold", "inf"],
        ["recognize", "m.npz", "x.png", "--top", "0"],
        ["train", "att", "-o", "m.npz", "--n-components", "-1"],
        ["train", "att", "-o", "m.npz", "--jitter", "-2"],
        ["locate", "f.npz", "x.png", "--box", "0", "0", "nan", "10"],
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert "must be" in capsys.readouterr().err


def test_json_output_has_no_infinity():
    """Regression: locate --json printed Infinity for a feature not found (not JSON)."""

    from eigenvision.cli._common import plain as _plain

    assert _plain(np.float64(np.inf)) is None and _plain(float("nan")) is None
    assert _plain(np.float32(1.5)) == 1.5 and _plain(np.int64(3)) == 3
    assert json.loads(json.dumps({"score": _plain(np.inf)}, allow_nan=False)) == {"score": None}


def test_every_option_of_every_command_says_what_it_does_and_its_default():
    """Regression (issue 44): 'train --help' showed no help or default for --n-components and
    --metric; evaluate's --scheme, --folds and others had none."""
    import argparse

    from eigenvision.cli import COMMANDS, build_parser

    for name in COMMANDS:
        parser = build_parser(name)
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for action in commands.choices[name]._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            assert action.help, f"{name} {action.option_strings or action.dest}: no help"
            if action.option_strings and action.default not in (None, False):
                assert "default" in action.help, f"{name} {action.option_strings}: no default"
