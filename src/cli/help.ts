import { ARTIFACT_RETENTION, DEFAULT_TASK_QUEUE } from '../contracts/defaults.js';
import { formatDuration } from './common.js';

const CONNECTION = `Connects to TEMPORAL_ADDRESS (default localhost:7233), namespace TEMPORAL_NAMESPACE (default "default"), task
queue --task-queue, else switchyard.json's taskQueue, else SWITCHYARD_TASK_QUEUE (default ${DEFAULT_TASK_QUEUE}); TLS, API
key and profile as the temporal CLI takes them (switchyard help: Connection).`;

export const EXIT_CODES = `Exit codes:
  0    done (and every call of a turn succeeded)
  1    the command failed (the server refused it, an approval was ignored, ...)
  2    usage error: bad or missing arguments; nothing was done
  3    no Temporal server answered at TEMPORAL_ADDRESS
  4    the turn ran, but a call did not succeed (error, denied or cancelled)   [turn, run, tasks --stop]
  5    no such session, or no such pending approval
  130  stopped by Ctrl-C (143: SIGTERM)
`;

export const OVERVIEW = `switchyard — a durable tool-call executor for AI agents, on Temporal

Usage: switchyard <command> [options]        switchyard <command> --help for a command's options

Run it:
  dev             a local Temporal dev server (Web UI, approval console) and a worker: what \`npm start\` runs
  worker          a worker against an existing server (TEMPORAL_ADDRESS)
Sessions:
  sessions        list the sessions of the task queue (--pending: only those waiting for approval)
  run FILE        run the calls in a JSON file as one turn, showing each call's live status, then the results
  turn            run one turn given inline (--calls JSON) and print the TurnResult as JSON
  pending         the approvals waiting for a human (one session, or all of them)
  approve         allow a pending call (--always: remember the rule for the session)
  deny            deny a pending call, with --reason for the model
  interrupt       interrupt a session's running turn
  audit           every approval decision of the task queue's sessions (who, tool, input, digest, verified)
  keys new NAME   an Ed25519 key pair for an approver, and the approvers-file entry
  events          a session's events as JSON lines (--follow: live, with the running calls' progress)
  tasks           a session's background tasks, or stop one
  policy          change a session's rules or mode (set), or see what its shadow rules would change (diff)
  doubt           calls whose worker died while they ran (list), and settle one: ran, not-ran or retry (resolve)
  console         the approval console, a web page (dev starts one)
  mcp             an MCP server whose tools run as calls of a session, with durable approvals
Stored outputs:
  artifact URI    print a stored full output (switchyard-artifact://...)
  artifacts prune delete the stored outputs of idle sessions (default: older than ${formatDuration(ARTIFACT_RETENTION.maxAgeMs)})
Other:
  temporal-path   find (or build) the temporal CLI and print its path
  help [COMMAND]  this text, or a command's

Every command takes --help and --json (machine-readable output).

Connection (every command, as the temporal CLI; each flag wins over its variable, variables over the profile):
  --address HOST:PORT        TEMPORAL_ADDRESS (default localhost:7233)
  --namespace NAME           TEMPORAL_NAMESPACE (default "default")
  --api-key KEY              TEMPORAL_API_KEY: sent as a bearer token; turns TLS on
  --tls-cert-path FILE       TEMPORAL_TLS_CLIENT_CERT_PATH, with --tls-key-path FILE (TEMPORAL_TLS_CLIENT_KEY_PATH): mTLS
  --tls-ca-path FILE         TEMPORAL_TLS_SERVER_CA_CERT_PATH: the CA of the server's certificate
  --tls-server-name NAME     TEMPORAL_TLS_SERVER_NAME: the name the server's certificate must carry
  --profile NAME             TEMPORAL_PROFILE: a profile of temporal.toml (TEMPORAL_CONFIG_FILE, default
                             ~/.config/temporalio/temporal.toml)
  A TLS or config file that cannot be read stops the command (exit 2), naming it.
  --task-queue NAME          the sessions' task queue: else "taskQueue" of switchyard.json in the current folder
                             ({"taskQueue":"my-agent"}), else SWITCHYARD_TASK_QUEUE, else ${DEFAULT_TASK_QUEUE}

Environment:
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE     an existing cluster (dev starts its own server unless --existing-server)
  SWITCHYARD_TASK_QUEUE                    task queue of workers and sessions (default ${DEFAULT_TASK_QUEUE})
  SWITCHYARD_DATA_DIR                      stored full outputs and background tasks (default ~/.local/share/switchyard)
  SWITCHYARD_LOG_LEVEL, SWITCHYARD_LOG_FORMAT  worker logs: pino level (default info); json or pretty
  (docs/CONFIGURATION.md lists the rest)

${EXIT_CODES}`;

