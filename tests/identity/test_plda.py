"""PLDA and the Joint Bayesian model against brute-force Gaussian likelihoods."""

import copy

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.base import clone

import eigenvision as ev
from eigenvision.identity import log_likelihood
from tests.conftest import saved_unchecked
from tests.identity.synthetic import MODELS, one_description, people, stacked_pair_ratio


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_the_pair_ratio_is_the_stacked_pairs_gaussian_likelihood_ratio(model, rng):
    """score_pairs against scipy: ``log N([a; b]; 0, [[T, S_b], [S_b, T]]) - log N([a; b];
    0, [[T, 0], [0, T]])`` with the fitted ``S_b = F F^T`` and ``S_w``."""
    X, y, _, _ = people(rng)
    model = clone(model).fit(X, y)
    between = model.identity_loadings_ @ model.identity_loadings_.T
    a, b = model.encode(X[:8]), model.encode(X[8:16])
    brute = stacked_pair_ratio(between, model.within_covariance_, a, b)
    np.testing.assert_allclose(model.score_pairs(X[:8], X[8:16]), brute, rtol=1e-10, atol=1e-9)
    matrix = model.pairwise_scores(X[:8], X[8:16])
    np.testing.assert_allclose(np.diag(matrix), brute, rtol=1e-10, atol=1e-9)
    square = model.pairwise_scores(X[:10])
    np.testing.assert_allclose(square, square.T, atol=1e-10)


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_em_never_lowers_the_marginal_likelihood_which_is_the_stacked_gaussians(model, rng):
    """The log-likelihood EM reports is each person's images stacked, ``N(0, I (x) S_w +
    1 1^T (x) S_b)``, summed (scipy); it never decreases from one iteration to the next."""
    X, y, _, _ = people(rng, n_people=12, per_person=3)
    y[-2:] = [12, 13]  # two people with one image each
    model = clone(model).fit(X, y)
    history = np.array(model.log_likelihood_)
    assert len(history) >= 2
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[:-1]))
    between = model.identity_loadings_ @ model.identity_loadings_.T
    within = model.within_covariance_
    Z = model.encode(X)
    codes = np.unique(y, return_inverse=True)[1]
    brute = 0.0
    for person in np.unique(codes):
        stacked = Z[codes == person].ravel()
        n = int(np.sum(codes == person))
        covariance = np.kron(np.eye(n), within) + np.kron(np.ones((n, n)), between)
        brute += multivariate_normal(np.zeros(len(stacked)), covariance).logpdf(stacked)
    assert log_likelihood(Z, codes, between, within) == pytest.approx(brute, rel=1e-12)
    assert history[-1] == pytest.approx(brute, rel=1e-12)


def test_plda_recovers_the_covariances_it_was_drawn_from(rng):
    X, y, between, within = people(rng, n_people=600, per_person=5, d=5, identity_rank=2)
    model = ev.PLDA(n_components=2).fit(X, y)
    rotation = model.pca_.components_.astype(np.float64)  # back from the PCA step's axes
    found_between = rotation.T @ model.identity_loadings_ @ model.identity_loadings_.T @ rotation
    found_within = rotation.T @ model.within_covariance_ @ rotation
    assert np.linalg.norm(found_between - between) < 0.1 * np.linalg.norm(between)
    assert np.linalg.norm(found_within - within) < 0.1 * np.linalg.norm(within)


