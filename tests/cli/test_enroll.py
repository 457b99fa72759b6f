"""``eigenvision enroll``: people or images added to a trained model."""

import subprocess
import sys

import numpy as np
from PIL import Image

import eigenvision as ev
from eigenvision.cli import main
from tests.cli.folders import _people_and_model


def test_two_enrolments_into_one_model_both_land(tmp_path):
    """Regression (hardening round 4): two ``eigenvision enroll`` runs into one model both
    exited 0 and one enrolment was lost (load, add, replace: the last writer won). The
    update now holds the model file's lock, so the second waits and adds to the first's."""
    model = _people_and_model(tmp_path, np.random.default_rng(0))
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "eigenvision", "enroll", str(model), str(tmp_path / folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for folder in ("new_ann", "new_bob")
    ]
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
    enrolled = ev.load(model)
    assert len(enrolled.classes_) == 3 + 3 + 3
    assert len(enrolled.gallery_labels_) == 9 * 4


def test_enroll_names_what_it_leaves_out_whatever_the_warning_filters(tmp_path, capsys):
    """Regression (hardening round 4): enrolling a folder with an unreadable file enrolled the
    rest and said nothing under ``PYTHONWARNINGS=ignore``; enrolling the same folder twice added
    the same images again; a crop model took whole photos that ``recognize`` refuses."""
    import warnings

    model = _people_and_model(tmp_path, np.random.default_rng(1))
    (tmp_path / "new_ann" / "ann_person0" / "broken.png").write_bytes(b"not a png")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["enroll", str(model), str(tmp_path / "new_ann")]) == 0
        first = capsys.readouterr()
        assert "enrolled 12 images" in first.out and "broken.png" in first.err
        assert main(["enroll", str(model), str(tmp_path / "new_ann")]) == 0
        again = capsys.readouterr()
    assert "enrolled 0 images" in again.out and "12 of the 12 codes repeat" in again.err
    assert len(ev.load(model).gallery_labels_) == 24
    photos = tmp_path / "photos" / "cyd"
    photos.mkdir(parents=True)
    Image.fromarray(np.zeros((300, 400), np.uint8)).save(photos / "whole.png")
    before = model.read_bytes()
    assert main(["enroll", str(model), str(tmp_path / "photos")]) == 2
    assert "would squash the whole picture" in capsys.readouterr().err
    assert model.read_bytes() == before
