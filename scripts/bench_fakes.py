"""Cost of exercising each provider's real Pipecat service against its local fake.

Runs greeting + one tool-calling user turn (conversation_bench turn 10) per provider and
prints wall time, process CPU time and what crossed the wire. Usage:
    .venv/bin/python -m scripts.bench_fakes [--speed 1.0] [--providers gemini,ultravox,nova,glm,grok]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from loguru import logger

REPO = Path(__file__).resolve().parents[1]

from runners.fakes.script import Script, ScriptedReply, ToolCallSpec  # noqa: E402
from tests.provider_harness import ServiceRig, read_wav_pcm16, scripted_tool_handler, shared_root, tools_schema  # noqa: E402


async def scenario(provider: str, speed: float) -> dict:
    bench = shared_root(REPO) / "conversation_bench"
    t = json.loads((bench / "turns.jsonl").read_text().splitlines()[10])
    call = t["required_function_call"]
    script = Script(replies=[
        ScriptedReply(text="Hello, welcome to the fair."),
        ScriptedReply(user_transcript=t["input"], tool_calls=[ToolCallSpec(name=call["name"], args=call["args"])], text="Submitted."),
    ])
    tools = tools_schema(json.loads((bench / "tools.json").read_text()))
    prompt = (bench / "system_prompt.txt").read_text()
    rate, mark, send_context = 24000, False, True
    if provider == "gemini":
        from google.genai.types import HttpOptions
        from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

        from runners.providers.gemini_live.fake import GeminiLiveFake
        fake = await GeminiLiveFake(script).start()
        llm = GeminiLiveLLMService(api_key="k", system_instruction=prompt, tools=tools,
                                   http_options=HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client}))
        rate = 16000
    elif provider == "ultravox":
        from pipecat.services.ultravox.llm import JoinUrlInputParams, UltravoxRealtimeLLMService

        from runners.providers.ultravox.fake import UltravoxFake
        fake = await UltravoxFake(script).start()
        llm = UltravoxRealtimeLLMService(params=JoinUrlInputParams(join_url=fake.join_url()))
        send_context = False
    elif provider == "nova":
        from runners.providers.nova_sonic.fake import LocalNovaSonicLLMService, NovaSonicFake
        fake = NovaSonicFake(script)
        llm = LocalNovaSonicLLMService(fake=fake, settings=LocalNovaSonicLLMService.Settings(system_instruction=prompt), tools=tools)
        rate = 16000
    elif provider == "glm":
        from runners.providers.glm_realtime.fake import GLMRealtimeFake
        from runners.providers.glm_realtime.service import GLMRealtimeLLMService
        fake = await GLMRealtimeFake(script).start()
        llm = GLMRealtimeLLMService(api_key="k", base_url=fake.base_url, system_instruction=prompt[:9000], tools=tools)
        mark = True
    elif provider == "grok":
        from pipecat.services.xai.realtime import events as xe
        from pipecat.services.xai.realtime.llm import GrokRealtimeLLMService

        from runners.providers.grok.fake import XaiRealtimeFake
        fake = await XaiRealtimeFake(script).start()
        llm = GrokRealtimeLLMService(api_key="k", base_url=fake.base_url, settings=GrokRealtimeLLMService.Settings(session_properties=xe.SessionProperties(instructions=prompt, tools=tools)))
    else:
        raise SystemExit(f"unknown provider {provider!r}")
    llm.register_function(None, scripted_tool_handler({call["name"]: t["function_call_response"]}, []))
    wav = read_wav_pcm16(bench / t["audio_file"], rate)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        async with ServiceRig(llm, sample_rate=rate, speed=speed, send_context=send_context) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, timeout=60, what="greeting")
            rig.feeder.play(wav, mark_turn=mark)
            await rig.wait_until(lambda: "Submitted" in rig.collector.text, timeout=120, what="reply")
            rec = fake.connections[0]
            out = {
                "provider": provider, "wall_s": round(time.perf_counter() - wall, 2), "cpu_s": round(time.process_time() - cpu, 2),
                "user_wav_ms": round(len(wav) / rate / 2 * 1000), "audio_in_ms": round(rec.audio_in_ms),
                "client_messages": len(rec.messages) + rec.audio_in_chunks, "bot_audio_ms": round(rig.collector.audio_ms),
            }
    finally:
        if hasattr(fake, "stop"):
            await fake.stop()
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--providers", default="gemini,ultravox,nova,glm,grok")
    args = ap.parse_args()
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    print(f"speed {args.speed}x; greeting + one tool turn (conversation_bench turn 10)")
    for p in args.providers.split(","):
        print(json.dumps(await scenario(p.strip(), args.speed)))


if __name__ == "__main__":
    asyncio.run(main())
