"""One declaration per model: parameters and fitted state, read by fit and load.

Every float member of every savable class (the shipped finder's too) is
tampered with in a model file: made infinite, made integer, made strings,
left out; ``load`` must refuse each with a ``ModelFileError`` naming it.
"""

import io
import json
import warnings
import zipfile

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import evaluate, persist
from eigenvision._spec import Param, State, check_declared_state, check_params
from eigenvision.faces.photos import DEFAULT_FINDER


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _header(members):
    return json.loads(np.load(io.BytesIO(members["__header__.npy"])).tobytes())


def _npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _written(members, header, path):
    """A model file as save() writes one (stored, not compressed), with ``header``."""
    members = {**members, "__header__.npy": _npy(np.frombuffer(json.dumps(header).encode(), "u1"))}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _replaced(members, header, key, array):
    """``members`` and ``header`` with member ``key`` replaced by ``array`` (header agreeing)."""
    header = json.loads(json.dumps(header))
    header["arrays"][key] = [array.dtype.str, list(array.shape)]
    return {**members, f"{key}.npy": _npy(array)}, header


def _float_members(header):
    return [key for key, (dtype, _) in header["arrays"].items() if np.dtype(dtype).kind == "f"]


def _declared_optional(model, key):
    """Whether the model file member ``key`` (``"pca_/mean_"``) is optional in its owner's table."""
    *path, member = key.split("/")
    owner = model
    for part in path:
        owner = owner[part] if isinstance(owner, dict) else getattr(owner, part)
    return type(owner)._state[member].optional


