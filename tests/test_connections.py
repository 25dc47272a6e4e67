"""The loopback check the multinode tests make (tests/connections.py) must be able to fail: its
parser read on lines as the kernel prints them, and real connections of this process found, one on
loopback passing, one between this host's own network address and itself flagged."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from . import connections
from .connections import Conn, is_loopback, off_loopback, parse_tcp

# Lines as a little-endian Linux prints them (the header, then sl, local, remote, st, queues, …, inode).
TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:AE1D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 723385 1 0 100 0 0 10 0
   1: 0300007F:1F90 0200007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 20 4 30 10 -1
   2: 020200C0:D431 0A0200C0:0050 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0 20 4 30 10 -1
"""
TCP6 = """  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000300007F:1F90 0000000000000000FFFF00000200007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 5151 1 0 20 4 30 10 -1
   1: 00000000000000000000000001000000:2328 00000000000000000000000001000000:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 5252 1 0 20 4 30 10 -1
   2: B80D0120000000000000000001000000:2328 00000000000000000000000001000000:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 5353 1 0 20 4 30 10 -1
"""


@pytest.mark.skipif(sys.byteorder != "little", reason="the lines are a little-endian kernel's")
def test_the_kernels_lines_are_read_established_only_with_mapped_and_ipv6_addresses() -> None:
    assert parse_tcp(TCP) == {4242: (("127.0.0.3", 8080), ("127.0.0.2", 50000)),
                              4343: (("192.0.2.2", 54321), ("192.0.2.10", 80))}  # (the listener, st 0A, left out)
    six = parse_tcp(TCP6)
    assert six[5151] == (("::ffff:127.0.0.3", 8080), ("::ffff:127.0.0.2", 50000))
    assert six[5252] == (("::1", 9000), ("::1", 40000))
    assert six[5353][0] == ("2001:db8::1", 9000)
    conns = [Conn(1, *ends) for ends in [*parse_tcp(TCP).values(), *six.values()]]
    assert [c.local[0] for c in off_loopback(conns)] == ["192.0.2.2", "2001:db8::1"]


def test_loopback_is_any_127_address_and_ipv6s_own_mapped_or_not() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.3", "127.255.0.9", "::1", "::ffff:127.0.0.2"]))
    assert not any(map(is_loopback, ["192.0.2.2", "10.0.0.1", "::ffff:192.0.2.2", "2001:db8::1", "0.0.0.0"]))
    assert str(connections.unmapped("::ffff:127.0.0.3")) == "127.0.0.3" and str(connections.unmapped("::1")) == "::1"


@contextmanager
def connected(ip: str) -> Iterator[tuple[socket.socket, socket.socket]]:
    """A TCP connection from this process to itself at `ip` (listener, client and accepted end)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind((ip, 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5, source_address=(ip, 0)) as client:
            accepted, _ = server.accept()
            with accepted:
                yield client, accepted


def _ours(client: socket.socket) -> list[Conn]:
    port = client.getsockname()[1]
    return [c for c in connections.established([os.getpid()]) if port in (c.local[1], c.remote[1])]


def test_a_loopback_connection_of_this_process_is_found_and_passes() -> None:
    with connected("127.0.0.3") as (client, _):
        found = _ours(client)
    assert len(found) == 2 and all(c.loopback for c in found), found  # (both ends are this process's sockets)
    assert {c.local[0] for c in found} == {"127.0.0.3"}


def test_a_connection_on_this_hosts_network_address_is_flagged() -> None:
    ip = connections.host_address()
    if ip is None:
        pytest.skip("this host has no network address besides loopback (the parser's test above still runs)")
    with connected(ip) as (client, _):  # (to this host itself: nothing leaves the machine)
        found = _ours(client)
    assert len(found) == 2 and off_loopback(found) == found, found
    assert {c.local[0] for c in found} == {ip}
