"""``eigenvision train``: face crops or photos in, a saved recognizer out."""

import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import eigenvision as ev
from eigenvision.cli import main
from tests.cli.folders import _imm_photo, _write_people
from tests.conftest import require_dataset_folder


def test_train_recognize_enroll_evaluate(tmp_path, capsys):

    rng = np.random.default_rng(0)
    _write_people(tmp_path / "people", rng)
    model = tmp_path / "model.npz"
    assert main(["train", str(tmp_path / "people"), "-o", str(model), "--n-components", "5"]) == 0
    assert model.is_file() and "3 classes" in capsys.readouterr().out
    probe = tmp_path / "people" / "person1" / "2.png"
    assert main(["recognize", str(model), str(probe), "--json", "--top", "2"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result[0]["label"] == "person1" and len(result[0]["matches"]) == 2
    assert result[0]["probability"] is None  # eigenfaces have no P(same person)
    bayes = tmp_path / "bayes.npz"
    assert (
        main(
            [
                "train",
                str(tmp_path / "people"),
                "-o",
                str(bayes),
                "--method",
                "bayesian",
                "--n-components",
                "2",
            ]
        )
        == 0
    )
    # a warning is one line naming the command, not the library's source line
    warned = capsys.readouterr().err
    assert "eigenvision train: warning: BayesianSpace: P(same person) left uncalibrated" in warned
    assert "self." not in warned and "UserWarning" not in warned
    assert main(["recognize", str(bayes), str(probe), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)[0]
    expected = ev.load(bayes).verify(ev.load_image(probe), "person1").probability
    assert answer["label"] == "person1" and answer["probability"] == expected
    newcomers = tmp_path / "new"
    _write_people(newcomers, np.random.default_rng(5))
    for folder in newcomers.iterdir():
        folder.rename(newcomers / f"new_{folder.name}")
    assert main(["enroll", str(model), str(newcomers)]) == 0
    assert "3 new" in capsys.readouterr().out
    evaluate = ["evaluate", str(tmp_path / "people"), "--train-per-class", "2", "--json"]
    assert main(evaluate + ["--n-components", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["recognition_rate_mean"] == 1.0


def test_train_recognize_enroll_on_uncropped_photos(imm, tmp_path, capsys):
    """Issue #18 item 4: train --photos finds, aligns and enrols one face per photo; recognize
    lists every face of a photo with its name; enroll takes photos; no face is an error in
    enrolment and an empty list in recognition."""

    model = tmp_path / "photos.npz"
    eyes = {}
    for person in ("01", "02", "03", "04"):
        path, eyes[path] = _imm_photo(imm, f"{person}_01", tmp_path / "train" / f"p{person}")
    assert (
        main(
            [
                "train",
                str(tmp_path / "train"),
                "--photos",
                "--method",
                "eigenfaces",
                "--face-threshold",
                "0.5",
                "-o",
                str(model),
                "--n-components",
                "3",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "4 photos (one face each) of 4 classes" in out and "--unknown FOLDER" in out
    assert ev.load(model).verbose is False  # progress was for the command, not the file
    blank = tmp_path / "blank.png"
    from PIL import Image

    Image.fromarray(np.full((300, 400), 128, np.uint8)).save(blank)
    paths = list(eyes)
    assert main(["-q", "recognize", str(model), *map(str, paths), str(blank), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report[-1] == {"image": str(blank), "face_threshold": 0.5, "faces": []}
    for entry, path in zip(report, paths, strict=False):
        face = entry["faces"][0]  # the enrolled face: its own person at distance 0
        assert face["label"] == path.parent.name and face["distance"] < 1e-3
        iod = np.hypot(*np.subtract(*eyes[path]))
        for found, true in zip((face["left_eye"], face["right_eye"]), eyes[path], strict=True):
            assert np.hypot(*np.subtract(found, true)) < 0.25 * iod
    _imm_photo(imm, "05_01", tmp_path / "new" / "p05")
    assert main(["-q", "enroll", str(model), str(tmp_path / "new")]) == 0
    assert "5 classes (1 new)" in capsys.readouterr().out
    Image.fromarray(np.full((300, 400), 128, np.uint8)).save(tmp_path / "new" / "p05" / "x.png")
    enroll = ["-q", "enroll", str(model), str(tmp_path / "new")]
    assert main([*enroll, "--on-no-face", "stop"]) == 2
    assert "p05/x.png shows no face" in capsys.readouterr().err
    assert main(enroll) == 0
    out, err = capsys.readouterr()
    assert "left out p05/x.png shows no face" in err
    # 05_01 was enrolled by the first run: not added again (hardening round 4)
    assert "1 of the 1 code repeat images enrolled already" in err
    assert "enrolled 0 images" in out


def test_train_on_photos_uses_the_shipped_identity_model_by_default(imm, tmp_path, capsys):
    """Issue 42 item 5: train --photos without --method enrols with the shipped identity model
    (plda: no background trained on the few photos); --n-components, which sizes an eigenspace,
    is refused with the fix; face images (no --photos) keep eigenfaces."""
    for person in ("01", "02"):
        _imm_photo(imm, f"{person}_01", tmp_path / "train" / f"p{person}")
    train = ["train", str(tmp_path / "train"), "--photos", "-o", str(tmp_path / "m.npz")]
    assert main([*train, "--n-components", "3"]) == 2
    assert "--method plda (the default for --photos)" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()
    assert main(["-q", *train]) == 0
    shipped = ev.faces.compare.default_identity_name()  # deep when installed
    assert f"trained plda (the {shipped} identity model) on 2 photos" in capsys.readouterr().out
    model = ev.load(tmp_path / "m.npz")
    assert model.method == "plda" and model.feature_ is None
    assert tuple(model.image_shape_) == tuple(ev.default_identity_model().shape)


def test_train_names_the_component_option_before_searching_photos(tmp_path, capsys):
    """Regression: train --photos with the default 40 components on 4 photos failed only after
    the face search (seconds per photo), with 'n_components=40 is out of range' naming no
    option. The photos here are blank: had the finder run first, it would say 'no face'."""

    for person in ("a", "b"):
        (tmp_path / "people" / person).mkdir(parents=True)
        for i in range(2):
            Image.fromarray(np.full((120, 100), 90 * i, np.uint8)).save(
                tmp_path / "people" / person / f"{i}.png"
            )
    train = ["train", str(tmp_path / "people"), "-o", str(tmp_path / "m.npz")]
    assert main([*train, "--photos", "--method", "eigenfaces", "--n-components", "40"]) == 2
    error = capsys.readouterr().err
    assert "--n-components 40 is more than the 4 training images" in error
    assert "--n-components 4 or fewer" in error and "no face" not in error
    assert main([*train, "--mirror", "--n-components", "9"]) == 2
    assert "than the 8 training images (4 with their virtual views)" in capsys.readouterr().err
    assert main([*train, "--mirror", "--n-components", "8"]) == 0
    assert ev.load(tmp_path / "m.npz").feature_.n_components_ == 8


def test_train_on_photos_skips_faceless_ones_by_name_and_reads_files_by_content(tmp_path, capfd):
    """Regression (issue 44): train --photos on 3 people x 2 photos failed with the default 40
    components; one photo without a face aborted the training naming it by index; a file
    without an ending (as Yale's) was skipped as 'not an image'; nothing was printed while
    the faces were searched when stderr is not a terminal."""
    import shutil

    from PIL import Image

    lfw = require_dataset_folder("lfw_train") / "images"
    people = tmp_path / "people"
    for person in ("Tony_Blair", "Colin_Powell", "Ariel_Sharon"):
        (people / person).mkdir(parents=True)
        for photo in sorted((lfw / person).glob("*.jpg"))[:2]:
            shutil.copy(photo, people / person / photo.name)
    extensionless = people / "Tony_Blair" / "portrait"
    shutil.copy(lfw / "Tony_Blair" / "Tony_Blair_0010.jpg", extensionless)
    Image.fromarray(np.full((150, 150, 3), 200, np.uint8)).save(
        people / "Colin_Powell" / "wall.png"
    )
    train = [sys.executable, "-m", "eigenvision", "train", str(people), "--photos"]
    train += ["--method", "eigenfaces"]
    run = subprocess.run(
        [*train, "-o", str(tmp_path / "m.npz")], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert [line for line in lines if line.startswith("finding faces")] == [
        f"finding faces: {i}/8" for i in range(1, 9)
    ]
    assert "not images" not in run.stderr
    left = [line for line in lines if line.startswith("eigenvision: left out")]  # one a photo
    assert any("Colin_Powell/wall.png shows no face" in line for line in left)
    left_out = len(left)
    model = ev.load(tmp_path / "m.npz")
    assert len(model.gallery_labels_) == 8 - left_out
    faces = 8 - left_out
    assert model.feature_.n_components_ == faces - 1  # all n centred faces give (40 would fail)
    assert f"({faces - 1} components, euclidean) on {faces} photos" in run.stdout
    stopped = subprocess.run(
        [*train, "-q", "--on-no-face", "stop", "-o", str(tmp_path / "n.npz")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert stopped.returncode == 2 and "shows no face" in stopped.stderr
    assert not (tmp_path / "n.npz").exists()


def test_train_with_unknown_people_sets_the_rejection_threshold(tmp_path, capsys):
    """Open set on the command line: --unknown FOLDER (people not enrolled) sets the distance
    beyond which a face is unknown; with --far 0 it lies just below the nearest unknown
    image's distance, found here by a brute-force search over the gallery."""

    _write_people(tmp_path / "people", np.random.default_rng(0))
    _write_people(tmp_path / "others", np.random.default_rng(7))
    for folder in (tmp_path / "others").iterdir():
        folder.rename(tmp_path / "others" / f"other_{folder.name}")
    model = tmp_path / "m.npz"
    assert (
        main(
            [
                "-q",
                "train",
                str(tmp_path / "people"),
                "-o",
                str(model),
                "--n-components",
                "5",
                "--unknown",
                str(tmp_path / "others"),
                "--far",
                "0",
            ]
        )
        == 0
    )
    assert "unknown beyond distance" in capsys.readouterr().out
    saved = ev.load(model)
    others = ev.load_image_set(tmp_path / "others")
    codes = saved.feature_.transform(others.images).astype(np.float64)
    nearest = min(
        np.linalg.norm(code - enrolled)
        for code in codes
        for enrolled in saved.gallery_.astype(np.float64)
    )
    assert saved.threshold == pytest.approx(nearest, rel=1e-6)
    probes = [
        tmp_path / "others" / "other_person0" / "0.png",
        tmp_path / "people" / "person2" / "1.png",
    ]
    assert main(["-q", "recognize", str(model), *map(str, probes), "--json"]) == 0
    assert [r["label"] for r in json.loads(capsys.readouterr().out)] == [ev.UNKNOWN, "person2"]
    with pytest.raises(SystemExit) as exit_:  # refused by the parser, before any training
        main(
            [
                "-q",
                "train",
                str(tmp_path / "people"),
                "-o",
                str(model),
                "--unknown",
                str(tmp_path / "others"),
                "--far",
                "1",
            ]
        )
    assert exit_.value.code == 2
    assert "must lie in [0, 1) (1 accepts everyone)" in capsys.readouterr().err


def test_train_without_unknown_people_keeps_a_fitted_feature_in_the_closed_set(tmp_path, capsys):
    """Without --unknown, a feature fitted to the enrolled people (eigenfaces) sets no
    threshold, however many people, and says how to set one: calibrated on those people it
    would let strangers in (method plda calibrates on them: test_plda_recognizer)."""
    _write_people(tmp_path / "people", np.random.default_rng(0))
    _write_people(tmp_path / "more", np.random.default_rng(7))
    for folder in (tmp_path / "more").iterdir():
        folder.rename(tmp_path / "people" / f"other_{folder.name}")
    model = tmp_path / "m.npz"
    train = ["train", str(tmp_path / "people"), "-o", str(model), "--n-components", "5"]
    assert main(train) == 0
    out = capsys.readouterr().out
    assert "6 classes; every face gets the nearest name (--unknown FOLDER sets a threshold)" in out
    assert ev.load(model).threshold is None
    model.unlink()
    assert main([*train, "--closed-set", "--unknown", str(tmp_path / "people")]) == 2
    assert "give one of them" in capsys.readouterr().err and not model.exists()
