"""compare_faces and the shipped identity models: read once, named, refused when damaged."""

import json

import numpy as np
import pytest
from PIL import Image

import eigenvision as ev
from eigenvision.cli import main
from eigenvision.faces import compare


def test_compare_faces_with_the_shipped_models(imm, tmp_path, capsys):
    """IMM studio portraits (people the identity model never saw): two photos of one person
    are judged likelier one person than photos of two (the threshold, calibrated on LFW's news
    photos, is not: see HISTORY.md); the same photo twice is accepted; a 16-bit copy answers
    the same; a photo without a face is named in the error."""

    def photo(person, shot):
        return imm.images[list(imm.names).index(f"{person:02d}_{shot:02d}.jpg")]

    same = ev.compare_faces(photo(1, 1), photo(1, 2))
    apart = ev.compare_faces(photo(1, 1), photo(2, 1))
    assert same.accepted and -same.distance > -apart.distance
    twice = ev.compare_faces(photo(3, 1), photo(3, 1))
    assert twice.accepted and twice.probability > 0.9
    grey16 = (photo(1, 2) * 65535).astype(np.uint16)
    again = ev.compare_faces(photo(1, 1), grey16)
    assert again.distance == pytest.approx(same.distance, abs=0.05 * abs(same.distance) + 0.5)
    with pytest.raises(ev.NoFaceError, match="photo_b shows no face"):
        ev.compare_faces(photo(1, 1), np.full((200, 200), 0.5))
    files = []
    for name, image in (("a.png", photo(1, 1)), ("b.png", photo(1, 2))):
        Image.fromarray((image * 255).astype(np.uint8)).save(tmp_path / name)
        files.append(str(tmp_path / name))
    assert main(["compare", *files, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert set(answer) == {
        "same_person",
        "probability",
        "score",
        "threshold",
        "model",
        "face_threshold",
        "photos",
    }
    assert answer["face_threshold"] == ev.default_finder().identity_threshold  # issue 80
    # a probability of 1 takes log-odds over 37 (float64): no face reaches it
    assert main(["compare", *files, "--face-threshold", "1"]) == 2
    assert "identity threshold 1:" in capsys.readouterr().err
    Image.fromarray(np.full((200, 200), 128, np.uint8)).save(tmp_path / "blank.png")
    assert main(["compare", files[0], str(tmp_path / "blank.png")]) == 2
    assert "blank.png shows no face" in capsys.readouterr().err


def test_compare_and_cluster_refuse_a_finder_or_model_of_another_kind():
    """Regression: compare_faces(a, b, model=a_finder) ended in AttributeError ('FaceFinder' object
    has no attribute 'eye_positions'); a model or a path given as the finder, likewise."""
    photo = np.zeros((100, 100))
    finder, model = ev.default_finder(), ev.default_identity_model()
    for call in (ev.compare_faces, lambda a, b, **kw: ev.cluster_faces([a, b], **kw)):
        with pytest.raises(TypeError, match="or an IdentityModel, got FaceFinder"):
            call(photo, photo, model=finder)
        with pytest.raises(TypeError, match="finder must be a face finder.*got IdentityModel"):
            call(photo, photo, finder=model)
        with pytest.raises(ev.EigenvisionError, match="no identity model file at"):
            call(photo, photo, model="no_such_model.npz")


def test_model_names_and_bad_models_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match="'deep', 'classical'"):
        ev.default_identity_model(3)
    with pytest.raises(ev.EigenvisionError, match="no identity model file"):
        ev.default_identity_model(tmp_path / "missing.npz")
    with pytest.raises(TypeError, match="IdentityModel"):
        ev.compare_faces(np.zeros((60, 60)), np.zeros((60, 60)), model=ev.Eigenspace(2))
    assert compare.identity_model_name("classical") == "classical"
    assert compare.identity_model_name(ev.IdentityModel()) == "classical (given)"
    assert compare.identity_model_name(tmp_path / "mine.npz") == "mine.npz"


def test_the_shipped_models_are_read_once_per_process(monkeypatch):
    """compare_faces read the finder and the 8.5 MB identity model on every call; now each file
    is read once (again only when it changes), and each caller gets its own copy."""
    calls = []
    real = compare.load

    def counting(path):
        calls.append(path)
        return real(path)

    compare._read_identity.cache_clear()
    monkeypatch.setattr(compare, "load", counting)
    first = ev.default_identity_model("classical")
    second = ev.default_identity_model("classical")
    assert len(calls) == 1
    assert first is not second and first.plda_ is second.plda_
    first.cohort_top = 3  # a caller's change stays its own
    assert second.cohort_top != 3
    finders = ev.default_finder(), ev.default_finder()
    finders[0].threshold = 0.99
    assert finders[1].threshold != 0.99
