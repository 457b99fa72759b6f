"""Run the `novelty_roc` experiment: `python experiments/novelty_roc.py --help` (or `eigenvision experiment novelty_roc`)."""

from eigenvision.experiments.novelty_roc import main

if __name__ == "__main__":
    main()
