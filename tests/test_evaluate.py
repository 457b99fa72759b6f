import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics

import eigenvision as ev
from eigenvision import evaluate, openset


@pytest.mark.parametrize("seed", range(5))
def test_roc_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.random(200) < 0.3
    scores = np.round(rng.normal(size=200) + y, 1)  # rounding makes ties
    fpr, tpr, thr = evaluate.roc_curve(y, scores)
    sk_fpr, sk_tpr, sk_thr = metrics.roc_curve(y, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_allclose(thr[1:], sk_thr[1:])
    assert evaluate.auc(fpr, tpr) == pytest.approx(metrics.roc_auc_score(y, scores))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(-5, 5)), min_size=2, max_size=60))
def test_roc_properties(pairs):
    y = np.array([p[0] for p in pairs])
    scores = np.array([p[1] for p in pairs])
    if y.all() or not y.any():
        return
    fpr, tpr, _ = evaluate.roc_curve(y, scores)
    assert (fpr[0], tpr[0]) == (0, 0) and (fpr[-1], tpr[-1]) == (1, 1)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    perfect = evaluate.roc_curve(y, y.astype(float))
    assert evaluate.auc(perfect[0], perfect[1]) == 1.0


def test_degenerate_roc_warns_and_gives_nan():
    with pytest.warns(RuntimeWarning, match="0 negatives"):
        fpr, tpr, _ = evaluate.roc_curve([1, 1], [0.2, 0.5])
    assert np.isnan(fpr).all() and tpr[-1] == 1


def test_eer():
    fpr, tpr, thr = evaluate.roc_curve([0, 0, 0, 0, 1, 1, 1, 1], [1, 2, 3, 6, 4, 5, 7, 8])
    rate, _ = evaluate.eer(fpr, tpr, thr)
    assert rate == pytest.approx(0.25)


def test_rank_curve_and_rates():
    truth = np.array(["a", "b", "c"])
    neighbours = np.array([["a", "b", "c"], ["a", "a", "b"], ["b", "a", "a"]])
    np.testing.assert_allclose(evaluate.rank_curve(truth, neighbours), [1 / 3, 2 / 3, 2 / 3])
    assert evaluate.recognition_rate(truth, np.array(["a", "x", "c"])) == pytest.approx(2 / 3)


def test_cross_validate_schemes(rng):
    centres = rng.random((3, 6, 5))
    images = np.concatenate([c + 0.02 * rng.normal(size=(6, 6, 5)) for c in centres])
    data = ev.ImageSet(images, np.repeat(["a", "b", "c"], 6))
    model = ev.Recognizer(n_components=3)
    assert evaluate.cross_validate(model, data, scheme="kfold", n_splits=3).tolist() == [1.0] * 3
    assert len(evaluate.cross_validate(model, data, scheme="loo")) == 18
    assert evaluate.cross_validate(model, data, scheme="first_k_per_class", k=3)[0] == 1.0
    with pytest.raises(ValueError, match="scheme"):
        evaluate.cross_validate(model, data, scheme="bootstrap")


def test_detection_roc_matches_a_loop_over_thresholds(rng):
    from eigenvision.evaluate import detection_rate_at, detection_roc

    minima = rng.random(200).round(2)  # ties
    minima[:5] = np.inf  # images where nothing was searched
    errors = rng.random(200) * 0.3
    alarms, detections, thresholds = detection_roc(minima, errors, radius=0.1)
    assert thresholds[0] == -np.inf and np.all(np.diff(thresholds) > 0)
    for alpha, fa, det in zip(thresholds, alarms, detections, strict=True):
        below = minima <= alpha
        assert det == np.mean(below & (errors <= 0.1))
        assert fa == np.mean(below & (errors > 0.1))
    best = max(d for f, d in zip(alarms, detections, strict=True) if f <= 0.06)
    assert detection_rate_at(minima, errors, false_alarm=0.06) == best
    with pytest.raises(ValueError, match="empty"):
        detection_roc([], [])


def test_eye_error_is_jesorsky_relative_error():
    from eigenvision.evaluate import error_fractions, eye_error

    true_left, true_right = (
        np.array([[0.0, 0.0], [10.0, 5.0]]),
        np.array([[100.0, 0.0], [50.0, 5.0]]),
    )
    left = true_left + [[3.0, 4.0], [0.0, 0.0]]
    right = true_right + [[1.0, 0.0], [0.0, 8.0]]
    np.testing.assert_allclose(eye_error(left, right, true_left, true_right), [0.05, 0.2])
    assert error_fractions([0.05, 0.2]) == {0.05: 0.5, 0.1: 0.5, 0.25: 1.0}


