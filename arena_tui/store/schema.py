"""The SQLite schema of the run store, as numbered migrations keyed by `PRAGMA user_version`.

Layout (normalised; `events` is the log, the other tables are projections of it that SQL
can query without parsing JSON):

- `runs`        one row per run, from `run_started` (config scrubbed of secrets) and `run_ended`
                (`superseded_by` from `run_superseded`: a run replaced by a re-run counts nowhere);
                `pid`/`host`/`heartbeat_at` let a later process tell a dead recorder's run;
                `started_at`/`ended_at` are wall clock, `speed` how much faster the run
                timeline (every `t_ms`) ran than the wall clock.
- `events`      every event in `(run_id, seq)` order with its JSON payload. `audio` events keep
                only a small row here (no PCM): the samples live in `audio`.
- `turns`       one row per `turn_ended` per attempt (re-runs of a turn append attempt 1, 2, …;
                the highest attempt wins for reads); the full `TurnResult` is the payload of the
                event at `seq`, the columns are there for SQL summaries.
- `judgements`  one row per `judgement` event, append-only: a new revision supersedes, none is
                overwritten; `judgement_scores` holds one verdict per dimension. A majority
                revision of repeated judgings has `judgings` (how many it counts) and each of
                its scores `agree` (how many of them gave that verdict).
- `audio`       per-turn `user`/`bot` mono clips, tagged with the take (which `turn_started`
                of that turn they follow) so a retried turn plays its last take, and the stereo
                `conversation` track as ordered slices; each BLOB is FLAC or raw PCM16 as its
                `codec` says (`codec.py`; rows from before version 3 are raw PCM16).
- `benchmarks`  the benchmark snapshot of each run (turns, tools, prompt, knowledge base), one
                row per content hash, so repeated runs of one benchmark share one copy and a run
                is judged and exported without its data folder.
- `campaigns`, `campaign_cells`  a campaign's spec and one row per cell naming its latest run;
                `pid`/`host`/`heartbeat_at` name the coordinator running it now.
- `usage`       one row per `usage` event: what a service said it used (an LLM's tokens, an STT's
                audio seconds, a TTS's characters, a session's connected seconds), as it said it;
                what that cost is `arena_tui.cost`'s, read at show time from a dated price table.
- `search_turns`, `search_marks`  the search index (`arena_tui.compare.search`): a projection of a
                run's turns and verdicts that search rebuilds itself when the run changed.

Every migration runs in one transaction together with its `user_version` bump, so a failure
leaves the database exactly at the previous version.
"""

from __future__ import annotations

import sqlite3

