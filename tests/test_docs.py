"""The documentation's shape: the user guide teaches, the records live under docs/notes."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = sorted((ROOT / "docs" / "user_guide").glob("*.rst"))


@pytest.mark.parametrize("page", GUIDE, ids=lambda page: page.stem)
def test_a_user_guide_page_teaches_rather_than_records(page):
    """At most 15 percentages a page: measurements belong in the experiments' results, the
    tuning records in docs/notes, and the guide says what each choice trades."""
    measured = re.findall(r"\d(\.\d+)? ?%", page.read_text())
    assert len(measured) <= 15


def test_the_benchmarks_readme_holds_the_latest_runs():
    """Each benchmark's latest run in README.md; the runs before it in HISTORY.md."""
    assert len((ROOT / "benchmarks" / "README.md").read_text().splitlines()) < 300


def test_the_changelog_says_what_changed_per_release():
    """CHANGELOG.md: a section per release (``Unreleased`` or ``X.Y.Z (date)``), what changed
    under Keep a Changelog's headings, no measurements (HISTORY.md keeps them)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert releases and releases[0] == "Unreleased"
    assert all(re.fullmatch(r"\d+\.\d+\.\d+ \(\d{4}-\d{2}-\d{2}\)", r) for r in releases[1:])
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.MULTILINE))
    assert kinds <= {"Added", "Changed", "Changed (breaking)", "Deprecated", "Fixed", "Removed"}
    assert re.findall(r"\d(\.\d+)? ?%", text) == []
