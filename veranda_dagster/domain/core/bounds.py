"""Every loop bound in one place, each with the reason it is what it is.

A bound is a named constant so a test can hit it exactly and a reader can find it.
"""

from typing import Final

MAX_SEEDS: Final = 8
"""Retrieval seeds per ticket: more identifiers dilute the searches instead of sharpening them."""

MAX_SEARCHES: Final = 12
"""Code searches per context pack: a hosted code index allows about 10 a minute; 12 fits one
pack's wait for the budget (each forge plugin's ``limits`` has its own rate)."""

MAX_PACK_FILES: Final = 6
"""Files in a context pack: past six, a model skims rather than reads."""

MAX_PACK_BYTES: Final = 12_000
"""Byte ceiling of the pack: exact and free to enforce, unlike a per-vendor token estimate."""

SEARCH_WINDOW_LINES: Final = 12
"""Lines of context returned around each search hit."""

MAX_REVIEW_ROUNDS: Final = 5
"""Fix-and-re-review rounds: an unbounded self-review loop spends money until someone notices."""

MAX_FEEDBACK_ROUNDS: Final = 10
"""Revisions on human comments before the agent says it has stopped and hands back."""

MAX_CI_REPAIRS: Final = 1
"""CI repair attempts: a retry loop against a broken change burns a full agent budget per round."""

MAX_RED_TEST_ATTEMPTS: Final = 3
"""Test-writer attempts to produce tests that fail on the base for the right reason."""

MAX_PATCH_ATTEMPTS: Final = 3
"""Implementer attempts to turn the red tests green with build/lint/test passing."""

VALIDATION_TIMEOUT_S: Final = 600.0
"""Default wall-clock bound for one repo build/lint/test command before it is killed."""

OUTPUT_TAIL_BYTES: Final = 4_000
"""Bytes of a command's output kept (the tail), so a chatty build cannot bloat an asset value."""

CI_WAIT_TIMEOUT_S: Final = 1_800.0
"""How long the CI phase waits for the PR head's check runs before recording ``timed_out``."""

TICKET_BUDGET_USD: Final = 10.0
"""Default USD one ticket may spend on model turns (``VERANDA_TICKET_BUDGET_USD``): a typical
ticket costs well under a dollar to a few dollars; ten stops a runaway loop well before a bill."""

# --- intake: ticket polling, repository detection -----------------------------------------

MAX_RATE_LIMIT_RESET_WAIT_S: Final = 60.0
"""Longest wait for a rate-limit window to reset in-line; longer surfaces as a TransientError."""

CURSOR_OVERLAP_S: Final = 5
"""Seconds a tracker's high-water mark is moved back, so same-second updates are not skipped."""

MAX_CURSOR_RECENT: Final = 200
"""(ticket, updatedAt) pairs a sensor cursor remembers to skip re-seen items cheaply."""

MAX_REPO_CANDIDATES: Final = 5
"""Repositories listed in an 'which repository?' question: more is a catalog, not a question."""

HEALTH_RECHECK_S: Final = 300.0
"""How long a failed vendor is skipped before it is probed again (an ok verdict is kept until a
turn fails): long enough not to probe a revoked key on every turn, short enough to recover."""

PROBE_TIMEOUT_S: Final = 60.0
"""Wall-clock cap of one health probe: the CLIs' own retries ran past 60 s on a dead upstream."""

MAX_HTTP_REDIRECTS: Final = 3
"""Redirects one API request follows, each only to the client's own origin: a forge's moved-
repository redirect is one hop, and a loop must not spin."""

TICKET_SEARCH_PAGE_SIZE: Final = 50
"""Issues asked per ticket-tracker search page (a JQL search's ``maxResults``): the default the
tracker itself uses, and small enough that one page is one quick request."""

MAX_TICKET_SEARCH_PAGES_PER_TICK: Final = 10
"""Search pages walked in one sensor tick; the rest is picked up by the next tick's cursor."""

MAX_TICKET_COMMENT_PAGES: Final = 5
"""Comment pages (100 each) read to find our own earlier post: older threads are not ours."""

