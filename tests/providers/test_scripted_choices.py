"""The scripted model's weighted choices: drawn per call from the seed, heeding feedback."""

from __future__ import annotations

from collections import Counter

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.messages import Message
from inspector.core.provider import Completed
from inspector.core.records import StepRequest
from inspector.core.scenario import ScriptEntry, scenario_from_dict
from inspector.providers.scripted import ScriptedProvider

CHOICES = {
    "choices": [
        {"text": "A", "weight": 3, "weight_if_seen": {"no A": 0.01}},
        {"text": "B", "weight": 1},
    ]
}


async def answer(provider: ScriptedProvider, seen: str = "") -> str:
    request = StepRequest(system="", messages=[Message(role="user", content=seen or "hi")])
    async for chunk in provider.stream(request):
        if isinstance(chunk, Completed):
            return chunk.response.text
    raise AssertionError("no response")


async def test_the_same_seed_draws_the_same_answers() -> None:
    script = [CHOICES] * 5
    first = [await answer(p) for p in [ScriptedProvider(script, seed=7)] for _ in range(5)]
    again = ScriptedProvider(script, seed=7)
    assert [await answer(again) for _ in range(5)] == first


async def test_draws_follow_the_weights_and_what_the_request_shows() -> None:
    plain = Counter([await answer(ScriptedProvider([CHOICES], seed=s)) for s in range(400)])
    heeded = Counter(
        [await answer(ScriptedProvider([CHOICES], seed=s), "no A please") for s in range(400)]
    )
    # 3:1 weights: A about 300 times in 400 (a fixed set of seeds: the same counts every run).
    assert 250 < plain["A"] < 350
    assert heeded["A"] < 20


async def test_a_replay_skipping_calls_draws_what_the_run_drew() -> None:
    script = [CHOICES] * 6
    run = ScriptedProvider(script, seed=3)
    drawn = [await answer(run) for _ in range(6)]
    replay = ScriptedProvider(script, seed=3)
    replay.skip_to(4)
    assert [await answer(replay), await answer(replay)] == drawn[4:]


def test_an_entry_with_choices_has_nothing_else() -> None:
    with pytest.raises(ValueError, match="choices: an entry with choices has nothing else"):
        ScriptEntry.model_validate({"text": "x", **CHOICES})
    with pytest.raises(ValueError, match="a choice cannot have choices"):
        ScriptEntry.model_validate({"choices": [CHOICES]})
    with pytest.raises(ScenarioError, match=r"script\[0\]\.choices\[0\]\.weight"):
        scenario_from_dict(
            {"name": "x", "prompt": {"user": "u"}, "script": [{"choices": [{"weight": 0}]}]},
            source="x.toml",
            base_dir=__import__("pathlib").Path("."),
        )
    # A dumped scenario writes every field out; it loads back.
    entry = ScriptEntry.model_validate(CHOICES)
    assert ScriptEntry.model_validate(entry.model_dump()) == entry
