"""The lsa experiment; same as `eigenvision experiment lsa` (see --help)."""

from eigenvision.experiments.lsa import main

if __name__ == "__main__":
    main()
