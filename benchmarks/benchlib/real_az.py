"""A real Azure CLI signed in to the bundled mock, for az_bench.py's side-by-side figure:
az's client id registered in the mock, alice signed in with that client id by the sidecar
into az's own MSAL cache file (the format is MSAL's, shared), a cloud "Mock" whose Entra
endpoint is the mock (clouds.config), and alice as a tenant-level account in azureProfile.json
(what `az login --allow-no-subscriptions` stores). How Tests/e2e_auth/fixtures/az/
recorded-2.91.0.json was recorded."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

from .mock import ALICE, MockSession

AZ_CLIENT_ID = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"  # Azure CLI's public client
CONTOSO_TID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"


def signed_in_config_dir(bench: MockSession) -> str:
    """An AZURE_CONFIG_DIR where the real az is alice, signed in to the mock; returns its path."""
    config_dir = os.path.join(bench.tmp, "azure-config")
    os.makedirs(config_dir)
    bench.admin.call("clients", {"client_id": AZ_CLIENT_ID, "name": "Azure CLI", "redirect_uris": ["http://localhost"]})
    sidecar_config = os.path.join(bench.tmp, "az-client.json")
    with open(sidecar_config, "w") as f:
        json.dump({"clientId": AZ_CLIENT_ID, "authority": bench.url + "/organizations", "knownAuthorities": ["127.0.0.1"],
                   "cache": {"path": os.path.join(config_dir, "msal_token_cache.json")},
                   "scopes": ["https://management.core.windows.net//.default"]}, f)
    login = subprocess.run([bench.binary, "login", "--config", sidecar_config, "--no-agent", "--login-hint", ALICE],
                           env=bench.child_env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if login.returncode != 0:
        raise RuntimeError(f"signing in as Azure CLI's client failed: {login.stderr}")
    with open(os.path.join(config_dir, "clouds.config"), "w") as f:
        f.write(f"[Mock]\nendpoint_active_directory = {bench.url}\nendpoint_resource_manager = {bench.url}/\n"
                "endpoint_active_directory_resource_id = https://management.core.windows.net/\n"
                "endpoint_active_directory_graph_resource_id = https://graph.windows.net/\n"
                "endpoint_microsoft_graph_resource_id = https://graph.microsoft.com/\n"
                "endpoint_management = https://management.core.windows.net/\n")
    with open(os.path.join(config_dir, "azureProfile.json"), "w") as f:
        json.dump({"installationId": str(uuid.uuid4()), "subscriptions": [{
            "id": CONTOSO_TID, "name": "N/A(tenant level account)", "state": "Enabled",
            "user": {"name": ALICE, "type": "user"}, "isDefault": True, "tenantId": CONTOSO_TID,
            "environmentName": "Mock"}]}, f)
    return config_dir


def environment(bench: MockSession, config_dir: str) -> dict:
    """The variables that point the real az at that directory, the cloud and the mock's CA."""
    return {"AZURE_CONFIG_DIR": config_dir, "AZURE_CLOUD_NAME": "Mock", "AZURE_CORE_INSTANCE_DISCOVERY": "false",
            "AZURE_CORE_COLLECT_TELEMETRY": "false", "REQUESTS_CA_BUNDLE": bench.ca_file}
