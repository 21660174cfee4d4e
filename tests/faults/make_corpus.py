"""Write the malformed-input corpus under ``tests/faults/corpus/`` (run once; the files are committed).

Each file is one bad input: ``recipes/*.yaml`` go through ``check-recipe``, ``trajectories/*.jsonl``
through ``label``, ``pairs/*.jsonl`` through ``export``, and every line of ``cli.txt`` is one
command line. ``test_corpus.py`` expects exactly one ``error:`` line, a non-zero exit and no
traceback from each. Usage: ``python -m tests.faults.make_corpus``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"

BASE = """\
name: corpus
seed: 1
env:
  name: household
  dialect: classic
  protocol: agentbench
  num_tasks: 2
  max_steps: 5
teacher:
  backend: scripted
  model: scripted-expert
labelers:
  - name: loop
    params: {k: 3}
pairs:
  strategies:
    - name: stepwise
      params: {chosen: template}
output:
  formats: [trl]
"""


def _swap(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


RECIPES: dict[str, str | bytes] = {
    "empty": "",
    "only-comment": "# nothing here\n",
    "a-list": "- name: x\n",
    "a-scalar": "just words\n",
    "binary": bytes(range(256)),
    "nul-bytes": "name: x\x00\n",
    "latin1": "name: caf\xe9\n".encode("latin-1"),
    "tab-indent": "name: x\nenv:\n\tname: household\n",
    "unclosed-bracket": "name: [x\n",
    "unclosed-quote": 'name: "x\n',
    "bad-indent": "name: x\n  env: y\n",
    "duplicate-top-key": BASE + "seed: 2\n",
    "duplicate-nested-key": _swap("  max_steps: 5\n", "  max_steps: 5\n  max_steps: 6\n"),
    "recursive-anchor": "name: &a [*a]\n",
    "recursive-mapping": "name: x\nenv: &e\n  inner: *e\n",
    "billion-laughs": "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)),
    "missing-name": BASE.replace("name: corpus\n", ""),
    "missing-env": BASE.split("env:")[0] + "teacher:\n  backend: scripted\n",
    "missing-teacher": BASE.split("teacher:")[0],
    "bad-name": _swap("name: corpus", "name: 'bad name!'"),
    "seed-string": _swap("seed: 1", "seed: one"),
    "unknown-top-field": BASE + "colour: blue\n",
    "unknown-env-field": _swap("  max_steps: 5\n", "  max_steps: 5\n  maxsteps: 6\n"),
    "num-tasks-zero": _swap("num_tasks: 2", "num_tasks: 0"),
    "num-tasks-negative": _swap("num_tasks: 2", "num_tasks: -4"),
    "num-tasks-float": _swap("num_tasks: 2", "num_tasks: 2.5"),
    "max-steps-string": _swap("max_steps: 5", "max_steps: many"),
    "env-list-empty": _swap("env:\n  name: household\n  dialect: classic\n  protocol: agentbench\n"
                            "  num_tasks: 2\n  max_steps: 5\n", "env: []\n"),
    "env-scalar": _swap("env:\n  name: household\n  dialect: classic\n  protocol: agentbench\n"
                        "  num_tasks: 2\n  max_steps: 5\n", "env: household\n"),
    "unknown-env": _swap("name: household", "name: kitchen"),
    "unknown-dialect": _swap("dialect: classic", "dialect: ancient"),
    "unknown-protocol": _swap("protocol: agentbench", "protocol: telepathy"),
    "unknown-split": _swap("  num_tasks: 2\n", "  split: holdout\n  num_tasks: 2\n"),
    "unknown-task-type": _swap("  num_tasks: 2\n", "  task_types: [juggle]\n  num_tasks: 2\n"),
    "unknown-env-option": _swap("  max_steps: 5\n", "  max_steps: 5\n  options: {gravity: 2}\n"),
    "env-options-list": _swap("  max_steps: 5\n", "  max_steps: 5\n  options: [1, 2]\n"),
    "unknown-protocol-option": _swap("  max_steps: 5\n", "  max_steps: 5\n  protocol_options: {volume: 11}\n"),
    "sql-dialect-on-household": _swap("dialect: classic", "dialect: mysql"),
    "unknown-labeler": _swap("- name: loop", "- name: loopy"),
    "labeler-negative-k": _swap("params: {k: 3}", "params: {k: -3}"),
    "labeler-k-string": _swap("params: {k: 3}", "params: {k: three}"),
    "labeler-unknown-param": _swap("params: {k: 3}", "params: {kk: 3}"),
    "labeler-params-list": _swap("params: {k: 3}", "params: [3]"),
    "labeler-sql-on-household": _swap("- name: loop\n    params: {k: 3}", "- name: sql_error"),
    "labeler-wrong-answer-on-household": _swap("- name: loop\n    params: {k: 3}", "- name: wrong_answer"),
    "labeler-no-name": _swap("- name: loop\n", "- params: {}\n").replace("    params: {k: 3}\n", ""),
    "labelers-scalar": _swap("labelers:\n  - name: loop\n    params: {k: 3}\n", "labelers: loop\n"),
    "unknown-strategy": _swap("- name: stepwise", "- name: zigzag"),
    "strategy-unknown-param": _swap("params: {chosen: template}", "params: {chosen: template, colour: red}"),
    "strategy-bad-chosen": _swap("params: {chosen: template}", "params: {chosen: astrology}"),
    "max-per-reason-zero": _swap("pairs:\n", "pairs:\n  max_per_reason: 0\n"),
    "test-fraction-one": _swap("pairs:\n", "pairs:\n  test_fraction: 1.0\n"),
    "test-fraction-negative": _swap("pairs:\n", "pairs:\n  test_fraction: -0.1\n"),
    "dedup-string": _swap("pairs:\n", "pairs:\n  dedup: sometimes\n"),
    "unknown-format": _swap("formats: [trl]", "formats: [parquet-ish]"),
    "formats-scalar-number": _swap("formats: [trl]", "formats: 7"),
    "unknown-backend": _swap("backend: scripted", "backend: carrier-pigeon"),
    "teacher-unknown-field": _swap("model: scripted-expert", "model: scripted-expert\n  colour: red"),
    "temperature-negative": _swap("model: scripted-expert", "model: scripted-expert\n  sampling: {temperature: -1}"),
    "top-p-zero": _swap("model: scripted-expert", "model: scripted-expert\n  sampling: {top_p: 0}"),
    "max-tokens-zero": _swap("model: scripted-expert", "model: scripted-expert\n  sampling: {max_tokens: 0}"),
    "concurrency-zero": _swap("model: scripted-expert", "model: scripted-expert\n  concurrency: 0"),
    "timeout-zero": _swap("model: scripted-expert", "model: scripted-expert\n  timeout_s: 0"),
    "scripted-unknown-mode": _swap("model: scripted-expert", "model: scripted-expert\n  scripted: {sulking: 0.1}"),
    "scripted-rate-above-one": _swap("model: scripted-expert", "model: scripted-expert\n  scripted: {loop: 1.5}"),
    "scripted-rates-sum": _swap("model: scripted-expert",
                                "model: scripted-expert\n  scripted: {loop: 0.6, invalid_action: 0.6}"),
    "launch-port-zero": _swap("model: scripted-expert", "model: scripted-expert\n  launch: {port: 0}"),
    "unset-variable": _swap("model: scripted-expert", "model: ${PREFBUILD_CORPUS_UNSET_VARIABLE}"),
    "publish-unknown-field": BASE + "publish: {repo: x/y}\n",
    "output-unknown-field": _swap("formats: [trl]", "formats: [trl]\n  folder: out"),
    "nested-too-deep": _swap("seed: 1", "seed: 1\ndescription: " + "[" * 999 + "]" * 999),
    "nested-past-libyaml": _swap("seed: 1", "seed: 1\ndescription: " + "[" * 2000 + "]" * 2000),
    "seed-too-long": _swap("seed: 1", "seed: " + "9" * 5000),
}

TRAJECTORY = json.loads((CORPUS / "_trajectory.json.txt").read_text())
PAIR = json.loads((CORPUS / "_pair.json.txt").read_text())


def _edit(record: dict[str, Any], path: str, value: Any, delete: bool = False) -> str:
    edited = copy.deepcopy(record)
    node: Any = edited
    parts = [int(part) if part.isdigit() else part for part in path.split(".")]
    for part in parts[:-1]:
        node = node[part]
    if delete:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return json.dumps(edited) + "\n"


def _number(record: dict[str, Any], path: str, digits: str) -> str:
    """``record`` with the number at ``path`` written as ``digits`` (a number ``json.dumps`` cannot write)."""
    marker = "__number__"
    return _edit(record, path, marker).replace(f'"{marker}"', digits)


GOOD_T = json.dumps(TRAJECTORY) + "\n"
GOOD_P = json.dumps(PAIR) + "\n"

TRAJECTORIES: dict[str, str | bytes] = {
    "empty": "",
    "blank-lines": "\n\n   \n",
    "not-json": "hello\n",
    "json-array": "[1, 2]\n",
    "json-string": '"text"\n',
    "json-null": "null\n",
    "latin1-line": GOOD_T.encode() + '{"id": "caf\xe9"}\n'.encode("latin-1"),
    "binary": bytes(range(256)) * 4,
    "bad-second-line": GOOD_T + "{not json}\n",
    "cut-middle-line": GOOD_T[:300] + "\n" + GOOD_T,
    "missing-id": _edit(TRAJECTORY, "id", None, delete=True),
    "step-not-object": _edit(TRAJECTORY, "steps.0", "look"),
    "steps-not-list": _edit(TRAJECTORY, "steps", "many"),
    "outcome-missing": _edit(TRAJECTORY, "outcome", None, delete=True),
    "bad-stop-reason": _edit(TRAJECTORY, "outcome.stop_reason", "bored"),
    "success-with-error-stop": _edit(TRAJECTORY, "outcome", {"success": True, "stop_reason": "error"}),
    "step-index-string": _edit(TRAJECTORY, "steps.0.index", "first"),
    "unknown-field": _edit(TRAJECTORY, "colour", "blue"),
    "env-missing-name": _edit(TRAJECTORY, "env.name", None, delete=True),
    "teacher-not-object": _edit(TRAJECTORY, "teacher", "scripted"),
    "message-bad-role": _edit(TRAJECTORY, "messages.0.role", "narrator"),
    "usage-negative-string": _edit(TRAJECTORY, "usage", "lots"),
    "pair-in-trajectory-file": GOOD_P,
    "nested-too-deep": GOOD_T + "[" * 1100 + "]" * 1100 + "\n",
    "integer-too-long": GOOD_T + _number(TRAJECTORY, "sample_index", "9" * 5000),
    "reward-infinity": GOOD_T + _edit(TRAJECTORY, "outcome.reward", float("inf")),
    "reward-minus-infinity": GOOD_T + _edit(TRAJECTORY, "outcome.reward", float("-inf")),
    "reward-nan": GOOD_T + _edit(TRAJECTORY, "outcome.reward", float("nan")),
    "reward-overflow": GOOD_T + _number(TRAJECTORY, "outcome.reward", "1e400"),
    "reward-nan-string": GOOD_T + _edit(TRAJECTORY, "outcome.reward", "NaN"),
    "latency-infinity": GOOD_T + _edit(TRAJECTORY, "steps.0.latency_s", float("inf")),
}

PAIRS: dict[str, str | bytes] = {
    "empty": "",
    "not-json": "{'single': 'quotes'}\n",
    "json-array": "[]\n",
    "latin1": '{"id": "\xe9"}\n'.encode("latin-1"),
    "cut-last-line": GOOD_P + GOOD_P[:-40],
    "missing-chosen": _edit(PAIR, "chosen", None, delete=True),
    "chosen-empty": _edit(PAIR, "chosen", []),
    "rejected-string": _edit(PAIR, "rejected", "no"),
    "bad-split": _edit(PAIR, "split", "holdout"),
    "unknown-field": _edit(PAIR, "colour", "blue"),
    "prompt-not-list": _edit(PAIR, "prompt", "hi"),
    "trajectory-in-pairs-file": GOOD_T,
    "nested-too-deep": GOOD_P + "[" * 1100 + "]" * 1100 + "\n",
    "integer-too-long": GOOD_P + _number(PAIR, "source.step", "9" * 5000),
    "scores-nan": GOOD_P + _edit(PAIR, "scores", {"confidence": float("nan")}),
    "scores-infinity": GOOD_P + _edit(PAIR, "scores", {"confidence": float("inf")}),
}

CLI = """\
# one command line per line; {tmp} is a fresh folder, {corpus} this corpus folder, {pairs} a good pairs file
inspect {tmp}/no-such-file.jsonl
export {tmp}/no-such-file.jsonl -o {tmp}/out
label {tmp}/no-such-file.jsonl -o {tmp}/out.jsonl
pair {tmp}/no-such-file.jsonl -o {tmp}/out.jsonl
stats {tmp}/no-such-file.jsonl
report {tmp}/no-such-dir -o {tmp}/r.html
check-recipe no-such-recipe
run no-such-recipe
generate no-such-recipe
recipes no-such-recipe
check-recipe simulate --set env.num_tasks=-3
check-recipe simulate --set env.num_tasks
check-recipe simulate --set =3
check-recipe simulate --set env.name=kitchen
check-recipe simulate --set labelers=[{name: loop, params: {k: -3}}]
check-recipe simulate --set teacher.sampling.temperature=[unclosed
check-recipe simulate --set seed.inner=3
check-recipe simulate --set output.formats=[nope]
generate simulate --limit 0 --out {tmp}/run
generate simulate --shard 5/2 --out {tmp}/run
generate simulate --shard half --out {tmp}/run
label {pairs} -o {tmp}/out.jsonl --set loop.k=-3
label {pairs} -o {tmp}/out.jsonl --set labelers=nope
label {pairs} -o {tmp}/out.jsonl --format klingon
pair {pairs} -o {tmp}/out.jsonl --strategy zigzag
export {pairs} -o {tmp}/out --format nope
envs play nowhere
envs play household --index -1
validate {tmp}/no-such-file.jsonl
merge {tmp} -o {tmp}/merged
check-recipe simulate --set env.num_tasks=""" + "[" * 2000 + """
check-recipe simulate --set env.options.x=""" + "[" * 999 + "]" * 999 + """
check-recipe simulate --set seed=""" + "9" * 5000 + """
pair {corpus}/trajectories/nested-too-deep.jsonl -o {tmp}/pairs.jsonl
pair {corpus}/trajectories/integer-too-long.jsonl -o {tmp}/pairs.jsonl
pair {corpus}/trajectories/reward-nan.jsonl -o {tmp}/pairs.jsonl
stats {corpus}/trajectories/nested-too-deep.jsonl
stats {corpus}/trajectories/integer-too-long.jsonl
inspect {corpus}/trajectories/nested-too-deep.jsonl
inspect {corpus}/pairs/integer-too-long.jsonl
"""


def main() -> None:
    for folder, cases, suffix in (("recipes", RECIPES, ".yaml"), ("trajectories", TRAJECTORIES, ".jsonl"),
                                  ("pairs", PAIRS, ".jsonl")):
        target = CORPUS / folder
        target.mkdir(parents=True, exist_ok=True)
        for name, content in cases.items():
            data = content.encode() if isinstance(content, str) else content
            (target / f"{name}{suffix}").write_bytes(data)
    (CORPUS / "cli.txt").write_text(CLI)


if __name__ == "__main__":
    main()
