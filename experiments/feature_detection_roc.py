"""Same as `eigenvision experiment feature_detection_roc` (options: --help)."""

from eigenvision.experiments.feature_detection_roc import main

if __name__ == "__main__":
    main()
