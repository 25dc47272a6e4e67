"""Benchmarks as data: model, loader, registry, download, synthesis and our demo benchmark."""
