"""``eigenvision fetch``: datasets downloaded from a mirror on the loopback address, with a
line of progress per file when not on a terminal."""

import subprocess
import sys


def test_fetch_command_downloads_and_reports_progress_in_a_log(data_root, serve, tmp_path):
    server = serve(data_root)
    run = subprocess.run(
        [sys.executable, "-m", "eigenvision", "fetch", "mnist_test", "--data-home", str(tmp_path)]
        + ["--mirror", server.url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"mnist_test: {tmp_path / 'mnist_t10k'}"
    assert run.stderr.splitlines() == ["fetching mnist_test: 1/2", "fetching mnist_test: 2/2"]
    refused = subprocess.run(
        [sys.executable, "-m", "eigenvision", "fetch", "nope"], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "invalid choice: 'nope'" in refused.stderr
