"""Run the `eigendigits` experiment: `python experiments/eigendigits.py --help` (or `eigenvision experiment eigendigits`)."""

from eigenvision.experiments.eigendigits import main

if __name__ == "__main__":
    main()