def test_identity_models_are_estimators_that_save_and_refuse_bad_input(rng, tmp_path):
    X, y, _, _ = people(rng)
    model = ev.PLDA(n_components=3).fit(X, y)
    assert model.transform(X).shape == (len(X), 3)
    loaded = ev.load(ev.save(model, tmp_path / "plda.npz"))
    np.testing.assert_array_equal(
        loaded.score_pairs(X[:5], X[5:10]), model.score_pairs(X[:5], X[5:10])
    )
    assert clone(ev.JointBayesian(pca_components=4)).get_params() == {
        "length_norm": False,
        "max_iter": 200,
        "pca_components": 4,
        "tol": 1e-7,
    }
    with pytest.raises(ValueError, match="more images .* than people"):
        ev.PLDA().fit(X[::4], y[::4])
    with pytest.raises(ValueError, match="n_components=9 exceeds"):
        ev.PLDA(n_components=9).fit(X, y)
    with pytest.raises(ValueError, match="PLDA.within_components must be an int"):
        ev.PLDA(within_components=0).fit(X, y)
    with pytest.raises(ValueError, match="pairs rows"):
        model.score_pairs(X[:3], X[:4])


def test_length_norm_is_plda_on_whitened_codes_of_one_length(rng, tmp_path):
    """``length_norm``: the codes are the PCA step's, whitened (numpy's eigh of the sample
    covariance), scaled to length ``sqrt(r)`` and centred again, compared as a plain PLDA
    fitted on those codes compares them (the model is the same up to a rotation of the code
    space); a code of zero length stays finite; the model saves and loads."""
    X, y, _, _ = people(rng, n_people=40, d=5)
    X = X * rng.uniform(0.5, 3, size=len(X))[:, None]  # lengths that vary: heavy tails
    model = ev.PLDA(n_components=3, length_norm=True).fit(X, y)
    centred = X - X.mean(axis=0)
    variances, vectors = np.linalg.eigh(np.cov(centred, rowvar=False))
    whitened = centred @ vectors / np.sqrt(variances)
    expected = whitened * np.sqrt(5) / np.linalg.norm(whitened, axis=1, keepdims=True)
    expected -= expected.mean(axis=0)
    codes = model.encode(X)
    np.testing.assert_allclose(
        np.linalg.norm(codes + model.code_mean_, axis=1), np.sqrt(5), rtol=1e-12
    )
    np.testing.assert_allclose(codes @ codes.T, expected @ expected.T, rtol=1e-9, atol=1e-9)
    plain = ev.PLDA(n_components=3, tol=0, max_iter=500).fit(expected, y)
    normalised = ev.PLDA(n_components=3, length_norm=True, tol=0, max_iter=500).fit(X, y)
    np.testing.assert_allclose(
        normalised.score_pairs(X[:10], X[10:20]),
        plain.score_pairs(expected[:10], expected[10:20]),
        rtol=1e-6,
        atol=1e-6,
    )
    identity = normalised.transform(X)
    reference = plain.transform(expected)
    np.testing.assert_allclose(identity @ identity.T, reference @ reference.T, rtol=1e-6, atol=1e-6)
    assert np.isfinite(model.encode(X.mean(axis=0, keepdims=True))).all()
    loaded = ev.load(ev.save(model, tmp_path / "normalised.npz"))
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    np.testing.assert_array_equal(
        loaded.score_pairs(X[:4], X[4:8]), model.score_pairs(X[:4], X[4:8])
    )