MAX_RICH_TEXT_DEPTH: Final = 40
"""Nesting depth walked in a ticket's rich-text document; deeper nodes are hostile and dropped."""

MAX_FORGE_LIST_PAGES: Final = 10
"""Pages (100 each) walked per forge list: more merge requests, notes or jobs is not one change."""

MAX_CI_REPORT_BYTES: Final = 4 * 1024 * 1024
"""Bytes read of one CI job's findings report; a bigger artifact is cut and reported as such."""

FORGE_BLOB_SEARCH_PER_MINUTE: Final = 30
"""Code searches per rolling minute on a forge whose search API is limited per user (the
documented default for authenticated search); the client waits rather than spend a 429."""

POSTGRES_POOL_MAX: Final = 4
"""Open connections one process keeps to the value store's database: a step process runs one
phase (a few sequential reads and writes), so more would only hold server slots idle."""

STALE_TEMP_VALUE_AGE_S: Final = 3_600.0
"""Age past which a value store's temp file is a killed writer's leftover and is removed: a live
writer holds its temp file for the moment one JSON write and fsync take, never an hour."""

# --- context: retrieval pack, citations, layers ---------------------------------------------

MAX_HITS_PER_SEARCH: Final = 200
"""Hit lines read back from one search: a seed that matches more is too common to rank on."""

MAX_HITS_PER_FILE: Final = 8
"""Hit lines kept per file per search: enough to place windows, not a file's every mention."""


SEARCH_CLAIM_TTL_S: Final = 120.0
"""How long code-search slots reserved by a pack stay held: a pack spends them in seconds, so a
reservation this old belongs to a killed run and must not starve the others."""

MAX_BUDGET_WAITS: Final = 30
"""Waits one reservation makes for a shared code-search budget before it fails as transient: each
wait lasts until a slot frees, so 30 of them means other runs keep outbidding this one."""

MAX_RUNBOOKS: Final = 3
"""Org runbooks written into a clone: only those the ticket touches, and few of those."""

MAX_RUNBOOK_BYTES: Final = 6_000
"""Bytes kept of one runbook in the instruction file; longer ones are cut with a note."""

MAX_HINTS_BYTES: Final = 8_000
"""Bytes kept of a repository's hints file."""

MAX_REPO_FILE_BYTES: Final = 1_000_000
"""Bytes read of one file of the clone (facts, hints, instruction files): past a megabyte a
file is generated or data, and a link to ``/dev/zero`` must not fill memory."""

MAX_FACT_SCAN_FILES: Final = 5_000
"""Files read looking for build tags and testcontainers imports; a monorepo is sampled, not read."""

MAX_WINDOWS_PER_FILE: Final = 4
"""Windows one file may contribute to the pack, so one busy file cannot crowd out the rest."""

MAX_CORPUS_BYTES: Final = 120_000_000
"""Text bytes of a clone the full-text ranking reads (held when under ``MAX_HELD_TEXT_BYTES``,
streamed otherwise): a 5,000-file project is about 80 MB; past this a monorepo is searched
with ``git grep`` and the full-text ranking is reported unavailable."""

MAX_HELD_TEXT_BYTES: Final = 32_000_000
"""Text bytes of a clone a pack holds in memory (its texts, and their lowercased copy for
search, about twice this in all). Past it the pack streams the texts one file at a time for
the full-text ranking and searches with ``git grep``: the same answers, memory bounded by the
largest file and the index's identifier counts instead of by the tree (``repo_corpus``)."""

MAX_FULL_TEXT_FILES: Final = 20_000
"""Source files one full-text index may hold; a larger tree is not indexed (reported)."""

MAX_FUNCTION_WINDOW_BYTES: Final = MAX_PACK_BYTES // 2
"""A whole function is packed as one window up to half the byte ceiling, which only the first
two files can pay for (the fix is in the first file most of the time, and a long function's
edit is as often past the part a clipped window shows); a later file keeps to its share, and a
longer body gets a clip or a 12-line window at the matched line so one function cannot starve
five files."""

# --- ops: metrics ----------------------------------------------------------------------------

