"""``eigenvision recognize``: who is in these images, as text or JSON."""

import json

import numpy as np
import pytest
from PIL import Image

import eigenvision as ev
from eigenvision.cli import main
from tests.cli.folders import _imm_photo, _write_people


def test_a_model_of_face_crops_refuses_a_whole_photo(tmp_path, capsys):
    """Regression: 'eigenvision train att' then 'recognize faces.npz photo.jpg' squashed the
    whole photo to the crops' size and named a person (a coffee cup too)."""
    from skimage import data

    rng = np.random.default_rng(0)
    _write_people(tmp_path / "people", rng)
    model = tmp_path / "model.npz"
    assert main(["train", str(tmp_path / "people"), "-o", str(model), "--n-components", "5"]) == 0
    capsys.readouterr()
    cup = tmp_path / "coffee.png"
    Image.fromarray(data.coffee()).save(cup)
    assert main(["recognize", str(model), str(cup)]) == 2
    error = capsys.readouterr().err
    assert "trained on" in error and "face crops" in error and "--photos" in error


def test_recognize_json_gives_boxes_in_the_files_pixels(imm, tmp_path, capsys):
    """Regression (issue 80): `recognize --json` of a model trained on photos gave boxes in the
    pixels of the reduced decode (longer side 800), not the file's: on a 2,400-pixel photo the
    box hardly overlapped the face. Now the box is the one `detect --json` gives for the file."""

    for person in ("01", "02"):
        _imm_photo(imm, f"{person}_01", tmp_path / "train" / f"p{person}")
    model = tmp_path / "m.npz"
    train = ["-q", "train", str(tmp_path / "train"), "--photos", "-o", str(model)]
    assert main([*train, "--identity-model", "classical"]) == 0
    probe = (imm.images[list(imm.names).index("01_02.jpg")] * 255).astype(np.uint8)
    large = tmp_path / "large.png"
    Image.fromarray(probe).resize((3200, 2400), Image.BICUBIC).save(large)
    capsys.readouterr()
    assert main(["-q", "recognize", str(model), str(large), "--json"]) == 0
    (named,) = json.loads(capsys.readouterr().out)[0]["faces"][:1]
    assert main(["-q", "detect", str(large), "--json"]) == 0
    detected = json.loads(capsys.readouterr().out)
    found = detected[0]["faces"] if isinstance(detected, list) else detected["faces"]
    box, reference = np.array(named["box"]), np.array(found[0]["box"])
    assert box[2] > 600  # the file's pixels, not the 800-pixel decode's (a quarter)
    np.testing.assert_allclose(box, reference, rtol=0.02, atol=0.02 * reference[2])


def test_identity_model_matches_are_shown_as_probabilities(imm, tmp_path, capsys):
    """Regression (hardening round 4): the identity model's decisions are minus its scores, and
    users read "unknown beyond distance -3.144" and negative distances per face. The command
    line and its JSON now show P(same person), the model's calibrated probability, as the app
    does; ``distance_at`` turns a probability back into a threshold."""
    for person in ("01", "02"):
        _imm_photo(imm, f"{person}_01", tmp_path / "train" / f"p{person}")
    probe, _ = _imm_photo(imm, "01_02", tmp_path / "probe")
    model = tmp_path / "m.npz"
    assert main(["-q", "train", str(tmp_path / "train"), "--photos", "-o", str(model)]) == 0
    capsys.readouterr()
    assert main(["-q", "recognize", str(model), str(probe), "--json"]) == 0
    (face,) = json.loads(capsys.readouterr().out)[0]["faces"]
    assert "distance" not in face and 0.5 < face["probability"] <= 1 and face["label"] == "p01"
    assert main(["-q", "recognize", str(model), str(probe)]) == 0
    shown = capsys.readouterr().out
    assert "p01 (P same 0.9" in shown and "P same 1.000" not in shown
    recognizer = ev.load(model)
    for probability in (0.1, 0.5, 0.97):
        threshold = recognizer.distance_at(probability)
        assert recognizer.same_person([threshold])[0] == pytest.approx(probability, rel=1e-9)
