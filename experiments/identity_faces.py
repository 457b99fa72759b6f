"""Same as `eigenvision experiment identity_faces` (options: --help)."""

from eigenvision.experiments.identity_faces import main

if __name__ == "__main__":
    main()
