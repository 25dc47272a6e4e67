"""The pieces the provider fakes share (`runners/fakes/`: endpointer, wire, speech, tls, script, server)."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from runners.fakes.endpointer import Endpointer
from runners.fakes.script import Script, ScriptedReply
from runners.fakes.speech import synthesize
from runners.fakes.tls import self_signed_tls
from runners.fakes.wire import spread_words
from tests.provider_harness import read_wav_pcm16



def test_endpointer_ends_a_real_utterance_only_after_enough_silence(shared_data: Path) -> None:
    wav = shared_data / "conversation_bench" / "audio" / "turn_003.wav"
    pcm = read_wav_pcm16(wav, 16000)
    ep = Endpointer(16000, silence_ms=500)
    frame = 640  # 20 ms
    edges = [ep.feed(pcm[i : i + frame]) for i in range(0, len(pcm), frame)]
    assert edges.count("started") >= 1 and "stopped" not in edges[-5:]
    tail = [ep.feed(b"\0" * frame) for _ in range(30)]  # 600 ms of silence
    assert tail.count("stopped") == 1  # the WAV's own trailing quiet counts towards the 500 ms


def test_endpointer_needs_exactly_the_silence_it_was_given() -> None:
    ep = Endpointer(16000, silence_ms=500)
    tone = synthesize("a tone of a second or so", 16000)
    assert [ep.feed(tone[i : i + 640]) for i in range(0, len(tone) - 640 * 3, 640)].count("started") == 1
    tail = [ep.feed(b"\0" * 640) for _ in range(40)]
    assert tail.index("stopped") in (24, 25, 26, 27)  # ~25 silent 20 ms frames, the fade-out counting as quiet


def test_spread_words_keeps_every_word_once() -> None:
    text = "Your suggestion has been submitted, thank you."
    for n in (1, 3, 7, 20):
        deltas = spread_words(text, n)
        assert len(deltas) == n and "".join(deltas) == text


def test_tone_length_follows_text_and_espeak_is_used_when_asked() -> None:
    short, long = synthesize("Hi.", 24000), synthesize("A much longer reply than that.", 24000)
    assert len(short) == int(0.3 * 24000) * 2 and len(long) > len(short)
    import shutil

    if shutil.which("espeak-ng"):
        speech = synthesize("Hello there.", 16000, voice="espeak")
        assert len(speech) > 16000  # more than half a second of audio at 16 kHz
    else:
        with pytest.raises(RuntimeError, match="espeak-ng is not installed"):
            synthesize("Hello there.", 16000, voice="espeak")


def test_script_falls_back_to_its_default_reply() -> None:
    script = Script(replies=[ScriptedReply(text="one")])
    assert script.reply(0).text == "one" and script.reply(5).text == "Okay."


def test_self_signed_tls_client_trusts_only_that_certificate(tmp_path: Path) -> None:
    tls = self_signed_tls(tmp_path)
    assert tls.client.verify_mode == ssl.CERT_REQUIRED and tls.client.check_hostname
    assert tls.cert_pem.read_text().startswith("-----BEGIN CERTIFICATE-----")
    other = self_signed_tls(tmp_path / "other" if (tmp_path / "other").mkdir() is None else None)
    assert other.cert_pem.read_bytes() != tls.cert_pem.read_bytes()


def test_script_for_benchmark_makes_every_expected_call_of_a_turn() -> None:
    """demo_bench turn 5 expects two check_part_stock calls (a list): the golden script makes
    both, in order, with the flexible `part` kept as given."""
    from benchmarks.registry import load_benchmark
    from runners.fakes.script import script_for_benchmark

    demo = load_benchmark("demo_bench")
    (reply,) = script_for_benchmark(demo, [5]).replies
    expected = demo.turns[5].expected_calls
    assert len(expected) == 2
    assert [(c.name, c.args) for c in reply.tool_calls] == [(e.name, e.args) for e in expected]
    single = script_for_benchmark(demo, [2]).replies[0]
    assert [c.name for c in single.tool_calls] == ["check_repair_slots"]
    assert script_for_benchmark(demo, [0]).replies[0].tool_calls == []


async def test_a_reply_to_a_client_that_dropped_ends_quietly() -> None:
    """A fake streaming a reply when the client's connection resets: its sends are dropped (no
    "Task exception was never retrieved" on the campaign's terminal), and what went out before
    arrived."""
    import asyncio

    import aiohttp
    from aiohttp import web

    from runners.fakes.server import ServerSocket

    outcome: asyncio.Future = asyncio.get_running_loop().create_future()
    dropped = asyncio.Event()

    async def handler(request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        sock = ServerSocket(ws)
        await sock.send_json({"n": 0})
        await dropped.wait()
        try:
            for n in range(1, 51):
                await sock.send_json({"n": n})
                await sock.send_bytes(b"\0" * 960)
                await asyncio.sleep(0.005)
        except Exception as e:  # noqa: BLE001 - what the test is about
            outcome.set_result(e)
        else:
            outcome.set_result(None)
        return ws

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(f"http://127.0.0.1:{port}/")
            assert (await ws.receive_json()) == {"n": 0}
            ws._response.connection.transport.abort()  # the client is gone without a close frame
            dropped.set()
            assert await asyncio.wait_for(outcome, 10) is None
    finally:
        await runner.cleanup()