const WORKER_OPTIONS = `  --cwd DIR           working directory of sessions that name none (default: the current directory); must exist
  --tools MODULE      a JavaScript or TypeScript module whose exported defineTool tools this worker offers too
                      (repeatable; a TypeScript module needs tsx installed); every worker on a task queue must offer
                      the same tools
  --mcp-config FILE   MCP servers whose tools this worker offers, in Claude Code's .mcp.json shape
  --evaluator MODULE  a module whose default export lists approval evaluators ({ name, evaluate }) sessions may
                      pick with approvalEvaluator (repeatable)
  --json              log JSON lines (same as SWITCHYARD_LOG_FORMAT=json)
The operator's rules, which no session can loosen, come from the JSON file SWITCHYARD_POLICY_FILE names:
  { "rules": { "allow": [...], "ask": [...], "deny": [...] } }`;

export const COMMAND_HELP: Record<string, string> = {
  dev: `Usage: switchyard dev [--port N] [--ui-port N] [--console-port N] [--db-file FILE] [--headless] [--cwd DIR] [--tools MODULE] [--mcp-config FILE]
       switchyard dev --existing-server [--console-port N] [--cwd DIR] [--tools MODULE] [--mcp-config FILE]

Starts a local Temporal dev server (with its Web UI), the approval console and a Switchyard worker, and prints
where everything is and how to send a first turn. It always starts its own server, even with TEMPORAL_ADDRESS set
(it says so). Ctrl-C or SIGTERM stops everything it started: the worker, its MCP servers, the console, the server,
and the background Bash tasks its worker started (the in-memory server forgets their sessions); with --db-file the
state and the background tasks are kept, and it says which.
  --port N            gRPC port of the dev server (default 7233)
  --ui-port N         Web UI port (default port + 1000, i.e. 8233)
  --console-port N    approval console port (default: the Web UI port + 1)
  --db-file FILE      keep the server's state in this SQLite file across restarts (default: in memory)
  --headless          no Web UI
  --existing-server   start no server: the worker and the console join the server at TEMPORAL_ADDRESS
                      (default localhost:7233); --port, --ui-port, --db-file and --headless do not apply
${WORKER_OPTIONS}
`,
  worker: `Usage: switchyard worker [--cwd DIR] [--tools MODULE] [--mcp-config FILE] [--evaluator MODULE] [--json]

Runs a worker against an existing Temporal server until Ctrl-C (SIGINT) or SIGTERM. ${CONNECTION}
${WORKER_OPTIONS}
`,
  sessions: `Usage: switchyard sessions [--pending] [--all] [--limit N] [--json]

Lists the sessions of the task queue, newest first, from Temporal visibility: id, status, pending approvals,
start time.
  --pending    only sessions waiting for approval (SwitchyardPendingApprovals > 0)
  --all        closed sessions too (default: running ones)
  --limit N    at most N sessions (default 50)
  --json       a JSON array of { sessionId, status, pendingApprovals, startTime, closeTime? }
${CONNECTION}
`,
  run: `Usage: switchyard run FILE [--session ID] [--turn-id ID] [--cwd DIR] [--json]

Runs the calls in FILE (a JSON array of {"id","name","input"}, or {"calls": [...]}; - reads stdin) as one turn of
a session, starting the session if needed. While it runs, each call's status is shown on stderr (live on a
terminal, a line per change otherwise): queued, waiting for approval (with the command that approves it),
running (with its latest output line), done. Then each result is printed on stdout.
  --session ID   the session (workflow id); default: a new one, printed
  --turn-id ID   default: a new one; running again with the same id re-attaches to the turn instead of re-running it
  --cwd DIR      the session's cwd when this starts it (default: the worker's --cwd)
  --json         print the TurnResult as JSON instead
Ctrl-C detaches: the turn goes on in the session (re-attach with the same --session and --turn-id).
${CONNECTION}
Exit code 4 when a call did not succeed.
`,
  turn: `Usage: switchyard turn --session ID --calls JSON [--turn-id ID] [--cwd DIR]

Runs one turn on a session, starting the session if needed, and prints the TurnResult as JSON.
  --session ID   the session (workflow id)
  --calls JSON   the calls: '[{"id":"c1","name":"Read","input":{"file_path":"README.md"}}]', or @FILE to read them
  --turn-id ID   default: a new one; repeating it re-attaches to the turn instead of running it twice
  --cwd DIR      the session's cwd when this starts it
  --json         (the output is always JSON)
${CONNECTION}
Exit code 4 when a call did not succeed.
`,
  pending: `Usage: switchyard pending [--session ID | ID] [--json]

Lists the approvals waiting for a human: for one session, or (no session given) for every session of the task queue
that waits. Each shows the request id, the tool and what it would do, why it asks, how long it has waited, and the
commands that answer it.
  --session ID   one session (or give the id as the argument)
  --json         a JSON array of the pending ApprovalRequests, each with its sessionId
${CONNECTION}
`,
  approve: `Usage: switchyard approve REQUEST [--session ID] [--always] [--by NAME] [--key FILE [--expires-at ISO]] [--json]

Allows a pending call (the approval signal, with the request's input digest), then waits briefly for the session's
decision log to say whether it took effect. Find REQUEST with \`switchyard pending\`.
  REQUEST        the request id, or its first 4 or more characters as \`pending\` and \`run\` show them
                 (\`5f0c…\`); or --request ID
  --session ID   the session; default: the one waiting with that request
  --always       allow_always: also remember the rule for the rest of the session
  --reason TEXT  a note kept in the decision log
  --by NAME      who decides (default: your user name)
  --digest HEX   the input digest to approve (default: the pending request's)
  --key FILE     sign the approval with this Ed25519 private key (\`switchyard keys new\`); --by defaults to the
                 file's name without .key. Sessions with approvers take only signed approvals
  --expires-at ISO  when the signed grant stops counting (default: 10 minutes from now)
  --json         the session's decision record as JSON
${CONNECTION}
Exit code 1 when the session ignored the decision (already decided, digest mismatch, unsigned, expired, ...), 5
when no such request.
`,
  deny: `Usage: switchyard deny REQUEST --reason TEXT [--session ID] [--by NAME] [--key FILE [--expires-at ISO]] [--json]

Denies a pending call; the model gets "The user denied permission to use <Tool>. Reason: <TEXT>".
  REQUEST        the request id, or its first 4 or more characters as \`pending\` and \`run\` show them
                 (\`5f0c…\`); or --request ID
  --reason TEXT  why (required: the model reads it)
  --session ID   the session; default: the one waiting with that request
  --by NAME      who decides (default: your user name)
  --key FILE     sign the denial with this Ed25519 private key (as for approve)
  --expires-at ISO  when the signed grant stops counting (default: 10 minutes from now)
  --json         the session's decision record as JSON
${CONNECTION}
Exit code 1 when the session ignored the decision, 5 when no such request.
`,
  policy: `Usage: switchyard policy set --session ID [--allow RULE]... [--ask RULE]... [--deny RULE]... [--mode MODE]
                                [--reason TEXT] [--by NAME] [--key FILE [--expires-at ISO]] [--json]
       switchyard policy diff --session ID [--json]

set: changes the session's rules and/or permission mode at once (update setPolicy). Each list given replaces the
session's list of that kind; a list left out is kept. Calls waiting for approval are decided again: printed as
released or denied. The operator's rules (SWITCHYARD_POLICY_FILE on the worker) still hold.
  --allow/--ask/--deny RULE  a rule in Claude Code's syntax, e.g. 'Bash(touch:*)' (repeatable)
  --mode MODE    default, acceptEdits, plan, bypassPermissions or dontAsk
  --reason TEXT  kept in the PolicyChanged event
  --by NAME      who changes it (default: your user name; with --key, the key file's name without .key)
  --key FILE     sign the change with this Ed25519 private key: a session with approvers takes only signed changes
  --expires-at ISO  when the signed change stops applying (default: 10 minutes from now)
Exit code 1 when the session refused the change (the reason is printed; nothing changed).
diff: what the session's shadowRules would have decided differently (PolicyShadowDecision events), by change.
${CONNECTION}
`,
  doubt: `Usage: switchyard doubt list [--session ID] [--json]
       switchyard doubt resolve CALL_ID --outcome ran|not-ran|retry [--output TEXT | --output-file F]
                                [--session ID] [--by NAME] [--key FILE [--expires-at ISO]] [--json]

list: calls in doubt (query callsInDoubt) of one session, or of every running session of the task queue: a call that
is not idempotent whose worker died while it ran. It ended "interrupted" for the model and may have partly run; each
shows what it ran and its idempotency key.
resolve: a person's word on one (update resolveInDoubt); the call leaves the list.
  --outcome ran      it did run: --output (or --output-file) is what the session's next turn reports for it
  --outcome not-ran  it did not run: recorded, nothing reported
  --outcome retry    run it again, first in the session's next turn, permission again, with the same idempotency key
  --session ID   the session; default: the one running session that has the call in doubt
  --by NAME      who settles it (default: your user name; with --key, the key file's name without .key)
  --key FILE     sign with this Ed25519 private key: a session with approvers takes only signed resolutions
  --expires-at ISO  when the signed resolution stops applying (default: 10 minutes from now)
Exit code 1 when the session refused it (the reason is printed; nothing changed), 5 when no such call.
${CONNECTION}
`,
  audit: `Usage: switchyard audit [--session ID] [--since ISO] [--json]

Every approval decision of the task queue's sessions, oldest first: running and closed sessions (while the server
keeps their history; a worker must be running to answer for them). Each decision says when, which request, call,
tool, what it ran (the command, path or URL, at most 200 characters) and input digest, the decision, who gave it (a
person, or [evaluator], [hook], [policy]), whether the signature verified, and whether the session took it. Every
accepted decision is listed; of ignored signals only a session's newest 100, with the total on stderr.
  --session ID   one session (or give the id as the argument)
  --since ISO    only decisions at or after this time
  --json         one JSON object per line: the approvalDecisions entry plus its sessionId
${CONNECTION}`,
  keys: `Usage: switchyard keys new NAME [--dir DIR] [--json]

Writes an Ed25519 key pair for the approver NAME: DIR/NAME.key (private, mode 600: give it to NAME only, for
\`switchyard approve --key\` or the console) and DIR/NAME.pub, says where, and prints the entry to add under
"approvers" in the worker's SWITCHYARD_APPROVERS_FILE (add "groups": [...] to it as needed). Never overwrites a file.
  --dir DIR      where to write the files (default: SWITCHYARD_DATA_DIR/keys, i.e. ~/.local/share/switchyard/keys,
                 mode 700; never the current folder, which a session's commands may read)
  --json         the file paths and the entry as one JSON object
`,
  interrupt: `Usage: switchyard interrupt --session ID [--reason TEXT] [--json]

Interrupts the session's running turn: running calls that can be cancelled end as cancelled, pending approvals
and later calls are skipped; the model gets Claude Code's rejection message for each.
  --session ID   the session (or give the id as the argument)
  --reason TEXT  kept in the turn's stopReason
${CONNECTION}
`,
  events: `Usage: switchyard events --session ID [--since N] [--follow]

Prints the session's events as JSON lines (always JSON; --json is accepted), and the next cursor on stderr.
  --session ID   the session (or give the id as the argument)
  --since N      start at this cursor (default 0)
  --follow, -f   keep printing new events, and a ToolCallProgress line when a running call's progress changes
                 (from its heartbeats, up to 0.8 x heartbeatTimeoutMs late), until Ctrl-C or the session closes
${CONNECTION}
`,
  artifact: `Usage: switchyard artifact URI [--json]

Prints a stored full output (a switchyard-artifact://<session>/<id> URI from a result's budget.artifact) as stored:
an image artifact can be redirected to a file. Reads the file store under SWITCHYARD_DATA_DIR (default
~/.local/share/switchyard), the one the workers write.
  --json   { uri, bytes, text } (text as UTF-8)
`,
  artifacts: `Usage: switchyard artifacts prune [--older-than AGE] [--dry-run] [--json]

Deletes the stored full outputs of sessions that stored none for longer than AGE, from the file store under
SWITCHYARD_DATA_DIR (default ~/.local/share/switchyard). Their switchyard-artifact:// URIs stop resolving. It also
deletes the output of background Bash tasks that have ended (exited or killed) and wrote nothing for longer than
AGE; a running task is never touched. Run it from cron.
  --older-than AGE  30m, 12h, 7d, 2w... (default ${formatDuration(ARTIFACT_RETENTION.maxAgeMs)})
  --dry-run         only list what would be deleted
  --json            { removed: [{ session, bytes, lastModified }], kept,
                      background: { removed: [{ session, taskId, bytes, lastModified }], kept } }
`,
  tasks: `Usage: switchyard tasks SESSION [--stop TASK_ID] [--json]

Lists the session's background tasks (Bash calls with run_in_background), as the session last saw them (query
backgroundTasks): a task shows "running" until a TaskOutput or TaskStop call saw it end, or the session ended.
  --stop TASK_ID  stop that task: runs a TaskStop call as a turn of its own on the session (turn id
                  tasks-stop-<task>-<time>), through the session's permission rules, so it is recorded like any call
                  and waits for a running turn to finish first
  --json          print JSON (the task list, or the TaskStop call's ToolResult)
${CONNECTION}
`,
  mcp: `Usage: switchyard mcp [--session ID] [--cwd DIR] [--permission-mode MODE] [--allow RULE] [--ask RULE]
                      [--deny RULE] [--settings FILE] [--tools MODULE] [--mcp-config FILE] [--http PORT]

An MCP server for any MCP client (Claude Code, Cursor, ...): its tools are the session's tools, and each tools/call
runs as a call of one Switchyard session (started on first use) through grouping, permission rules, hooks and
durable approvals. A call that waits for a human keeps its MCP request open and sends progress notifications naming
the request to approve (\`switchyard pending\`, the console); a client that disconnects leaves the call pending, and
sending the same call again re-attaches to it. Calls that arrive together (within --batch-window) form one turn.
Needs a running worker on the task queue (\`switchyard dev\`, or \`switchyard worker\`).
  --session ID          the session (default: mcp-<folder>-<hash of --cwd>, one per working directory)
  --cwd DIR             the session's working directory (default: the current directory)
  --permission-mode M   default, acceptEdits, plan, bypassPermissions or dontAsk (default: default)
  --allow/--ask/--deny RULE   permission rules (repeatable), e.g. --allow 'Bash(npm test:*)'
  --settings FILE       SessionOptions as JSON (hooks, rules, ...); the flags above are added to it
  --tools MODULE        custom tools to list (repeatable): the same modules the worker loads
  --mcp-config FILE     upstream MCP servers whose tools to list: the same file the worker uses
  --http PORT           streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0: any free port); every request
                        needs "Authorization: Bearer TOKEN": SWITCHYARD_MCP_TOKEN, or a new token printed on stderr
  --token-file FILE     with --http: write the token to FILE (mode 600) instead of printing it
  --batch-window MS     calls arriving within MS of each other form one turn (default 25)
${CONNECTION}
`,
  'temporal-path': `Usage: switchyard temporal-path [--json]

Finds the temporal CLI and prints its path: TEMPORAL_CLI_PATH, then \`temporal\` on PATH, then the cache
(~/.cache/switchyard, or SWITCHYARD_CACHE_DIR), else the Temporal SDK's download into that cache, else a Go build there.
  --json   { path, source }
`,
};
