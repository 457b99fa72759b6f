"""Run the `eigenfaces` experiment: `python experiments/eigenfaces.py --help` (or `eigenvision experiment eigenfaces`)."""

from eigenvision.experiments.eigenfaces import main

if __name__ == "__main__":
    main()
