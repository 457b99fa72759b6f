"""Same as `eigenvision experiment face_clustering` (options: --help)."""

from eigenvision.experiments.face_clustering import main

if __name__ == "__main__":
    main()
