"""Same as `eigenvision experiment recognition_rate` (options: --help)."""

from eigenvision.experiments.recognition_rate import main

if __name__ == "__main__":
    main()
