"""Same as `eigenvision experiment eigendigits` (options: --help)."""

from eigenvision.experiments.eigendigits import main

if __name__ == "__main__":
    main()
