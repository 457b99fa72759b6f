"""Write eigenvision/registry.txt.gz: the SHA-256 of every file the fetchers download.

Run from the project root on a verified copy of the data (``sha256sum -c MANIFEST.sha256``
in it first)::

    python tools/make_registry.py $EIGENVISION_DATA

Each line is ``<dataset folder>/<path> <sha256> <size in bytes>``, the layout of
``$EIGENVISION_DATA``: the fetchers check each file's digest and refuse a body longer than
its size as it comes.
"""

import gzip
import hashlib
import sys
from pathlib import Path

from eigenvision._fetch import REGISTRY_PATH, SOURCES


def main(root: Path) -> None:
    lines = []
    for source in SOURCES.values():
        folder = root / source.folder
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            if path.is_file() and source.includes(relative):
                content = path.read_bytes()
                digest = hashlib.sha256(content).hexdigest()
                lines.append(f"{source.folder}/{relative} {digest} {len(content)}\n")
    with gzip.GzipFile(REGISTRY_PATH, "wb", compresslevel=9, mtime=0) as out:
        out.write("".join(lines).encode("utf-8"))
    print(f"{len(lines)} files -> {REGISTRY_PATH}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
