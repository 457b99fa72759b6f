"""Data drawn from known identity models, and small models, for the identity tests."""

import copy

import numpy as np
from scipy.stats import multivariate_normal

import eigenvision as ev
from eigenvision.identity.describe import FaceDescriber


def one_description():
    """One description of a crop, one PLDA model: descriptor rows of any width fit."""
    return FaceDescriber(descriptor="daisy", illumination=True)


def people(rng, n_people=30, per_person=4, d=6, identity_rank=3):
    """Codes drawn from the identity model: ``x = F h + e``, known ``S_b`` and ``S_w``."""
    loadings = rng.normal(size=(d, identity_rank))
    between = loadings @ loadings.T
    shape = rng.normal(size=(d, d)) * 0.5
    within = shape @ shape.T + 0.1 * np.eye(d)
    people = rng.multivariate_normal(np.zeros(d), between, size=n_people)
    noise = rng.multivariate_normal(np.zeros(d), within, size=n_people * per_person)
    X = np.repeat(people, per_person, axis=0) + noise
    return X, np.repeat(np.arange(n_people), per_person), between, within


def stacked_pair_ratio(between, within, a, b):
    """``log N([a; b]; 0, [[T, S_b], [S_b, T]]) - log N([a; b]; 0, [[T, 0], [0, T]])`` of each
    pair (scipy), ``T = S_b + S_w``: the same-identity against the different-identity model."""
    total = between + within
    zero = np.zeros_like(total)
    same = multivariate_normal(
        np.zeros(2 * len(total)), np.block([[total, between], [between, total]])
    )
    apart = multivariate_normal(np.zeros(2 * len(total)), np.block([[total, zero], [zero, total]]))
    return [same.logpdf(np.r_[u, v]) - apart.logpdf(np.r_[u, v]) for u, v in zip(a, b, strict=True)]


MODELS = [
    ev.PLDA(n_components=3),
    ev.PLDA(n_components=3, length_norm=True),
    ev.PLDA(n_components=2, within_components=2, max_iter=60),
    ev.JointBayesian(),
]


def two_descriptions(**options):
    """An identity model of two small descriptions of 24 x 24 crops: pixels, and LBP of the
    normalised crop (576 and 40 columns)."""
    return ev.IdentityModel(
        FaceDescriber(
            shape=(24, 24),
            descriptor=("pixels", "lbp"),
            illumination=(False, True),
            lbp_cells=(2, 2),
            lbp_radii=(1,),
            descriptor_scales=(1.0,),
            mirror=False,
        ),
        **options,
    )


def as_stored(model, quantised):
    """``model`` with its maps and cohort replaced by ``quantised``'s, multiplied out by hand in
    float64: what the 8-bit form should score as."""
    by_hand = copy.deepcopy(model)
    pairs = zip(by_hand.plda_.models_.values(), quantised.plda_.models_.values(), strict=True)
    for block, small in pairs:
        block.step_ = small.step_.astype(np.float64) * small.step_scale_.astype(np.float64)[:, None]
    scale = quantised.cohort_scale_.astype(np.float64)
    by_hand.cohort_coordinates_ = quantised.cohort_coordinates_.astype(np.float64) * scale
    return by_hand


def fitted_with_cohort(rng):
    """A small two-description identity model with a cohort, its training rows and people."""
    model = two_descriptions(
        pca_components=6, lda_components=4, n_components=2, cohort_size=20, cohort_top=5
    )
    X, y, _, _ = people(rng, n_people=40, d=sum(model.description_widths()))
    return model.fit_descriptors(X, y), X, y
