"""Stage 3 of the photo pipeline, candidates moved to their best window (faces.refine)."""

from __future__ import annotations

import numpy as np
import pytest

from eigenvision.faces import photos
from eigenvision.normalize import to_gray


def test_a_refinement_round_keeps_each_candidates_best_window_of_27(finder):
    """One round of ``refine``, against a brute-force loop: every shift of (-0.15, 0, 0.15)
    IOD in x and y and scale of 2 ** (-0.25, 0, 0.25) about the eyes' midpoint, one window at a
    time; the best one is kept only where it beats the candidate's own score."""
    from eigenvision.faces.refine import REFINEMENT, refine

    small = to_gray(photos.sample_picture("astronaut"))
    candidates = finder.search.candidates(small, 200)
    scores = finder.decision.decision_function(finder.decision.windows(small, candidates))
    best = np.argsort(-scores)[:6]
    chosen, own = [candidates[i] for i in best], scores[best]
    own[-1] = 50.0  # a score no window beats: the candidate stays where it is
    moved, values = refine(
        finder.decision.candidate_scores, small, chosen, own, rounds=REFINEMENT[:1]
    )
    for (left, right, dffs), score, (new_left, new_right, new_dffs), value in zip(
        chosen, own, moved, values, strict=True
    ):
        left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
        centre, half = (left + right) / 2, (right - left) / 2
        iod = 2 * np.hypot(*half)
        trials = []
        for dx in (-0.15, 0.0, 0.15):
            for dy in (-0.15, 0.0, 0.15):
                for e in (-0.25, 0.0, 0.25):
                    middle = centre + np.array([dx, dy]) * iod
                    trials.append((middle - half * 2.0**e, middle + half * 2.0**e))
        trial_scores = [
            finder.decision.decision_function(finder.decision.windows(small, [(a, b, 0.0)]))[0]
            for a, b in trials
        ]
        # scored one window at a time here and in a batch there: another BLAS may order
        # windows within round-off of the best (or of the candidate's own score) otherwise
        tie = 1e-6 * max(1.0, abs(max(trial_scores)))
        top = max(trial_scores)
        if top > score + tie:
            kept = [t for t, v in zip(trials, trial_scores, strict=True) if v >= top - tie]
            assert any(
                np.allclose(np.r_[new_left, new_right], np.r_[trial], atol=1e-9) for trial in kept
            )
            assert value == pytest.approx(top, abs=tie)
        elif top < score - tie:
            np.testing.assert_array_equal(np.r_[new_left, new_right], np.r_[left, right])
            assert value == pytest.approx(score, abs=tie)
        else:  # the best window and the candidate's own score are one round-off apart
            assert value == pytest.approx(max(score, top), abs=tie)
        assert new_dffs == dffs
    # some moved (how many rests on the last bits of the network's scores, machine by machine)
    assert values[-1] == 50.0 and np.sum(values[:-1] > own[:-1]) >= 2
