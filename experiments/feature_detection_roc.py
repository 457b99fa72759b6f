"""The feature_detection_roc experiment; same as `eigenvision experiment feature_detection_roc` (see --help)."""

from eigenvision.experiments.feature_detection_roc import main

if __name__ == "__main__":
    main()
