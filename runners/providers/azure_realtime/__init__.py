"""Azure OpenAI Realtime (`AzureRealtimeLLMService`): OpenAI's Realtime protocol at an Azure
resource (its v1 surface, an `api-key` header, the deployment as `?model=`).

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner`), `fake.py` (its
local fake, `--fake`). Nothing is imported here, so reading the entry loads nothing else."""
