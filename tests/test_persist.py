"""Model files: round trips, atomic writes and hostile files."""

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import persist
from eigenvision.faces.appearance import AppearanceCheck
from eigenvision.faces.candidates import CandidateSearch
from eigenvision.faces.decision import FaceDecision
from tests.conftest import in_format_3


def _models(rng):
    X = rng.random((30, 4, 5))
    labels = np.repeat(["a", "b", "c"], 10)
    return [
        ev.Eigenspace(3).fit(X),
        ev.Eigenspace(0.8, whiten=True, center=False).fit(X.reshape(30, -1)),
        ev.FisherSpace().fit(X, labels),
        ev.KernelPCA(3).fit(X.reshape(30, -1)),
        ev.KernelPCA(3, n_landmarks=10).fit(X.reshape(30, -1)),
        ev.ProbabilisticPCA(2).fit(X.reshape(30, -1)),
        ev.PixelStandardizer().fit(X),
        ev.Recognizer(n_components=4, threshold=0.5).fit(X, labels),
    ]


def test_round_trip_every_model(tmp_path, rng):
    probe = rng.random((3, 4, 5))
    for i, model in enumerate(_models(rng)):
        path = ev.save(model, tmp_path / f"m{i}.npz")
        loaded = ev.load(path)
        assert type(loaded) is type(model)
        if isinstance(model, ev.Recognizer):
            np.testing.assert_array_equal(loaded.predict(probe), model.predict(probe))
            np.testing.assert_array_equal(loaded.gallery_labels_, model.gallery_labels_)
        else:
            data = probe if getattr(model, "image_shape_", None) else probe.reshape(3, -1)
            np.testing.assert_array_equal(loaded.transform(data), model.transform(data))


def test_loaded_arrays_keep_their_memory_layout(tmp_path, rng):
    """Regression: a Fortran-ordered array (an Eigenspace's components_) came back C-ordered,
    and with numpy 2.4's OpenBLAS the loaded model's transform differed in the last bit."""
    model = ev.Eigenspace(3).fit(rng.random((30, 20)))
    model.components_ = np.asfortranarray(model.components_)
    loaded = ev.load(ev.save(model, tmp_path / "model.npz"))
    assert loaded.components_.flags.f_contiguous and not loaded.components_.flags.c_contiguous
    np.testing.assert_array_equal(loaded.components_, model.components_)


def test_save_is_atomic(tmp_path, rng, monkeypatch):
    model = ev.Eigenspace(2).fit(rng.random((10, 6)))
    path = ev.save(model, tmp_path / "model.npz")
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(persist.np, "savez", crash)
    with pytest.raises(OSError, match="disk full"):
        ev.save(ev.Eigenspace(3).fit(rng.random((10, 6))), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]  # no temp file left


def _rewrite(path, out, transform):
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        members = {name: src.read(name) for name in src.namelist()}
        for name, data in transform(members).items():
            dst.writestr(name, data)
    return out


def _header(members):
    raw = np.load(io.BytesIO(members["__header__.npy"]))
    return json.loads(raw.tobytes())


def _put_header(members, header):
    buffer = io.BytesIO()
    np.save(buffer, np.frombuffer(json.dumps(header).encode(), np.uint8))
    members["__header__.npy"] = buffer.getvalue()
    return members


