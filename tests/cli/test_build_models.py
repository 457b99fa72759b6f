"""``eigenvision build-models``: the shipped models rebuilt."""

import numpy as np

import eigenvision as ev
from eigenvision.identity.describe import FaceDescriber


def test_build_models_names_each_description_s_plda_rank():
    """Regression: build-models said "PLDA of rank 200" for two PLDA models of rank 100, one per
    description of the crop (illumination="both"); one model keeps its one rank."""
    from eigenvision.cli.build_models import _identity_summary

    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(20, 2 * 576)) * 3, 3, axis=0) + rng.normal(size=(60, 2 * 576))
    people = np.repeat(np.arange(20), 3)
    options = {"pca_components": 4, "n_components": 2, "cohort_size": 0}
    # pixels of 24 x 24 crops: each description 576 columns wide
    pixels = dict(shape=(24, 24), descriptor="pixels", descriptor_scales=(1.0,), mirror=False)
    both = ev.IdentityModel(FaceDescriber(illumination="both", **pixels), **options)
    both.fit_descriptors(X, people)
    one = ev.IdentityModel(FaceDescriber(illumination=True, **pixels), **options)
    one.fit_descriptors(X, people)
    assert _identity_summary(both) == "2 PLDA models, one per description, of ranks 2, 2"
    assert _identity_summary(one) == "PLDA of rank 2"
