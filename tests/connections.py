"""The TCP connections processes hold, read from /proc (Linux): each process's socket inodes
(/proc/PID/fd) matched to the kernel's table of TCP sockets (/proc/net/tcp, /proc/net/tcp6), so a
test can say that every connection its processes made stays on loopback (rule 2: no network),
not only that the addresses it configured were loopback ones."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from dataclasses import dataclass
from pathlib import Path

ESTABLISHED = "01"  # the `st` column (include/net/tcp_states.h: TCP_ESTABLISHED = 1)


@dataclass(frozen=True)
class Conn:
    """One established TCP connection of one process: (address, port) at each end."""

    pid: int
    local: tuple[str, int]
    remote: tuple[str, int]

    @property
    def loopback(self) -> bool:
        return is_loopback(self.local[0]) and is_loopback(self.remote[0])

    def __str__(self) -> str:
        return f"pid {self.pid}: {self.local[0]}:{self.local[1]} -> {self.remote[0]}:{self.remote[1]}"


def unmapped(ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address, an IPv4 one mapped into IPv6 (::ffff:127.0.0.3, as a dual-stack socket shows
    it) as its IPv4 self."""
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def is_loopback(ip: str) -> bool:
    """127.0.0.0/8 and ::1, mapped or not."""
    return unmapped(ip).is_loopback


def _address(field: str) -> tuple[str, int]:
    """One `ADDR:PORT` of /proc/net/tcp{,6}: the address as the kernel's 32-bit words in this
    machine's byte order (printed %08X each), the port in hex."""
    hexaddr, _, port = field.partition(":")
    raw = b"".join(struct.pack("=I", int(hexaddr[i:i + 8], 16)) for i in range(0, len(hexaddr), 8))
    return str(ipaddress.ip_address(raw)), int(port, 16)


def parse_tcp(text: str) -> dict[int, tuple[tuple[str, int], tuple[str, int]]]:
    """{socket inode: (local, remote)} of the ESTABLISHED sockets in one /proc/net/tcp{,6} text."""
    out = {}
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 10 or cols[3] != ESTABLISHED:
            continue
        out[int(cols[9])] = (_address(cols[1]), _address(cols[2]))
    return out


def tcp_table(root: Path = Path("/proc/net")) -> dict[int, tuple[tuple[str, int], tuple[str, int]]]:
    """Every established TCP socket of this network namespace, IPv4 and IPv6, by inode."""
    table = {}
    for name in ("tcp", "tcp6"):
        try:
            table.update(parse_tcp((root / name).read_text()))
        except OSError:  # (no IPv6 in this kernel)
            continue
    return table


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets `pid` has open (none when it is gone or not ours to read)."""
    out = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # (closed since the listing)
            continue
        if target.startswith("socket:["):
            out.add(int(target[len("socket:["):-1]))
    return out


def established(pids: list[int]) -> list[Conn]:
    """The established TCP connections each of `pids` holds now."""
    table = tcp_table()
    return [Conn(pid, *table[inode]) for pid in pids for inode in sorted(socket_inodes(pid)) if inode in table]


def off_loopback(conns: list[Conn]) -> list[Conn]:
    return [c for c in conns if not c.loopback]


def host_address() -> str | None:
    """This host's own non-loopback IPv4 address (the one its route out would use), or None.
    A UDP socket's connect only picks the route: nothing is sent."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # (TEST-NET-1: any address off this host will do)
            ip = s.getsockname()[0]
    except OSError:  # no route off this host
        return None
    return None if is_loopback(ip) or ip == "0.0.0.0" else ip
