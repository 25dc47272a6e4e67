"""The judge kinds, declared once (`JUDGES`): the one table behind every `--judge` (run, demo,
judge, resume, campaign), a campaign spec's `judge`, the new-run dialog's list, `auto`'s order,
each backend's class, default model and key names. A new backend is its row here and its class
(`arena_tui.judge`); `make_backend` builds it and every surface offers it.
"""

from __future__ import annotations

from dataclasses import dataclass

HEURISTIC = "heuristic"  # the offline judge: always available, labelled wherever its scores are shown
LOCAL = "local"  # any OpenAI-compatible server that needs no key (Ollama, vLLM, llama.cpp): never picked by auto
AUTO = "auto"  # the first kind of AUTO_ORDER whose credentials are set, else the heuristic
NONE = "none"  # do not judge


@dataclass(frozen=True)
class Judge:
    """One judge kind: `description` (`--help`), `label` (the new-run dialog), `backend` (the class
    `arena_tui.judge.factory.make_backend` builds, "module:Class" in `arena_tui.judge`, imported only
    when chosen), `takes` (what that class is given of `--judge-model`, `--judge-base-url`, … as
    keywords), `model` (its model when `--judge-model` names none), `key_envs` (the environment
    variables holding its key, the first set read; any set selects it for `auto`), `auto` (its place
    in `auto`'s order; None: never chosen by itself) and `credentials` (how `auto`'s reason names them)."""

    kind: str
    description: str
    label: str
    backend: str
    takes: tuple[str, ...] = ("model", "base_url", "api_key", "timeout_s")
    model: str | None = None
    key_envs: tuple[str, ...] = ()
    auto: int | None = None
    credentials: str = ""

    @property
    def credential_names(self) -> str:
        """`OPENAI_API_KEY`, `GOOGLE_API_KEY or GEMINI_API_KEY`, `AWS credentials`."""
        return self.credentials or " or ".join(self.key_envs)


#: every kind a run may be judged by, in `--help`'s order. The LLM judges' default models are the
#: reference harness's judges (Claude Opus 4.5, GPT-5.2) where it has one, the ids as each API spells
#: them. `auto`'s order keeps the one from before the Anthropic and Google judges (openai, then
#: bedrock) first, so a setup that resolved to one of those still does. The keyless local judge is
#: never chosen by itself: a server may or may not be listening, and a run is not sent to one nobody asked for.
JUDGES: tuple[Judge, ...] = (
    Judge("openai", "OpenAI (OPENAI_API_KEY)", "OpenAI", "openai_judge:OpenAIJudge", model="gpt-5.2",
          key_envs=("OPENAI_API_KEY",), auto=0),
    Judge("anthropic", "Anthropic Claude (ANTHROPIC_API_KEY)", "Anthropic", "anthropic_judge:AnthropicJudge",
          model="claude-opus-4-5", key_envs=("ANTHROPIC_API_KEY",), auto=2),
    Judge("google", "Google Gemini (GOOGLE_API_KEY or GEMINI_API_KEY)", "Google", "google_judge:GoogleJudge",
          model="gemini-2.5-pro", key_envs=("GOOGLE_API_KEY", "GEMINI_API_KEY"), auto=3),  # (the client's own order)
    Judge("bedrock", "Claude on AWS Bedrock (AWS credentials)", "Bedrock", "bedrock_judge:BedrockJudge",
          takes=("model", "region", "endpoint_url", "timeout_s"), model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
          key_envs=("AWS_ACCESS_KEY_ID", "AWS_PROFILE"), auto=1, credentials="AWS credentials"),
    Judge(LOCAL, "a local OpenAI-compatible server, no key (Ollama, vLLM, llama.cpp)", "local server (no key)",
          "openai_judge:LocalJudge", takes=("model", "base_url", "timeout_s"), model="llama3.2"),  # `ollama pull llama3.2`
    Judge(HEURISTIC, "offline word overlap, not an LLM", "heuristic (offline)", "heuristic:HeuristicJudge", takes=()),
)
BY_KIND: dict[str, Judge] = {j.kind: j for j in JUDGES}
#: what `arena_tui.judge.factory.make_backend` builds
BACKENDS: tuple[str, ...] = tuple(BY_KIND)
KINDS = (AUTO, *BACKENDS)  # what a command that judges takes
KINDS_OR_NONE = (*KINDS, NONE)  # what one that judges as a side effect takes (run, demo, campaign, the dialog)
#: `auto`, in order: a kind and the environment variables any one of which selects it
AUTO_ORDER: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (j.kind, j.key_envs) for j in sorted((j for j in JUDGES if j.auto is not None), key=lambda j: j.auto or 0))
#: each judge's model when `--judge-model` names none
DEFAULT_MODELS: dict[str, str] = {j.kind: j.model for j in JUDGES if j.model is not None}
#: one line per kind, for `--help`
DESCRIPTIONS: dict[str, str] = {j.kind: j.description for j in JUDGES}
#: every choice of the new-run dialog, as it names them: auto first, the offline judge, the LLM judges, none last
DIALOG: tuple[tuple[str, str], ...] = (
    ("auto (LLM if a key is set, else heuristic)", AUTO), (BY_KIND[HEURISTIC].label, HEURISTIC),
    *((j.label, j.kind) for j in JUDGES if j.kind != HEURISTIC), (NONE, NONE))