def test_hostile_files(tmp_path, rng):
    good = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "good.npz")
    raw = good.read_bytes()
    cases = {}
    (tmp_path / "truncated.npz").write_bytes(raw[: len(raw) // 2])
    cases["truncated.npz"] = "not a readable"
    (tmp_path / "random.npz").write_bytes(rng.bytes(300))
    cases["random.npz"] = "not a readable"
    (tmp_path / "empty.npz").write_bytes(b"")
    cases["empty.npz"] = "not a readable"

    buffer = io.BytesIO()
    np.save(buffer, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    _rewrite(good, tmp_path / "pickle.npz", lambda m: {**m, "components_.npy": buffer.getvalue()})
    cases["pickle.npz"] = "dtype object|declares"

    def newer(m):
        header = _header(m)
        header["format_version"] = 99
        return _put_header(m, header)

    _rewrite(good, tmp_path / "newer.npz", newer)
    cases["newer.npz"] = "upgrade eigenvision"

    def extra(m):
        return {**m, "surprise.npy": m["mean_.npy"]}

    _rewrite(good, tmp_path / "extra.npz", extra)
    cases["extra.npz"] = "do not match"

    def huge(m):
        header = _header(m)
        header["arrays"]["mean_"] = ["<f8", [10**12]]
        return _put_header(m, header)

    _rewrite(good, tmp_path / "huge.npz", huge)
    cases["huge.npz"] = "max_bytes"

    def wrong_shape(m):
        header = _header(m)
        header["arrays"]["mean_"] = ["<f8", [7]]
        return _put_header(m, header)

    _rewrite(good, tmp_path / "shape.npz", wrong_shape)
    cases["shape.npz"] = "declares"

    def unknown_class(m):
        header = _header(m)
        header["model"]["class"] = "os.system"
        return _put_header(m, header)

    _rewrite(good, tmp_path / "class.npz", unknown_class)
    cases["class.npz"] = "invalid"

    def replace_instance_dict(m):
        header = _header(m)
        header["model"]["state"]["__dict__"] = {"n_components_": 99, "injected_": "yes"}
        return _put_header(m, header)

    _rewrite(good, tmp_path / "dict.npz", replace_instance_dict)
    cases["dict.npz"] = "unexpected attribute '__dict__'"

    def private_array(m):
        header = _header(m)
        header["arrays"]["_secret_"] = header["arrays"].pop("mean_")
        m["_secret_.npy"] = m.pop("mean_.npy")
        return _put_header(m, header)

    _rewrite(good, tmp_path / "private.npz", private_array)
    cases["private.npz"] = "unexpected attribute '_secret_'"

    for name, match in cases.items():
        with pytest.raises(ev.ModelFileError, match=match):
            ev.load(tmp_path / name)
    with pytest.raises(ev.ModelFileError, match="no such"):
        ev.load(tmp_path / "missing.npz")


def test_unfitted_and_unknown_models(tmp_path):
    with pytest.raises(ev.NotFittedError):
        ev.save(ev.Eigenspace(2), tmp_path / "x.npz")
    with pytest.raises(TypeError, match="cannot save"):
        ev.save(object(), tmp_path / "x.npz")


@pytest.mark.parametrize(
    "feature",
    [ev.Eigenspace(5), ev.FisherSpace(), ev.KernelPCA(5), ev.ProbabilisticPCA(3)],
    ids=lambda f: type(f).__name__,
)
def test_recognizer_with_a_feature_model_round_trips(feature, tmp_path, rng):
    """An unfitted model given as a parameter is saved as its class and parameters."""
    faces = rng.random((12, 6, 5)).astype(np.float32)
    model = ev.Recognizer(feature=feature).fit(faces, np.repeat(np.arange(4), 3))
    loaded = ev.load(ev.save(model, tmp_path / "model.npz"))
    assert repr(loaded.feature) == repr(feature) and not hasattr(loaded.feature, "n_features_in_")
    np.testing.assert_array_equal(loaded.kneighbors(faces, 3)[0], model.kneighbors(faces, 3)[0])


def _deflated(path, out):
    """The same members, deflated (save() never compresses)."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
    return out


def test_compressed_members_are_refused_before_inflating(tmp_path, rng):
    """Regression: a 3.7 MB file with a deflated member took 57 s and 4.3 GB to load."""
    good = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "good.npz")
    with pytest.raises(ev.ModelFileError, match="compressed"):
        ev.load(_deflated(good, tmp_path / "deflated.npz"))


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda h: h.update(arrays=[]), "malformed"),
        (lambda h: h.update(format_version=1e999), "malformed"),
        (lambda h: h.update(format_version=[None]), "malformed"),
        (lambda h: h["arrays"].update(mean_=["<f8", [None]]), "malformed"),
        (lambda h: h["arrays"].update(mean_=["<f8", 6]), "malformed"),
        (lambda h: h.update(model=[]), "malformed"),
    ],
)
def test_malformed_headers_are_model_file_errors(change, match, tmp_path, rng):
    good = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "good.npz")

    def rewrite(members):
        header = _header(members)
        change(header)
        return _put_header(members, header)

    with pytest.raises(ev.ModelFileError, match=match):
        ev.load(_rewrite(good, tmp_path / "bad.npz", rewrite))


def test_deeply_nested_header_is_a_model_file_error(tmp_path, rng):
    good = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "good.npz")

    def nest(members):
        raw = _header(members)
        text = json.dumps(raw).replace(
            '"format": "eigenvision-model"',
            '"deep": ' + "[" * 100_000 + "]" * 100_000 + ', "format": "eigenvision-model"',
        )
        buffer = io.BytesIO()
        np.save(buffer, np.frombuffer(text.encode(), np.uint8))
        return {**members, "__header__.npy": buffer.getvalue()}

    with pytest.raises(ev.ModelFileError):
        ev.load(_rewrite(good, tmp_path / "deep.npz", nest))


def _recognizer_file(tmp_path, rng):
    faces = rng.random((12, 6, 5)).astype(np.float32)
    model = ev.Recognizer(4, threshold=1.0).fit(faces, np.repeat(np.arange(4), 3))
    return ev.save(model, tmp_path / "rec.npz")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda h, m: h["model"]["params"].update(shape={"tuple": [40000, 40000]}), "shape"),
        (lambda h, m: h["model"]["params"].update(jitter=10**6), "jitter"),
        (lambda h, m: h["model"]["params"].update(threshold=float("nan")), "threshold"),
        (lambda h, m: h["model"]["params"].update(k=0), "Recognizer.k"),
        (
            lambda h, m: h["model"]["children"]["encoder_"]["state"].update(
                image_shape_={"tuple": [60, 50]}
            ),
            "feature",
        ),
        (
            lambda h, m: m.update({"encoder_/block_scales_.npy": _npy(np.array([-1.0]))}),
            "block_scales_",
        ),
        (
            lambda h, m: h["model"]["children"]["encoder_"]["params"].update(n_components=3),
            "encoder's n_components",
        ),
        (
            lambda h, m: m.update({"gallery_.npy": _npy(np.full((12, 4), np.nan, np.float32))}),
            "NaN",
        ),
    ],
)
def test_inconsistent_models_are_refused_on_load(edit, match, tmp_path, rng):
    """Regression: a file's parameters were trusted (a 40000 x 40000 working shape allocated
    at predict, NaN galleries and thresholds accepted)."""
    path = _recognizer_file(tmp_path, rng)

    def rewrite(members):
        header = _header(members)
        edit(header, members)
        return _put_header(members, header)

    with pytest.raises(ev.ModelFileError, match=match):
        ev.load(_rewrite(path, tmp_path / "bad.npz", rewrite))


def _npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_atomic_writes_clean_up_and_keep_modes(tmp_path, rng):
    """Regression: a killed save left .<name>.*.tmp debris forever (203 MB once), and every
    output was mode 0600 whatever the umask (enrolling into a shared 0644 model made it 0600)."""
    import os
    import subprocess
    import sys

    model = ev.Eigenspace(2).fit(rng.random((10, 6)))
    target = tmp_path / "model.npz"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    stale = tmp_path / f".model.npz.{dead}.x1y2.tmp"
    stale.write_bytes(b"half a model")
    alive = tmp_path / f".model.npz.{os.getppid()}.z3.tmp"  # a running writer's: kept
    alive.write_bytes(b"in progress")
    other = tmp_path / f".other.npz.{dead}.q.tmp"  # another target's: not ours to judge
    other.write_bytes(b"x")
    previous = os.umask(0o022)
    try:
        ev.save(model, target)
        assert oct(target.stat().st_mode & 0o777) == oct(0o644)  # 0o666 & ~umask
        target.chmod(0o640)
        ev.save(model, target)
        assert oct(target.stat().st_mode & 0o777) == oct(0o640)  # the replaced file's mode
    finally:
        os.umask(previous)
    assert not stale.exists() and alive.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".model")) == [alive.name]


def test_format_1_files_are_upgraded_in_one_place(tmp_path):
    """Issue 77: older files are brought to today's format by ``_migrations.upgrade`` before a
    model is built; no runtime branch reads old forms. A format 1 finder without the
    parameters added since gets their former values, and without its own placer places with
    (a copy of) its locator; a format 2 file without a parameter gets the class default."""
    import shutil

    from eigenvision._migrations import FINDER_PARAMS, FORMER_DEFAULTS
    from eigenvision.faces.photos import DEFAULT_FINDER

    if not DEFAULT_FINDER.is_file():
        pytest.skip("data/face_finder.npz is not here")
    added = FORMER_DEFAULTS["FaceFinder"]
    format_3 = in_format_3(shutil.copy(DEFAULT_FINDER, tmp_path / "format3.npz"))

    def by_format_3_name(finder):
        """The finder's parameters by the names format 3 gave them (its stages' flattened)."""
        params = finder.get_params(deep=True)
        flat = {name: value for name, value in params.items() if "__" not in name}
        for stage, names in FINDER_PARAMS.items():
            flat.update({old: params[f"{stage}__{new}"] for old, new in names.items()})
        return flat

    def older(version, placer=False):
        def transform(members):
            header = _header(members)
            header["format_version"] = version
            model = header["model"]
            for name in added:
                del model["params"][name]
            if not placer:
                del model["children"]["placer_"]
                for key in [key for key in header["arrays"] if key.startswith("placer_/")]:
                    del header["arrays"][key]
                    del members[f"{key}.npy"]
            return _put_header(members, header)

        return transform

    old = ev.load(_rewrite(format_3, tmp_path / "format1.npz", older(1)))
    for name, value in added.items():
        assert by_format_3_name(old)[name] == value, name
    assert isinstance(old.placer_, ev.FeatureDetector)
    np.testing.assert_array_equal(
        old.placer_.score_quantiles_, ev.load(DEFAULT_FINDER).locator_.score_quantiles_
    )
    new = ev.load(_rewrite(format_3, tmp_path / "format2.npz", older(2, placer=True)))
    stages = {
        "search": CandidateSearch(),
        "decision": FaceDecision(),
        "appearance": AppearanceCheck(),
    }
    defaults = by_format_3_name(ev.FaceFinder(**stages))
    for name in added:
        assert by_format_3_name(new)[name] == defaults[name], name
    with pytest.raises(ev.ModelFileError, match="placer_ is missing"):
        ev.load(_rewrite(format_3, tmp_path / "no_placer.npz", older(2)))


def test_files_are_written_in_the_current_format(tmp_path, rng):
    from eigenvision.persist import FORMAT_VERSION

    path = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "space.npz")
    with zipfile.ZipFile(path) as archive:
        assert _header({"__header__.npy": archive.read("__header__.npy")})["format_version"] == (
            FORMAT_VERSION
        )
    assert FORMAT_VERSION == 4


def test_a_model_header_declaring_absurd_sizes_is_a_model_file_error(tmp_path, rng):
    """Regression: a header declaring 10^30 rows raised OverflowError from numpy."""
    good = ev.save(ev.Eigenspace(2).fit(rng.random((10, 6))), tmp_path / "good.npz")

    def absurd(members):
        header = _header(members)
        header["arrays"]["mean_"] = ["<f8", [10**30]]
        return _put_header(members, header)

    with pytest.raises(ev.ModelFileError, match="declares shape"):
        ev.load(_rewrite(good, tmp_path / "bad.npz", absurd))


DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("kind", ["eigenfaces", "plda"])
def test_a_format_2_recognizer_file_loads_with_its_features_in_its_encoder(kind):
    """Format 3 keeps a recogniser's features in ``encoder_``: files of format 2 (written by
    eigenvision before, kept in tests/data with the answers they gave) load with them moved
    there, and answer as they did (to round-off)."""
    loaded = ev.load(DATA / f"recognizer_format2_{kind}.npz")
    answers = np.load(DATA / f"recognizer_format2_{kind}_answers.npz")
    assert isinstance(loaded.encoder_, ev.codes.Encoder)
    # written on one machine, read on another: room for another BLAS's float32 round-off
    distances = loaded.kneighbors(answers["probes"], k=3)[0]
    np.testing.assert_allclose(distances, answers["distances"], rtol=1e-4, atol=1e-5)
    if kind == "plda":
        assert loaded.encoder_.feature is loaded.feature  # one model, read once
    else:
        decided = loaded.decide(answers["probes"])[1]
        np.testing.assert_allclose(decided, answers["decide"], rtol=1e-4, atol=1e-5)


def test_a_model_read_by_two_parts_is_written_once(tmp_path):
    """A "plda" recogniser's identity model is its parameter and its encoder's: the file holds
    its arrays once, and reading gives the two parts one model."""
    loaded = ev.load(DATA / "recognizer_format2_plda.npz")
    path = ev.save(loaded, tmp_path / "plda.npz")
    with np.load(path) as archive:
        names = archive.files
    model_arrays = [name for name in names if "@feature/" in name]
    assert model_arrays and not any(name.startswith("encoder_/@feature/") for name in names)
    again = ev.load(path)
    assert again.encoder_.feature is again.feature
    probes = np.load(DATA / "recognizer_format2_plda_answers.npz")["probes"]
    np.testing.assert_array_equal(
        again.kneighbors(probes, k=3)[0], loaded.kneighbors(probes, k=3)[0]
    )


def test_a_model_load_would_refuse_is_not_saved_over_a_good_file(tmp_path, rng):
    """Regression: a recogniser whose parameters changed after fitting (its encoder fitted with
    others) was saved, and the file then refused on loading; the save now refuses it and the
    file already there stays."""
    faces = rng.random((12, 6, 5))
    model = ev.Recognizer(4).fit(faces, np.repeat(np.arange(4), 3))
    path = ev.save(model, tmp_path / "rec.npz")
    before = path.read_bytes()
    model.set_params(n_components=3)
    with pytest.raises(ValueError, match="cannot save this Recognizer: .*encoder's n_components"):
        ev.save(model, path)
    assert path.read_bytes() == before
    space = ev.Eigenspace(2).fit(rng.random((10, 6)))
    space.mean_[0] = np.nan
    with pytest.raises(ValueError, match="Eigenspace.mean_ holds NaN"):
        ev.save(space, tmp_path / "space.npz")
    assert not (tmp_path / "space.npz").exists()
