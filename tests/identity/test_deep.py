"""The learned face description (``eigenvision.identity.deep``) and the choice of identity model.

Tests that run dlib's network need ``eigenvision[deep]``: outside CI they skip and say how to
install it; in CI they fail without it.
"""

import numpy as np
import pytest
from PIL import Image

import eigenvision as ev
from eigenvision.faces import compare
from eigenvision.identity import deep
from eigenvision.identity.describe import FaceDescriber
from tests.conftest import require_dataset_folder, require_deep


def _dlib_recipe(photo):
    """dlib's own recipe, as face_recognition runs it: HOG faces (upsampled once), 5 points,
    dlib's chip, the network."""
    import dlib
    import face_recognition_models as models

    detector = dlib.get_frontal_face_detector()
    shapes = dlib.shape_predictor(models.pose_predictor_five_point_model_location())
    network = dlib.face_recognition_model_v1(models.face_recognition_model_location())
    found = detector(photo, 1)
    assert len(found) >= 1
    shape = shapes(photo, max(found, key=lambda r: r.area()))
    return np.array(network.compute_face_descriptor(photo, shape)), dlib.get_face_chip(photo, shape)


def test_our_chip_is_dlibs_chip_and_gives_its_embedding(lfw_photos):
    """The chip cut on the finder's eyes at CHIP_EYE_POSITIONS lands where dlib's own chip
    (5 points, padding 0.25) is: the two embeddings of one photo lie far closer than the
    network's same-person tolerance (0.6), and closer than to the same person's other photo."""
    require_deep()
    finder = ev.default_finder()
    embeddings, theirs = [], []
    for path in lfw_photos[:2]:
        photo = np.asarray(Image.open(path).convert("RGB"))
        face = finder.find(photo)[0]
        chip = ev.align_face(
            photo, face, shape=(150, 150), eye_positions=deep.CHIP_EYE_POSITIONS, as_gray=False
        )
        assert chip.shape == (150, 150, 3)
        embeddings.append(deep.embed_chips(chip[None])[0])
        reference, dlib_chip = _dlib_recipe(photo)
        theirs.append(reference)
        # the chips themselves: the same face at the same place (mean absolute grey difference)
        assert np.abs(chip.mean(axis=2) - dlib_chip.mean(axis=2) / 255).mean() < 0.08
        # dlib's chip through embed_chips is dlib's own descriptor of the photo
        np.testing.assert_allclose(deep.embed_chips(dlib_chip[None])[0], reference, atol=1e-5)
    for ours, reference in zip(embeddings, theirs, strict=True):
        assert np.linalg.norm(ours - reference) < 0.25
    assert np.linalg.norm(embeddings[0] - theirs[0]) < np.linalg.norm(embeddings[0] - theirs[1])


def test_embed_chips_takes_grey_and_8_bit_chips_and_refuses_other_shapes():
    require_deep()
    rng = np.random.default_rng(0)
    grey = rng.random((2, 150, 150))
    colour = np.repeat(grey[..., None], 3, axis=3)
    np.testing.assert_array_equal(deep.embed_chips(grey), deep.embed_chips(colour))
    eight = np.rint(colour * 255).astype(np.uint8)
    np.testing.assert_array_equal(deep.embed_chips(eight), deep.embed_chips(colour))
    mirrored = deep.embed_chips(colour, mirror=True)
    halves = (deep.embed_chips(colour) + deep.embed_chips(colour[:, :, ::-1])) / 2
    np.testing.assert_allclose(mirrored, halves, atol=1e-12)
    with pytest.raises(ValueError, match=r"chips must be \(n, 150, 150, 3\)"):
        deep.embed_chips(rng.random((2, 112, 92, 3)))


def test_a_deep_identity_model_is_plda_on_the_embeddings(rng):
    """descriptor="deep" is one more description: the model's rows are the network's
    embeddings, and its scores are PLDA's on them, nothing else (a PLDA fitted on the same
    rows by hand gives the same ratios, before the cohort)."""
    require_deep()
    model = ev.IdentityModel(
        FaceDescriber(descriptor="deep", shape=(150, 150), illumination=False, mirror=False),
        eye_positions=deep.CHIP_EYE_POSITIONS,
        pca_components=20,
        lda_components=None,
        n_components=5,
        cohort_size=0,
    )
    assert model.colour and model.description_widths() == [128]
    chips = rng.random((3, 150, 150, 3))
    np.testing.assert_array_equal(model.describe(chips), deep.embed_chips(chips))
    # fitted on embedding-like rows: 30 people, 4 faces each
    centres = rng.normal(size=(30, 128))
    X = np.repeat(centres, 4, axis=0) + 0.3 * rng.normal(size=(120, 128))
    labels = np.repeat(np.arange(30), 4)
    model.fit_descriptors(X, labels)
    kept = np.isin(labels, model.plda_.classes_)  # the people PLDA learnt from
    assert 0 < (~kept).sum() < len(labels)  # the others calibrate
    plda = ev.PLDA(n_components=5, pca_components=20, length_norm=True).fit(X[kept], labels[kept])
    a, b = X[:60], X[60:]
    np.testing.assert_allclose(
        model.paired_log_odds(model.plda_.encode(a), model.plda_.encode(b)),
        plda.score_pairs(a, b),
        rtol=1e-6,
        atol=1e-6,
    )


