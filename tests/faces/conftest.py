"""Fixtures of the face tests."""

import pytest

from eigenvision.faces import photos


@pytest.fixture(scope="module")
def finder():
    """The shipped finder, a copy for each test module (tests may set its parameters)."""
    return photos.default_finder()
