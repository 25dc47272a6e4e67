"""The judge kinds: the one list behind every `--judge` (run, demo, judge, resume, campaign), a
campaign spec's `judge` and the new-run dialog. A new backend goes here and into
`arena_tui.judge.factory.make_backend`; every surface then offers it.
"""

from __future__ import annotations

HEURISTIC = "heuristic"  # the offline judge: always available, labelled wherever its scores are shown
LOCAL = "local"  # any OpenAI-compatible server that needs no key (Ollama, vLLM, llama.cpp): never picked by auto
# what `arena_tui.judge.factory.make_backend` builds
BACKENDS = ("openai", "anthropic", "google", "bedrock", LOCAL, HEURISTIC)
AUTO = "auto"  # the first kind of AUTO_ORDER whose credentials are set, else the heuristic
NONE = "none"  # do not judge
KINDS = (AUTO, *BACKENDS)  # what a command that judges takes
KINDS_OR_NONE = (*KINDS, NONE)  # what one that judges as a side effect takes (run, demo, campaign, the dialog)

#: `auto`, in order: a kind and the environment variables any one of which selects it. The order
#: kept from before the Anthropic and Google judges (openai, then bedrock) comes first, so a setup
#: that resolved to one of those still does. The keyless local judge is never chosen by itself: a
#: server may or may not be listening, and a run is not sent to one nobody asked for.
AUTO_ORDER: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("openai", ("OPENAI_API_KEY",)),
    ("bedrock", ("AWS_ACCESS_KEY_ID", "AWS_PROFILE")),
    ("anthropic", ("ANTHROPIC_API_KEY",)),
    ("google", ("GOOGLE_API_KEY", "GEMINI_API_KEY")),
)

#: each LLM judge's model when `--judge-model` names none: the reference harness's judges (Claude
#: Opus 4.5, GPT-5.2) where it has one; the ids as each provider's API spells them
DEFAULT_MODELS = {
    "openai": "gpt-5.2",
    "anthropic": "claude-opus-4-5",
    "google": "gemini-2.5-pro",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    LOCAL: "llama3.2",  # `ollama pull llama3.2`; any model the server has
}

#: one line per kind, for `--help` and the new-run dialog
DESCRIPTIONS = {
    "openai": "OpenAI (OPENAI_API_KEY)",
    "anthropic": "Anthropic Claude (ANTHROPIC_API_KEY)",
    "google": "Google Gemini (GOOGLE_API_KEY or GEMINI_API_KEY)",
    "bedrock": "Claude on AWS Bedrock (AWS credentials)",
    LOCAL: "a local OpenAI-compatible server, no key (Ollama, vLLM, llama.cpp)",
    HEURISTIC: "offline word overlap, not an LLM",
}
