"""What ``import eigenvision`` and ``eigenvision --help`` cost, against ``import numpy``.

Each import runs in a fresh interpreter (CPU time: user + system, from
``resource.getrusage``), interleaved, ``--repeats`` times; medians. The target of
the architecture issue: ``import eigenvision`` at most 4x ``import numpy``.

    python benchmarks/bench_import.py --out benchmarks/out/import
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from _timing import run_meta

PROBES = {
    "nothing": "pass",
    "import numpy": "import numpy",
    "import eigenvision": "import eigenvision",
    "eigenvision --help": (
        "import contextlib, io\n"
        "from eigenvision.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main(['--help'])\n"
        "    except SystemExit: pass"
    ),
    "import eigenvision; ev.Eigenspace": "import eigenvision as ev; ev.Eigenspace",
}

_CPU = (
    "\nimport resource; usage = resource.getrusage(resource.RUSAGE_SELF)"
    "\nprint(usage.ru_utime + usage.ru_stime)"
)


def cpu_seconds(code):
    """CPU seconds of a fresh interpreter running ``code``."""
    out = subprocess.run([sys.executable, "-c", code + _CPU], capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    command = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    command.add_argument("--repeats", type=int, default=15)
    command.add_argument("--out", type=Path, default=Path("benchmarks/out/import"))
    args = command.parse_args(argv)
    times = {name: [] for name in PROBES}
    for _ in range(args.repeats):
        for name, code in PROBES.items():
            times[name].append(cpu_seconds(code))
    medians = {name: float(np.median(values)) for name, values in times.items()}
    numpy_cost = medians["import numpy"]
    rows = {name: {"cpu_s": t, "vs_numpy": t / numpy_cost} for name, t in medians.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"meta": run_meta(args), "results": rows}
    (args.out / "results.json").write_text(json.dumps(report, indent=2, default=str))
    for name, row in rows.items():
        print(f"{name:<36} {row['cpu_s'] * 1000:7.1f} ms CPU  {row['vs_numpy']:5.2f}x numpy")


if __name__ == "__main__":
    main()
