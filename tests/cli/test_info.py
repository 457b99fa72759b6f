"""``eigenvision info``: the version, the data location and the datasets found."""

from eigenvision.cli import main


def test_info_lists_datasets(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("EIGENVISION_DATA", str(tmp_path))
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "att" in out and "missing" in out and str(tmp_path) in out
