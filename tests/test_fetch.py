"""The dataset fetchers, against a server on the loopback address (never the internet).

The server serves ``$EIGENVISION_DATA`` (or a tampered copy of part of it), so each
download is checked against the data's own manifest and the loaders' output.
"""

import gzip
import hashlib
import http.server
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import _fetch, datasets
from eigenvision._base import progress
from tests.conftest import MirrorServer


def test_registry_matches_the_datas_own_manifest(data_root):
    manifest = {}
    for line in (data_root / "MANIFEST.sha256").read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        manifest[path.removeprefix("./")] = digest
    for name, source in _fetch.SOURCES.items():
        files = _fetch.registry(source.folder)
        assert files, name
        for relative, registered in files.items():
            assert manifest[f"{source.folder}/{relative}"] == registered.sha256
            assert (data_root / source.folder / relative).stat().st_size == registered.size
        expected = {
            path.split("/", 1)[1]
            for path in manifest
            if path.startswith(source.folder + "/") and source.includes(path.split("/", 1)[1])
        }
        assert set(files) == expected, name


def test_fetch_att_from_a_mirror_equals_the_local_copy_and_resumes(data_root, serve, tmp_path):
    server = serve(data_root)
    fetched = datasets.fetch_att(tmp_path, mirror=server.url, progress=False)
    local = datasets.load_att()
    np.testing.assert_array_equal(fetched.images, local.images)
    np.testing.assert_array_equal(fetched.labels, local.labels)
    assert len(server.served) == 401  # 400 faces and the README
    server.served.clear()
    datasets.fetch("att", tmp_path, mirror=server.url, progress=False)
    assert server.served == []  # every file present and checked: nothing downloaded again


def test_a_tampered_file_is_refused_and_never_written(data_root, serve, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(data_root / "att_faces", mirror / "att_faces")
    tampered = mirror / "att_faces" / "s7" / "3.pgm"
    content = bytearray(tampered.read_bytes())
    content[-1] ^= 0xFF
    tampered.write_bytes(bytes(content))
    home = tmp_path / "home"
    with pytest.raises(ev.datasets.DownloadError, match=r"att_faces/s7/3\.pgm.*run the fetch"):
        datasets.fetch("att", home, mirror=serve(mirror).url, progress=False)
    assert not (home / "att_faces" / "s7" / "3.pgm").exists()
    assert (home / "att_faces" / "s7" / "4.pgm").read_bytes() == (
        data_root / "att_faces" / "s7" / "4.pgm"
    ).read_bytes()
    assert not list(home.rglob(".*"))  # no temporary left behind


def test_a_local_file_altered_after_download_is_downloaded_again(data_root, serve, tmp_path):
    server = serve(data_root)
    datasets.fetch("mnist_test", tmp_path, mirror=server.url, progress=False)
    labels = tmp_path / "mnist_t10k" / "t10k-labels-idx1-ubyte.gz"
    labels.write_bytes(b"not the labels")
    server.served.clear()
    fetched = datasets.fetch_mnist_test(tmp_path, mirror=server.url, progress=False)
    assert server.served == ["/mnist_t10k/t10k-labels-idx1-ubyte.gz"]
    np.testing.assert_array_equal(fetched.labels, datasets.load_mnist_test().labels)


def test_an_unreachable_address_names_the_file_and_the_fix(tmp_path):
    server = MirrorServer(tmp_path)
    url = server.url
    server.close()
    with pytest.raises(ev.datasets.DownloadError, match=r"mnist_t10k/t10k-.*check the connection"):
        datasets.fetch("mnist_test", tmp_path, mirror=url, progress=False)


def _esl_text(X, y) -> bytes:
    rows = np.column_stack([y, X])
    return "".join(" ".join(f"{v:.4f}" for v in row) + "\n" for row in rows).encode()


def test_usps_is_built_from_the_esl_files_and_checked(data_root, serve, tmp_path, monkeypatch):
    local = np.load(data_root / "usps" / "usps_zip.npz")
    site = tmp_path / "esl"
    site.mkdir()
    for split in ("train", "test"):
        X, y = local[f"x_{split}"], local[f"y_{split}"]
        (site / f"zip.{split}.gz").write_bytes(gzip.compress(_esl_text(X, y)))
    server = serve(site)
    monkeypatch.setitem(
        _fetch.SOURCES, "usps", _fetch.Source("usps", (server.url + "/",), made_here=("usps.h5",))
    )
    home = tmp_path / "home"
    train = datasets.fetch_usps(home, progress=False)
    test = datasets.load_usps(home / "usps", split="test")
    np.testing.assert_array_equal(train.images, datasets.load_usps(split="train").images)
    np.testing.assert_array_equal(test.labels, datasets.load_usps(split="test").labels)
    for key in _fetch.USPS_DIGESTS:
        saved = np.load(home / "usps" / "usps_zip.npz")[key]
        assert hashlib.sha256(saved.tobytes()).hexdigest() == _fetch.USPS_DIGESTS[key]

    X, y = local["x_test"].copy(), local["y_test"]
    X[5, 7] = 0.5 if X[5, 7] != 0.5 else 0.25  # one pixel changed at the source
    (site / "zip.test.gz").write_bytes(gzip.compress(_esl_text(X, y)))
    other = tmp_path / "other"
    with pytest.raises(ev.datasets.DownloadError, match="x_test differs.*nothing was written"):
        datasets.fetch("usps", other, progress=False)
    assert not (other / "usps" / "usps_zip.npz").exists()


def test_loaders_name_the_fetch_command_when_a_dataset_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path))
    with pytest.raises(ev.DatasetNotFoundError, match=r"eigenvision fetch att.*fetch\('att'\)"):
        datasets.load_att()


