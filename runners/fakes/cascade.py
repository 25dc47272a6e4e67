"""A cascade's local fakes together (`--fake` on `cascade:<stt>+<llm>+<tts>`): its STT's, its
text model's and its TTS's, each speaking its own wire protocol on 127.0.0.1, started and
stopped as one `LocalFake` (the run's endpoint is the text model's). A local part (`whisper`,
`piper`, `kokoro`) has none: it runs in the process as it is."""

from __future__ import annotations

from typing import Any

from runners.fakes.local import LocalFake


class CascadeFakes:
    def __init__(self, stt: LocalFake | None, llm: LocalFake, tts: LocalFake | None) -> None:
        self.stt, self.llm, self.tts = stt, llm, tts

    @property
    def parts(self) -> list[LocalFake]:
        return list({id(f): f for f in (self.stt, self.llm, self.tts) if f is not None}.values())  # one shared fake once

    @property
    def base_url(self) -> str:
        return self.llm.base_url

    async def start(self) -> CascadeFakes:
        for fake in self.parts:
            await fake.start()
        return self

    async def stop(self) -> None:
        for fake in self.parts:
            await fake.stop()

    def tool_results(self) -> list[dict[str, Any]]:
        """A cascade's calls are its text model's."""
        return self.llm.tool_results()

    def kickoff_replies(self, after: int = 1) -> int:
        return self.llm.kickoff_replies(after)