def test_lda_step_is_plda_on_scikit_learns_discriminant_codes(rng, tmp_path):
    """``lda_components``: the model compares codes as a length-normalised PLDA fitted on
    scikit-learn's LDA codes (``LinearDiscriminantAnalysis(solver="svd")``) of the PCA
    step's whitened codes compares them: Fisher's directions, each of unit variance, then
    the length normalisation (PLDA is the same up to a rotation of the code space); the
    codes are ``lda_components`` wide, ``transform`` is the posterior mean through both
    steps, the model saves and loads, and a step wider than the people allow is refused."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y, _, _ = people(rng, n_people=40, d=8, identity_rank=4)
    X = X * rng.uniform(0.5, 3, size=len(X))[:, None]
    model = ev.PLDA(
        n_components=3, pca_components=7, lda_components=5, length_norm=True, tol=0, max_iter=500
    ).fit(X, y)
    whitened = ev.Eigenspace(7, whiten=True).fit(X).transform(X)
    discriminant = LinearDiscriminantAnalysis(n_components=5).fit(whitened, y).transform(whitened)
    reference = ev.PLDA(
        n_components=3, pca_components=5, length_norm=True, tol=0, max_iter=500
    ).fit(discriminant, y)
    np.testing.assert_allclose(
        model.score_pairs(X[:30], X[30:60]),
        reference.score_pairs(discriminant[:30], discriminant[30:60]),
        rtol=1e-6,
        atol=1e-6,
    )
    assert model.encode(X).shape == (len(X), 5) and model.lda_.shape == (7, 5)
    plain = ev.PLDA(n_components=3, pca_components=7, lda_components=5).fit(X, y)
    step = plain.pca_.transform(X).astype(np.float64) @ plain.lda_
    np.testing.assert_allclose(
        plain.transform(X), (step - step.mean(axis=0)) @ plain._posterior().T, atol=1e-9
    )
    loaded = ev.load(ev.save(model, tmp_path / "lda.npz"))
    np.testing.assert_array_equal(
        loaded.score_pairs(X[:4], X[4:8]), model.score_pairs(X[:4], X[4:8])
    )
    with pytest.raises(ValueError, match="lda_components=40 exceeds min"):
        ev.PLDA(pca_components=7, lda_components=40).fit(X, y)
    with pytest.raises(ValueError, match="n_components=6 exceeds the LDA step's 5 dimensions"):
        ev.PLDA(n_components=6, pca_components=7, lda_components=5).fit(X, y)


@pytest.mark.parametrize(
    "model",
    [
        ev.PLDA(n_components=3, pca_components=30, lda_components=5, length_norm=True),
        ev.PLDA(n_components=3, pca_components=12),
        ev.JointBayesian(pca_components=10, length_norm=True),
    ],
    ids=["lda+length_norm", "pca", "joint_bayesian"],
)
def test_a_compact_plda_scores_as_fitted_from_one_map(rng, tmp_path, model):
    """``compact()`` replaces the PCA (and LDA) step by their product ``step_``: the codes,
    the transform and the pair scores are the fitted model's; the step is checked against
    the two steps by hand; the file is smaller, loads and scores the same; a compact model
    is returned as it is, and a file with both forms, or neither, is refused."""
    X, y, _, _ = people(rng, n_people=40, d=60, identity_rank=4)
    fitted = clone(model).fit(X, y)
    compact = fitted.compact()
    assert compact.pca_ is None and compact.lda_ is None and fitted.pca_ is not None
    by_hand = fitted.pca_.components_ / np.sqrt(fitted.pca_.explained_variance_)[:, None]
    if not fitted.pca_.whiten:
        by_hand = fitted.pca_.components_
    if fitted.lda_ is not None:
        by_hand = fitted.lda_.T @ by_hand
    np.testing.assert_allclose(compact.step_, by_hand, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compact.encode(X), fitted.encode(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(compact.transform(X), fitted.transform(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        compact.score_pairs(X[:40], X[40:80]),
        fitted.score_pairs(X[:40], X[40:80]),
        rtol=1e-9,
        atol=1e-9,
    )
    small = ev.save(compact, tmp_path / "compact.npz")
    large = ev.save(fitted, tmp_path / "fitted.npz")
    if fitted.lda_ is not None:  # s x d components against r x d
        assert small.stat().st_size < large.stat().st_size
    loaded = ev.load(small)
    np.testing.assert_array_equal(loaded.encode(X[:5]), compact.encode(X[:5]))
    assert compact.compact().step_ is compact.step_
    both = compact.compact()
    both.pca_ = fitted.pca_
    with pytest.raises(ValueError, match="holds both"):
        ev.load(ev.save(both, tmp_path / "both.npz"))
    neither = compact.compact()
    neither.step_ = None
    with pytest.raises(ValueError, match="holds neither"):
        ev.load(ev.save(neither, tmp_path / "neither.npz"))
    with pytest.raises(ValueError, match="X has 5 features"):
        compact.encode(X[:, :5])


def test_plda_saves_without_its_transform_map_and_reads_files_that_hold_it(rng, tmp_path):
    """``components_`` (as large as the PCA step) is made on demand from the loadings, not
    saved: the file holds no such member, the map made after loading equals the one fit made
    (the posterior mean of the identity variable, checked by hand), and a file written
    before (the member saved) loads to the same transform."""
    import zipfile

    from tests.conftest import written_in_format

    X, y, _, _ = people(rng)
    model = ev.PLDA(n_components=3).fit(X, y)
    F, within = model.identity_loadings_, model.within_covariance_
    posterior = np.linalg.inv(np.eye(3) + F.T @ np.linalg.inv(within) @ F) @ F.T
    posterior = posterior @ np.linalg.inv(within)
    expected = posterior @ model.pca_.components_
    np.testing.assert_allclose(model.components_, expected, rtol=1e-9, atol=1e-12)
    path = ev.save(model, tmp_path / "plda.npz")

    def own_map(name):
        return "components_" in name and "pca_" not in name

    assert not [name for name in zipfile.ZipFile(path).namelist() if own_map(name)]
    loaded = ev.load(path)
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    older = clone(model).fit(X, y)
    older.__dict__["components_"] = older.components_  # saved as a member, as files were
    former_path = written_in_format(saved_unchecked(older, tmp_path / "former.npz"), 1)
    assert [name for name in zipfile.ZipFile(former_path).namelist() if own_map(name)]
    former = ev.load(former_path)  # the member dropped on reading (_migrations.DERIVED)
    np.testing.assert_array_equal(former.components_, model.components_)
    np.testing.assert_array_equal(former.transform(X), model.transform(X))


def test_a_saved_model_scores_in_its_own_pair_basis_whatever_the_eigensolver_gives(
    rng, tmp_path, monkeypatch
):
    """The cohort is kept in pair coordinates, so the basis they are in is kept with the model
    (``pair_basis_``): a model read where the eigensolver gives its vectors other signs (BLAS
    builds and thread counts do) scores as it did where it was saved."""
    from eigenvision import identity

    X, labels, _, _ = people(rng, n_people=30, per_person=3)
    model = ev.IdentityModel(
        one_description(), pca_components=6, n_components=3, cohort_size=10, cohort_top=4
    ).fit_descriptors(X, labels)
    codes = model.plda_.encode(X[:9])
    expected = model.pairwise_log_odds(codes, codes)
    path = ev.save(model, tmp_path / "model.npz")
    eigh = identity.plda.linalg.eigh

    def other_signs(*args, **kwargs):
        values, vectors = eigh(*args, **kwargs)
        return values, vectors * np.where(np.arange(vectors.shape[1]) % 2, -1.0, 1.0)

    monkeypatch.setattr(identity.plda.linalg, "eigh", other_signs)
    loaded = ev.load(path)
    np.testing.assert_allclose(loaded.pairwise_log_odds(codes, codes), expected, rtol=1e-12)
    np.testing.assert_array_equal(loaded.plda_.pair_basis_, model.plda_.pair_basis_)


def test_a_pair_basis_that_does_not_diagonalise_the_covariances_is_refused(rng, tmp_path):
    """``pair_basis_`` is read, not solved again, when a model is loaded: a basis of the right
    shape whose coordinates are not the covariances' (another model's, or tampered) would
    score every pair wrongly, so it is refused by name; the model's own passes."""
    from eigenvision.validation import check_state

    X, labels, _, _ = people(rng, n_people=20, per_person=3)
    model = ev.PLDA(n_components=3).fit(X, labels)
    check_state(model)
    model.pair_basis_ = model.pair_basis_ * 1.01  # V^T S_w V = 1.02 I
    with pytest.raises(ValueError, match="pair_basis_ does not make its covariances diagonal"):
        check_state(model)
    model.pair_basis_ = model.pair_basis_[:, ::-1] / 1.01  # another order: still diagonal
    check_state(model)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    model.pair_basis_ = model.pair_basis_ @ rotation  # V^T S_w V = I, V^T S_b V not diagonal
    with pytest.raises(ev.ModelFileError, match="pair_basis_"):
        ev.load(saved_unchecked(model, tmp_path / "rotated.npz"))


