"""A sweep against an OpenAI-compatible server (httpx.MockTransport): 429s are honoured and
counted per arm as transport retries, and every run's record is kept."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from inspector.commands.sweep_run import arm_scenarios, execute, jobs_for, report_of
from inspector.core.provider import Provider
from inspector.core.scenario import Scenario
from inspector.providers.openai import OpenAIProvider
from inspector.store import Store
from inspector.sweeps.model import Arm, SweepSpec

REPLY = {
    "id": "x",
    "object": "chat.completion",
    "model": "gpt-4o-mini",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
}


def test_429s_are_retried_and_counted_per_arm(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'name = "http"\n[model]\nprovider = "openai"\nname = "gpt-4o-mini"\n'
        'base_url = "http://server.test/v1"\nstream = false\n[prompt]\nuser = "hi"\n',
        encoding="utf-8",
    )
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] % 3 == 1:  # every third request is told to come back
            return httpx.Response(429, headers={"retry-after": "0"}, json={"error": "slow down"})
        return httpx.Response(200, json=REPLY)

    async def no_sleep(seconds: float) -> None:
        return None

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))

    def make(s: Scenario, shared: httpx.AsyncClient | None) -> Provider:
        return OpenAIProvider(s.model, client=client, sleep=no_sleep)

    spec = SweepSpec(
        scenario=str(scenario),
        arms=[Arm(name="a"), Arm(name="b", overrides=["model.temperature=0.5"])],
        repeat=3,
        seed=1,
        baseline="a",
        concurrency=1,  # one at a time: which request is refused is then fixed
    )
    jobs = jobs_for(spec, arm_scenarios(spec), spec.slots())
    with Store.open() as store:
        store.create_sweep("swhttp", "http", "t", spec.model_dump(mode="json"))
        execute(store, "swhttp", spec, jobs, progress=lambda j, r: None, make_provider=make)
        report = report_of(store, store.sweep("swhttp"))
        records = [store.load(r["run_id"]) for r in store.sweep_runs("swhttp")]
    # 6 runs, each one request; requests 1, 4, 7 were refused once: 9 requests in all.
    assert calls["n"] == 9
    assert sum(r.budgets.transport_retries for r in records) == 3
    assert sum(a.transport_retries for a in report.arms) == 3
    assert [a.pass_rate for a in report.arms] == [1.0, 1.0]
    assert all(a.cost.per_run is not None and a.cost.per_run > 0 for a in report.arms)
    assert "sk-" not in json.dumps([r.model_dump(mode="json") for r in records])
