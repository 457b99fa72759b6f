"""The recognition_rate experiment; same as `eigenvision experiment recognition_rate` (see --help)."""

from eigenvision.experiments.recognition_rate import main

if __name__ == "__main__":
    main()
