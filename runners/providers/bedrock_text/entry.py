"""Bedrock Converse text models (`AWSBedrockLLMService`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import TEXT, Provider

PROVIDERS = (
    Provider(
        name="bedrock",
        runner="runners.providers.bedrock_text.runner:BedrockTextRunner",
        fake_class="runners.providers.bedrock_text.fake:BedrockConverseFake",
        mode="text",
        aliases={
            "bedrock-nova-lite": "us.amazon.nova-lite-v1:0",
            "bedrock-nova-pro": "us.amazon.nova-pro-v1:0",
        },
        key_env=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        packages=("aiobotocore", "pipecat.services.aws.llm"),
        install_hint="pip install 'pipecat-ai[aws]'",
        caps=TEXT,
    ),
)