def test_plda_and_joint_bayesian_fit_data_with_constant_pixels():
    """Regression (hardening round 4): ``ev.PLDA(5).fit(digits.data, digits.target)`` ended in
    NumPy's "Matrix is not positive definite" (3 of the 64 pixels are constant, so the default
    PCA step kept null directions). The PCA step now stops at the data's numerical rank, and a
    singular step the user asked for is refused with what to change."""
    from sklearn.datasets import load_digits
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    digits = load_digits()
    X, y = digits.data, digits.target
    rank = np.linalg.matrix_rank(X - X.mean(axis=0))
    for model in (ev.PLDA(5), ev.JointBayesian()):
        model.fit(X[::2], y[::2])
        assert model.pca_.n_components_ == rank < 64
        # a usable model: nearest class mean in its codes beats chance by far, near LDA's
        codes = model.transform(X)
        means = np.stack([codes[::2][y[::2] == c].mean(axis=0) for c in range(10)])
        nearest = np.argmin(((codes[1::2, None] - means) ** 2).sum(-1), axis=1)
        lda = LinearDiscriminantAnalysis().fit(X[::2], y[::2]).score(X[1::2], y[1::2])
        assert np.mean(nearest == y[1::2]) > lda - 0.1
    with pytest.raises(ValueError, match="within-person covariance .* singular.*pca_components"):
        ev.PLDA(5, pca_components=64).fit(X, y)


