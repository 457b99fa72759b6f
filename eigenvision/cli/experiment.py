"""``eigenvision experiment``: its options and its work."""

from __future__ import annotations

import argparse
import importlib
import textwrap

from ..experiments import EXPERIMENTS, summaries


def options(parser):
    """The options of ``eigenvision experiment``."""
    parser.add_argument(
        "name", nargs="?", choices=EXPERIMENTS, metavar="NAME", help="the experiment (below)"
    )
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the experiment's options")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "experiments (eigenvision experiment NAME --help for its options):\n" + (
        _experiment_list()
    )


def run(args) -> int:
    if args.name is None:
        raise ValueError(
            "name an experiment: eigenvision experiment NAME [options]; one of\n"
            + _experiment_list()
        )
    # The one import by name in the package: the experiment the user asked for.
    module = importlib.import_module(f"eigenvision.experiments.{args.name}")
    quiet = ["--quiet"] if args.quiet and "--quiet" not in args.arguments else []
    module.main([*args.arguments, *quiet])
    return 0


def _experiment_list():
    """One line per experiment: its name and what it shows."""

    return "\n".join(
        f"  {name:24s}" + textwrap.shorten(summary, 74, placeholder=" ...")
        for name, summary in summaries().items()
    )
