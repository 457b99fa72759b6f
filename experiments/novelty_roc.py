"""The novelty_roc experiment; same as `eigenvision experiment novelty_roc` (see --help)."""

from eigenvision.experiments.novelty_roc import main

if __name__ == "__main__":
    main()
