"""Same as `eigenvision experiment turned_faces` (options: --help)."""

from eigenvision.experiments.turned_faces import main

if __name__ == "__main__":
    main()
