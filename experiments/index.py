"""Regenerate experiments/README.md from the stored runs' results.json (run from the checkout)."""

from pathlib import Path

from eigenvision.experiments._index import write_index

if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    print(write_index(here / "figures", here / "README.md"))
