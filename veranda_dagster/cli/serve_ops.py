"""``veranda serve-ops [--host H] [--port P] [--no-tail]``: the pod's one HTTP port.

Serves ``/healthz``, ``/readyz`` and ``/metrics``. Unless ``--no-tail``, it also replays new
phase materializations from the instance into the metrics every ``OPS_TAIL_INTERVAL_S``, so
runs that ran in their own Kubernetes Job pods are visible to the scrape of this one.
"""

from __future__ import annotations

import argparse
import logging
import os

from veranda_dagster.settings import env_number

DEFAULT_PORT = 9464
"""The ops port in the image, the chart values and the probes (Prometheus exporter range)."""

log = logging.getLogger("veranda.ops")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default=os.environ.get("VERANDA_OPS_HOST", "127.0.0.1"),
        help="address to listen on (default: $VERANDA_OPS_HOST, else 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=env_number("VERANDA_OPS_PORT", DEFAULT_PORT, int),
        help=f"port to listen on (default: $VERANDA_OPS_PORT, else {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--no-tail", action="store_true", help="do not replay instance materializations"
    )


def _instance() -> object:
    import dagster as dg

    return dg.DagsterInstance.get()


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.observability.metrics import default_metrics
    from veranda_dagster.observability.server import InstanceReadiness, OpsServer
    from veranda_dagster.observability.tail_runner import TailRunner, both

    readiness = InstanceReadiness()
    tail = None
    if not args.no_tail:  # reconnects with backoff; /readyz is 503 while it is down
        tail = TailRunner(default_metrics(), _instance).start()
        readiness = both(readiness, tail.check)  # type: ignore[assignment]
    server = OpsServer(args.host, args.port, readiness=readiness)
    print(f"veranda ops on {server.url} (/healthz /readyz /metrics)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if tail is not None:
            tail.stop()
        server.httpd.server_close()
    return 0
