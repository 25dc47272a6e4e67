"""Local servers on 127.0.0.1 that speak real provider HTTP APIs (for offline tests)."""
