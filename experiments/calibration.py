"""Same as `eigenvision experiment calibration` (options: --help)."""

from eigenvision.experiments.calibration import main

if __name__ == "__main__":
    main()
