"""The Dask engine on a real LocalCluster (2 worker processes): equal to the in-memory results."""

import numpy as np
import pytest
from scipy.linalg import subspace_angles

import eigenvision as ev
from tests.conftest import IN_CI

if IN_CI:  # CI installs the dask extra: a missing one is a failure there, not a skip
    import dask.array as da
    from dask.distributed import Client, LocalCluster
else:
    da = pytest.importorskip("dask.array", reason="pip install -e '.[dask]' to test the engine")
    distributed = pytest.importorskip("dask.distributed")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster


# Arrays made in memory travel inside the task graph; real data would be read by the workers.
pytestmark = pytest.mark.filterwarnings("ignore:Sending large graph")


def _angle(a, b):
    return float(np.max(subspace_angles(a.T.astype(np.float64), b.T.astype(np.float64))))


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def low_rank():
    rng = np.random.default_rng(1)
    signal = rng.normal(size=(6000, 20)) @ (
        np.geomspace(20, 2, 20)[:, None] * rng.normal(size=(20, 120))
    )
    return 5.0 + signal + rng.normal(size=(6000, 120))


def test_cluster_fit_equals_in_memory_fit(client, usps):
    X = usps.images.astype(np.float64)
    reference = ev.Eigenspace(30).fit(X)
    for solver in ("covariance", "svd"):
        space = ev.Eigenspace(30, solver=solver).fit(da.from_array(X, chunks=(1000, -1, -1)))
        assert space.solver_ == f"dask-{solver}"
        assert space.image_shape_ == (16, 16) and space.n_samples_ == len(X)
        assert _angle(space.components_, reference.components_) < 1e-8
        np.testing.assert_allclose(space.eigenvalues_[:30], reference.eigenvalues_[:30], rtol=1e-10)
        np.testing.assert_allclose(space.mean_, reference.mean_, atol=1e-12)
        np.testing.assert_allclose(space.noise_variance_, reference.noise_variance_, rtol=1e-10)
        np.testing.assert_allclose(space.transform(X[:5]), reference.transform(X[:5]), atol=1e-9)
    # the blocks were reduced by the cluster's worker processes
    prefixes = client.run_on_scheduler(lambda dask_scheduler: set(dask_scheduler.task_prefixes))
    assert "block_moments" in prefixes and len(client.scheduler_info()["workers"]) == 2


def test_backend_dask_from_memory_and_randomized(client, low_rank):
    reference = ev.Eigenspace(10).fit(low_rank)
    from_memory = ev.Eigenspace(10, backend="dask").fit(low_rank)
    assert from_memory.solver_ == "dask-covariance"
    assert _angle(from_memory.components_, reference.components_) < 1e-8
    compressed = ev.Eigenspace(10, solver="randomized").fit(da.from_array(low_rank, chunks=1500))
    assert _angle(compressed.components_, reference.components_) < 1e-6  # a clear spectral gap
    float32 = ev.Eigenspace(10).fit(da.from_array(low_rank.astype(np.float32), chunks=1500))
    assert float32.components_.dtype == np.float32
    assert _angle(float32.components_, reference.components_) < 1e-4


def test_wide_data_and_many_features_use_tsqr(client):
    rng = np.random.default_rng(2)
    wide = rng.normal(size=(60, 500))
    space = ev.Eigenspace(8).fit(da.from_array(wide, chunks=(20, 100)))
    assert space.solver_ == "dask-covariance"
    tsqr = ev.Eigenspace(8)
    tsqr.max_scatter_features = 100
    tsqr.fit(da.from_array(wide, chunks=(20, 100)))
    assert tsqr.solver_ == "dask-svd"
    reference = ev.Eigenspace(8).fit(wide)
    assert _angle(tsqr.components_, reference.components_) < 1e-10
    assert _angle(space.components_, reference.components_) < 1e-8


def test_sharded_search_equals_in_memory(client, tmp_path):
    rng = np.random.default_rng(3)
    gallery = rng.normal(size=(20000, 50)).astype(np.float32)
    gallery[7777] = gallery[12]  # an exact tie across shards: the lower index wins in both
    probes = np.vstack([rng.normal(size=(300, 50)).astype(np.float32), gallery[12:13]])
    expected = ev.NearestNeighbor().fit(gallery).kneighbors(probes, 7)
    sharded = ev.NearestNeighbor().fit(da.from_array(gallery, chunks=(3000, -1)))
    distances, indices = sharded.kneighbors(probes, 7)
    np.testing.assert_array_equal(indices, expected[1])
    np.testing.assert_allclose(distances, expected[0], rtol=1e-12)
    assert list(indices[-1, :2]) == [12, 7777]
    # a gallery of .npy shards on disk, read lazily by the workers
    paths = []
    for i, start in enumerate(range(0, 20000, 6000)):
        paths.append(tmp_path / f"shard{i}.npy")
        np.save(paths[-1], gallery[start : start + 6000])
    lazy = ev.dask_engine.read_npy_shards(paths)
    assert lazy.shape == gallery.shape and lazy.numblocks[0] == 4
    on_disk = ev.NearestNeighbor().fit(lazy).kneighbors(probes, 7)
    np.testing.assert_array_equal(on_disk[1], expected[1])


