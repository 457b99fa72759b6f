"""FaceDescriber: the descriptions of a face crop, item by item and a block at a time."""

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.identity.describe import FaceDescriber
from tests.conftest import in_format_3
from tests.identity.synthetic import people, two_descriptions


def test_mirror_describes_a_face_by_the_mean_of_it_and_its_mirror_image(rng, tmp_path):
    """FaceDescriber(mirror=True) describes each crop by the mean of its descriptors and its
    mirror image's, with its own LBP grid, radii and HOG cell; a model file from before those
    parameters keeps its behaviour (no mirror, an 8 x 8 grid, radii 1 and 2, 8-pixel cells)."""
    import json

    from eigenvision.descriptors import face_descriptors
    from eigenvision.normalize import illumination

    crops = rng.random((3, 120, 104))
    lit = np.stack([illumination(crop) for crop in crops])
    options = {"kind": "daisy", "cells": (10, 8), "radii": (1, 2, 3), "hog_cell": 12}
    plain = face_descriptors(lit, **options)
    flipped = face_descriptors(lit[:, :, ::-1], **options)
    whole = ev.IdentityModel(
        FaceDescriber(descriptor="daisy", descriptor_scales=(1.0,), illumination=True)
    )
    np.testing.assert_allclose(whole.describe(crops), (plain + flipped) / 2)
    whole.set_params(describer__mirror=False)
    np.testing.assert_array_equal(whole.describe(crops), plain)
    people = np.repeat(np.arange(12), 3)
    model = ev.IdentityModel(
        FaceDescriber(descriptor="lbp+hog", mirror=False, illumination=True),
        pca_components=20,
        n_components=5,
    )
    model.fit_descriptors(rng.random((36, 30)), people)
    path = in_format_3(ev.save(model, tmp_path / "old.npz"))
    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    header = json.loads(bytes(stored["__header__"]).decode())
    for added in ("mirror", "lbp_cells", "lbp_radii", "hog_cell", "descriptor_scales"):
        header["model"]["params"].pop(added)
    header["model"]["params"].update(shape=[80, 64], eye_positions=[[0.3, 0.4], [0.7, 0.4]])
    header["format_version"] = 1  # written before these parameters existed
    stored["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **stored)
    old = ev.load(path)
    assert old.describer.mirror is False
    small = rng.random((2, 80, 64))
    np.testing.assert_array_equal(
        old.describe(small),
        face_descriptors(np.stack([illumination(crop) for crop in small]), kind="lbp+hog"),
    )


def test_descriptor_scales_describe_the_crop_rescaled_and_concatenate(rng):
    """FaceDescriber(descriptor_scales=...) describes the normalised crop rescaled by each
    scale (scikit-image's rescale, anti-aliased), mirror means per scale, side by side."""
    from skimage.transform import rescale

    from eigenvision.descriptors import daisy_descriptor
    from eigenvision.normalize import illumination

    crops = rng.random((2, 120, 104))
    model = ev.IdentityModel(
        FaceDescriber(descriptor="daisy", descriptor_scales=(0.7, 1.0), illumination=True)
    )
    expected = []
    for crop in crops:
        row = []
        for scale in (0.7, 1.0):
            lit = rescale(illumination(crop), scale, order=1, anti_aliasing=True)
            assert lit.shape == (round(120 * scale), round(104 * scale))
            plain, flipped = daisy_descriptor(lit), daisy_descriptor(lit[:, ::-1])
            row.append((np.sqrt(plain) + np.sqrt(flipped)) / 2)
        expected.append(np.concatenate(row))
    described = model.describe(crops)
    assert described.shape == (2, 42 * 104 + 120 * 104)  # 7 x 6 and 12 x 10 DAISY points
    np.testing.assert_allclose(described, expected, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="descriptor_scales"):
        ev.IdentityModel(FaceDescriber(descriptor_scales=(0.0,))).fit(crops, [0, 1])


def test_descriptions_pair_descriptors_illumination_and_scales_item_by_item():
    """descriptor, illumination and descriptor_scales pair item by item; "both" doubles each
    descriptor; the default describes DAISY normalised and not at 0.7 of the crop, LBP + HOG
    of the normalised crop at full size and the normalised crop's Fisher vector, side by
    side."""
    crops = np.random.default_rng(1).random((2, 120, 104))
    model = ev.IdentityModel(FaceDescriber(fisher_clusters=2))
    assert model.descriptions() == [
        ("daisy", True, (0.7,)),
        ("daisy", False, (0.7,)),
        ("lbp+hog", True, (1.0,)),
        ("fisher", True, (1.0,)),
    ]
    model.fit_description(crops)
    blocks = []
    for kind, lit, scales in model.descriptions():
        alone = ev.IdentityModel(
            FaceDescriber(descriptor=kind, illumination=lit, descriptor_scales=scales)
        )
        alone.describer.fisher_ = model.describer.fisher_
        blocks.append(alone.describe(crops))
    np.testing.assert_array_equal(model.describe(crops), np.hstack(blocks))
    assert model.description_widths() == [block.shape[1] for block in blocks]
    both = ev.IdentityModel(
        FaceDescriber(descriptor="daisy", illumination="both", descriptor_scales=(0.7, 1.0))
    )
    assert both.descriptions() == [("daisy", True, (0.7, 1.0)), ("daisy", False, (0.7, 1.0))]
    assert ev.IdentityModel(
        FaceDescriber(
            descriptor=("lbp", "hog"), illumination=False, descriptor_scales=((1.0,), (0.5, 1.0))
        )
    ).descriptions() == [("lbp", False, (1.0,)), ("hog", False, (0.5, 1.0))]
    with pytest.raises(ValueError, match="illumination must pair.*one item per descriptor"):
        ev.IdentityModel(
            FaceDescriber(descriptor=("lbp", "hog"), illumination=(True,) * 3)
        ).descriptions()
    # three descriptors beside the four-item default illumination: the message says the fix
    with pytest.raises(ValueError, match="got 4 items for 3 descriptors; give it one item"):
        ev.IdentityModel(FaceDescriber(descriptor=("daisy", "daisy", "lbp+hog"))).descriptions()
    # Regression: illumination=True, the former way to ask for one normalised description,
    # described DAISY twice with the three-description default (its evidence counted twice)
    with pytest.raises(ValueError, match=r"description \('daisy', True, \(0.7,\)\) comes twice"):
        ev.IdentityModel(FaceDescriber(illumination=True)).descriptions()
    with pytest.raises(ValueError, match="comes twice"):
        ev.IdentityModel(FaceDescriber(descriptor="hog", illumination=(True, True))).fit(
            crops, [0, 1]
        )
    with pytest.raises(ValueError, match="descriptor_scales must pair with the descriptions"):
        ev.IdentityModel(FaceDescriber(descriptor_scales=((0.7,), (1.0,)))).descriptions()
    with pytest.raises(ValueError, match="FaceDescriber.descriptor must be one of"):
        ev.IdentityModel(FaceDescriber(descriptor=("daisy", "sift"))).fit_descriptors(
            np.zeros((8, 4)), [0] * 8
        )


def test_many_crops_are_encoded_a_block_at_a_time(rng, monkeypatch):
    """IdentityModel.encode described every crop before encoding any, and the descriptions
    are many times the crops' size (HISTORY.md has the measured sizes). A block of crops at a
    time, the codes equal those of the crops encoded one by one, and the memory allocated
    meanwhile (tracemalloc) stays under half of what describing them all at once allocates;
    a single crop and a stack of the wrong shape are answered as before."""
    import tracemalloc

    from eigenvision import identity

    model = two_descriptions(pca_components=4, n_components=2, cohort_size=0)
    X, y, _, _ = people(rng, n_people=30, d=sum(model.description_widths()))
    model.fit_descriptors(X, y)
    crops = rng.uniform(0, 255, size=(300, 24, 24))
    one_by_one = np.concatenate([model.encode(crop[None]) for crop in crops])
    tracemalloc.start()
    try:
        model.describe(crops)
        described = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    monkeypatch.setattr(identity.model, "CROPS_AT_ONCE", 32)
    tracemalloc.start()
    try:
        codes = model.encode(crops)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(codes, one_by_one, rtol=1e-12, atol=1e-12)
    assert peak < described / 2
    np.testing.assert_allclose(model.encode(crops[0]), one_by_one[:1], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="aligned faces"):
        model.encode(crops[:, :20])


def test_describing_crops_keeps_no_reference_to_them(rng):
    """``describe`` leaves nothing that holds the crops or their normalised and rescaled copies
    once it returns (a self-calling closure made a reference cycle that held them until the
    garbage collector ran): with the collector off, they are freed at once."""
    import gc
    import weakref

    model = ev.IdentityModel(
        FaceDescriber(
            shape=(24, 24),
            descriptor="lbp",
            illumination=True,
            descriptor_scales=(0.7,),
            mirror=True,
        )
    )
    crops = rng.random((3, 24, 24))
    held = weakref.ref(crops)
    enabled = gc.isenabled()
    gc.disable()
    try:
        assert model.describe(crops).shape[0] == 3
        del crops
        assert held() is None
    finally:
        if enabled:
            gc.enable()
