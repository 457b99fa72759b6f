"""Shared fixtures: seeded random data and access to the real datasets.

Tests on real data read ``$EIGENVISION_DATA``. Outside CI a missing dataset
skips with a message saying how to get it; with ``CI=true`` it fails.
"""

import os

import numpy as np
import pytest

import eigenvision as ev
from eigenvision import datasets

IN_CI = os.environ.get("CI", "").lower() == "true"


def require_dataset(name: str):
    """Load the real dataset ``name`` or skip (outside CI) / fail (in CI)."""
    loaders = {
        "att": datasets.load_att,
        "imm": datasets.load_imm,
        "usps": datasets.load_usps,
        "usps_test": lambda: datasets.load_usps(split="test"),
        "mnist_test": datasets.load_mnist_test,
    }
    try:
        return loaders[name]()
    except ev.DatasetNotFoundError as exc:
        message = (
            f"{exc}. The real datasets are in ../shared/data of the eigenvision workspace; "
            f"set {datasets.DATA_ENV} to that folder to run this test."
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
