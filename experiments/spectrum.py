"""The spectrum experiment; same as `eigenvision experiment spectrum` (see --help)."""

from eigenvision.experiments.spectrum import main

if __name__ == "__main__":
    main()
