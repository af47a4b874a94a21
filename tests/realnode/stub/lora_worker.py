"""Stand-in for an engine's LoRA management on the real node: the real mocker worker (``dynamo.mocker`` from
the runtime image: its DistributedRuntime, system status server, discovery and generate endpoint) plus the
three endpoints an engine serves for LoRA (``load_lora``, ``unload_lora``, ``list_loras``, in the shapes
``dynamo.sglang`` serves them), which the mocker of ai-dynamo 1.6.1 does not have: its system status server
answers ``POST /v1/loras`` with 500 "no 'load_lora' handler is registered".

What is real: the runtime's ``/v1/loras`` routes on the system port (the operator's prober calls those), the
routing from them to these endpoints, and the adapter source resolution (``dynamo.common.lora.manager``,
the Rust LoRA downloader every engine uses: ``file://`` sources must exist). What stands in: loading the
adapter into an engine, which here checks that the resolved directory holds an ``adapter_config.json`` and
records it. Mounted from a ConfigMap and run as ``python3 /stub/lora_worker.py <mocker arguments>``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import sys

import dynamo.mocker.main as mocker
from dynamo.common.lora.manager import get_lora_manager

log = logging.getLogger("lora-stand-in")
LOADED: dict[str, int] = {}
IDS = itertools.count(1)


async def load_lora(request: dict | None = None):
    request = request or {}
    name, uri = request.get("lora_name"), (request.get("source") or {}).get("uri")
    if not name or not uri:
        yield {"status": "error", "message": "'lora_name' and 'source.uri' are required"}
        return
    if name in LOADED:
        yield {"status": "success", "message": f"LoRA adapter '{name}' already loaded", "lora_name": name,
               "lora_id": LOADED[name]}  # fmt: skip
        return
    manager = get_lora_manager()
    if manager is None:
        yield {"status": "error", "message": "LoRAManager not initialized: set DYN_LORA_ENABLED=true"}
        return
    found = await manager.download_lora(uri)
    if found["status"] != "success":
        yield {
            "status": "error",
            "message": f"cannot load {name} from {uri}: {found['message']}",
            "lora_name": name,
        }
        return
    if not os.path.isfile(os.path.join(found["local_path"], "adapter_config.json")):
        yield {
            "status": "error",
            "message": f"{uri} is not a LoRA adapter (no adapter_config.json)",
            "lora_name": name,
        }
        return
    LOADED[name] = next(IDS)
    log.info("loaded LoRA %s from %s (%s)", name, uri, found["local_path"])
    yield {
        "status": "success",
        "message": f"LoRA adapter '{name}' loaded",
        "lora_name": name,
        "lora_id": LOADED[name],
    }


async def unload_lora(request: dict | None = None):
    name = (request or {}).get("lora_name")
    if name not in LOADED:
        yield {"status": "error", "message": f"LoRA adapter '{name}' not found", "lora_name": name}
        return
    lora_id = LOADED.pop(name)
    log.info("unloaded LoRA %s", name)
    yield {
        "status": "success",
        "message": f"LoRA adapter '{name}' unloaded",
        "lora_name": name,
        "lora_id": lora_id,
    }


async def list_loras(_request: dict | None = None):
    yield {"status": "success", "loras": dict(LOADED), "count": len(LOADED)}


def with_lora_endpoints(run_input):
    """The mocker's ``run_input`` (serve the engine on ``endpoint``), plus the LoRA endpoints of the same
    component on the same runtime."""

    def run(runtime, endpoint: str, engine_config):
        served = run_input(runtime, endpoint, engine_config)
        base = endpoint.removeprefix("dyn://").rsplit(".", 1)[0]
        handlers = {"load_lora": load_lora, "unload_lora": unload_lora, "list_loras": list_loras}
        lora = [runtime.endpoint(f"{base}.{n}").serve_endpoint(h) for n, h in handlers.items()]
        log.info("serving %s on %s", json.dumps(sorted(handlers)), base)
        return asyncio.gather(served, *lora)

    return run


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stdout)
    sys.argv = ["dynamo.mocker", *sys.argv[1:]]
    mocker.run_input = with_lora_endpoints(mocker.run_input)
    mocker.main()