def test_deep_without_its_packages_is_a_clear_error_and_the_default_is_classical(monkeypatch):
    def missing():
        raise deep.MissingExtraError(
            f"the learned face description needs dlib ({deep.DEEP_INSTALL})"
        )

    monkeypatch.setattr(deep, "_modules", missing)
    monkeypatch.setattr(compare, "deep_available", deep.deep_available)
    deep._network.cache_clear()  # a network read by an earlier test is read again
    assert not deep.deep_available()
    assert compare.default_identity_name() == "classical"
    with pytest.raises(deep.MissingExtraError, match=r"pip install \"eigenvision\[deep\]\""):
        ev.default_identity_model("deep")
    with pytest.raises(deep.MissingExtraError, match="eigenvision.deep"):
        ev.compare_faces(np.zeros((60, 60)), np.zeros((60, 60)), model="deep")
    with pytest.raises(deep.MissingExtraError, match="pip install"):
        deep.embed_chips(np.zeros((1, 150, 150, 3)))


def test_a_verification_names_its_model_faces_and_face_counts(lfw_photos):
    """Which face of each photo was compared, how many each showed, which model answered: a
    photo of two faces says so (the most confident was compared)."""
    one = np.asarray(Image.open(lfw_photos[0]).convert("RGB"))
    two = np.concatenate([one, np.asarray(Image.open(lfw_photos[2]).convert("RGB"))], axis=1)
    result = ev.compare_faces(one, two, model="classical")
    assert result.model == "classical"
    assert len(result.faces) == 2 and result.face_counts[0] == 1
    assert result.face_counts[1] == len(ev.default_finder().find(two)) >= 2
    assert result.faces[1] == ev.default_finder().find(two)[0]


def test_deep_compare_accepts_one_person_and_names_the_model(lfw_photos):
    """The shipped learned model through compare_faces: one person's two photos accepted,
    another person's refused, and the answer names the model."""
    require_deep()
    same = ev.compare_faces(lfw_photos[0], lfw_photos[1], model="deep")
    other = ev.compare_faces(lfw_photos[0], lfw_photos[2], model="deep")
    assert same.model == "deep" and other.model == "deep"
    assert same.accepted and not other.accepted
    assert same.probability > other.probability


def test_the_deep_recipe_keeps_its_scores_as_fitted(tmp_path):
    """``build-models --identity --deep`` on a small copy of ``lfw_train``: the model it returns
    scores every pair as the model fitted on the same chips does. Regression: kept in 8 bits as
    the classical model is, its whitened map lost the scores (two different people called one;
    HISTORY.md has the numbers)."""
    require_deep()
    from eigenvision.faces.recipes import build_identity_model, recipe_model

    source = require_dataset_folder("lfw_train")
    root = tmp_path / "lfw_train"
    (root / "images").mkdir(parents=True)
    (root / "pairsDevTrain.txt").write_text("0\n")
    people = [p for p in sorted((source / "images").iterdir()) if len(list(p.glob("*.jpg"))) >= 3]
    for person in people[:20]:
        (root / "images" / person.name).mkdir()
        for photo in sorted(person.glob("*.jpg"))[:3]:
            (root / "images" / person.name / photo.name).symlink_to(photo)
    files = ev.datasets.lfw_files(root)
    eyes = np.broadcast_to(np.asarray(ev.datasets.LFW_EYES), (len(files), 2, 2))
    options = dict(pca_components=20, n_components=5, cohort_size=8, cohort_top=4)
    model = build_identity_model(root, eyes=eyes, recipe="deep", temper=False, **options)
    assert model.colour and model.plda_.step_.dtype.kind == "f"
    chips = np.stack(
        [
            ev.faces.compare.model_crop(ev.load_image(path, as_gray=False), eyes[0], model)
            for _, path in files
        ]
    )
    assert chips.shape == (len(files), 150, 150, 3)
    labels = [person for person, _ in files]
    fitted = recipe_model("deep", **options).fit(chips, labels)
    np.testing.assert_allclose(
        model.pairwise_scores(chips), fitted.pairwise_scores(chips), rtol=1e-6, atol=1e-6
    )


