#!/bin/sh
# Image entrypoint: export the Vault-rendered env files, then exec the pod's command.
#
# The Vault agent (injected by the vault.hashicorp.com/agent-inject annotations) writes each
# secret template to /vault/secrets/<name> as `export NAME="value"` lines. Sourcing them here,
# instead of wrapping every command, keeps the K8sRunLauncher's own container args untouched
# (it sets `args`, so this ENTRYPOINT still runs). Nothing is printed: values never reach logs.
set -eu
if [ -d /vault/secrets ]; then
  for f in /vault/secrets/*.env; do
    [ -r "$f" ] || continue
    # shellcheck disable=SC1090
    . "$f"
  done
fi
exec "$@"