def _small_models(rng):
    faces = rng.random((24, 6, 5))
    labels = np.repeat(np.arange(6), 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Bayesian calibration's "too few people"
        return {
            "eigenspace": ev.Eigenspace(3).fit(faces),
            "fisher": ev.FisherSpace(2).fit(faces, labels),
            "bayesian": ev.BayesianSpace(3).fit(faces, labels),
            "kernel": ev.KernelPCA(3).fit(faces.reshape(24, -1)),
            "nystroem": ev.KernelPCA(3, n_landmarks=10).fit(faces.reshape(24, -1)),
            "ppca": ev.ProbabilisticPCA(2).fit(faces.reshape(24, -1)),
            "standardizer": ev.PixelStandardizer().fit(faces.reshape(24, -1)),
            "plda": ev.PLDA(2, within_components=1, max_iter=5).fit(faces, labels),
            "plda + lda": ev.PLDA(2, pca_components=8, lda_components=4, max_iter=5).fit(
                faces, labels
            ),
            "joint bayesian": ev.JointBayesian(pca_components=5, max_iter=5).fit(faces, labels),
            "recognizer": ev.Recognizer(3, score_norm="znorm").fit(faces, labels),
            "bayesian recognizer": ev.Recognizer(3, method="bayesian").fit(faces, labels),
        }


def test_every_float_member_of_every_model_is_refused_when_tampered(tmp_path, rng):
    """Infinite, NaN, huge (1e200), strings, of another shape or missing: each float member is
    named. Regression (hardening round 4): finite huge members loaded and answered NaN,
    infinity or one name for everyone (a PLDA's ``pca_`` x 1e200, a recogniser's
    ``block_scales_`` x 1e200)."""
    for name, model in _small_models(rng).items():
        good = ev.save(model, tmp_path / "good.npz")
        members, header = _members(good), _header(_members(good))
        keys = _float_members(header)
        assert keys, name
        for key in keys:
            original = np.load(io.BytesIO(members[f"{key}.npy"]))
            member = key.rsplit("/", 1)[-1]
            flat = original.astype(np.float64).ravel()
            first = np.arange(flat.size) == 0
            for array in (
                np.where(first, np.inf, flat),
                np.where(first, np.nan, flat),
                np.where(first, 1e200, flat),  # finite, but its square is not
                np.full(flat.size, "1.0"),
            ):
                bad = _written(
                    *_replaced(members, header, key, array.reshape(original.shape)),
                    tmp_path / "bad.npz",
                )
                with pytest.raises(ev.ModelFileError, match=member):
                    ev.load(bad)
            wrong = _written(*_replaced(members, header, key, original[None]), tmp_path / "bad.npz")
            with pytest.raises(ev.ModelFileError, match=member):
                ev.load(wrong)
            if _declared_optional(model, key):
                continue
            header_without = json.loads(json.dumps(header))
            del header_without["arrays"][key]
            without = {k: v for k, v in members.items() if k != f"{key}.npy"}
            with pytest.raises(ev.ModelFileError, match=member):
                ev.load(_written(without, header_without, tmp_path / "bad.npz"))


def test_covariances_must_be_positive_definite(tmp_path, rng):
    """Regression (hardening round 4): a PLDA with a zero ``within_covariance_`` loaded and
    then ended in NumPy's LinAlgError; a zero variance of a Bayesian space divided by zero."""
    models = _small_models(rng)
    for name, key, broken in (
        ("plda", "within_covariance_", lambda w: np.zeros_like(w)),
        ("plda", "within_covariance_", lambda w: -w),
        ("plda", "within_covariance_", lambda w: w + np.triu(np.ones_like(w), 1)),
        ("bayesian", "intra_variances_", lambda v: np.where(np.arange(v.size) == 0, 0.0, v)),
        ("standardizer", "scale_", lambda v: np.zeros_like(v)),
    ):
        members = _members(ev.save(models[name], tmp_path / "good.npz"))
        header = _header(members)
        original = np.load(io.BytesIO(members[f"{key}.npy"]))
        bad = _written(*_replaced(members, header, key, broken(original)), tmp_path / "bad.npz")
        with pytest.raises(ev.ModelFileError, match=f"{key} must be .*positive"):
            ev.load(bad)


@pytest.mark.parametrize("kind", ["classical", "deep"])
@pytest.mark.parametrize(
    ("key", "value"), [("threshold_", 1e308), ("threshold_", -1e9), ("calibration_", 1e7)]
)
def test_a_shipped_identity_models_calibration_is_bounded(tmp_path, kind, key, value):
    """Regression (hardening round 4): an identity model whose ``threshold_`` was 1e308 loaded
    and called different people the same person, P 1.00. A calibration works on normalised
    log-likelihood ratios of order 10: values beyond 1e6 are refused by name."""
    from eigenvision.faces.compare import SHIPPED_IDENTITY

    path = SHIPPED_IDENTITY[kind]
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    members, header = _members(path), _header(_members(path))
    if key in header["model"]["state"]:  # a number: written in the header
        header["model"]["state"][key] = value
        bad = _written(members, header, tmp_path / "bad.npz")
    else:
        tampered = np.full_like(np.load(io.BytesIO(members[f"{key}.npy"])), value)
        bad = _written(*_replaced(members, header, key, tampered), tmp_path / "bad.npz")
    with pytest.raises(ev.ModelFileError, match=f"{key} holds values beyond"):
        ev.load(bad)


def test_a_plda_whose_steps_do_not_chain_is_refused(tmp_path, rng):
    """Each declaration binds only its own members: an LDA step of another width than the PCA
    step, or loadings of another width than the codes, is refused by name at load."""
    model = _small_models(rng)["plda + lda"]
    members = _members(ev.save(model, tmp_path / "good.npz"))
    header = _header(members)
    bad = _written(*_replaced(members, header, "lda_", model.lda_[:-1]), tmp_path / "bad.npz")
    with pytest.raises(ev.ModelFileError, match="lda_ maps 7 codes, the PCA step gives 8"):
        ev.load(bad)
    from eigenvision.identity import diagonal_pair_scoring

    plain = ev.PLDA(2, pca_components=7, max_iter=5).fit(rng.random((24, 30)), np.arange(24) // 4)
    members = _members(ev.save(plain, tmp_path / "plain.npz"))
    header = _header(members)
    narrower = {  # a model of 6-wide codes, self-consistent, behind a PCA step of 7
        "identity_loadings_": plain.identity_loadings_[:-1],
        "within_covariance_": plain.within_covariance_[:-1, :-1],
        "pair_basis_": diagonal_pair_scoring(
            plain.identity_loadings_[:-1], plain.within_covariance_[:-1, :-1]
        ).basis,
    }
    for key, array in narrower.items():
        members, header = _replaced(members, header, key, array)
    with pytest.raises(ev.ModelFileError, match="identity_loadings_ has 6 rows, its codes are 7"):
        ev.load(_written(members, header, tmp_path / "bad.npz"))


def test_integers_where_floats_belong_are_refused(tmp_path, rng):
    """An int8 gallery or mean (finite, the right shape) is of another kind: refused by name."""
    for model in _small_models(rng).values():
        good = ev.save(model, tmp_path / "good.npz")
        members, header = _members(good), _header(_members(good))
        key = _float_members(header)[0]
        original = np.load(io.BytesIO(members[f"{key}.npy"]))
        bad = _written(
            *_replaced(members, header, key, original.astype(np.int8)), tmp_path / "bad.npz"
        )
        with pytest.raises(ev.ModelFileError, match=key.rsplit("/", 1)[-1]):
            ev.load(bad)


def test_unexpected_members_are_refused(tmp_path, rng):
    model = ev.Eigenspace(2).fit(rng.random((10, 6)))
    good = ev.save(model, tmp_path / "good.npz")
    members, header = _members(good), _header(_members(good))
    header["arrays"]["injected_"] = ["<f8", [3]]
    bad = _written({**members, "injected_.npy": _npy(np.zeros(3))}, header, tmp_path / "bad.npz")
    with pytest.raises(ev.ModelFileError, match="unexpected members.*injected_"):
        ev.load(bad)


@pytest.mark.skipif(not DEFAULT_FINDER.is_file(), reason="data/face_finder.npz is not here")
def test_every_float_member_of_the_shipped_finder_is_checked(tmp_path):
    """data/face_finder.npz: each float member (the face space, the clusters, the perceptron,
    the feature detectors' spaces) made infinite, or the perceptron's weights made strings or
    int8, is refused by name (such files loaded and then found no face)."""
    members, header = _members(DEFAULT_FINDER), _header(_members(DEFAULT_FINDER))
    keys = _float_members(header)
    assert len(keys) > 100
    for key in keys:
        original = np.load(io.BytesIO(members[f"{key}.npy"]))
        tampered = original.copy()
        tampered.flat[0] = np.inf
        bad = _written(*_replaced(members, header, key, tampered), tmp_path / "bad.npz")
        with pytest.raises(ev.ModelFileError, match=key.rsplit("/", 1)[-1]):
            ev.load(bad)
    key = "@decision/network_hidden_weights_"
    weights = np.load(io.BytesIO(members[f"{key}.npy"]))
    for array in (weights.astype(str), np.clip(weights, -100, 100).astype(np.int8)):
        bad = _written(*_replaced(members, header, key, array), tmp_path / "bad.npz")
        with pytest.raises(ev.ModelFileError, match="network_hidden_weights_"):
            ev.load(bad)


def test_a_bayesian_recognizer_with_an_infinite_block_scale_is_refused(tmp_path, rng):
    """Regression: block_scales_ may be +inf (a block of weight 0), so a Bayesian recogniser's
    [inf] loaded and then named every probe the same person."""
    faces, labels = rng.random((24, 6, 5)), np.repeat(np.arange(6), 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ev.Recognizer(3, method="bayesian").fit(faces, labels)
    good = ev.save(model, tmp_path / "good.npz")
    members, header = _members(good), _header(_members(good))
    bad = _written(
        *_replaced(members, header, "encoder_/block_scales_", np.array([np.inf])),
        tmp_path / "bad.npz",
    )
    with pytest.raises(ev.ModelFileError, match="block_scales_ may be infinite only"):
        ev.load(bad)


def test_a_negative_distance_threshold_is_refused(tmp_path, rng):
    """Regression: Recognizer(threshold=-1), or a file saying so, called everyone unknown."""
    faces, labels = rng.random((24, 6, 5)), np.repeat(np.arange(6), 4)
    with pytest.raises(ValueError, match="threshold=-1 is below every distance"):
        ev.Recognizer(3, threshold=-1).fit(faces, labels)
    model = ev.Recognizer(3).fit(faces, labels)
    good = ev.save(model, tmp_path / "good.npz")
    members = _members(good)
    header = _header(members)
    header["model"]["params"]["threshold"] = -1.0
    with pytest.raises(ev.ModelFileError, match="threshold"):
        ev.load(_written(members, header, tmp_path / "bad.npz"))
    # z-normalised scores are negative for good matches: a negative threshold is meaningful
    ev.Recognizer(3, threshold=-1.0, score_norm="znorm").fit(faces, labels)


def test_params_and_state_declarations_read_as_documented():
    param = Param("real", 0, 1, open_low=True, optional=True)
    assert param.describe() == "a number in (0, 1] or None"
    assert [param.accepts(v) for v in (None, 0.5, 1, 0, 1.5, np.nan, True, "1")] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    assert Param("reals", -90, 90, max_length=2).accepts((0.0, 20.0))
    assert not Param("reals", -90, 90, max_length=2).accepts((0.0, 10.0, 20.0))
    assert Param("shape", 1, 4096).accepts((56, 46)) and not Param("shape", 1, 10).accepts((56, 46))
    each = Param("bool", also=("both",), sequence=True, max_length=3)
    assert each.describe() == "True or False or 'both' or a sequence of 1-3 of them"
    assert [each.accepts(v) for v in (True, "both", (True, False), [False], ())] == [True] * 4 + [
        False
    ]
    assert not any(each.accepts(v) for v in ((True, "both"), (True,) * 4, (1, 0), "yes"))

    class Model:
        _params = {"method": Param("choice", choices=("a", "b"))}
        _state = {"k_": State("int", dim="k"), "codes_": State(shape=("n", "k"))}
        method = "c"

    with pytest.raises(ValueError, match=r"Model.method must be one of \('a', 'b'\), got 'c'"):
        check_params(Model())
    model = Model()
    model.k_, model.codes_ = 3, np.zeros((5, 4))
    with pytest.raises(ValueError, match=r"codes_ has 4 along axis 1 where .* give 3 \(k\)"):
        check_declared_state(model)


def test_the_declarations_cover_every_savable_class():
    """Every class save() writes declares its fitted state (and the estimators their params)."""
    for cls in persist._MODELS.values():
        assert isinstance(cls._state, dict) and cls._state, cls.__name__
    for cls in (ev.Recognizer, ev.FaceFinder, ev.FeatureDetector):
        assert set(cls._params) == set(cls().get_params(deep=False)), cls.__name__


def _public_estimators():
    import inspect

    from sklearn.base import BaseEstimator

    return sorted(
        (
            value
            for name in dir(ev)
            if not name.startswith("_")
            and inspect.isclass(value := getattr(ev, name))
            and issubclass(value, BaseEstimator)
        ),
        key=lambda cls: cls.__name__,
    )


_BAD_VALUES = (float("nan"), float("inf"), -float("inf"), -1, 0, 2.5, 10**12, "abc", True, None)


@pytest.mark.parametrize("cls", _public_estimators(), ids=lambda cls: cls.__name__)
def test_every_public_estimator_declares_and_checks_every_parameter(cls, rng):
    """Regression (hardening round 4): FisherSpace(n_components=2.5), '5' and True, KernelPCA's
    n_landmarks=2.5 and gamma='abc', NearestNeighbor(probe_block=0) were taken, or failed
    deep inside; every parameter is now declared in ``_params`` and ``fit`` refuses any value
    outside it, naming the parameter, before it touches the data."""
    import inspect

    declared = set(cls._params)
    wanted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    assert wanted <= declared, f"{cls.__name__} does not declare {sorted(wanted - declared)}"
    faces, labels = rng.random((24, 6, 5)), np.repeat(np.arange(6), 4)
    fit = inspect.signature(cls.fit).parameters
    required = [p for p in fit.values() if p.default is p.empty and p.name != "self"]
    data = (faces, labels)[: max(1, len(required))]
    checked = 0
    for name, param in cls._params.items():
        if param.kind == "any":
            continue
        for bad in _BAD_VALUES:
            if param.accepts(bad):
                continue
            model = cls().set_params(**{name: bad})
            with pytest.raises(ValueError, match=f"{cls.__name__}.{name} must be"):
                model.fit(*data)
            checked += 1
    assert checked > 0


def test_complex_input_is_refused_not_truncated(rng):
    """Regression: complex input lost its imaginary part in a silent cast."""
    image = rng.random((30, 30)) + 1j
    space = ev.Eigenspace(2).fit(rng.random((10, 5, 5)))
    for call in (
        lambda: ev.dffs_map(image, space),
        lambda: ev.ImageSet(image[None], np.array([0])),
        lambda: ev.normalize_image(image, shape=(10, 10)),
        lambda: ev.NearestNeighbor().fit(image),
        lambda: evaluate.roc_curve([0, 1], [1j, 2]),
        lambda: ev.select_rank(image),
    ):
        with pytest.raises((TypeError, ValueError), match="[Cc]omplex"):
            call()


def test_size_parameters_are_bounded(rng):
    """Regression: size parameters were unbounded (a jitter of 10**6 padded every image by it)."""
    faces = rng.random((4, 6, 5)).astype(np.float32)
    with pytest.raises(ValueError, match="jitter"):
        ev.Recognizer(2, jitter=10**6).fit(faces, np.array([0, 0, 1, 1]))
    eyes = {"left_eye": [[1, 3]] * 4, "right_eye": [[4, 3]] * 4}
    marked = ev.ImageSet(faces, np.array([0, 0, 1, 1]), landmarks=eyes)
    with pytest.raises(ValueError, match="iod"):
        ev.FeatureDetector(iod=10**6).fit(marked)
    with pytest.raises(ValueError, match="iod"):
        ev.face_windows(marked, iod=10**5)
    with pytest.raises(ValueError, match="shape"):
        ev.transform.resize(faces[0], (10**6, 10**6))
