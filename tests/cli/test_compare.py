"""``eigenvision compare``: two photos, the same person or not, as text or JSON."""

import json

import numpy as np
from PIL import Image


def test_compare_json_gives_boxes_in_the_files_pixels(lfw_photos, tmp_path, capsys):
    """A photo decoded reduced (longer side over the finder's max_side): the box is given in
    the file's pixels, as detect gives it."""
    photo = Image.open(lfw_photos[0]).convert("RGB")
    large = tmp_path / "large.png"
    factor = 2400 / 150
    photo.resize((2400, 2400), Image.BICUBIC).save(large)
    from eigenvision.cli import main

    main(["-q", "compare", str(lfw_photos[0]), str(large), "--json", "--model", "classical"])
    answer = json.loads(capsys.readouterr().out)
    assert answer["model"] == "classical"
    small, big = (np.array(entry["box"]) for entry in answer["photos"])
    assert [entry["faces_in_photo"] for entry in answer["photos"]] == [1, 1]
    np.testing.assert_allclose(big[2:], small[2:] * factor, rtol=0.15)
    centre_small = small[:2] + small[2:] / 2
    centre_big = big[:2] + big[2:] / 2
    np.testing.assert_allclose(centre_big, (centre_small + 0.5) * factor - 0.5, atol=0.1 * big[2])