MAX_TRACKED_TASKS: Final = 1_000
"""Tickets whose USD one process accumulates until their CI outcome; older ones are dropped."""

MAX_TAIL_EVENTS: Final = 1_000
"""Materialization events the ops server replays into metrics per poll of the instance."""

MAX_REPORT_EVENTS: Final = 100_000
"""Materializations ``veranda report`` reads; a larger window must be narrowed with --since."""

MAX_MCP_LOG_LINES: Final = 500
"""Lines an MCP tool returns from a pod log or run event log: a trace, not a dump."""

# --- work loop: CI waits, PR feedback polling -------------------------------------------------

CI_POLL_INITIAL_S: Final = 1.0
"""First wait between check-run polls: a fast CI (or one already finished) is seen within a
second or two, not after a fixed first sleep."""

CI_POLL_MAX_S: Final = 20.0
"""Backoff cap between polls, so a long CI is seen at most this late. Cheap because the polls are
conditional (``If-None-Match``): an unchanged answer is a 304, which the forge does not
count against the hourly request budget every ticket shares."""

MAX_VIOLATIONS_IN_PROMPT: Final = 50
"""Violations listed in the one CI repair prompt; past that the change needs a rethink."""

PR_FEEDBACK_POLL_INTERVAL_S: Final = 120
"""Seconds between PR comment polls: two requests per PR per tick against the hourly limit."""

MAX_FEEDBACK_PRS_PER_TICK: Final = 25
"""Pull requests polled for comments in one sensor tick; the rest are polled next tick."""

MAX_WATCHED_PRS: Final = 2_000
"""Pull requests the feedback sensor's cursor remembers; the earliest learned are dropped past it
(a finished one is forgotten at once), so the cursor, stored on every tick, stays small."""

MATERIALIZATIONS_PER_TICK: Final = 100
"""Pull-request / feedback materializations the feedback sensor reads per tick, from its cursor."""

READINESS_TIMEOUT_S: Final = 2.0
"""Bound on ``/readyz``'s instance query; the kubelet's own probe timeout must be above it."""

OPS_TAIL_INTERVAL_S: Final = 15.0
"""Seconds between the ops server's reads of new materializations into the metrics."""

MAX_DETECT_TEXT_CHARS: Final = 20_000
"""Ticket text (title and description) scanned for repository evidence; past it is pasted logs."""

MAX_REPO_EVIDENCE: Final = 12
"""Evidence items kept on a repo guess and shown in its question: the strongest first."""

MAX_RENAME_LOOKUPS: Final = 50
"""``GET /repos/{owner}/{old}`` calls one catalog build makes to confirm former names."""

MAX_VOCABULARY_TERMS: Final = 96
"""Terms one repository's vocabulary keeps (names, imports, commands, plugins, hooks, actions,
images, public names): a colleague knows a repository by a few dozen; past it is noise. Two
full kinds (``MAX_VOCABULARY_TERMS_PER_KIND``): at 64 in all and 32 a kind, pre-commit-hooks'
31 console scripts left its hook ids 31 of 34 and ``trailing-whitespace`` went unread (issue 33)."""

MAX_VOCABULARY_TERMS_PER_KIND: Final = 48
"""Terms of one kind kept (a package exporting 300 public names keeps its first 48; a hook
repository's 34 hook ids all fit)."""

MAX_SHIPPED_TOOLS: Final = 32
"""Tools one repository's vocabulary records as shipped, wrapped or bundled (dependencies,
Dockerfile installs, README PyPI links); validated apart from the terms a repository is known
by (``MAX_VOCABULARY_TERMS_PER_KIND``)."""

MAX_VOCABULARY_FILE_READS: Final = 24
"""Files one repository's vocabulary read may fetch from the forge (manifests, a package's
``__init__``, the members of a monorepo's package folders)."""

MAX_VOCABULARY_FILE_BYTES: Final = 262_144
"""Bytes of one manifest or module read for vocabulary; a larger file is skipped, not parsed."""

MAX_VOCABULARY_REPOS: Final = 400
"""Repositories one ``veranda catalog`` run reads vocabulary for; the rest keep what they had."""

