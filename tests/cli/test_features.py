"""``eigenvision features`` and ``locate``: the eye, nose and mouth detector."""

import json

import numpy as np
from PIL import Image

import eigenvision as ev
from eigenvision.cli import main


def test_features_locate_and_modular_training(imm, tmp_path, capsys):

    features = tmp_path / "features.npz"
    assert main(["features", "-o", str(features)]) == 0
    face = tmp_path / "face.png"

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
