"""The dataset card says when data is simulated, and only then."""

from __future__ import annotations

from prefbuild.hub.card import CardInfo, render_card_body, simulation_notice
from prefbuild.recipe import load_recipe
from prefbuild.records import TeacherInfo

REAL = "every rejected answer is a real output of the teacher"


def _body(info: CardInfo) -> str:
    return render_card_body(info, [], {"pairs": 0}, None)


def test_a_model_teacher_card_says_rejected_answers_are_its_outputs() -> None:
    info = CardInfo.from_recipe(load_recipe("quickstart").resolved_dict())
    assert not info.simulated and simulation_notice(info) is None
    assert REAL in _body(info)


def test_the_scripted_recipe_card_says_simulated() -> None:
    info = CardInfo.from_recipe(load_recipe("simulate").resolved_dict())
    assert info.simulated and info.fully_simulated
    body = _body(info)
    assert "All of this data is simulated." in body and REAL not in body


def test_the_episodes_decide_over_the_recipe() -> None:
    recipe_says_model = CardInfo.from_recipe(load_recipe("quickstart").resolved_dict())
    mixed = recipe_says_model.with_teachers([TeacherInfo(backend="scripted", model="scripted-expert"),
                                             TeacherInfo(backend="vllm", model="Qwen/Qwen3-4B")])
    assert mixed.simulated and not mixed.fully_simulated
    assert "Part of this data is simulated." in _body(mixed)
    assert recipe_says_model.with_teachers([]) == recipe_says_model