def test_a_damaged_deep_model_file_is_refused_by_name(tmp_path):
    """The shipped learned model, truncated or with a member of the wrong shape, is refused
    with ModelFileError naming the file; nothing of it is used."""
    import io
    import zipfile

    shipped = compare.DEEP_IDENTITY
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(shipped.read_bytes()[: shipped.stat().st_size // 2])
    with pytest.raises(ev.ModelFileError, match="truncated.npz"):
        ev.default_identity_model(truncated)
    reshaped = tmp_path / "reshaped.npz"
    with zipfile.ZipFile(shipped) as source, zipfile.ZipFile(reshaped, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if "cohort_coordinates_" in item.filename:
                array = np.load(io.BytesIO(data))
                buffer = io.BytesIO()
                np.save(buffer, array[:, :-1])
                data = buffer.getvalue()
            target.writestr(item, data)
    with pytest.raises(ev.ModelFileError, match="reshaped.npz"):
        ev.default_identity_model(reshaped)


def test_only_a_learned_model_takes_colour_crops(rng):
    """Colour crops are let through where a learned description reads them, and nowhere else:
    an eigenfaces recognizer still refuses a colour set with the fix (the guard was loosened
    for every caller before it moved to the recognizer that knows its model)."""
    from eigenvision.imageset import as_image_set

    colour = ev.ImageSet(rng.random((4, 20, 16, 3)).astype(np.float32), np.array([1, 1, 2, 2]))
    with pytest.raises(ValueError, match="must be grey"):
        ev.Recognizer(2).fit(colour)
    assert as_image_set(colour, None, min_images=0, colour=True).images.shape == (4, 20, 16, 3)
    grey = rng.random((3, 20, 16))
    assert as_image_set(grey, None, min_images=0, colour=True).images.shape == (3, 20, 16, 3)
    with pytest.raises(ValueError, match="colour"):
        as_image_set(
            ev.ImageSet(grey.astype(np.float32), np.zeros(3)), None, min_images=0, colour=True
        )


def test_the_five_point_chip_is_dlibs_chip_of_the_face(lfw_photos):
    """five_point_chip on the finder's eyes gives the chip dlib's own recipe (its detector, 5
    points, get_face_chip) cuts: the embeddings agree far within the network's tolerance; and
    the model describes the chip as the network does its 8-bit form. Regression: the chip was
    handed on in 8 bits, read as [0, 1] and described white (every face one person)."""
    require_deep()
    finder = ev.default_finder()
    from eigenvision.faces.recipes import recipe_model

    model = recipe_model("deep")
    assert model.alignment == "five_points"
    described = []
    for path in lfw_photos:
        photo = np.asarray(Image.open(path).convert("RGB"))
        face = finder.find(photo)[0]
        chip = compare.model_crop(photo, face, model)
        assert chip.shape == (150, 150, 3) and chip.dtype == np.float64 and chip.max() <= 1
        reference, dlib_chip = _dlib_recipe(photo)
        on_eyes = compare.model_crop(photo, face, recipe_model("deep", alignment="eyes"))
        # dlib's chip found again (to the pixel where dlib's box gives the same 5 points),
        # closer than the chip cut on the eyes alone
        difference = np.abs(chip - dlib_chip / 255).mean()
        assert difference < 0.05 and difference < np.abs(on_eyes - dlib_chip / 255).mean()
        row = model.describe(chip[None])[0]
        np.testing.assert_array_equal(row, deep.embed_chips(np.rint(chip * 255)[None] / 255)[0])
        assert np.linalg.norm(row - reference) < 0.12
        described.append(row)
    # two people, two photos each: one person's rows closer than the other's
    assert np.linalg.norm(described[0] - described[1]) < np.linalg.norm(described[0] - described[2])


def test_five_point_alignment_is_for_the_deep_chip_only(rng):
    centres = rng.normal(size=(10, 64))
    X = np.repeat(centres, 3, axis=0)
    with pytest.raises(ValueError, match="alignment='five_points'.*descriptor='deep'"):
        ev.IdentityModel(
            FaceDescriber(descriptor="pixels"), alignment="five_points"
        ).fit_descriptors(X, np.repeat(np.arange(10), 3))
    with pytest.raises(ValueError, match="alignment"):
        ev.IdentityModel(alignment="nose").fit_descriptors(X, np.repeat(np.arange(10), 3))
