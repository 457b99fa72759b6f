"""Shared fixtures: seeded random data and access to the real datasets.

Tests on real data read ``$EIGENVISION_DATA`` (unset: the workspace's
``../shared/data`` beside this checkout, when it is there). Outside CI a
missing dataset skips with a message saying how to get it; with ``CI=true``
it fails.
"""

import functools
import http.server
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import datasets

IN_CI = os.environ.get("CI", "").lower() == "true"
_WORKSPACE_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: IdentityModel's descriptions without the learnt one (the Fisher vectors' mixture takes
#: minutes to fit and encode): for tests of what does not depend on the description.
UNLEARNT_DESCRIPTIONS = dict(
    descriptor=("daisy", "daisy", "lbp+hog"), illumination=(True, False, True)
)
if not os.environ.get(datasets.DATA_ENV) and _WORKSPACE_DATA.is_dir():
    os.environ[datasets.DATA_ENV] = str(_WORKSPACE_DATA)


def require_dataset(name: str):
    """Load the real dataset ``name`` or skip (outside CI) / fail (in CI)."""
    try:
        if name == "usps_test":
            return datasets.load_usps(split="test")
        return datasets.load(name)
    except ev.DatasetNotFoundError as exc:
        _missing(exc)


def require_dataset_folder(name: str):
    """The folder of the real dataset ``name`` (a key of ``datasets.DATASETS``), or skip / fail."""
    folder = datasets.find_datasets()[name]
    if folder is None:
        _missing(f"the {name} dataset is not under ${datasets.DATA_ENV}")
    return folder


def _missing(problem):
    message = (
        f"{problem}. The real datasets are in ../shared/data of the eigenvision workspace "
        f"(set {datasets.DATA_ENV} to that folder), or download them with "
        f"'eigenvision fetch all', to run this test."
    )
    if IN_CI:
        pytest.fail(f"dataset missing in CI: {message}")
    pytest.skip(message)


@pytest.fixture(scope="session")
def att():
    return require_dataset("att")


@pytest.fixture(scope="session")
def imm():
    return require_dataset("imm")


@pytest.fixture(scope="session")
def usps():
    return require_dataset("usps")


@pytest.fixture(scope="session")
def usps_test():
    return require_dataset("usps_test")


@pytest.fixture(scope="session")
def mnist_test():
    return require_dataset("mnist_test")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def low_rank_codes(rng):
    """150 rows of 30 values near a 6-dimensional subspace."""
    return rng.normal(size=(150, 6)) @ rng.normal(size=(6, 30)) + 0.3 * rng.normal(size=(150, 30))


def match_up_to_sign(A, B, atol):
    """Assert that the columns of ``A`` and ``B`` agree once each of ``A``'s has ``B``'s sign."""
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=atol)


@pytest.fixture(scope="session")
def helen_slice():
    """Twelve held-out HELEN faces (aligned crops) and their photo ids: a small, fast slice."""
    files = require_helen_files()
    _, test = ev.faces.photos.helen_split(photo for photo, _, _ in files)
    ids = set(sorted(test)[:12])
    return datasets.load_helen(photo_ids=ids), ids


def require_helen_files():
    try:
        return datasets.helen_files()
    except ev.DatasetNotFoundError as exc:
        message = f"{exc}. The HELEN faces are in ../shared/data/helen_train of the workspace."
        if IN_CI:
            pytest.fail(f"dataset missing in CI: {message}")
        pytest.skip(message)


class KnownFaces:
    """A finder that answers with given faces, photo by photo (``round(photo[0, 0] * 100)``
    names the photo): the logic around a finder, apart from the finder's quality."""

    threshold = 0.5

    def __init__(self, faces_by_photo):
        self.faces_by_photo = faces_by_photo

    def find(self, photo, *, threshold=None, max_faces=50, return_likeliest=False):
        threshold = self.threshold if threshold is None else threshold
        found = self.faces_by_photo[round(float(np.ravel(photo[0, 0])[0]) * 100)]
        faces = [face for face in found if face.confidence >= threshold][:max_faces]
        likeliest = max((face.confidence for face in found), default=None)
        return (faces, likeliest) if return_likeliest else faces


def known_face(left, right):
    """A Face with these eyes, sure (p 0.99) and upright."""
    return ev.Face(ev.face_box(left, right), left, right, None, None, 5.0, 0.99, 0.0)