MAX_DEFINITION_TERMS: Final = 256
"""Public definitions (top-level class and function names of a package's modules) one
repository's index keeps: far more than the names it is known by (``MAX_VOCABULARY_TERMS``),
since a colleague also places a ticket by a class or function it never headlines. 256 names
are at most about 7 KB of catalog per repository (the benchmark catalogs: median 29 names and
0.6 KB, largest 155 names and 4 KB)."""

MAX_DEFINITION_FILE_READS: Final = 16
"""Folder listings and modules one repository's definitions read may fetch, on top of the
vocabulary's own reads (``MAX_VOCABULARY_FILE_READS``): the package's first modules, nearest
the top first, where its public API lives (issue 33, development splits: 16, 64 or 400 files
decided the same tickets)."""

MAX_DEFINITION_FILE_BYTES: Final = 131_072
"""Bytes of one module read for definitions; a larger (generated or vendored) module is
skipped, not parsed."""

MAX_SUBCOMMANDS: Final = 64
"""Subcommands one repository's vocabulary keeps (``RepoVocabulary.subcommands``): celery
declares 17, pre-commit 14, tox 12, sentry-cli about 30; past it a folder of plugins or
generated commands is read as if each were one."""

MAX_SUBCOMMAND_FILE_READS: Final = 16
"""Folder listings and CLI modules one repository's subcommand read may fetch, on top of the
vocabulary's own reads: the modules its console scripts point at, its package's CLI files and
the commands folder found within two levels (tox's ``src/tox/session/cmd`` costs 9)."""

MAX_CONFIG_KEYS: Final = 256
"""Configuration keys one repository's vocabulary keeps (``RepoVocabulary.settings``): celery
documents about 200 settings, tox about 90; 256 names are at most about 7 KB of catalog."""

MAX_CONFIG_FILE_READS: Final = 12
"""Folder listings and files one repository's configuration-key read may fetch, on top of the
vocabulary's own reads: its docs folder and the guide folders beneath it, the configuration
pages they hold, a settings module and a JSON schema."""

# --- hostile text: what one extractor reads of a ticket, comment or model reply ----------------

MAX_EXTRACT_TEXT_CHARS: Final = 65_536
"""Characters of one text (ticket title or description, dossier, comment, model reply) that seed,
keyword, citation and reply extraction read: the largest issue or pull-request body the
forges accept, so past it is a pasted log, and regex work stays bounded whatever size arrives."""

MAX_LINT_MESSAGE_CHARS: Final = 1_000
"""Characters of one linter message searched for a complexity threshold: they are one line."""

MAX_TOML_LINE_DOTS: Final = 64
"""Dots one line of a repository's TOML file (``pyproject.toml``, ``Cargo.toml``) may hold
before the file is left unread. The standard TOML parser builds a dotted key one part at a time
by copying the parts before it, so a key of ``k`` parts costs ``k * k`` (64 kB of ``a.`` took a
second, a megabyte minutes); a key cannot span lines, so this bounds every key. The 708 TOML
files on the development machine (147 of installed packages and clones, 561 of test runs) hold at
most 8 dots on a line and parse the same with the bound; under 64, a megabyte of bounded keys
still costs under two seconds, a few times an ordinary megabyte of TOML."""

# --- vendor CLI invocation -------------------------------------------------------------------

MAX_CLI_ARGV_BYTES: Final = 32_768
"""Bytes of one vendor CLI's whole argv: the prompt goes by stdin or a file, never an argument
(Linux refuses one argument over 128 KiB with ``E2BIG``), so flags, paths and ids fit in 32 KiB
and inline images (Grok's ``--prompt-json``) are sent only while they fit beside them."""

MAX_TICKET_KEY_CHARS: Final = 64
"""Characters of a ticket key (a partition key and a folder name): ``ENG-123`` or a chat
thread's ``<source>-<channel>-<ts>`` (about 40), far under any file system's 255-byte name."""

# --- input sizes: everything read from outside has one --------------------------------------

