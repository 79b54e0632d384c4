"""/health's GPU fields each say one thing (issue 31 item 11): with remote GPU workers and no local GPU, the
configured local ids, the GPUs found on this host and the remote workers are told apart; the old names stay."""

from __future__ import annotations

import httpx
import pytest

from .test_without_gpu import NO_DEVICE, fake_nvidia_smi

API = "/api/v1"


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_health_with_remote_workers_and_no_local_gpu_names_each_gpu_field_with_fake_nvidia_smi(db_url, server_factory, tmp_path):
    server = server_factory(
        factory="tests.service.graph_app:create_gpu_app",
        PATH=fake_nvidia_smi(tmp_path, NO_DEVICE),
        CUDAMASTER_SERVICE__REMOTE_GPUS="2",
    )
    with httpx.Client(base_url=server.url, timeout=30) as client:
        health = client.get(f"{API}/health").json()
        schema = client.get(f"{API}/openapi.json").json()["components"]["schemas"]["HealthOut"]["properties"]
    assert health["evaluation"] == "remote_gpus" and health["can_run_jobs"] is True
    assert health["remote_gpu_workers"] == 2
    assert health["gpus_on_this_host"] == [] and health["gpus_configured"] == ["0"]
    assert health["gpus"] == health["gpus_configured"] and health["gpus_found"] == health["gpus_on_this_host"]  # the old names
    assert schema["gpus"]["deprecated"] is True and "gpus_configured" in schema["gpus"]["description"]
    assert schema["gpus_found"]["deprecated"] is True and "gpus_on_this_host" in schema["gpus_found"]["description"]
    for field in ("gpus_configured", "gpus_on_this_host", "remote_gpu_workers"):
        assert schema[field]["description"], field
