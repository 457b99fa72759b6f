"""The ``eigenvision`` command line: it parses arguments and prints; the maths lives elsewhere.

The top level knows only the commands' names (``eigenvision --help`` imports
nothing heavy). Each command is a module of this package (``build-models``:
:mod:`eigenvision.cli.build_models`) with its ``options(parser)`` and its
``run(args)``, importing only what that command uses; it is imported when
that command is named, so ``eigenvision fetch --help`` loads the fetcher alone.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from .._version import __version__

__all__ = ["COMMANDS", "build_parser", "command_module", "main"]

#: The commands and their one-line help.
COMMANDS = {
    "info": "version, data location and the datasets found",
    "train": "train a recognizer and save it",
    "recognize": "who is in these images?",
    "enroll": "add people or images to a trained model",
    "evaluate": "recognition rate by cross-validation",
    "features": "train the eye/nose/mouth detector on IMM",
    "locate": "find eyes, nose and mouth in face images",
    "detect": "find every face in photos (eyes, nose, mouth)",
    "build-models": "rebuild data/face_finder.npz from HELEN, IMM and LFW ($EIGENVISION_DATA)",
    "compare": "do two photos show the same person? (the identity model in data/)",
    "cluster": "group the faces of a folder of photos by person",
    "fetch": "download real datasets (AT&T, IMM, USPS, MNIST, HELEN, LFW), checked file by file",
    "experiment": "run one of the lecture's experiments (figure.png + results.json)",
}


def command_module(name: str):
    """The module of command ``name``: its ``options(parser)`` and ``run(args)``.

    Parameters
    ----------
    name : str
        A key of :data:`COMMANDS`.

    Returns
    -------
    module
    """
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")


def build_parser(command=None) -> argparse.ArgumentParser:
    """The command line's parser, with the options of ``command`` (default: of none).

    Parameters
    ----------
    command : str, optional
        A key of :data:`COMMANDS` whose options (and work) to load.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="eigenvision",
        description="Eigenspace image recognition: eigenfaces, eigenfeatures, DFFS detection.",
    )
    parser.add_argument("--version", action="version", version=f"eigenvision {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars on stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument(  # -q after the command too; SUPPRESS keeps one given before it
            "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        if name == command:  # the command's libraries, only when it is named
            module = command_module(name)
            module.options(sub)
            sub.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : list of str, optional
        Default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0, or 2 for an error (printed, with its fix).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in argv if not word.startswith("-")), None)
    parser = build_parser(command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 0
    from .._errors import EigenvisionError

    try:
        with warnings.catch_warnings():  # a warning is one line, not the library's source line
            warnings.showwarning = lambda message, *_, **__: print(
                f"eigenvision {args.command}: warning: {message}", file=sys.stderr
            )
            return args.run(args)
    except (EigenvisionError, ValueError, OSError) as exc:
        print(f"eigenvision {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
