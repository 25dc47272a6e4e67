"""What an SQLite write-ahead log holds: the pages of its committed frames, read from the file alone.

A database in WAL mode is its main file overlaid by the log's committed frames, until a checkpoint
copies them back. A disk that filled up mid-checkpoint leaves a main file shorter than its own
header says, with the missing pages still in the log: SQLite reads them from there and its
integrity check passes. `open.py` asks this module before calling such a file truncated.

Format (sqlite.org/fileformat2.html#walformat): a 32-byte header (magic, version, page size,
checkpoint sequence, two salts, checksum), then frames of a 24-byte header (page number, the
database's size in pages after the commit for a commit frame, else 0; the two salts; checksum)
and one page. Frames whose salts differ from the header's are left over from an earlier log
generation. Frames after the last commit frame are an unfinished transaction: not part of the
database. (Checksums are not recomputed: reading every page of a large log in Python costs seconds
on each open; the salts and the commit frame already say which frames SQLite will use.)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

MAGIC = (0x377F0682, 0x377F0683)
HEADER = 32
FRAME_HEADER = 24


@dataclass(frozen=True)
class WalPages:
    """The committed content of a log: the database's size in pages at its last commit, and
    which page numbers its committed frames carry."""

    db_pages: int
    pages: frozenset[int]


def wal_of(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


def committed_pages(wal: Path, page_size: int) -> WalPages | None:
    """The log's committed pages, or None when there is no log of this database's page size with a
    committed frame (missing, empty, another format, cut inside its header)."""
    try:
        with wal.open("rb") as f:
            head = f.read(HEADER)
            if len(head) < HEADER:
                return None
            magic, _version, size, _seq, salt1, salt2 = struct.unpack(">6I", head[:24])
            if magic not in MAGIC or size != page_size:
                return None
            pages: set[int] = set()
            last: WalPages | None = None
            offset = HEADER
            while True:
                f.seek(offset)
                frame = f.read(FRAME_HEADER)
                if len(frame) < FRAME_HEADER:
                    break
                pgno, commit, s1, s2 = struct.unpack(">4I", frame[:16])
                if (s1, s2) != (salt1, salt2) or pgno == 0:
                    break
                f.seek(offset + FRAME_HEADER + page_size - 1)
                if not f.read(1):  # the frame's page was cut short
                    break
                pages.add(pgno)
                if commit:
                    last = WalPages(commit, frozenset(pages))
                offset += FRAME_HEADER + page_size
            return last
    except OSError:
        return None