def test_loaders_find_the_download_folder_when_the_variable_is_not_set(
    data_root, serve, tmp_path, monkeypatch
):
    monkeypatch.delenv(datasets.DATA_ENV)
    monkeypatch.setattr(_fetch, "cache_home", lambda: tmp_path)
    monkeypatch.setattr(datasets, "cache_home", lambda: tmp_path)
    assert datasets.find_datasets()["mnist_test"] is None
    datasets.fetch("mnist_test", mirror=serve(data_root).url, progress=False)
    assert datasets.find_datasets()["mnist_test"] == tmp_path / "mnist_t10k"
    assert datasets.load_mnist_test().images.shape == (10000, 28, 28)


def test_progress_prints_a_line_per_item_when_not_on_a_terminal(capsys):
    assert list(progress(range(3), desc="photos")) == [0, 1, 2]
    assert capsys.readouterr().err.splitlines() == ["photos: 1/3", "photos: 2/3", "photos: 3/3"]
    assert list(progress(range(1000), desc="long")) == list(range(1000))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 100 and lines[-1] == "long: 1000/1000"
    assert list(progress(range(3), enabled=False)) == [0, 1, 2]
    assert capsys.readouterr().err == ""


class _HostileHandler(http.server.BaseHTTPRequestHandler):
    """Serves every path with ``body``, ``chunk`` bytes at a time, ``pause`` seconds apart."""

    body, chunk, pause = b"", 1, 0.0

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            for start in range(0, len(self.body), self.chunk):
                self.wfile.write(self.body[start : start + self.chunk])
                self.wfile.flush()
                time.sleep(self.pause)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _hostile(body, chunk, pause):
    handler = type("Handler", (_HostileHandler,), {"body": body, "chunk": chunk, "pause": pause})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def test_a_download_is_bounded_in_time_and_in_bytes(tmp_path, monkeypatch):
    """Regression (hardening round 4): a mirror sending a byte every 5 s never returned, and a
    200 MB body for a 4.5 KB file was written in full before its SHA-256 refused it. Each
    download now has a deadline and stops at the registered size; nothing is left behind."""
    monkeypatch.setattr(_fetch, "GRACE_SECONDS", 1.0)
    target = tmp_path / "file.bin"
    server, url = _hostile(b"x" * 64, chunk=1, pause=0.2)
    try:
        started = time.monotonic()
        with pytest.raises(_fetch.DownloadError, match="too slow"):
            _fetch.fetch_file(url + "/file.bin", target, size=64)
        assert time.monotonic() - started < 10
    finally:
        server.shutdown()
    body = b"y" * (1 << 20)
    server, url = _hostile(body, chunk=1 << 16, pause=0.0)
    try:
        with pytest.raises(_fetch.DownloadError, match="sends 1048576 bytes; the file has 4500"):
            _fetch.fetch_file(url + "/file.bin", target, size=4500)
    finally:
        server.shutdown()
    assert list(tmp_path.iterdir()) == []  # no temporary left behind


def test_a_killed_fetch_leaves_nothing_the_next_does_not_remove(data_root, serve, tmp_path):
    """Regression (hardening round 4): a fetch killed mid-file left ``tmp*`` files in the data
    folder that no later fetch removed. Downloads are written through atomic_write: the next
    fetch of that file removes a temporary whose process is gone."""
    folder = tmp_path / "mnist_t10k"
    folder.mkdir()
    name = "t10k-labels-idx1-ubyte.gz"
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    stale = folder / f".{name}.{gone}.abc123.tmp"
    stale.write_bytes(b"half a download")
    datasets.fetch("mnist_test", tmp_path, mirror=serve(data_root).url, progress=False)
    assert not stale.exists()
    assert sorted(p.name for p in folder.iterdir()) == sorted(_fetch.registry("mnist_t10k"))
