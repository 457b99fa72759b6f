"""``eigenvision fetch``: its options and its work."""

from __future__ import annotations

from .. import _fetch  # the fetcher alone: the loaders' libraries are not needed here


def options(parser):
    """The options of ``eigenvision fetch``."""
    parser.add_argument(
        "names",
        nargs="+",
        choices=[*_fetch.DATASETS, "all"],
        metavar="NAME",
        help=f"datasets to download: {', '.join(_fetch.DATASETS)}, or all",
    )
    parser.add_argument(
        "--data-home",
        metavar="FOLDER",
        help=f"where to put them (default: ${_fetch.DATA_ENV}, else the cache 'info' names)",
    )
    parser.add_argument(
        "--mirror",
        metavar="URL",
        help="download from this address instead, laid out as a data home (URL/att_faces/s1/1.pgm)",
    )


def run(args) -> int:
    names = list(_fetch.DATASETS) if "all" in args.names else dict.fromkeys(args.names)
    for name in names:
        folder = _fetch.fetch(name, args.data_home, mirror=args.mirror, progress=not args.quiet)
        print(f"{name}: {folder}")
    return 0