def test_long_loops_show_a_bar_on_a_terminal_and_lines_in_a_log(monkeypatch, rng):
    """Regression: leave-one-out evaluation (3 min 42 s on AT&T) printed nothing until done;
    off a terminal (a log, CI) it printed nothing at all (issue 44): now a line per fold."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    faces = ev.ImageSet(rng.random((12, 4, 4)).astype(np.float32), np.repeat([0, 1, 2], 4))
    terminal, log = Terminal(), io.StringIO()
    for stream in (terminal, log):
        monkeypatch.setattr(sys, "stderr", stream)
        rates = ev.evaluate.cross_validate(ev.Recognizer(3), faces, scheme="loo", progress=True)
        assert len(rates) == 12
    assert "folds" in terminal.getvalue() and "\r" in terminal.getvalue()  # one redrawn bar
    assert log.getvalue().splitlines() == [f"folds: {i}/12" for i in range(1, 13)]
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    ev.evaluate.cross_validate(ev.Recognizer(3), faces, scheme="loo")  # progress off by default
    assert quiet.getvalue() == ""


def test_open_set_roc_equals_a_threshold_loop():
    rng = np.random.default_rng(0)
    genuine = np.round(rng.normal(1.0, 1.0, 300), 1)  # rounded: ties between and within sets
    correct = rng.random(300) < 0.9
    impostor = np.round(rng.normal(-1.0, 1.0, 200), 1)
    far, dir_, thresholds = evaluate.open_set_roc(genuine, correct, impostor)
    assert thresholds[0] == np.inf and np.all(np.diff(thresholds) < 0)
    for t, f, d in zip(thresholds, far, dir_, strict=True):
        assert f == np.mean(impostor >= t)
        assert d == np.mean((genuine >= t) & correct)
    assert far[-1] == 1.0 and dir_[-1] == correct.mean()
    # rate_at: the best detection-and-identification rate within the false-alarm budget
    for target in (0.0, 0.01, 0.1, 0.5):
        expected = max(
            np.mean((genuine >= t) & correct)
            for t in np.r_[np.inf, genuine, impostor]
            if np.mean(impostor >= t) <= target
        )
        assert evaluate.rate_at(far, dir_, target) == expected
    with pytest.raises(ValueError, match="NaN"):
        evaluate.open_set_roc([np.nan], [True], [0.0])
    with pytest.raises(ValueError, match="impostor"):
        evaluate.open_set_roc([1.0], [True], [])


def test_threshold_at_accepts_at_most_the_allowed_impostors():
    rng = np.random.default_rng(1)
    scores = np.round(rng.normal(size=250), 1)  # ties
    for far in (0.0, 0.004, 0.01, 0.1, 0.5):
        t = openset.threshold_at(scores, far)
        accepted = np.mean(scores >= t)
        assert accepted <= far
        # and no lower threshold among the scores keeps within the budget
        lower = scores[scores < t]
        assert lower.size == 0 or np.mean(scores >= lower.max()) > far
    with pytest.raises(ValueError, match="far"):
        openset.threshold_at(scores, 1.0)


def test_face_detection_roc_leaves_out_the_detections_of_unannotated_faces(rng):
    """Against a loop over every threshold: a detection finds the annotated face (a hit), an
    unannotated one (neither) or nothing (a false alarm); without ``others`` every detection
    that is no hit is a false alarm."""
    truths, found, others = [], [], []
    for _ in range(6):
        centre = rng.uniform(100, 300, size=2)
        truths.append((centre, 40.0))
        face = (centre[0] - 43.0, centre[1] - 43.0, 86.0, 88.0)  # centred, 2.15 IOD wide
        other = (centre[0] + 150.0, centre[1], 80.0, 80.0)
        others.append(np.array([other]))
        kinds = rng.choice(["hit", "other", "alarm"], size=5)
        boxes = {"hit": face, "other": other, "alarm": (0.0, 0.0, 30.0, 30.0)}
        found.append(
            [
                (boxes[kind], float(score))
                for kind, score in zip(kinds, rng.normal(size=5), strict=True)
            ]
        )
    for listed in (others, None):
        alarms, rate, thresholds = evaluate.face_detection_roc(found, truths, listed)
        for a, r, t in zip(alarms[1:], rate[1:], thresholds[1:], strict=True):
            hits = sum(
                any(s >= t and evaluate.face_found(b, c, iod) for b, s in detections)
                for detections, (c, iod) in zip(found, truths, strict=True)
            )
            false = sum(
                s >= t
                and not evaluate.face_found(b, c, iod)
                and (listed is None or not evaluate.finds_a_face_of(b, o))
                for detections, (c, iod), o in zip(found, truths, others, strict=True)
                for b, s in detections
            )
            assert (r, a) == (hits / 6, false / 6)
    assert (
        evaluate.face_detection_roc(found, truths, others)[0][-1]
        < evaluate.face_detection_roc(found, truths)[0][-1]
    )
    with pytest.raises(ValueError, match="others"):
        evaluate.face_detection_roc(found, truths, others[:2])


def test_roc_summaries_refuse_what_is_no_roc_curve():
    """Regression (hardening round 4): ``auc`` of a curve with NaN was NaN; ``eer([], [])``
    ended in NumPy's "argmax of an empty sequence"."""
    for fpr, tpr in (([0.0, np.nan, 1.0], [0.0, 0.5, 1.0]), ([], []), ([0.0, 2.0], [0.0, 1.0])):
        for summary in (evaluate.auc, evaluate.eer):
            with pytest.raises(ValueError, match="fpr and tpr must be"):
                summary(fpr, tpr)


def test_roc_curve_refuses_labels_it_cannot_read():
    """Regression: multiclass, {-1, 1} and string labels were cast to bool silently."""
    scores = [0.1, 0.4, 0.35, 0.8]
    with pytest.raises(ValueError, match="3 classes"):
        evaluate.roc_curve([0, 1, 2, 1], scores)
    with pytest.raises(ValueError, match="pos_label"):
        evaluate.roc_curve(["cat", "dog", "dog", "cat"], scores)
    # {-1, 1}: 1 is positive (scikit-learn's rule), not "non-zero is positive"
    fpr, tpr, _ = evaluate.roc_curve([-1, -1, 1, 1], scores)
    expected = evaluate.roc_curve([0, 0, 1, 1], scores)
    np.testing.assert_array_equal(fpr, expected[0])
    np.testing.assert_array_equal(tpr, expected[1])
    fpr, tpr, _ = evaluate.roc_curve(["cat", "dog", "dog", "cat"], scores, pos_label="dog")
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    ref = sklearn_metrics.roc_curve(
        ["cat", "dog", "dog", "cat"], scores, pos_label="dog", drop_intermediate=False
    )
    np.testing.assert_allclose(fpr, ref[0])
    np.testing.assert_allclose(tpr, ref[1])
