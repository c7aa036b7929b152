"""``veranda serve-ops [--host H] [--port P] [--no-tail]``: the pod's one HTTP port.

Serves ``/healthz``, ``/readyz`` and ``/metrics``. Unless ``--no-tail``, it also replays new
phase materializations from the instance into the metrics every ``OPS_TAIL_INTERVAL_S``, so
runs that ran in their own Kubernetes Job pods are visible to the scrape of this one.
"""

from __future__ import annotations

import argparse
import logging
import os
import threading

from veranda_dagster.domain.bounds import MAX_TAIL_EVENTS, OPS_TAIL_INTERVAL_S
from veranda_dagster.settings import env_number

DEFAULT_PORT = 9464
"""The ops port in the image, the chart values and the probes (Prometheus exporter range)."""

log = logging.getLogger("veranda.ops")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=os.environ.get("VERANDA_OPS_HOST", "127.0.0.1"))
    parser.add_argument(
        "--port", type=int, default=env_number("VERANDA_OPS_PORT", DEFAULT_PORT, int)
    )
    parser.add_argument(
        "--no-tail", action="store_true", help="do not replay instance materializations"
    )


def _tail_forever(stop: threading.Event) -> None:
    import dagster as dg

    from veranda_dagster.ops.materializations import MaterializationTail
    from veranda_dagster.ops.metrics import default_metrics

    instance = dg.DagsterInstance.get()
    tail = MaterializationTail(instance, default_metrics())
    tail.start_from_now()
    while not stop.wait(OPS_TAIL_INTERVAL_S):
        try:
            tail.poll(MAX_TAIL_EVENTS)
        except Exception as exc:  # storage blips must not kill the probe port
            log.warning("metrics tail skipped a poll: %s", type(exc).__name__)


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.ops.server import OpsServer

    server = OpsServer(args.host, args.port)
    stop = threading.Event()
    if not args.no_tail:
        threading.Thread(target=_tail_forever, args=(stop,), daemon=True).start()
    print(f"veranda ops on {server.url} (/healthz /readyz /metrics)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.httpd.server_close()
    return 0
