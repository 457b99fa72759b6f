"""The labelled image set and the one label check every labelled input passes."""

import numpy as np
import pytest

import eigenvision as ev
from eigenvision.imageset import check_labels


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ([None, 1, 2, 3] * 5, "label 0 is None"),
        ([1, "a"] * 10, "labels mix number and text"),
        ([1.0, np.nan] * 10, "label 1 is nan"),
        (np.zeros((20, 1)), r"shape \(n,\)"),
        (np.arange(19), r"19 for 20 samples|inconsistent numbers of samples: \[20, 19\]"),
    ],
)
def test_fit_refuses_labels_that_cannot_be_told_apart(labels, message, rng):
    """Regression (hardening round 4): None labels ended in "'<' not supported between
    'NoneType' and 'NoneType'" and mixed ints and strings were taken (1 and "1" became one
    person); every labelled fit now says which label is wrong."""
    faces = rng.random((20, 6, 5))
    for fit in (
        lambda: ev.FisherSpace().fit(faces, labels),
        lambda: ev.PLDA(2, max_iter=2).fit(faces, labels),
        lambda: ev.ImageSet(faces, labels),
    ):
        with pytest.raises(ValueError, match=message):
            fit()


def test_check_labels_keeps_one_kind_as_numpy_holds_it():
    assert check_labels(["b", "a"]).tolist() == ["b", "a"]
    assert check_labels(np.array([3, 1], dtype=object)).dtype.kind == "i"
    assert check_labels((1.5, 2)).dtype.kind == "f"
    assert check_labels(np.array(["x", "y"])).dtype.kind == "U"


@pytest.mark.parametrize(
    "make",
    [
        lambda X: ev.Eigenspace(3).fit(X),
        lambda X: ev.KernelPCA(3).fit(X),
        lambda X: ev.PixelStandardizer().fit(X),
        lambda X: ev.ProbabilisticPCA(2).fit(X.reshape(len(X), -1)),
    ],
)
def test_transform_of_an_empty_set_says_so(make, rng):
    """Regression: transform of a (0, H, W) set failed in NumPy ("cannot reshape array of
    size 0 into shape (0,newaxis)")."""
    model = make(rng.random((20, 6, 5)))
    with pytest.raises(ValueError, match="0 sample|no samples"):
        model.transform(np.empty((0, 6, 5)))
