"""Progress a user waits on: a bar on a terminal, a line per item in a log (no heavy import)."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm

__all__ = ["progress"]


def progress(iterable, *, total=None, desc=None, enabled=True):
    """Progress around a loop a user waits on: a bar on a terminal, lines in a log.

    Parameters
    ----------
    iterable : iterable
    total : int, optional
        The number of items; default ``len(iterable)`` where it has one.
    desc : str, optional
        What is being done.
    enabled : bool, default True
        False: nothing shown. True: a tqdm bar when stderr is a terminal (or a
        notebook's widget); otherwise a line ``desc: i/total`` per item on stderr
        (at most about 100 lines for long loops), so logs show the work advancing.

    Returns
    -------
    iterable
        Yielding the same items.
    """
    if not enabled:
        return iterable
    if _on_terminal():
        return tqdm(
            iterable, total=total, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True
        )
    return _progress_lines(iterable, total=total, desc=desc)


def _on_terminal() -> bool:
    try:
        return sys.stderr.isatty() or "ipykernel" in sys.modules
    except (AttributeError, ValueError):
        return False


def _progress_lines(iterable, *, total, desc):
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    every = max(1, -(-total // 100)) if total else 1
    for done, item in enumerate(iterable, start=1):
        yield item
        if done % every == 0 or done == total:
            of = f"/{total}" if total else ""
            print(f"{desc or 'progress'}: {done}{of}", file=sys.stderr, flush=True)
