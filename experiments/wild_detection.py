"""Same as `eigenvision experiment wild_detection` (options: --help)."""

from eigenvision.experiments.wild_detection import main

if __name__ == "__main__":
    main()
