"""The figures: what each draws, read back from the figure."""

import numpy as np


def test_roc_figure_shows_every_operating_point_mark():
    """Regression: plot.roc drew the first six marks and dropped the rest silently (the
    photo_identity figure lost plda's calibrated points)."""
    from eigenvision import plot

    curve = (np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.8, 1.0]))
    marks = {f"method {i}: calibrated": (0.01 * i, 0.9) for i in range(9)}
    figure = plot.roc({"a curve": curve}, marks=marks)
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert labels == ["a curve", *marks]
