"""``eigenvision cluster``: a folder of photos grouped by person into folders."""

import json
from pathlib import Path

import numpy as np
from PIL import Image

import eigenvision as ev
from eigenvision.cli import main
from tests.conftest import require_dataset_folder


def test_cluster_writes_one_folder_per_person_as_cluster_faces_groups(tmp_path, capsys):
    """eigenvision cluster: the groups of ev.cluster_faces on the folder's photos, written as one
    folder of face thumbnails per person (and groups.json) into a new folder; a photo without
    a face and a file that is not an image are left out; an existing folder is never touched."""
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
