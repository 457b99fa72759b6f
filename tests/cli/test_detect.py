"""``eigenvision detect``: every face of photos, listed and drawn."""

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data

import eigenvision as ev
from eigenvision.cli import main


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


def test_cli_detect_lists_and_draws_faces(tmp_path, capsys):
    import json

    from PIL import Image

    from eigenvision.cli import main

    path = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(path)
    drawn = tmp_path / "faces.png"
    assert (
        main(["-q", "detect", str(path), "--json", "--draw", str(drawn), "--threshold", "0.5"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report[0]["faces"] and drawn.is_file()
    assert set(report[0]["faces"][0]) >= {"box", "left_eye", "right_eye", "confidence"}


def test_cli_detect_says_why_a_photo_shows_no_face(tmp_path, capsys, monkeypatch):
    """With one search of the photo: a second one at threshold 0 doubled the wait (3-4 s on an
    800-pixel HELEN photo) on exactly the photos that show nothing."""
    from PIL import Image

    from eigenvision.cli import main
    from eigenvision.faces.candidates import CandidateSearch

    searches = []
    original = CandidateSearch.candidates
    monkeypatch.setattr(
        CandidateSearch,
        "candidates",
        lambda self, *a, **k: searches.append(1) or original(self, *a, **k),
    )
    path = tmp_path / "astronaut.png"
    Image.fromarray(data.astronaut()).save(path)
    assert main(["-q", "detect", str(path), "--threshold", "1.0"]) == 0
    out = capsys.readouterr().out  # an upper bound: the checks could only lower it
    assert "0 faces (the likeliest has p " in out and "at most" in out
    # printed with the decimals it takes to read below the threshold (a p of 0.9999 had
    # read "1.000 ... below the threshold 1")
    printed = float(out.split("the likeliest has p ")[1].split()[0])
    assert 0.5 < printed < 1.0
    assert len(searches) == 1


def test_cli_detect_prints_the_likeliest_below_its_threshold(tmp_path, capsys, monkeypatch):
    """Regression: a likeliest p of 0.99996 under --threshold 1 was printed "p 1.000 at most,
    below the threshold 1"; it is printed with the decimals that show it below."""
    from PIL import Image

    from eigenvision.cli import main

    monkeypatch.setattr(ev.FaceFinder, "find", lambda self, image, **kwargs: ([], 0.99996))
    path = tmp_path / "grey.png"
    Image.fromarray(np.full((64, 64), 128, dtype=np.uint8)).save(path)
    assert main(["-q", "detect", str(path), "--threshold", "1.0"]) == 0
    assert "the likeliest has p 0.99996 at most, below the threshold 1:" in capsys.readouterr().out


def test_cli_detect_reads_the_photos_of_a_folder(tmp_path, capsys, monkeypatch):
    """Regression: `eigenvision detect photos/` stopped with "is a folder, not an image file; use
    load_image_set" (a function of the Python API); a folder stands for the images it holds."""
    import json

    from PIL import Image

    from eigenvision.cli import main

    searched = []
    monkeypatch.setattr(
        ev.FaceFinder,
        "find",
        lambda self, image, **kwargs: searched.append(image.shape) or ([], 0.1),
    )
    folder = tmp_path / "photos"
    (folder / "more").mkdir(parents=True)
    for name, side in (("10.png", 40), ("2.png", 30), ("more/1.png", 20)):
        Image.fromarray(np.full((side, side), 128, dtype=np.uint8)).save(folder / name)
    single = tmp_path / "single.png"
    Image.fromarray(np.full((50, 50), 9, dtype=np.uint8)).save(single)
    assert main(["-q", "detect", str(folder), str(single), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [Path(item["image"]).name for item in report] == [
        "2.png",
        "10.png",
        "1.png",
        "single.png",
    ]
    assert [shape[0] for shape in searched] == [30, 40, 20, 50]
    (tmp_path / "empty").mkdir()
    assert main(["-q", "detect", str(tmp_path / "empty")]) != 0
    assert "a folder without images; name image files or folders of them" in capsys.readouterr().err


def test_cli_detect_small_faces_searches_below_the_window(tmp_path, capsys):
    """``--small-faces``: the astronaut with her eyes 10 pixels apart, on another picture, is
    found only with it (the search from half the window's eye distance)."""
    from PIL import Image

    from eigenvision.cli import main
    from eigenvision.faces import photos

    astronaut = photos.sample_picture("astronaut")
    factor = 10.0 / photos.default_finder().find(astronaut)[0].iod
    small = ev.normalize.resize(astronaut, (round(512 * factor),) * 2)
    canvas = ev.normalize.resize(photos.sample_picture("coffee"), (300, 400))
    canvas[100 : 100 + len(small), 150 : 150 + len(small)] = small
    path = tmp_path / "small.png"
    Image.fromarray((canvas * 255).round().astype(np.uint8)).save(path)
    found = {}
    for options in ([], ["--small-faces"]):
        assert main(["-q", "detect", str(path), "--json", *options]) == 0
        found[bool(options)] = json.loads(capsys.readouterr().out)[0]["faces"]
    assert found[False] == [] and len(found[True]) == 1
    left, right = found[True][0]["left_eye"], found[True][0]["right_eye"]
    assert np.hypot(*np.subtract(right, left)) == pytest.approx(10.0, rel=0.15)
    # the text without it says what to try
    assert main(["-q", "detect", str(path)]) == 0
    assert "may need --small-faces" in capsys.readouterr().out
    assert main(["-q", "detect", str(path), "--small-faces", "--threshold", "1"]) == 0
    assert "--small-faces" not in capsys.readouterr().out
