"""check_state: a fitted model's parameters, members and their relations, down its parts."""

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.validation import check_state


def _recognizer(rng):
    faces = rng.random((12, 6, 5))
    return ev.Recognizer(4).fit(faces, np.repeat(np.arange(4), 3))


def test_a_fitted_model_passes_and_its_tampered_parts_are_named(rng):
    """The check reaches into the parts a model holds: a recogniser's encoder and the
    eigenspace inside it, each named where it goes wrong."""
    recognizer = _recognizer(rng)
    check_state(recognizer)
    recognizer.encoder_.feature_.components_[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"Eigenspace\.components_ holds NaN"):
        check_state(recognizer)


@pytest.mark.parametrize(
    "tamper, match",
    [
        (lambda r: setattr(r, "gallery_", r.gallery_[:, :2]), "gallery_"),
        (lambda r: setattr(r.encoder_, "block_scales_", np.array([-1.0])), "block_scales_"),
        (lambda r: setattr(r, "n_components", 3), "encoder's n_components"),
        (lambda r: setattr(r, "threshold", float("nan")), "threshold"),
    ],
)
def test_relations_between_members_are_checked(rng, tamper, match):
    """Members that pass on their own but disagree with each other: codes narrower than the
    features give, a negative block scale, an encoder fitted with other parameters than its
    recogniser's, a NaN threshold."""
    recognizer = _recognizer(rng)
    tamper(recognizer)
    with pytest.raises(ValueError, match=match):
        check_state(recognizer)
