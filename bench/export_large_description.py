"""Export with a huge recipe description: time as a ratio to the same export with a short one.

    .venv/bin/python bench/export_large_description.py            # 60 MB description
    .venv/bin/python bench/export_large_description.py --mb 10

The description goes into the dataset card (cut there) and into ``recipe.yaml`` (whole).
Both exports run in this process on the same 200 pairs, the reference first (it also pays
for the imports, so it is run twice and the second run is the reference). Printed: seconds
for each, the ratio, and the sizes of README.md and recipe.yaml.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from prefbuild.exports import export_dataset
    from prefbuild.io.jsonl import write_records
    from prefbuild.recipe import load_recipe
    from tests.publish.factories import make_pairs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=60, help="description size in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        pairs = root / "pairs.jsonl"
        write_records(pairs, make_pairs(200))
        recipe = load_recipe("quickstart").resolved_dict()

        def timed(description: str, out: str) -> float:
            start = time.perf_counter()
            export_dataset([pairs], root / out, ["trl", "llamafactory"], recipe={**recipe, "description": description})
            return time.perf_counter() - start

        timed("short", "warmup")
        reference = timed("A household DPO dataset.", "reference")
        huge = timed("lorem ipsum " * (args.mb * 1_000_000 // 12), "huge")
        report = {
            "description_mb": args.mb,
            "reference_seconds": round(reference, 3),
            "huge_seconds": round(huge, 3),
            "ratio_huge_over_reference": round(huge / reference, 2),
            "card_bytes": (root / "huge" / "README.md").stat().st_size,
            "recipe_yaml_bytes": (root / "huge" / "recipe.yaml").stat().st_size,
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
