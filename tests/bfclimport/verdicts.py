"""BFCL's own verdict on every entry of result files: ``bfcl evaluate``'s per-entry check
(``eval_runner._evaluate_single_multi_turn_entry``: the handler's ``decode_execute`` on every
step, then ``multi_turn_checker``), printed as JSON ``{id: {"valid": bool, "error_type": str}}``.

Usage::

    PYTHONPATH=. python tests/bfclimport/verdicts.py MODEL RESULT_FILE [RESULT_FILE ...]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.bfclimport.harness import register_model_config, register_stand_ins


def verdicts(model: str, paths: list[Path]) -> dict[str, dict[str, Any]]:
    """BFCL's verdict per entry id (``error_type`` None when valid)."""
    os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-evaluate-"))
    register_stand_ins()
    mapping = register_model_config((model,))
    from bfcl_eval.eval_checker.eval_runner import _evaluate_single_multi_turn_entry
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    config = mapping[model]
    handler = config.model_handler(model_name=config.model_name, temperature=0.001, registry_name=model,
                                   is_fc_model=config.is_fc_model)
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        category = entries[0]["id"].rsplit("_", 1)[0]
        prompts = {entry["id"]: entry for entry in load_dataset_entry(category)}
        truths = {entry["id"]: entry for entry in load_ground_truth_entry(category)}
        for entry in entries:
            result = _evaluate_single_multi_turn_entry(
                handler, entry["id"], entry["result"], truths[entry["id"]]["ground_truth"], prompts[entry["id"]],
                model, category,
            )
            error = result.get("error") or {}
            found[entry["id"]] = {"valid": result["valid"], "error_type": error.get("error_type")}
    return found


if __name__ == "__main__":
    print(json.dumps(verdicts(sys.argv[1], [Path(path) for path in sys.argv[2:]])))
