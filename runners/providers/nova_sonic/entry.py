"""Amazon Nova Sonic on Bedrock (`AWSNovaSonicLLMService`, our subclass in `service.py`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="nova-sonic",
        runner="runners.providers.nova_sonic.runner:NovaSonicRunner",
        fake_class="runners.providers.nova_sonic.fake:NovaSonicFake",
        aliases={
            "nova-sonic": "amazon.nova-sonic-v1:0",
            "nova-sonic-2": "amazon.nova-2-sonic-v1:0",
            "nova-2-sonic": "amazon.nova-2-sonic-v1:0",
        },
        key_env=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        packages=("aws_sdk_bedrock_runtime", "smithy_aws_core", "pipecat.services.aws.nova_sonic.llm"),
        caps=Capabilities(output_rate=24000, session_limit_s=480.0),  # (AWS ends a Nova Sonic stream after ~8 minutes)
    ),
)
