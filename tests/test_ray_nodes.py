"""A Ray node's check and where workers go, without a cluster: `ray_nodes.probe` runs here as it
runs on a node (it is a plain function Ray ships there), and `spread` is the placement rule.
The same check on real nodes, one of them refused, is tests/test_ray_multinode.py's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena_tui.orchestration import ray_nodes
from arena_tui.orchestration.ray_cluster import code_id, is_local, on_this_host
from arena_tui.orchestration.ray_nodes import (Needs, Node, code_fingerprint, lack_of, probe, refused_line,
                                              sources_fingerprint, spread)

from . import connections
from .conftest import REPO_ROOT


def test_a_node_with_this_code_and_what_the_runs_need_lacks_nothing() -> None:
    assert probe(Needs(code_fingerprint(), code=code_id(), providers=(("sim", False, ""),), audio_bytes=1000)) == []


def test_other_code_is_named_with_both_fingerprints() -> None:
    [line] = probe(Needs("0" * 16))
    assert f"fingerprint {code_fingerprint()}, not {'0' * 16}" in line and "install the same version" in line, line


def test_a_cluster_found_here_must_run_this_very_checkout() -> None:
    [line] = probe(Needs(code_fingerprint(), code="/elsewhere/arena_tui"))
    assert line == f"it runs arena-tui from {code_id()}, not /elsewhere/arena_tui"


def test_a_providers_key_missing_on_the_node_is_named_and_a_fake_needs_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert probe(Needs(code_fingerprint(), providers=(("gpt-realtime", False, ""),))) == [
        "openai: environment variable OPENAI_API_KEY is not set (the API key)"]
    assert probe(Needs(code_fingerprint(), providers=(("gpt-realtime", True, ""),))) == []


def test_a_service_class_not_installed_on_the_node_is_named() -> None:
    lacks = probe(Needs(code_fingerprint(), providers=(("gpt-realtime", False, "no_such_pkg.svc:Service"),)))
    assert lacks == ["gpt-realtime: service class module 'no_such_pkg.svc' is not installed"]


def test_no_room_for_the_benchmarks_audio_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_nodes.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9 - 5 * 10**6, 5 * 10**6))
    [line] = probe(Needs(code_fingerprint(), audio_bytes=10**7))
    assert line.endswith("has 5 MB free, the benchmarks' audio needs 20 MB"), line


def test_the_fingerprint_is_of_the_sources_not_the_folder(tmp_path: Path) -> None:
    """A copy elsewhere of the same sources is the same code; one changed byte is other code."""
    roots = {}
    for package in ray_nodes.PACKAGES:
        shutil.copytree(REPO_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
        roots[package] = [tmp_path / package]
    assert sources_fingerprint(roots) == code_fingerprint()
    engine = tmp_path / "runners" / "engine.py"
    engine.write_text(engine.read_text() + "\n# changed\n")
    assert sources_fingerprint(roots) != code_fingerprint()


def test_a_failed_check_names_the_import_that_failed() -> None:
    err = RuntimeError("ray::probe() (pid=12, ip=127.0.0.1)\n  File \"x\", line 1\nModuleNotFoundError: No module named 'arena_tui.orchestration'")
    assert lack_of(err) == "it cannot import arena-tui (ModuleNotFoundError: No module named 'arena_tui.orchestration')"
    assert lack_of(ValueError("odd\nthing")) == "its check failed (ValueError: thing)"
    node = Node("ab" * 28, "10.0.0.2", 4, state="refused", why=lack_of(err))
    assert refused_line(node) == f"Ray node 10.0.0.2 (abababab) refused: {node.why}"


def _nodes() -> list[Node]:
    return [Node("b" * 56, "10.0.0.2", 2, state="ok"), Node("a" * 56, "10.0.0.1", 2, state="ok", head=True),
            Node("c" * 56, "10.0.0.3", 4, state="refused", why="x"), Node("d" * 56, "10.0.0.4", 0, state="ok")]


def test_workers_alternate_over_the_usable_nodes_head_first_never_past_a_nodes_cpus() -> None:
    assert [n.ip for n in spread(_nodes(), {}, 3)] == ["10.0.0.1", "10.0.0.2", "10.0.0.1"]
    assert [n.ip for n in spread(_nodes(), {}, 9)] == ["10.0.0.1", "10.0.0.2", "10.0.0.1", "10.0.0.2"]


def test_a_worker_lost_is_replaced_on_the_node_with_room_and_a_gone_node_gets_none() -> None:
    nodes = _nodes()
    assert [n.ip for n in spread(nodes, {"a" * 56: 2, "b" * 56: 1}, 2)] == ["10.0.0.2"]
    nodes[1].state = "gone"
    assert [n.ip for n in spread(nodes, {"b" * 56: 1}, 3)] == ["10.0.0.2"]


def test_a_node_on_any_loopback_address_or_this_hosts_own_is_on_this_machine() -> None:
    assert all(map(on_this_host, ["127.0.0.1", "127.0.0.3", "127.0.0.100", "::1", "::ffff:127.0.0.2", "[::1]"]))
    assert not any(map(on_this_host, ["198.51.100.7", "2001:db8::7", "0.0.0.0", "", "node-a", "224.0.0.1"]))
    ip = connections.host_address()
    if ip is not None:  # (a host with no network address has only loopback)
        assert on_this_host(ip)


def test_only_127_0_0_1_itself_is_taken_as_the_campaigns_own_loopback_cluster() -> None:
    assert all(map(is_local, [None, "127.0.0.1:6379", "localhost:6379", "ray://127.0.0.1:10001", "localhost"]))
    assert not any(map(is_local, ["127.0.0.2:6379", "127.0.0.10:6379", "127.0.0.100:6379", "10.0.0.7:6379"]))
