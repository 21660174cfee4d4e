"""pairs.max_tokens: only pairs whose prompt and longer side fit the trainer's max_length are kept,
counted with the trained model's chat template (here the embedded SmolLM2's tokenizer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.cli.main import main
from prefbuild.io.jsonl import read_records
from prefbuild.records import Pair

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tokenizer_folder() -> str:
    from prefbuild.teachers.embedded import ensure_embedded_model

    return str(ensure_embedded_model())


def test_max_tokens_keeps_only_pairs_that_fit(tmp_path: Path, tokenizer_folder: str) -> None:
    from transformers import AutoTokenizer

    run = CliRunner().invoke(main, ["run", "simulate", "--set", "env.num_tasks=30", "--out", str(tmp_path / "run"),
                                    "--quiet"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    labelled = str(tmp_path / "run" / "labelled.jsonl")
    everything = list(read_records(tmp_path / "run" / "pairs.jsonl", Pair))
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder)

    def longest(pair: Pair) -> int:
        def count(turns: list) -> int:
            messages = [{"role": str(m.role), "content": m.content} for m in [*pair.prompt, *turns]]
            ids = tokenizer.apply_chat_template(messages, tokenize=True)
            return len(ids["input_ids"] if hasattr(ids, "keys") else ids)

        return max(count(pair.chosen), count(pair.rejected))

    lengths = sorted(longest(pair) for pair in everything)
    limit = lengths[len(lengths) // 2]  # about half fit
    result = CliRunner().invoke(main, ["pair", labelled, "-o", str(tmp_path / "fit.jsonl"), "--recipe", "simulate",
                                       "--max-tokens", str(limit), "--tokenizer", tokenizer_folder],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    kept = list(read_records(tmp_path / "fit.jsonl", Pair))
    assert kept and all(longest(pair) <= limit for pair in kept)
    assert len(kept) == sum(length <= limit for length in lengths) < len(everything)


def test_max_tokens_without_a_tokenizer_or_with_a_missing_one_is_one_line(tmp_path: Path) -> None:
    labelled = tmp_path / "labelled.jsonl"
    CliRunner().invoke(main, ["run", "simulate", "--set", "env.num_tasks=2", "--out", str(tmp_path / "run"), "-q"])
    labelled = tmp_path / "run" / "labelled.jsonl"
    for extra, message in ((["--max-tokens", "512"], "max_tokens needs tokenizer"),
                           (["--max-tokens", "512", "--tokenizer", str(tmp_path / "nope")], "cannot load it")):
        result = CliRunner().invoke(main, ["pair", str(labelled), "-o", str(tmp_path / "p.jsonl"), *extra])
        assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
    from prefbuild.recipe import RecipeError, load_recipe

    with pytest.raises(RecipeError, match="max_tokens needs tokenizer"):
        load_recipe("simulate", ["pairs.max_tokens=2048"])


def test_a_folder_without_a_tokenizer_and_an_unreachable_hub_are_one_line_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    import transformers

    from prefbuild.errors import PrefbuildError
    from prefbuild.pairs.length import TokenBudget

    with pytest.raises(PrefbuildError, match=r"cannot load it: no tokenizer in the folder \(none of tokenizer.json"):
        TokenBudget(str(tmp_path), 512)  # transformers' own first line ends in 'from one of:'

    def unreachable(name: str, **kwargs: object) -> None:  # huggingface_hub warns once per retry, then raises
        for attempt in range(1, 6):
            logging.getLogger("huggingface_hub.utils._http").warning("Retrying in %ss [Retry %s/5].", attempt, attempt)
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files.")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", unreachable)
    level = logging.getLogger("huggingface_hub").level
    with caplog.at_level(logging.WARNING), pytest.raises(PrefbuildError, match="couldn't connect"):
        TokenBudget("someone/some-model", 512)
    assert not [record for record in caplog.records if "Retrying" in record.getMessage()]
    assert logging.getLogger("huggingface_hub").level == level  # put back


def test_a_budget_nothing_fits_says_so_and_a_tokenizer_alone_is_warned(tmp_path: Path, tokenizer_folder: str,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    run = CliRunner().invoke(main, ["run", "simulate", "--set", "env.num_tasks=4", "--out", str(tmp_path / "run"),
                                    "--quiet"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    labelled = str(tmp_path / "run" / "labelled.jsonl")
    tight = CliRunner().invoke(main, ["pair", labelled, "-o", str(tmp_path / "none.jsonl"), "--recipe", "simulate",
                                      "--max-tokens", "16", "--tokenizer", tokenizer_folder], catch_exceptions=False)
    assert tight.exit_code == 0 and ": 0 pairs" in tight.output
    assert "every pair was longer than max_tokens" in tight.output
    with caplog.at_level("WARNING"):
        alone = CliRunner().invoke(main, ["pair", labelled, "-o", str(tmp_path / "all.jsonl"), "--recipe", "simulate",
                                          "--tokenizer", tokenizer_folder], catch_exceptions=False)
    assert alone.exit_code == 0 and "is used only to count max_tokens" in caplog.text
    from prefbuild.recipe import RecipeError, load_recipe

    with pytest.raises(RecipeError, match="integer"):  # true is no token count
        load_recipe("simulate", ["pairs.max_tokens=true", f"pairs.tokenizer={tokenizer_folder}"])