def test_bad_input_is_refused(tmp_path):
    X = np.ones((10, 4))
    X[3, 2] = np.nan
    for solver in ("covariance", "svd"):
        with pytest.raises(ValueError, match="NaN"):
            ev.Eigenspace(2, solver=solver).fit(da.from_array(X, chunks=5))
    with pytest.raises(ValueError, match="Dask backend"):
        ev.Eigenspace(2, solver="gram").fit(da.from_array(np.eye(6), chunks=3))
    with pytest.raises(ValueError, match="backend"):
        ev.Eigenspace(2, backend="spark").fit(np.eye(6))
    with pytest.raises(ValueError, match="k=9"):
        ev.NearestNeighbor().fit(da.from_array(np.eye(6), chunks=3)).kneighbors(np.eye(6), 9)
    np.save(tmp_path / "labels.npy", np.array(["a", "b"]))
    with pytest.raises(ev.EigenvisionError, match="float32 or float64"):
        ev.dask_engine.read_npy_shards([tmp_path / "labels.npy"])
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(ev.EigenvisionError, match="not a readable .npy"):
        ev.dask_engine.read_npy_shards([tmp_path / "junk.npy"])


def test_saved_dask_fit_loads_as_plain_model(tmp_path, low_rank):
    space = ev.Eigenspace(5, backend="dask").fit(low_rank)
    ev.save(space, tmp_path / "space.npz")
    loaded = ev.load(tmp_path / "space.npz")
    assert loaded.backend == "dask"
    np.testing.assert_array_equal(loaded.components_, space.components_)


def test_cluster_faces_finds_the_faces_on_the_workers_as_here(client, tmp_path):
    """cluster_faces(backend="dask"): the faces found and cut by the cluster's worker processes,
    one task a photo, give the same groups, boxes and warnings as finding them here."""
    import shutil
    import warnings

    from tests.conftest import require_dataset_folder

    lfw = require_dataset_folder("lfw_train") / "images"
    paths = []
    for person in ("Tony_Blair", "Colin_Powell", "Ariel_Sharon"):
        for photo in sorted((lfw / person).glob("*.jpg"))[:5]:
            paths.append(photo)
    torn = tmp_path / "torn.jpg"
    shutil.copy(paths[0], torn)
    torn.write_bytes(torn.read_bytes()[:300])
    paths.append(torn)
    with warnings.catch_warnings(record=True) as here_warnings:
        warnings.simplefilter("always")
        here = ev.cluster_faces(paths, on_error="skip")
    with warnings.catch_warnings(record=True) as there_warnings:
        warnings.simplefilter("always")
        there = ev.cluster_faces(paths, on_error="skip", backend="dask")
    assert [[(i, face.box) for i, face in group] for group in there] == [
        [(i, face.box) for i, face in group] for group in here
    ]
    assert [str(w.message) for w in there_warnings] == [str(w.message) for w in here_warnings]
    assert "torn.jpg" in str(there_warnings[0].message)
    for caught in (here_warnings, there_warnings):
        assert isinstance(caught[0].message, ev.UnreadableFilesWarning)
        assert caught[0].message.files == (str(torn),)
    with pytest.raises(ev.ImageLoadError):
        ev.cluster_faces(paths, backend="dask")
    with pytest.raises(ValueError, match="backend must be"):
        ev.cluster_faces(paths, backend="spark")


def test_cluster_command_finds_the_faces_on_a_scheduler(client, tmp_path, capsys):
    """eigenvision cluster --scheduler ADDRESS prints what the command prints without it."""
    import json
    import shutil

    from eigenvision.cli import main
    from tests.conftest import require_dataset_folder

    lfw = require_dataset_folder("lfw_train") / "images"
    for person in ("Tony_Blair", "Colin_Powell"):
        for photo in sorted((lfw / person).glob("*.jpg"))[:3]:
            shutil.copy(photo, tmp_path / photo.name)
    assert main(["-q", "cluster", str(tmp_path), "--json"]) == 0
    here = json.loads(capsys.readouterr().out)
    address = client.scheduler.address
    assert main(["-q", "cluster", str(tmp_path), "--json", "--scheduler", address]) == 0
    there = json.loads(capsys.readouterr().out)

    def faces(report, key):
        return [[face[key] for face in entry["faces"]] for entry in report]

    assert faces(there, "photo") == faces(here, "photo")
    assert faces(there, "box") == faces(here, "box")
    # the workers' BLAS sums in another order: the scores agree to rounding
    np.testing.assert_allclose(sum(faces(there, "score"), []), sum(faces(here, "score"), []))


@pytest.mark.parametrize("solver", ["auto", "svd"])
def test_dask_backend_checks_its_input_as_the_numpy_backend_does(rng, solver):
    """Regression (issue 44): Eigenspace(backend="dask") took complex input silently, gave
    Dask's NotImplementedError for object arrays, ZeroDivisionError for (n, 0), TypeError for
    lists, a '0-d Dask array' error for sparse input, and LinAlgError for huge values."""
    import dask.array as da
    import scipy.sparse as sp

    X = rng.random((40, 12))

    def fit(data):
        return ev.Eigenspace(4, backend="dask", solver=solver).fit(data)

    reference = ev.Eigenspace(4).fit(X)
    np.testing.assert_allclose(
        np.abs(fit(X.tolist()).components_), np.abs(reference.components_), atol=1e-10
    )
    for data, error, message in [
        (X + 1j, ValueError, "Complex data not supported"),  # scikit-learn's own message
        (np.empty((40, 0)), ValueError, "0 feature"),
        (sp.csr_matrix(X), TypeError, "dense data is required"),
        (X * 1e200, ValueError, "X reaches .*e.199.*rescale"),
        (da.from_array(X + 1j, chunks=10), TypeError, "complex"),
        (da.from_array(X.astype(object), chunks=10), TypeError, "dtype object.*astype"),
        (da.from_array(np.empty((40, 0))), ValueError, "0 features"),
        (da.from_array(X, chunks=10).map_blocks(sp.csr_matrix), TypeError, "sparse chunks"),
        (da.from_array(X * 1e200, chunks=10), ValueError, "X reaches .*e.199.*rescale"),
    ]:
        with pytest.raises(error, match=message):
            fit(data)
