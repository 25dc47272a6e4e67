"""What the AWS runners share (Nova Sonic, Bedrock text): the region and its Bedrock endpoint."""

from __future__ import annotations

import os

DEFAULT_REGION = "us-east-1"


def aws_region() -> str:
    """`AWS_REGION`, else `AWS_DEFAULT_REGION`, else us-east-1 (as the AWS SDKs read it)."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def bedrock_runtime(region: str | None = None) -> str:
    """The region's Bedrock runtime endpoint."""
    return f"https://bedrock-runtime.{region or aws_region()}.amazonaws.com"
