"""The metrics each method's codes allow."""

import pytest

import eigenvision as ev


@pytest.mark.parametrize("method", ["eigenfaces", "fisherfaces", "bayesian"])
def test_allowed_metrics_are_the_ones_check_parameters_accepts(method):
    """The app and the CLI offer allowed_metrics(method): exactly what the recognizer takes."""
    from eigenvision.codes import allowed_metrics
    from eigenvision.neighbors import METRICS

    accepted = []
    for metric in METRICS:
        try:
            ev.Recognizer(method=method, metric=metric).check_parameters()
            accepted.append(metric)
        except ValueError:
            pass
    assert tuple(accepted) == allowed_metrics(method)
    assert ("mahalanobis" in accepted) == (method == "eigenfaces")