MAX_TICKET_TITLE_CHARS: Final = 256
"""Characters of a ticket title (the forges' issue-title limit); longer is cut with an ellipsis."""

MAX_TICKET_DESCRIPTION_CHARS: Final = 65_536
"""Characters of a ticket description kept (the forges' issue-body limit); longer is cut with a
visible note, never refused: the start of a pasted log still says what is wrong."""

MAX_TICKET_ATTACHMENTS: Final = 20
"""Attachments kept on a ticket; the rest are dropped with a note (screenshots are few)."""

MAX_TICKET_LABELS: Final = 50
"""Labels kept on a ticket: a team uses a handful; a thousand is a hostile payload."""

MAX_COMMENT_CHARS: Final = 65_536
"""Characters of one PR or ticket comment read as feedback (the forges' comment-body limit)."""

MAX_TICKET_FILE_BYTES: Final = 4_000_000
"""Bytes of a ticket JSON file given to a CLI: a 65,536-character description and its
attachments fit many times over; a 50 MB file is refused before it is parsed."""

MAX_GROUP_DEPTH: Final = 20
"""Groups between an org and a repository name in a catalog path (``acme/payments/ledger``):
the deepest subgroup nesting a forge allows (twenty levels)."""

MAX_CATALOG_BYTES: Final = 16_000_000
"""Bytes of a repository catalog file: ten thousand repositories with descriptions and aliases."""

MAX_CONFIG_FILE_BYTES: Final = 1_000_000
"""Bytes of a configuration file (vendors file): a hand-written file is a few kilobytes."""

MAX_DOSSIER_BYTES: Final = 1_000_000
"""Bytes of one expert dossier given to ``veranda pack``."""

MAX_JSON_DEPTH: Final = 32
"""Nesting of any JSON/YAML document read from outside: the deepest real one (a vendors file)
is five levels; ten thousand levels is an attack on the parser's recursion."""

MAX_DOCUMENT_NODES: Final = 1_000_000
"""Values in one JSON/YAML document, counted with YAML aliases expanded: a 16 MB catalog holds
far fewer, while nine nested aliases of nine ("billion laughs") expand past it at once."""

OPS_TAIL_RETRY_INITIAL_S: Final = 1.0
"""First wait after the ops tail fails to reach the instance (down at start, or a blip)."""

OPS_TAIL_RETRY_MAX_S: Final = 60.0
"""Backoff cap between the ops tail's reconnect attempts: a minute of flat metrics at most once
the instance is back, and no tight loop against a database that is down."""

OPS_SOCKET_TIMEOUT_S: Final = 10.0
"""Seconds an ops-port connection may sit idle before it is closed: a probe or a scrape sends
its request at once, and 500 idle connections no longer hold 500 threads."""

# --- workspaces on disk (issue 38) -----------------------------------------------------------

MAX_WORKSPACE_BYTES: Final = 50 * 1024**3
"""Default bound on the worker's whole workspace folder (clones and shared stores): room for
a hundred tickets' clones of a large repository; past it the oldest finished go first."""

WORKSPACE_MAX_AGE_S: Final = 14 * 24 * 3600
"""A finished ticket's clone unused this long is removed even under the bound: the forge holds
its branch, and a revision run recreates the clone from the shared store in seconds."""

WORKSPACE_EVICTION_GRACE_S: Final = 15 * 60
"""A clone used this recently is never evicted, whatever the instance says of its runs: covers
a run that starts between the sweep's query and its removal."""

MAX_WORKSPACE_SCAN_ENTRIES: Final = 2_000_000
"""Files and folders one sweep measures across all workspaces; past it the sweep stops and
reports the total as a lower bound rather than walking a planted maze for ever."""

WORKSPACE_SWEEP_INTERVAL_S: Final = 300
"""How often the sweep sensor measures and evicts: disk fills in hours, not seconds."""

MAX_SWEEP_PR_CHECKS: Final = 20
"""Pull requests the sweep asks the forge about per tick (is it still open?): a few API calls
every ``WORKSPACE_SWEEP_INTERVAL_S``; the rest are asked on later ticks."""
