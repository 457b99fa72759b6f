"""Folders of images and models the command-line tests write and read."""

import numpy as np
from PIL import Image

from eigenvision.cli import main


def _write_people(root, rng):

    centres = rng.random((3, 12, 10))
    for person, centre in enumerate(centres):
        folder = root / f"person{person}"
        folder.mkdir(parents=True)
        for i in range(4):
            noisy = np.clip(centre + 0.03 * rng.normal(size=centre.shape), 0, 1)
            Image.fromarray((noisy * 255).astype(np.uint8)).save(folder / f"{i}.png")
    return centres


def _imm_photo(imm, name, folder):
    """IMM photo ``name`` (e.g. "01_01") saved at 400 x 300 in ``folder``; its eyes there."""

    index = list(imm.names).index(f"{name}.jpg")
    photo = Image.fromarray((imm.images[index] * 255).astype(np.uint8)).resize((400, 300))
    folder.mkdir(parents=True, exist_ok=True)
    photo.save(folder / f"{name}.png")
    factor = 400 / imm.images[index].shape[1]
    return folder / f"{name}.png", [
        (np.asarray(imm.landmarks[eye][index]) + 0.5) * factor - 0.5
        for eye in ("left_eye", "right_eye")
    ]


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
