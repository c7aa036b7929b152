"""Run one ticket whose ``patch`` meets a 5xx from the model on every attempt, in a fresh
interpreter (``VERANDA_MODEL_RETRY_DELAY_S`` is read when the retry policies are built), so
the step's RetryPolicy runs out for real. ``python -m tests.sensors.upstream_failure_run
HOME KEY`` prints the run id."""

from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg
from dagster._core.instance.ref import InstanceRef

from tests.assets.fakes import ScriptedDomain, resources
from veranda_dagster.assets import CHECKS, PHASE_ASSETS
from veranda_dagster.assets._policy import model_retry_delay_override, with_model_retry_delay
from veranda_dagster.domain.core.models import Patch, RedTests, WorkOrder
from veranda_dagster.jobs import ticket_run
from veranda_dagster.partitions import TICKET_JOB
from veranda_dagster.resources.domain_calls import DOMAIN_CALLS_KEY
from veranda_dagster.vendors.port import VendorError

UPSTREAM_DETAIL = "API Error: 500 Internal server error (api_error_status: 500)"


class UpstreamDownDomain(ScriptedDomain):
    """``patch``'s model answers 500 past the CLI's own retry, every attempt."""

    def phase_patch(self, order: WorkOrder, red_tests: RedTests) -> Patch:
        raise VendorError("upstream", UPSTREAM_DETAIL)


def main(home: str, key: str) -> None:
    root = Path(home).parent
    res = resources(str(root), str(root / "values"))
    values = str(root / "values")
    res[DOMAIN_CALLS_KEY] = UpstreamDownDomain(counter_dir=str(root), values_dir=values)
    defs = dg.Definitions(
        # the operator's delay applied where the product's Definitions apply it: without it
        # the step waited its spec's 120 s (+/- jitter) before the retry
        assets=with_model_retry_delay(PHASE_ASSETS, model_retry_delay_override()),
        asset_checks=CHECKS,
        jobs=[ticket_run],
        resources=res,
        executor=dg.in_process_executor,
    )
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(home)) as instance:
        instance.add_dynamic_partitions("tickets", [key])
        result = defs.resolve_job_def(TICKET_JOB).execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False
        )
        assert not result.success
        print(result.run_id)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
