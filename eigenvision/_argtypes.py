"""argparse value types of the command line: numbers checked as they are parsed."""

from __future__ import annotations

import argparse

import numpy as np


def count(minimum):
    """An argparse type: an int of at least ``minimum``."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def finite(text):
    """An argparse type: a finite number (no nan, no inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def probability(text):
    """An argparse type: a probability in [0, 1]."""
    value = finite(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1], got {text}")
    return value


def rate(text):
    """An argparse type: a rate in [0, 1) (a false-accept rate of 1 accepts everyone)."""
    value = finite(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in [0, 1) (1 accepts everyone), got {text}")
    return value
