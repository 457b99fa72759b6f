"""Run the `lsa` experiment: `python experiments/lsa.py --help` (or `eigenvision experiment lsa`)."""

from eigenvision.experiments.lsa import main

if __name__ == "__main__":
    main()
