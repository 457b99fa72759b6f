"""Same as `eigenvision experiment eigenfaces` (options: --help)."""

from eigenvision.experiments.eigenfaces import main

if __name__ == "__main__":
    main()