def test_pair_scores_refuse_nan_codes(rng):
    """Regression (hardening round 4): ``pairwise_log_odds`` of NaN codes returned NaN."""
    faces, labels = rng.random((24, 6, 5)), np.repeat(np.arange(6), 4)
    model = ev.PLDA(2, max_iter=3).fit(faces, labels)
    codes = model.encode(faces.reshape(24, -1))
    broken = codes.copy()
    broken[0, 0] = np.nan
    with pytest.raises(ValueError, match="codes hold NaN"):
        model.pairwise_log_odds(broken, codes)


def test_a_plda_file_from_before_its_pair_basis_is_refused_and_its_old_forms_dropped(rng, tmp_path):
    """Issue 77: a format 1 PLDA file holding its pair ratio's forms (``quadratic_``,
    ``cross_``, ``offset_``) loads with them dropped and made again from the covariances; one
    without ``pair_basis_`` (which the ratio read through a runtime branch) is refused."""
    from tests.conftest import written_in_format

    X, y, _, _ = people(rng)
    model = ev.PLDA(n_components=3).fit(X, y)
    older = copy.copy(model)
    for name in ("quadratic_", "cross_", "offset_"):
        older.__dict__[name] = np.asarray(getattr(model, name))  # saved members, as files were
    loaded = ev.load(written_in_format(saved_unchecked(older, tmp_path / "forms.npz"), 1))
    codes = model.encode(X[:4])
    np.testing.assert_array_equal(
        loaded.pairwise_log_odds(codes, codes), model.pairwise_log_odds(codes, codes)
    )
    assert "quadratic_" not in vars(loaded)
    no_basis = copy.copy(model)
    del no_basis.pair_basis_
    path = written_in_format(saved_unchecked(no_basis, tmp_path / "no_basis.npz"), 1)
    with pytest.raises(ev.ModelFileError, match="kept pair_basis_; train the model again"):
        ev.load(path)
