"""Same as `eigenvision experiment photo_identity` (options: --help)."""

from eigenvision.experiments.photo_identity import main

if __name__ == "__main__":
    main()
