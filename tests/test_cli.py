import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_dataset_folder
from PIL import Image

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


def _write_people(root, rng):
    from PIL import Image

    centres = rng.random((3, 12, 10))
    for person, centre in enumerate(centres):
        folder = root / f"person{person}"
        folder.mkdir(parents=True)
        for i in range(4):
            noisy = np.clip(centre + 0.03 * rng.normal(size=centre.shape), 0, 1)
            Image.fromarray((noisy * 255).astype(np.uint8)).save(folder / f"{i}.png")
    return centres


def test_train_recognize_enroll_evaluate(tmp_path, capsys):
    import json

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


def test_cli_errors_are_messages_not_tracebacks(tmp_path, capsys):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    assert main(["recognize", str(tmp_path / "none.npz"), str(bad)]) == 2
    assert "no such model file" in capsys.readouterr().err


def test_features_locate_and_modular_training(imm, tmp_path, capsys):
    import json

    features = tmp_path / "features.npz"
    assert main(["features", "-o", str(features)]) == 0
    face = tmp_path / "face.png"
    from PIL import Image

    Image.fromarray((imm.images[0] * 255).astype(np.uint8)).save(face)
    box = [str(v) for v in ev.face_box(imm.landmarks["left_eye"][0], imm.landmarks["right_eye"][0])]
    capsys.readouterr()
    assert main(["locate", str(features), str(face), "--box", *box, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)[str(face)]
    for feature in ("left_eye", "right_eye"):
        true = imm.landmarks[feature][0]
        assert np.hypot(found[feature]["x"] - true[0], found[feature]["y"] - true[1]) < 5
    # modular training without a detector names the fix
    assert main(["train", str(tmp_path), "-o", str(tmp_path / "m.npz"), "--method", "modular"]) == 2
    assert "--detector" in capsys.readouterr().err


def test_bad_numbers_are_refused_by_the_parser(tmp_path, capsys):
    """Regression: --threshold nan accepted every impostor; --top 0 and --n-components -1
    were accepted."""
    import pytest

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
    import json

    from eigenvision.cli._common import plain as _plain

    assert _plain(np.float64(np.inf)) is None and _plain(float("nan")) is None
    assert _plain(np.float32(1.5)) == 1.5 and _plain(np.int64(3)) == 3
    assert json.loads(json.dumps({"score": _plain(np.inf)}, allow_nan=False)) == {"score": None}


def _imm_photo(imm, name, folder):
    """IMM photo ``name`` (e.g. "01_01") saved at 400 x 300 in ``folder``; its eyes there."""
    from PIL import Image

    index = list(imm.names).index(f"{name}.jpg")
    photo = Image.fromarray((imm.images[index] * 255).astype(np.uint8)).resize((400, 300))
    folder.mkdir(parents=True, exist_ok=True)
    photo.save(folder / f"{name}.png")
    factor = 400 / imm.images[index].shape[1]
    return folder / f"{name}.png", [
        (np.asarray(imm.landmarks[eye][index]) + 0.5) * factor - 0.5
        for eye in ("left_eye", "right_eye")
    ]


def test_train_recognize_enroll_on_uncropped_photos(imm, tmp_path, capsys):
    """Issue #18 item 4: train --photos finds, aligns and enrols one face per photo; recognize
    lists every face of a photo with its name; enroll takes photos; no face is an error in
    enrolment and an empty list in recognition."""
    import json

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
    from PIL import Image

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
    import subprocess
    import sys

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
    import json

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


def test_a_model_of_face_crops_refuses_a_whole_photo(tmp_path, capsys):
    """Regression: 'eigenvision train att' then 'recognize faces.npz photo.jpg' squashed the
    whole photo to the crops' size and named a person (a coffee cup too)."""
    from PIL import Image
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


def test_cluster_writes_one_folder_per_person_as_cluster_faces_groups(tmp_path, capsys):
    """eigenvision cluster: the groups of ev.cluster_faces on the folder's photos, written as one
    folder of face thumbnails per person (and groups.json) into a new folder; a photo without
    a face and a file that is not an image are left out; an existing folder is never touched."""
    import json
    import shutil

    from PIL import Image

    lfw = require_dataset_folder("lfw_train") / "images"
    photos = tmp_path / "photos"
    photos.mkdir()
    for person in ("Tony_Blair", "Colin_Powell", "Ariel_Sharon"):
        for photo in sorted((lfw / person).glob("*.jpg"))[:4]:
            shutil.copy(photo, photos / photo.name)
    Image.fromarray(np.full((120, 160, 3), 90, np.uint8)).save(photos / "wall.png")
    (photos / "notes.txt").write_text("not a photo")
    good = (photos / "wall.png").read_bytes()
    (photos / "torn.png").write_bytes(good[: len(good) // 2])  # a truncated photo
    out = tmp_path / "groups"
    assert main(["-q", "cluster", str(photos), "-o", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "notes.txt" in captured.err
    assert "left out 1 unreadable file(s)" in captured.err and "torn.png" in captured.err
    (photos / "torn.png").unlink()
    paths = sorted(p for p in photos.iterdir() if p.suffix != ".txt")
    expected = ev.cluster_faces(paths)
    assert [[face["photo"] for face in entry["faces"]] for entry in report] == [
        [str(paths[i]) for i, _ in group] for group in expected
    ]
    assert [[face["box"] for face in entry["faces"]] for entry in report] == [
        [list(face.box) for _, face in group] for group in expected
    ]
    assert all("wall.png" not in face["photo"] for entry in report for face in entry["faces"])
    assert json.loads((out / "groups.json").read_text()) == report
    folders = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(folders) == len(report)
    for folder, entry in zip(folders, report, strict=True):
        stems = sorted(p.stem for p in folder.glob("*.png"))
        assert stems == sorted(Path(face["photo"]).stem for face in entry["faces"])
    before = sorted(out.rglob("*"))
    assert main(["-q", "cluster", str(photos), "-o", str(out)]) == 2
    assert "exists; name a new folder" in capsys.readouterr().err
    assert sorted(out.rglob("*")) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["-q", "cluster", str(empty)]) == 2
    assert "holds no photos" in capsys.readouterr().err
    assert main(["-q", "cluster", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_cluster_counts_one_person_in_the_singular(tmp_path, capsys):
    """One photo of one face reads "1 face in 1 photo: 1 person", not "1 people"."""
    import shutil

    lfw = require_dataset_folder("lfw_train") / "images"
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(lfw / "Tony_Blair" / "Tony_Blair_0001.jpg", photos)
    assert main(["-q", "cluster", str(photos)]) == 0
    assert "1 face in 1 photo: 1 person (1 seen once)\n" in capsys.readouterr().out


def test_cluster_names_the_photos_where_no_face_was_found(tmp_path, capsys):
    """Regression: "2 faces in 3 photos" left the user to guess which photo had none; the line
    now names it (the CLI's and the app's Group page's summary, grouping_summary)."""
    import shutil

    from eigenvision.faces.groups import grouping_summary

    lfw = require_dataset_folder("lfw_train") / "images"
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ("Tony_Blair_0001.jpg", "Tony_Blair_0002.jpg"):
        shutil.copy(lfw / "Tony_Blair" / name, photos)
    Image.fromarray(np.full((120, 160), 128, dtype=np.uint8)).save(photos / "wall.jpg")
    assert main(["-q", "cluster", str(photos)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("2 faces in 3 photos: ")
    assert line.endswith("; no face found in 1 photo (wall.jpg)")
    many = grouping_summary([[(0, None)]], [f"p{i}.jpg" for i in range(8)])
    assert many.endswith("; no face found in 7 photos (p1.jpg, p2.jpg, p3.jpg, p4.jpg, p5.jpg ...)")


def test_cluster_names_an_unreadable_file_as_such_not_as_a_photo_without_a_face(tmp_path, capsys):
    """Regression: a truncated file was counted among the photos and named as one where "no face
    was found"; the summary now counts the photos read and names the files it could not read."""
    import shutil

    from eigenvision.faces.groups import grouping_summary

    lfw = require_dataset_folder("lfw_train") / "images"
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(lfw / "Tony_Blair" / "Tony_Blair_0001.jpg", photos)
    whole = (lfw / "Tony_Blair" / "Tony_Blair_0002.jpg").read_bytes()
    (photos / "torn.jpg").write_bytes(whole[: len(whole) // 3])
    assert main(["-q", "cluster", str(photos)]) == 0
    captured = capsys.readouterr()
    # Regression: the warning named the file twice ("torn.jpg (torn.jpg: cannot decode ...)")
    assert "left out 1 unreadable file(s)" in captured.err and captured.err.count("torn.jpg") == 1
    line = captured.out.splitlines()[0]
    assert line == "1 face in 1 photo: 1 person (1 seen once); could not read 1 file (torn.jpg)"
    # by index: two files of one name in two folders are two photos
    both = grouping_summary([[(0, None)]], ["a.jpg", "b.jpg", "b.jpg"], unreadable={2})
    assert both.endswith("; no face found in 1 photo (b.jpg); could not read 1 file (b.jpg)")
    assert both.startswith("1 face in 2 photos: ")


def test_build_models_names_each_description_s_plda_rank():
    """Regression: build-models said "PLDA of rank 200" for two PLDA models of rank 100, one per
    description of the crop (illumination="both"); one model keeps its one rank."""
    from eigenvision.cli.build_models import _identity_summary

    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(20, 2 * 576)) * 3, 3, axis=0) + rng.normal(size=(60, 2 * 576))
    people = np.repeat(np.arange(20), 3)
    options = {"pca_components": 4, "n_components": 2, "cohort_size": 0, "mirror": False}
    # pixels of 24 x 24 crops: each description 576 columns wide
    options.update(shape=(24, 24), descriptor="pixels", descriptor_scales=(1.0,))
    both = ev.IdentityModel(illumination="both", **options).fit_descriptors(X, people)
    one = ev.IdentityModel(illumination=True, **options).fit_descriptors(X, people)
    assert _identity_summary(both) == "2 PLDA models, one per description, of ranks 2, 2"
    assert _identity_summary(one) == "PLDA of rank 2"


def test_recognize_json_gives_boxes_in_the_files_pixels(imm, tmp_path, capsys):
    """Regression (issue 80): `recognize --json` of a model trained on photos gave boxes in the
    pixels of the reduced decode (longer side 800), not the file's: on a 2,400-pixel photo the
    box hardly overlapped the face. Now the box is the one `detect --json` gives for the file."""
    from PIL import Image

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


def test_cluster_names_an_unreadable_file_whatever_the_warning_filters(tmp_path, capsys):
    """Issue 80: with warnings filtered (PYTHONWARNINGS=ignore) the command learnt nothing of
    the unreadable files (it read them off the warning it hooked) and called them photos
    without a face. cluster_faces now tells its on_error callable of each."""
    import warnings

    lfw = require_dataset_folder("lfw_train") / "images"
    photos = tmp_path / "photos"
    photos.mkdir()
    whole = (lfw / "Tony_Blair" / "Tony_Blair_0002.jpg").read_bytes()
    (photos / "a.jpg").write_bytes(whole)
    (photos / "torn.jpg").write_bytes(whole[: len(whole) // 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["-q", "cluster", str(photos)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.endswith("could not read 1 file (torn.jpg)")
    assert "no face found" not in line
    told = []
    ev.cluster_faces(sorted(photos.iterdir()), on_error=lambda i, error: told.append((i, error)))
    assert [i for i, _ in told] == [1] and isinstance(told[0][1], ev.ImageLoadError)


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


def _people_and_model(tmp_path, rng):
    """Three people to train on, two more in their own folders to enrol, and the model."""
    _write_people(tmp_path / "people", rng)
    for name in ("ann", "bob"):
        _write_people(tmp_path / f"new_{name}", rng)
        for folder in (tmp_path / f"new_{name}").iterdir():
            folder.rename(folder.with_name(f"{name}_{folder.name}"))
    model = tmp_path / "model.npz"
    assert main(["train", str(tmp_path / "people"), "-o", str(model), "--n-components", "5"]) == 0
    return model


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


def test_detect_draws_several_photos_into_a_folder_and_says_where(tmp_path, capsys):
    """Regression (hardening round 4): ``detect --draw faces.png`` with several photos wrote
    ``<photo>-faces.png`` beside it and never faces.png, silently. A file name with several
    photos is refused with the fix; a folder gets one ``<photo>.png`` each, named in the output
    (two photos of one name are numbered)."""
    from skimage import data

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        Image.fromarray(data.astronaut()).save(tmp_path / folder / "astronaut.png")
    photos = [str(tmp_path / "a" / "astronaut.png"), str(tmp_path / "b" / "astronaut.png")]
    assert main(["-q", "detect", *photos, "--draw", str(tmp_path / "faces.png")]) == 2
    assert "--draw" in capsys.readouterr().err and not (tmp_path / "faces.png").exists()
    assert main(["-q", "detect", *photos, "--json", "--draw", str(tmp_path / "drawn")]) == 0
    report = json.loads(capsys.readouterr().out)
    drawings = sorted(p.name for p in (tmp_path / "drawn").iterdir())
    assert drawings == ["astronaut-0.png", "astronaut-1.png"]
    assert [Path(entry["drawing"]).name for entry in report] == drawings
    # one photo into a folder not made yet (named with a trailing separator): <photo>.png there
    assert main(["-q", "detect", photos[0], "--draw", str(tmp_path / "one") + "/"]) == 0
    assert (tmp_path / "one" / "astronaut.png").is_file()


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
