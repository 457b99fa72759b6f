"""Same as `eigenvision experiment lsa` (options: --help)."""

from eigenvision.experiments.lsa import main

if __name__ == "__main__":
    main()
