"""The ElevenLabs fake against Pipecat's own `ElevenLabsTTSService`: what the service sends
(the multi-stream-input URL and its query, each context's text, flush and close) arrives at the
fake as the real service would get it, the service turns the fake's audio and alignment into
the reply's words, and the key travels only in its header: never in a record or a log line."""

from __future__ import annotations

import json

import pytest
import websockets
from loguru import logger
from pipecat.frames.frames import (
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
)
from pipecat.pipeline.worker import PipelineParams
from pipecat.services.elevenlabs.tts import ElevenLabsTTSService
from pipecat.tests.utils import SleepFrame, run_test

from runners.fakes.elevenlabs import ElevenLabsFake

KEY = "xi-key-under-test-7f3a9c"
VOICE = "JBFqnCBsd6RMkjVDRZzb"
REPLY = ["Hello there. ", "How can I help you today?"]


async def test_what_pipecat_sends_arrives_and_its_words_come_back() -> None:
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m)), level="TRACE")
    try:
        async with ElevenLabsFake() as fake:
            tts = ElevenLabsTTSService(api_key=KEY, url=fake.base_url, settings=ElevenLabsTTSService.Settings(voice=VOICE))
            frames = [LLMFullResponseStartFrame(), *(LLMTextFrame(t) for t in REPLY), LLMFullResponseEndFrame(), SleepFrame(2.0)]
            down, _ = await run_test(tts, frames_to_send=frames, pipeline_params=PipelineParams(audio_out_sample_rate=24000))
    finally:
        logger.remove(sink)
    (sock,) = fake.sockets
    assert sock.voice_id == VOICE and sock.auth_present
    assert sock.query == {"model_id": "eleven_flash_v2_5", "output_format": "pcm_24000", "auto_mode": "true"}
    # one context for the reply: both sentences in it, flushed and closed at the reply's end, answered with isFinal
    (ctx_id,) = sock.contexts
    ctx = fake.contexts[ctx_id]
    assert " ".join(t.strip() for t in ctx.texts) == "".join(REPLY).strip()
    assert ctx.flushes == 1 and ctx.closed and ctx.final and ctx.audio_ms > 0
    assert sock.closed == "client:close_socket"  # Pipecat's end of the pipeline asks the server to close
    # the service played the fake's audio in that context and said the words the alignment carried
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    assert audio and {(f.context_id, f.sample_rate) for f in audio} == {(ctx_id, 24000)}
    assert [f.text for f in down if isinstance(f, TTSTextFrame)] == "".join(REPLY).split()
    # the key: only in the header, never kept or logged
    assert lines and not any(KEY in line for line in lines)
    assert KEY not in json.dumps([s.model_dump() for s in fake.sockets]) + json.dumps([c.model_dump() for c in fake.contexts.values()])


async def test_the_fake_refuses_what_the_real_service_refuses() -> None:
    """No key: the handshake fails. A sixth open context, or voice settings that change after
    the first context, close the socket with 1008."""
    async with ElevenLabsFake() as fake:
        url = f"{fake.base_url}/v1/text-to-speech/{VOICE}/multi-stream-input?model_id=eleven_flash_v2_5&output_format=pcm_24000"
        with pytest.raises(websockets.InvalidStatus):
            async with websockets.connect(url):
                pass
        for opening in ([{"text": " ", "context_id": f"c{i}"} for i in range(6)],
                        [{"text": " ", "context_id": "a", "voice_settings": {"speed": 1.0}},
                         {"text": " ", "context_id": "b", "voice_settings": {"speed": 1.1}}]):
            async with websockets.connect(url, additional_headers={"xi-api-key": KEY}) as ws:
                for msg in opening:
                    await ws.send(json.dumps(msg))
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await ws.recv()
            assert closed.value.rcvd.code == 1008
        assert [s.closed.split(" ")[0] for s in fake.sockets] == ["server:1008", "server:1008"]
        assert [len(s.contexts) for s in fake.sockets] == [5, 1]
