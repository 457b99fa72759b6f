"""The eigendigits experiment; same as `eigenvision experiment eigendigits` (see --help)."""

from eigenvision.experiments.eigendigits import main

if __name__ == "__main__":
    main()
