"""``prefbuild inspect`` on a trajectory with one huge output: time and peak memory, as ratios.

    .venv/bin/python bench/inspect_large_output.py             # one 50 MB output
    .venv/bin/python bench/inspect_large_output.py --mb 200

Two trajectory files are written: the reference (a normal episode of a few short steps) and
the same episode whose first step has an output and an observation of ``--mb`` megabytes.
Each is inspected in a fresh process through the real command line (``python -m prefbuild
inspect FILE -n 1 --no-pager``, peak RSS reset after the imports, Linux only); the script
prints wall time, peak RSS and the characters
printed for both, and the ratios huge / reference. Rendering is capped, so printed output
stays the same size; time and memory grow only with reading the record itself (JSON and
validation of one 50 MB line), not with rendering it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MEASURE = """
import re, sys, time
from pathlib import Path
from prefbuild.cli.main import main

def high_water_kb():
    return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

Path("/proc/self/clear_refs").write_text("5")  # reset the peak: measure the command, not the imports
start = time.perf_counter()
try:
    main(["inspect", sys.argv[1], "-n", "1", "--no-pager"], standalone_mode=False)
finally:
    seconds = time.perf_counter() - start
    print(f"@@MEASURE {seconds:.3f} {high_water_kb()}", file=sys.stderr)
"""


def write_files(folder: Path, megabytes: int) -> tuple[Path, Path]:
    """The reference episode and its copy with one huge step, as trajectory files."""
    sys.path.insert(0, str(ROOT))
    from prefbuild.io.jsonl import write_records
    from tests.publish.factories import make_trajectory

    trajectory = make_trajectory(1, success=False)
    huge_text = "lorem ipsum " * (megabytes * 1_000_000 // 12)
    first = trajectory.steps[0].model_copy(update={"raw_output": huge_text, "observation": huge_text})
    huge = trajectory.model_copy(update={"steps": [first, *trajectory.steps[1:]]})
    reference_path, huge_path = folder / "reference.jsonl", folder / "huge.jsonl"
    write_records(reference_path, [trajectory])
    write_records(huge_path, [huge])
    return reference_path, huge_path


def measure(path: Path) -> dict[str, float]:
    """Run inspect on ``path`` in a fresh process: seconds, peak RSS (MB), characters printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    result = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, env=env,
                            check=True, timeout=600)
    line = next(line for line in result.stderr.splitlines() if line.startswith("@@MEASURE"))
    _, seconds, peak_kb = line.split()
    return {"seconds": float(seconds), "peak_mb": int(peak_kb) / 1024, "printed_chars": len(result.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=50, help="size of the huge output and observation, in MB each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        reference_path, huge_path = write_files(Path(folder), args.mb)
        reference = measure(reference_path)
        huge = measure(huge_path)
        sizes = {"reference_file_bytes": reference_path.stat().st_size, "huge_file_bytes": huge_path.stat().st_size}
    report = {
        **sizes,
        "reference": reference,
        "huge": huge,
        "ratio_huge_over_reference": {key: round(huge[key] / reference[key], 2) for key in reference},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