# Each entry upgrades from version i to i + 1 (index i). Never edit a released entry: append.
MIGRATIONS: list[list[str]] = [
    # 1: the base tables.
    [
        """CREATE TABLE runs (
            run_id       TEXT PRIMARY KEY,
            benchmark    TEXT NOT NULL DEFAULT '',
            model        TEXT NOT NULL DEFAULT '',
            provider     TEXT NOT NULL DEFAULT '',
            simulator    INTEGER NOT NULL DEFAULT 0,
            turn_indices TEXT NOT NULL DEFAULT '[]',   -- JSON list of the turns the run plans
            turns_total  INTEGER NOT NULL DEFAULT 0,
            config       TEXT NOT NULL DEFAULT '{}',   -- JSON, secrets scrubbed
            versions     TEXT NOT NULL DEFAULT '{}',   -- JSON {package: version} of the recorder
            status       TEXT NOT NULL DEFAULT 'running',  -- running|completed|interrupted|failed
            reason       TEXT NOT NULL DEFAULT '',
            started_at   TEXT NOT NULL,                -- wall clock, ISO 8601 UTC
            ended_at     TEXT
        )""",
        """CREATE TABLE events (
            run_id     TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            seq        INTEGER NOT NULL,               -- 1, 2, … per run, in arrival order
            kind       TEXT NOT NULL,
            t_ms       REAL NOT NULL,
            turn_index INTEGER,
            payload    TEXT NOT NULL,                  -- the event as JSON (audio: without pcm)
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID""",
        "CREATE INDEX events_by_turn ON events(run_id, turn_index, seq)",
        """CREATE TABLE turns (
            run_id             TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            turn_index         INTEGER NOT NULL,
            attempt            INTEGER NOT NULL,       -- 0 for the first turn_ended of this turn
            seq                INTEGER NOT NULL,       -- the turn_ended event
            status             TEXT NOT NULL,
            session            INTEGER NOT NULL,       -- session epoch the turn ran in
            user_text          TEXT NOT NULL,
            user_transcript    TEXT,
            assistant_text     TEXT NOT NULL,
            tool_calls         TEXT NOT NULL,          -- JSON [{call_id,name,args,status,is_duplicate}]
            tool_results       TEXT NOT NULL,          -- JSON [{call_id,name,response}]
            voice_to_voice_ms  REAL,
            pipeline_ttfb_ms   REAL,
            provider_ttfb_ms   REAL,
            leading_silence_ms REAL,
            overlap_ms         REAL NOT NULL,
            interrupted        INTEGER NOT NULL,
            retries            INTEGER NOT NULL,
            reconnects         INTEGER NOT NULL,
            sentinel           TEXT,
            error              TEXT,
            PRIMARY KEY (run_id, turn_index, attempt)
        )""",
        """CREATE TABLE judgements (
            run_id            TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            seq               INTEGER NOT NULL,        -- the judgement event
            turn_index        INTEGER,
            judge             TEXT NOT NULL,
            revision          INTEGER NOT NULL,
            phase             INTEGER NOT NULL,
            rule              TEXT,
            root_cause        TEXT,
            fabricated_action INTEGER,
            error             TEXT,
            heuristic         INTEGER NOT NULL,
            input_tokens      INTEGER NOT NULL,
            cached_tokens     INTEGER NOT NULL,
            output_tokens     INTEGER NOT NULL,
            PRIMARY KEY (run_id, seq)
        )""",
        "CREATE INDEX judgements_by_turn ON judgements(run_id, turn_index, revision, seq)",
        """CREATE TABLE judgement_scores (
            run_id    TEXT NOT NULL,
            seq       INTEGER NOT NULL,
            dimension TEXT NOT NULL,
            verdict   TEXT NOT NULL,                   -- pass|fail|na
            PRIMARY KEY (run_id, seq, dimension),
            FOREIGN KEY (run_id, seq) REFERENCES judgements(run_id, seq) ON DELETE CASCADE
        )""",
        """CREATE TABLE audio (
            run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            seq         INTEGER NOT NULL,              -- the audio event
            turn_index  INTEGER,
            take        INTEGER NOT NULL,              -- turn_started events of this turn before it, -1
            track       TEXT NOT NULL,                 -- user|bot|conversation
            start_ms    REAL NOT NULL,
            sample_rate INTEGER NOT NULL,
            channels    INTEGER NOT NULL,
            pcm         BLOB NOT NULL,                 -- PCM16 little-endian, interleaved
            PRIMARY KEY (run_id, seq)
        )""",
        "CREATE INDEX audio_by_track ON audio(run_id, track, turn_index, take, seq)",
    ],
    # 2: liveness of the recording process, kind filters that do not scan a run, and the
    #    append-only rule enforced by the database itself (rows may be deleted with their run).
    [
        "ALTER TABLE runs ADD COLUMN pid INTEGER",
        "ALTER TABLE runs ADD COLUMN host TEXT",
        "ALTER TABLE runs ADD COLUMN heartbeat_at TEXT",
        "CREATE INDEX events_by_kind ON events(run_id, kind, seq)",
        """CREATE TRIGGER events_append_only BEFORE UPDATE ON events
           BEGIN SELECT RAISE(ABORT, 'events are append-only'); END""",
        """CREATE TRIGGER judgements_append_only BEFORE UPDATE ON judgements
           BEGIN SELECT RAISE(ABORT, 'judgements are append-only: record a new revision'); END""",
    ],
    # 3: the speed of the run timeline as a column of its own (NULL: not recorded), and true
    #    wall-clock ends. Before, ended_at was started_at + run_ended's t_ms, which is audio time:
    #    at speed s the wall clock ran s times slower (the run clock is exactly wall x speed), so
    #    ended_at is brought back to started_at + (ended_at - started_at) / s. Runs marked
    #    interrupted after their recorder died already ended at their last heartbeat (wall).
    [
        "ALTER TABLE runs ADD COLUMN speed REAL",
        """UPDATE runs SET speed = json_extract(config, '$.speed')
           WHERE json_valid(config) AND json_type(config, '$.speed') IN ('integer', 'real')
             AND json_extract(config, '$.speed') > 0""",
        """UPDATE runs SET ended_at = strftime('%Y-%m-%dT%H:%M:%f+00:00', started_at,
               printf('%+.3f seconds', (julianday(ended_at) - julianday(started_at)) * 86400.0 / speed))
           WHERE ended_at IS NOT NULL AND speed IS NOT NULL AND speed != 1
             AND reason != 'the recording process ended without finishing the run'""",
    ],
    # 4: audio kept losslessly compressed (old rows stay raw PCM16: nothing is rewritten), and
    #    runs that carry the benchmark they ran.
    [
        "ALTER TABLE audio RENAME COLUMN pcm TO data",
        "ALTER TABLE audio ADD COLUMN codec TEXT NOT NULL DEFAULT 'pcm16'",  # pcm16 | flac
        "ALTER TABLE audio ADD COLUMN pcm_bytes INTEGER",  # decoded length; NULL on rows from before
        """CREATE TABLE benchmarks (
            sha256    TEXT PRIMARY KEY,                -- of `snapshot`
            name      TEXT NOT NULL,
            snapshot  TEXT NOT NULL,                   -- JSON of `Benchmark.snapshot()`
            stored_at TEXT NOT NULL
        )""",
        "ALTER TABLE runs ADD COLUMN benchmark_sha256 TEXT REFERENCES benchmarks(sha256)",
        "CREATE INDEX runs_by_benchmark_sha256 ON runs(benchmark_sha256)",
    ],
    # 5: campaigns (a matrix of ordinary runs) and their cells; a cell's run_id is its latest run
    #    (a from-scratch re-run of an interrupted cell points the cell at the new run).
    [
        """CREATE TABLE campaigns (
            campaign_id TEXT PRIMARY KEY,
            spec        TEXT NOT NULL,                 -- JSON of the campaign spec (no secrets)
            created_at  TEXT NOT NULL
        )""",
        """CREATE TABLE campaign_cells (
            campaign_id TEXT NOT NULL REFERENCES campaigns(campaign_id) ON DELETE CASCADE,
            benchmark   TEXT NOT NULL,
            model       TEXT NOT NULL,
            repeat      INTEGER NOT NULL,
            run_id      TEXT,                          -- NULL until started; no FK: runs may be deleted
            status      TEXT NOT NULL DEFAULT 'pending',  -- pending|queued|skipped|done (run status is the runs row)
            reason      TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (campaign_id, benchmark, model, repeat)
        )""",
    ],
    # 6: the process running a campaign now (its coordinator), as `runs` has for its recorder, so
    #    a queued cell whose coordinator died is not shown queued for ever (store/liveness.py).
    [
        "ALTER TABLE campaigns ADD COLUMN pid INTEGER",  # NULL: no coordinator (finished, or never ran)
        "ALTER TABLE campaigns ADD COLUMN host TEXT",
        "ALTER TABLE campaigns ADD COLUMN heartbeat_at TEXT",
    ],
    # 7: what the coordinator's admission control says about the campaign's pace now
    #    ("pace: 2 sessions/worker, machine busy"), shown while that coordinator lives.
    [
        "ALTER TABLE campaigns ADD COLUMN pace TEXT NOT NULL DEFAULT ''",
    ],
    # 8: which rules a judgement was asked by, and how sure the judge is: a majority revision of
    #    repeated judgings (`judge RUN --repeat N`) names how many judgings it counts, and each of its
    #    verdicts how many of them gave it. NULL: not recorded (older rows), or no majority.
    [
        "ALTER TABLE judgements ADD COLUMN judge_version TEXT",
        "ALTER TABLE judgements ADD COLUMN judgings INTEGER",
        "ALTER TABLE judgement_scores ADD COLUMN agree INTEGER",
    ],
    # 9: a run another run replaced (a campaign's re-run from scratch): kept, counted nowhere.
    [
        "ALTER TABLE runs ADD COLUMN superseded_by TEXT",  # NULL: the run counts; else the run that replaced it
    ],
    # 10: a person's verdicts and the causes of a failure: a revision by a person names them
    #    (`reviewer`; NULL: a judge's), and a judgement the causes it (or the person) gave, as a JSON
    #    list (NULL: none). The search index of turns (`arena_tui.compare.search`): one row per turn
    #    of a run, what a search matches and filters on, rebuilt from the run's own records when
    #    its mark (what it was built from) no longer matches them; a projection nothing else reads.
    [
        "ALTER TABLE judgements ADD COLUMN reviewer TEXT",
        "ALTER TABLE judgements ADD COLUMN causes TEXT",
        """CREATE TABLE search_turns (
            run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            turn_index  INTEGER NOT NULL,
            verdict     TEXT NOT NULL,                 -- pass|fail|na, or why the turn counts apart
            failed      TEXT NOT NULL,                 -- the dimensions that fail, space-separated
            causes      TEXT NOT NULL,                 -- its causes, space-separated
            human       TEXT NOT NULL,                 -- the dimensions a person's verdict decides
            user_text   TEXT NOT NULL,
            answer_text TEXT NOT NULL,
            reasons     TEXT NOT NULL,                 -- "dimension: reasoning" lines of the verdict that counts
            folded      TEXT NOT NULL,                 -- all of the above, casefolded: what a search scans
            PRIMARY KEY (run_id, turn_index)
        )""",
        """CREATE TABLE search_marks (
            run_id TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
            mark   TEXT NOT NULL                       -- what the run's rows were built from
        )""",
    ],
    # 11: what each service said it used (`usage` events), so a run's cost is summed without parsing
    #    its events. Runs recorded before have none: their cost is "usage not recorded", never 0.
    [
        """CREATE TABLE usage (
            run_id                        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            seq                           INTEGER NOT NULL,  -- the usage event
            turn_index                    INTEGER,
            service                       TEXT NOT NULL,     -- llm|stt|tts|session
            model                         TEXT NOT NULL,
            prompt_tokens                 INTEGER NOT NULL,
            completion_tokens             INTEGER NOT NULL,
            total_tokens                  INTEGER NOT NULL,
            cache_read_input_tokens       INTEGER NOT NULL,
            cache_creation_input_tokens   INTEGER NOT NULL,
            reasoning_tokens              INTEGER NOT NULL,
            input_audio_tokens            INTEGER NOT NULL,
            output_audio_tokens           INTEGER NOT NULL,
            cache_read_input_audio_tokens INTEGER NOT NULL,
            audio_seconds                 REAL NOT NULL,
            characters                    INTEGER NOT NULL,
            session_seconds               REAL NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID""",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(Exception):
    """The database cannot be brought to this version of the schema."""


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: str, target: int = SCHEMA_VERSION) -> int:
    """Apply the missing migrations, each in its own transaction; returns the final version.

    Safe beside other processes opening the same file at once (three `arena-tui runs` on a new
    database): each step takes the write lock first (BEGIN IMMEDIATE, waiting out the busy timeout)
    and reads `user_version` again under it, so one opener migrates and the others see its result
    instead of applying the same step twice ("table runs already exists").

    `conn` must be in autocommit mode (isolation_level=None) so the explicit BEGIN covers DDL.
    """
    while True:
        conn.execute("BEGIN IMMEDIATE")
        version = None
        try:
            version = schema_version(conn)
            if version > SCHEMA_VERSION:
                raise SchemaError(
                    f"{path}: database schema version {version} is newer than this arena-tui supports "
                    f"({SCHEMA_VERSION}); upgrade arena-tui"
                )
            if version >= target:
                conn.execute("COMMIT")
                return version
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            conn.execute("ROLLBACK")
            raise SchemaError(f"{path}: migration to schema version {(version or 0) + 1} failed: {e}") from e
        except SchemaError:
            conn.execute("ROLLBACK")
            raise
