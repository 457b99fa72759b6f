"""The named datasets: counts, shapes, dtypes, labels, landmarks."""

from pathlib import Path

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import datasets
from tests.conftest import require_dataset_folder, require_helen_files


def test_digits_builtin():
    digits = datasets.load_digits()
    assert digits.images.shape == (1797, 8, 8) and digits.images.dtype == np.float32
    assert 0.0 <= digits.images.min() and digits.images.max() == 1.0
    assert set(digits.labels.tolist()) == set(range(10))


def test_lfw_subset_builtin():
    lfw = datasets.load_lfw_subset()
    assert lfw.images.shape == (200, 25, 25) and lfw.images.dtype == np.float32
    assert (lfw.labels == "face").sum() == 100 and (lfw.labels == "non-face").sum() == 100


def test_att(att):
    assert att.images.shape == (400, 112, 92) and att.images.dtype == np.float32
    assert len(att.classes) == 40
    counts = {label: int((att.labels == label).sum()) for label in att.classes}
    assert set(counts.values()) == {10}
    assert att.names[0] == "s1/1.pgm" and att.names[9] == "s1/10.pgm"
    assert 0.0 <= att.images.min() and att.images.max() <= 1.0
    # pixels of one file read independently of Pillow
    raw = (datasets.data_home() / "att_faces/s1/1.pgm").read_bytes()
    pixels = np.frombuffer(raw[-112 * 92 :], np.uint8).reshape(112, 92)
    np.testing.assert_allclose(att.images[0], pixels / 255.0, atol=1e-7)


def test_imm_counts_and_landmarks(imm):
    assert imm.images.shape == (120, 600, 800) and imm.images.dtype == np.float32
    assert len(imm.classes) == 12 and imm.points.shape == (120, 73, 2)
    marks = imm.landmarks
    assert np.all(marks["left_eye"][:, 0] < marks["right_eye"][:, 0])
    eye_y = np.maximum(marks["left_eye"][:, 1], marks["right_eye"][:, 1])
    assert np.all(eye_y < marks["nose"][:, 1])
    assert np.all(marks["nose"][:, 1] < marks["mouth"][:, 1])
    assert np.all(marks["mouth_left"][:, 0] < marks["mouth_right"][:, 0])
    for value in marks.values():
        assert np.all((value >= 0) & (value[:, :1] < 800) & (value[:, 1:] < 600))
    inter_ocular = np.linalg.norm(marks["right_eye"] - marks["left_eye"], axis=1)
    assert 95 < inter_ocular.min() and inter_ocular.max() < 116  # the data README: 98-113 px


