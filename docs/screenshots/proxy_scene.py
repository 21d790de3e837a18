"""Renders ``proxy.png``: a Pydantic AI retry recorded by the recording proxy hosted in the
window (Proxy › Start). A tiny upstream on 127.0.0.1 answers with canned chat completions; a
Pydantic AI agent calls the proxy, gets a markdown draft, its output validator raises
``ModelRetry`` and the agent gets a plain answer: one run "via proxy", two attempts, the retry
prompt recorded between them as feedback.

    .venv/bin/python docs/screenshots/proxy_scene.py [OUT_DIR]

Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from aiohttp import web

from inspector.app.app import save_screenshot
from inspector.app.driven import drive_window, next_emission
from inspector.app.proxy.proxy_settings import ProxySettings
from inspector.app.shell.main_window import MainWindow

REPLIES = [
    "**Hi Sam!** The meeting moved to *3pm* today.",
    "Hi Sam, the meeting moved to 3pm today, same room.",
]
SYSTEM = "You write SMS messages. Plain text only."
FEEDBACK = "Plain text only: no markdown characters. Try again."


def completion(text: str, n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1764000000 + n,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 31 + 20 * n, "completion_tokens": 14, "total_tokens": 45},
    }


async def upstream() -> tuple[web.AppRunner, str]:
    calls = iter(range(len(REPLIES)))

    async def chat(_request: web.Request) -> web.Response:
        n = next(calls)
        return web.json_response(completion(REPLIES[n], n))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1"


async def agent(base_url: str) -> None:
    """A Pydantic AI agent whose output validator rejects markdown once, pointed at the proxy:
    its retry prompt is the feedback the window shows between the two attempts."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=base_url, api_key="sk-scene-not-a-key")
    sms = Agent(OpenAIChatModel("gpt-4o-mini", provider=provider), instructions=SYSTEM, retries=2)

    @sms.output_validator
    def plain(output: str) -> str:
        if any(c in output for c in "*_#`"):
            raise ModelRetry(FEEDBACK)
        return output

    await sms.run("Tell Sam the meeting moved to 3pm.")


async def scene(window: MainWindow, out: Path) -> None:
    server, base = await upstream()
    window.proxy.ask = lambda _parent, _saved: ProxySettings(
        port=0, upstream=base, upstream_anthropic=base
    )
    (url,) = await next_emission(window.proxy.urlChanged, window.proxy.start)
    await agent(f"{url}/v1")
    await next_emission(window.proxy.urlChanged, window.proxy.stop)  # the run ends
    await server.cleanup()
    for _ in range(50):
        await asyncio.sleep(0.02)
    window.store_watch.check()
    (summary,) = window.store.runs()
    window.library.select_run(summary.run_id)
    for _ in range(50):
        await asyncio.sleep(0.02)
    window.timeline.select_last()
    save_screenshot(window, out / "proxy.png")
    print("wrote proxy.png", json.dumps(summary.model_dump(mode="json")["via"]))


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent).resolve()
    with tempfile.TemporaryDirectory(prefix="agent-inspector-proxy-scene-") as tmp:
        os.environ["AGENT_INSPECTOR_PROXY_SETTINGS"] = str(Path(tmp) / "proxy.json")
        drive_window(Path(tmp) / "runs.sqlite3", lambda window: scene(window, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
