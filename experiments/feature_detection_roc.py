"""Run the `feature_detection_roc` experiment: `python experiments/feature_detection_roc.py --help` (or `eigenvision experiment feature_detection_roc`)."""

from eigenvision.experiments.feature_detection_roc import main

if __name__ == "__main__":
    main()
