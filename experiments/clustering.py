"""Same as `eigenvision experiment clustering` (options: --help)."""

from eigenvision.experiments.clustering import main

if __name__ == "__main__":
    main()