def test_usps(usps, usps_test):
    assert usps.images.shape == (7291, 16, 16) and usps_test.images.shape == (2007, 16, 16)
    assert usps.images.dtype == np.float32
    assert np.bincount(usps.labels).tolist() == [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
    assert np.bincount(usps_test.labels).tolist() == [
        359,
        264,
        198,
        166,
        200,
        160,
        170,
        147,
        166,
        177,
    ]
    assert usps.images.min() == 0.0 and usps.images.max() == 1.0


def test_mnist_test(mnist_test):
    assert mnist_test.images.shape == (10000, 28, 28)
    assert np.bincount(mnist_test.labels).tolist() == [
        980,
        1135,
        1032,
        1010,
        982,
        892,
        958,
        1028,
        974,
        1009,
    ]


def test_missing_dataset_error_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.delenv(datasets.DATA_ENV, raising=False)
    with pytest.raises(ev.DatasetNotFoundError, match=datasets.DATA_ENV):
        datasets.load_att()
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    with pytest.raises(ev.DatasetNotFoundError, match="att_faces/s1/1.pgm"):
        datasets.load_att()
    with pytest.raises(ev.DatasetNotFoundError, match="usps_zip.npz"):
        datasets.load_usps(root=tmp_path)
    assert all(v is None for v in datasets.find_datasets().values())


def test_corrupt_mnist_is_reported(tmp_path):
    import gzip

    folder = tmp_path / "mnist_t10k"
    folder.mkdir()
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz", "wb") as f:
        f.write(b"\x00\x00\x08\x03" + (5).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + b"x")
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz", "wb") as f:
        f.write(b"\x00\x00\x08\x01" + (5).to_bytes(4, "big") + bytes(5))
    with pytest.raises(ev.ImageSetError, match="declares"):
        datasets.load_mnist_test(root=tmp_path)


def test_helen_faces_are_aligned_and_split_by_photo(helen_slice):
    """The HELEN crops put the eye centres (mean of points 36-41, 42-47) where the loader says."""
    faces, ids = helen_slice
    crop = ev.datasets.HELEN_CROP
    left = (crop["shape"][1] - 1 - crop["iod"]) / 2
    np.testing.assert_allclose(
        faces.landmarks["left_eye"], [[left, crop["eye_row"]]] * len(faces), atol=1e-6
    )
    between = faces.landmarks["right_eye"][:, 0] - faces.landmarks["left_eye"][:, 0]
    np.testing.assert_allclose(between, crop["iod"], atol=1e-6)
    # the points agree with the eyes they were computed from
    np.testing.assert_allclose(faces.points[:, 36:42].mean(axis=1), faces.landmarks["left_eye"])
    assert set(faces.labels) <= ids and faces.images.shape[1:] == crop["shape"]
    train, test = ev.faces.photos.helen_split(photo for photo, _, _ in ev.datasets.helen_files())
    assert not train & test and len(test) == pytest.approx(len(train | test) / 5, abs=1)


def test_the_unannotated_faces_are_in_counted_crops_and_follow_a_reduction():
    """``HELEN_OTHER_FACES``: each listed crop is a held-out one or a calibration photo (a
    training photo the appearance check's fusion and the threshold read, never one whose
    non-faces the decision or the linear score was trained on), its boxes reach into the
    photo, find no annotated face, and scale with the photo's reduction."""
    from eigenvision.evaluate import finds_a_face_of

    require_dataset_folder("lfw_train")  # the fusion's photos are read with LFW's
    files = {Path(image).stem: (photo, image, pts) for photo, image, pts in require_helen_files()}
    train, test = ev.faces.photos.helen_split(photo for photo, _, _ in files.values())
    calibration = {photo for photo, _, _ in ev.faces.recipes._appearance_photos(None, train)[2]}
    assert ev.datasets.HELEN_OTHER_FACES and set(ev.datasets.HELEN_OTHER_FACES) <= set(files)
    for stem, listed in ev.datasets.HELEN_OTHER_FACES.items():
        photo, image_path, pts_path = files[stem]
        assert photo in test or photo in calibration
        full, points = ev.datasets.load_helen_photo(image_path, pts_path)
        small, _ = ev.datasets.load_helen_photo(image_path, pts_path, max_side=640)
        boxes = ev.datasets.helen_other_faces(image_path, full.shape)
        np.testing.assert_allclose(boxes, listed)
        for x, y, w, h in boxes:
            assert x + w > 0 and y + h > 0 and x < full.shape[1] and y < full.shape[0]
        marks = ev.datasets.face_landmarks(points)
        assert not finds_a_face_of(ev.face_box(marks["left_eye"], marks["right_eye"]), boxes)
        factor = np.array(small.shape) / np.array(full.shape)
        reduced = ev.datasets.helen_other_faces(image_path, small.shape)
        np.testing.assert_allclose(reduced[:, 2:], boxes[:, 2:] * factor[::-1])
        np.testing.assert_allclose(reduced[:, :2], (boxes[:, :2] + 0.5) * factor[::-1] - 0.5)
    assert ev.datasets.helen_other_faces(files["100032540_1"][1], (10, 10)).shape == (0, 4)


def test_read_pts_refuses_malformed_files(tmp_path):
    path = tmp_path / "x.pts"
    path.write_text("version: 1\nn_points: 68\n{\n" + "1 2\n" * 68 + "}\n")
    np.testing.assert_array_equal(ev.datasets.read_pts(path), np.tile([0.0, 1.0], (68, 1)))
    path.write_text("1 2\n" * 67)
    with pytest.raises(ev.ImageSetError, match="68"):
        ev.datasets.read_pts(path)


def test_lfw_people_and_pairs_are_as_the_data_readme_says():
    """LFW's View 1 training people: 9,520 photos of 4,035 people, 150 x 150; 1,100 pairs of
    each kind in pairsDevTrain.txt, less the 4 naming a photo LFW's errata withdrew."""
    from tests.conftest import require_dataset

    lfw = require_dataset("lfw_train")
    assert len(lfw) == 9520 and len(lfw.classes) == 4035 and lfw.image_shape == (150, 150)
    assert int(np.sum(lfw.labels == "George_W_Bush")) == 530
    pairs = ev.datasets.lfw_pairs()
    assert len(pairs) == 2196 and sum(same for _, _, same in pairs) == 1099
    names = set(lfw.names)
    assert all(a in names and b in names for a, b, _ in pairs)
    assert all((a.split("/")[0] == b.split("/")[0]) == same for a, b, same in pairs)
    repeated = ev.datasets.load_lfw(min_photos=70)  # scikit-learn's example's people
    assert len(repeated.classes) == 5 and len(repeated) == 530 + 236 + 144 + 77 + 71