def require_deep():
    """Skip (outside CI) or fail (in CI) unless the learned description's packages are installed."""
    from eigenvision.identity import DEEP_INSTALL, deep_available

    if deep_available():
        return
    message = f"dlib's learned face description is not installed: {DEEP_INSTALL}"
    if IN_CI:
        pytest.fail(f"extra missing in CI: {message}")
    pytest.skip(message)


def written_in_format(path, version):
    """Rewrite a model file's header as written in format ``version`` (an older file)."""
    import json

    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    header = json.loads(bytes(stored["__header__"]).decode())
    header["format_version"] = version
    stored["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **stored)
    return path


def in_format_3(path):
    """Rewrite a face finder's or an identity model's model file as format 3 wrote it: a
    finder's stages' parameters and fitted members the finder's own, an identity model's
    describer's parameters and mixture the model's (the inverse of ``_migrations``'
    ``_stages_of_finder`` and ``_describer_of_identity_model``)."""
    import json

    from eigenvision._migrations import DESCRIBER_PARAMS, FINDER_MEMBERS, FINDER_PARAMS

    with np.load(path, allow_pickle=False) as archive:
        stored = {key: archive[key] for key in archive.files}
    header = json.loads(bytes(stored["__header__"]).decode())
    model = header["model"]
    if model["class"] == "FaceFinder":
        params, members = FINDER_PARAMS, FINDER_MEMBERS
    else:
        names = {name: name for name in DESCRIBER_PARAMS}
        params, members = {"describer": names}, {"describer": {"fisher_": "fisher_"}}
    flat = {}
    for name, value in model["params"].items():
        if name not in params:
            flat[name] = value
            continue
        stage = value["model"]
        for old, new in params[name].items():
            flat.setdefault(old, stage["params"][new])
        for old, new in members[name].items():
            if new in stage["state"]:
                model["state"][old] = stage["state"][new]
            if new in stage["children"]:
                model["children"][old] = stage["children"][new]
            key = f"{stage['prefix']}{new}"
            if key in stored:
                stored[old] = stored.pop(key)
                header["arrays"][old] = header["arrays"].pop(key)
        for key in [key for key in stored if key.startswith(stage["prefix"])]:  # nested models
            stored[key[len(stage["prefix"]) :]] = stored.pop(key)
            header["arrays"][key[len(stage["prefix"]) :]] = header["arrays"].pop(key)
        _strip_prefixes(model["children"], stage["prefix"])
    model["params"] = flat
    if model["state"].get("eye_regressor_", 0) is None:
        del model["state"]["eye_regressor_"]
    header["format_version"] = 3
    stored["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **stored)
    return path


def _strip_prefixes(description, prefix):
    """Remove ``prefix`` from the prefixes of every model description nested in ``description``."""
    if isinstance(description, dict):
        if isinstance(description.get("prefix"), str) and description["prefix"].startswith(prefix):
            description["prefix"] = description["prefix"][len(prefix) :]
        for value in description.values():
            _strip_prefixes(value, prefix)


def blas_threads():
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


# ------------------------------------------------------------ real data: AT&T
@pytest.fixture(scope="module")
def att_split(att):
    return att.split(5, order="name")  # images 1-5 train, 6-10 test


@pytest.fixture(scope="module")
def lfw_photos():
    """Four photos of two LFW people (colour, as the files are)."""
    folder = require_dataset_folder("lfw_train") / "images"
    people = ["Aaron_Peirsol", "Serena_Williams"]
    paths = [sorted((folder / person).glob("*.jpg"))[:2] for person in people]
    return [path for pair in paths for path in pair]


def deep_model_or_skip():
    from eigenvision.faces.compare import DEEP_IDENTITY

    if not DEEP_IDENTITY.is_file():
        pytest.skip("data/identity_deep.npz is not here")
    return ev.load(DEEP_IDENTITY)


class MirrorServer:
    """A static file server on 127.0.0.1 that counts the files it served."""

    def __init__(self, folder):
        served = self.served = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                served.append(self.path)
                super().do_GET()

        handler = functools.partial(Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(folder):
        servers.append(MirrorServer(folder))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="module")
def data_root():
    require_dataset("att")
    return datasets.data_home()


def saved_unchecked(model, path):
    """Save ``model`` as eigenvision wrote files before :func:`~eigenvision.save` checked them,
    for tests of what :func:`~eigenvision.load` does with older files or members at odds."""
    from eigenvision import persist

    arrays = {}
    return persist._write(persist._describe(model, "", arrays), arrays, path)
