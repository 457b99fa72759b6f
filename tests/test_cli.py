import subprocess
import sys

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


def test_info_lists_datasets(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("EIGENVISION_DATA", str(tmp_path))
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "att" in out and "missing" in out and str(tmp_path) in out


def test_console_script_runs():
    result = subprocess.run(
        [sys.executable, "-m", "eigenvision", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and ev.__version__ in result.stdout
