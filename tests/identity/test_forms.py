"""The identity models' file forms: half precision and eight bits, scored as stored."""

import copy

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.identity import half_precision, quantized
from tests.conftest import saved_unchecked
from tests.identity.synthetic import as_stored, fitted_with_cohort, people


def test_half_precision_rounds_the_large_maps_and_scores_as_rounded(rng, tmp_path):
    """``half_precision`` keeps each description's map and the cohort in float16 and drops the
    blocks' copies of the training names; its codes are those of the rounded map computed in
    float32 (checked by hand), its ratios within float16's round-off of the fitted model's,
    the fitted model is left as it was, and a saved copy scores exactly as the copy."""
    model, X, _ = fitted_with_cohort(rng)
    halved = half_precision(model)
    blocks, fitted = list(halved.plda_.models_.values()), list(model.plda_.models_.values())
    assert [block.step_.dtype for block in blocks] == [np.float16, np.float16]
    assert [block.classes_ for block in blocks] == [None, None]
    assert halved.cohort_coordinates_.dtype == np.float16
    assert fitted[0].step_.dtype == np.float64 and fitted[0].classes_ is not None
    assert model.cohort_coordinates_.dtype == np.float32

    rows = X[:8, :576]
    step = fitted[0].step_.astype(np.float16).astype(np.float64)
    by_hand = (rows - fitted[0].mean_) @ step.T
    by_hand *= np.sqrt(4) / np.linalg.norm(by_hand, axis=1, keepdims=True)
    np.testing.assert_allclose(blocks[0].encode(rows), by_hand - fitted[0].code_mean_, atol=1e-12)

    codes, rounded = model.plda_.encode(X[:10]), halved.plda_.encode(X[:10])
    assert 0 < np.abs(codes - rounded).max() <= 2e-3 * np.abs(codes).max()
    full, half = model.pairwise_log_odds(codes, codes), halved.pairwise_log_odds(rounded, rounded)
    assert np.abs(full - half).max() <= 1e-2 * np.abs(full).max()

    loaded = ev.load(ev.save(halved, tmp_path / "half.npz"))
    assert [block.step_.dtype for block in loaded.plda_.models_.values()] == [np.float16] * 2
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(loaded.plda_.encode(X[:10]), rounded), half
    )


def test_half_precision_compacts_a_plda_and_refuses_other_models(rng):
    """A PLDA with its PCA step is made compact and rounded; anything else is refused by name."""
    X, y, _, _ = people(rng, n_people=20, d=8)
    plda = ev.PLDA(n_components=2, pca_components=5).fit(X, y)
    halved = half_precision(plda)
    assert halved.step_.dtype == np.float16 and halved.pca_ is None
    assert plda.pca_ is not None and plda.classes_ is not None
    np.testing.assert_allclose(halved.transform(X[:4]), plda.transform(X[:4]), rtol=0, atol=1e-2)
    with pytest.raises(TypeError, match="half_precision takes an IdentityModel"):
        half_precision(ev.Eigenspace(2).fit(X))


def test_quantized_keeps_the_maps_in_eight_bits_and_scores_as_stored(rng, tmp_path):
    """``quantized`` keeps each description's map with one scale per row and the cohort with
    one per axis, each value within half a step of the fitted model's and each slice's largest
    at 127; it scores as the stored integers multiplied out by hand, leaves the fitted model as
    it was, and its saved copy scores exactly as the copy in a file half of float16's."""
    model, X, _ = fitted_with_cohort(rng)
    small = quantized(model)
    blocks, fitted = list(small.plda_.models_.values()), list(model.plda_.models_.values())
    for block, full in zip(blocks, fitted, strict=True):
        assert block.step_.dtype == np.int8 and block.step_scale_.shape == (4,)
        assert block.classes_ is None and block.within_covariance_.dtype == np.float32
        step = block.step_scale_.astype(np.float64)[:, None]
        assert np.all(np.abs(block.step_ * step - full.step_) <= step / 2 * (1 + 1e-6))
        np.testing.assert_array_equal(np.abs(block.step_).max(axis=1), 127)
    cohort, scale = small.cohort_coordinates_, small.cohort_scale_.astype(np.float64)
    assert cohort.dtype == np.int8 and scale.shape == (4,)
    assert np.all(np.abs(cohort * scale - model.cohort_coordinates_) <= scale / 2 * (1 + 1e-6))
    assert fitted[0].step_.dtype == np.float64 and model.cohort_coordinates_.dtype == np.float32

    by_hand = as_stored(model, small)
    codes, expected = small.plda_.encode(X[:10]), by_hand.plda_.encode(X[:10])
    np.testing.assert_allclose(codes, expected, rtol=1e-6, atol=1e-9)
    scores = small.pairwise_log_odds(codes, codes)
    np.testing.assert_allclose(scores, by_hand.pairwise_log_odds(expected, expected), atol=1e-5)
    full = model.plda_.encode(X[:10])
    assert (
        0 < np.abs(scores - model.pairwise_log_odds(full, full)).max() <= 0.1 * np.abs(scores).max()
    )

    path = ev.save(small, tmp_path / "small.npz")
    loaded = ev.load(path)
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(loaded.plda_.encode(X[:10]), codes), scores
    )
    halved = half_precision(loaded)  # and back: the 8-bit values in float16
    assert halved.cohort_scale_ is None and halved.plda_.models_["block0"].step_scale_ is None
    np.testing.assert_allclose(halved.plda_.encode(X[:10]), codes, atol=2e-2)


def test_quantized_model_files_are_checked_and_shrink_the_shipped_model(rng, tmp_path):
    """An 8-bit map or cohort without its scale, a scale beside a float one, and integers other
    than int8 are refused by name when loaded; the shipped identity model is the 8-bit form."""
    X, y, _, _ = people(rng, n_people=20, d=8)
    plda = quantized(ev.PLDA(n_components=2, pca_components=5).fit(X, y))
    assert plda.pca_ is None and plda.step_.dtype == np.int8
    ev.load(ev.save(plda, tmp_path / "fine.npz"))
    tampered = (
        ("step_scale_", None, "step_ is int8: integers must be int8 with their step_scale_"),
        ("step_", plda.step_.astype(np.int16), "step_ is int16"),
        ("step_", plda.step_.astype(np.float32), "step_scale_ scales an 8-bit step_"),
    )
    for name, value, message in tampered:
        broken = copy.copy(plda)
        setattr(broken, name, value)
        with pytest.raises(ev.ModelFileError, match=message):
            ev.load(saved_unchecked(broken, tmp_path / f"{name}.npz"))
    with pytest.raises(TypeError, match="quantized takes an IdentityModel"):
        quantized(ev.Eigenspace(2).fit(X))
    model = quantized(fitted_with_cohort(rng)[0])
    model.cohort_scale_ = None
    with pytest.raises(ev.ModelFileError, match="cohort_coordinates_ is int8: integers must"):
        ev.load(saved_unchecked(model, tmp_path / "cohort.npz"))

    shipped = ev.default_identity_model("classical")
    assert shipped.cohort_coordinates_.dtype == np.int8
    assert {block.step_.dtype for block in shipped.plda_.models_.values()} == {np.dtype(np.int8)}
    # four descriptions' 8-bit maps, the Fisher vectors' 200 x 17,152 the largest
    assert ev.faces.compare.DEFAULT_IDENTITY.stat().st_size < 10_000_000
