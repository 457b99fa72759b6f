"""Same as `eigenvision experiment small_faces` (options: --help)."""

from eigenvision.experiments.small_faces import main

if __name__ == "__main__":
    main()
