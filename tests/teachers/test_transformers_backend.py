"""The in-process transformers teacher on the converted embedded model (CPU)."""

from __future__ import annotations

import asyncio

import pytest

from prefbuild.records import Message
from prefbuild.teachers import make_teacher
from prefbuild.teachers.base import Sampling, TeacherError, TeacherRequest
from prefbuild.teachers.embedded import EMBEDDED_MODEL_NAME, ensure_embedded_model
from prefbuild.teachers.transformers_backend import TransformersTeacher

COUNT = "Count from 1 to 10, one number per line."


def request(text: str, **sampling: object) -> TeacherRequest:
    return TeacherRequest([Message(role="user", content=text)], Sampling(**sampling))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(ensure_embedded_model())


def test_generation_batching_stop_strings_and_counts(tokenizer):
    teacher = make_teacher({"backend": "transformers", "model": "embedded", "max_batch_size": 4})
    assert isinstance(teacher, TransformersTeacher) and teacher.model == EMBEDDED_MODEL_NAME

    async def go():
        async with teacher:
            single = await teacher.complete(request(COUNT, temperature=0.0, max_tokens=24))
            batch = await asyncio.gather(
                *(teacher.complete(request(text, temperature=0.0, max_tokens=24)) for text in [COUNT, "Hi!", COUNT])
            )
            stopped = await teacher.complete(request(COUNT, temperature=0.0, max_tokens=40, stop=("5",)))
            short = await teacher.complete(request(COUNT, temperature=0.0, max_tokens=5))
            sampled = await teacher.complete(request("Tell me a story.", temperature=1.0, max_tokens=12, n=3, seed=1))
            again = await teacher.complete(request("Tell me a story.", temperature=1.0, max_tokens=12, n=3, seed=1))
            return single, batch, stopped, short, sampled, again

    single, batch, stopped, short, sampled, again = asyncio.run(go())
    [completion] = single
    assert completion.text.strip()
    # Greedy decoding gives the same text whether or not the request shared a padded batch.
    assert batch[0][0].text == completion.text == batch[2][0].text
    messages = [{"role": "user", "content": COUNT}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    assert completion.prompt_tokens == batch[0][0].prompt_tokens == len(prompt_ids)
    assert batch[1][0].prompt_tokens < completion.prompt_tokens  # padding is not counted
    [stop] = stopped
    assert stop.finish_reason == "stop" and "4" in stop.text and "5" not in stop.text
    [length] = short
    assert length.finish_reason == "length" and length.completion_tokens == 5
    assert len(tokenizer(length.text, add_special_tokens=False)["input_ids"]) == 5
    assert len(sampled) == 3 and len({c.text for c in sampled}) > 1
    assert [c.text for c in sampled] == [c.text for c in again]


def test_output_constraints_it_cannot_honour_are_refused():
    async def go():
        async with TransformersTeacher() as teacher:
            extra = {"structured_outputs": {"regex": "[0-9]+"}}
            await teacher.complete(request("Pick a number.", max_tokens=4, extra_body=extra))

    with pytest.raises(TeacherError, match="cannot honour structured_outputs"):
        asyncio.run(go())


def test_the_model_runs_on_the_device_asked_for():
    """``auto`` is the GPU when torch sees one; prompts go to the model's device (run on a GPU machine too)."""
    import torch

    from prefbuild.teachers.transformers_backend import resolve_device

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(TeacherError, match="device 'toaster'"):
        resolve_device("toaster")

    async def go(device: str):
        async with TransformersTeacher(device=device) as teacher:
            [completion] = await teacher.complete(request(COUNT, temperature=0.0, max_tokens=8))
            return teacher._lm.device.type, completion

    where, completion = asyncio.run(go("auto"))
    assert where == resolve_device("auto")
    assert completion.completion_tokens == 8 and completion.text.strip()


def test_a_device_torch_cannot_use_is_a_teacher_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")

    async def go():
        async with TransformersTeacher(device="cuda"):
            pass

    with pytest.raises(TeacherError, match="on cuda"):
        asyncio.run(go())
