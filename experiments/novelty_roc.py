"""Same as `eigenvision experiment novelty_roc` (options: --help)."""

from eigenvision.experiments.novelty_roc import main

if __name__ == "__main__":
    main()
