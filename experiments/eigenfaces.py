"""The eigenfaces experiment; same as `eigenvision experiment eigenfaces` (see --help)."""

from eigenvision.experiments.eigenfaces import main

if __name__ == "__main__":
    main()
