"""How the pods of a multinode component find each other, and the per-backend launch rewriting.

A multinode component (``multinode.nodeCount > 1``) runs one leader pod (node rank 0) and
``nodeCount - 1`` worker pods. The pathway that creates the pods (Grove or LeaderWorkerSet) decides
how a pod learns the leader's hostname and its own rank; :class:`Addressing` carries that, so the
backend rules below are written once for both pathways.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from .errors import RenderError, spec_path
from .info import failover_spec, gpus_per_node, parallel_sizes, vllm_multinode_mode
from .names import ANN_VLLM_EXECUTOR, MAIN_CONTAINER, WORKER_TYPES
from .ports import (
    DIST_INIT_PORT_NAME,
    DP_RPC_PORT_NAME,
    RAY_HEAD_PORT_NAME,
    SGLANG_DIST_INIT_PORT,
    SSH_PORT_NAME,
    TRTLLM_SSH_PORT,
    VLLM_DP_RPC_PORT,
    VLLM_MP_MASTER_PORT,
    VLLM_RAY_HEAD_PORT,
)

GROVE = "grove"
LWS = "lws"
LEADER_SUFFIX = "ldr"
WORKER_SUFFIX = "wkr"


@dataclass(frozen=True)
class Addressing:
    """How a multinode pod finds its leader and its own rank; differs per pathway (Grove or LWS).

    Every string is meant for the container's ``command``/``args``: ``$(VAR)`` references are expanded
    by the kubelet before the process starts (both pathways inject their variables into every
    container's env), so they work with or without a shell. ``$((...))`` and ``${...}`` are shell
    syntax the kubelet leaves alone; a launch that uses them runs under ``sh -c``.
    """

    pathway: str  # GROVE | LWS
    leader_host: str  # the leader pod's DNS name as the container sees it
    node_rank: str  # a worker pod's rank (1..nodeCount-1); the leader's rank is always 0
    rank_needs_shell: bool  # node_rank is shell arithmetic, not a plain $(VAR) reference
    rank_arith: str  # the worker rank as an expression valid inside $(( )), e.g. "LWS_WORKER_INDEX"
    worker_host_format: str  # DNS name of worker pod ``{index}`` (shell syntax allowed; see worker_host)
    worker_index_offset: int  # rank - offset = the ``{index}`` of that worker pod in worker_host_format
    needs_dns_wait: bool  # pods start together, so a leader must wait for its workers' DNS records

    def worker_host(self, rank: int) -> str:
        """The DNS name of the worker pod with node rank ``rank`` (1..nodeCount-1), for use in a shell."""
        return self.worker_host_format.format(index=rank - self.worker_index_offset)

    def hosts(self, node_count: int) -> list[str]:
        """Every pod's DNS name, leader first (for ``mpirun -H``)."""
        return [self.leader_host] + [self.worker_host(r) for r in range(1, node_count)]


def lws_addressing() -> Addressing:
    """LeaderWorkerSet: LWS_LEADER_ADDRESS is ``<leader pod>.<headless service>.<namespace>`` and a worker pod
    is named ``<leader pod>-<LWS_WORKER_INDEX>`` in the same service, so a worker's name is the leader's with
    ``-<index>`` spliced in before the first dot."""
    return Addressing(
        pathway=LWS,
        leader_host="$(LWS_LEADER_ADDRESS)",
        node_rank="$(LWS_WORKER_INDEX)",
        rank_needs_shell=False,
        rank_arith="LWS_WORKER_INDEX",
        worker_host_format="${{LWS_LEADER_ADDRESS%%.*}}-{index}.${{LWS_LEADER_ADDRESS#*.}}",
        worker_index_offset=0,
        needs_dns_wait=True,
    )


def grove_clique_names(component_name: str) -> tuple[str, str]:
    """(leader clique, worker clique) = (f"{lower}-ldr", f"{lower}-wkr") — the PodCliques of a multinode
    component inside its PodCliqueScalingGroup."""
    lower = component_name.lower()
    return f"{lower}-{LEADER_SUFFIX}", f"{lower}-{WORKER_SUFFIX}"


def grove_addressing(component_name: str) -> Addressing:
    """Grove: a PodCliqueScalingGroup member pod is named
    ``<GROVE_PCSG_NAME>-<GROVE_PCSG_INDEX>-<clique>-<pod index>`` under the PodCliqueSet's headless service
    (GROVE_HEADLESS_SERVICE). The worker clique's pod index starts at 0,
    so a worker's rank is that index + 1 (shell arithmetic)."""
    leader, worker = grove_clique_names(component_name)
    prefix = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)"
    return Addressing(
        pathway=GROVE,
        leader_host=f"{prefix}-{leader}-0.$(GROVE_HEADLESS_SERVICE)",
        node_rank="$((GROVE_PCLQ_POD_INDEX + 1))",
        rank_needs_shell=True,
        rank_arith="GROVE_PCLQ_POD_INDEX + 1",
        worker_host_format=f"{prefix}-{worker}-{{index}}.$(GROVE_HEADLESS_SERVICE)",
        worker_index_offset=1,
        needs_dns_wait=False,
    )


# ---------------------------------------------------------------------------------------------------------
# Per-backend launch rewriting
#
# The user writes the single-node launch of the main container (``python3 -m dynamo.<backend> ...`` as
# command/args, or inside ``sh -c '<script>'``); the operator adds what makes the nodes one engine. Rules
# live here once: ``launch_problems`` (admission) and ``rewrite_launch`` (rendering) run the same code.

MPI_SSH_MOUNT_PATH = "/ssh-pk"  # the MPI SSH Secret (keys private.key, private.key.pub; see SSH_CLIENT_SETUP)
# Owner read only: the key is root's in the container (the kubelet adds group read for the pod's fsGroup,
# so a non-root runtime user in that group reads it too); copied to $HOME/.ssh with 0600 before use.
MPI_SSH_SECRET_MODE = 0o400
MPI_HOST_DNS_WAIT_SECONDS = 300
MPI_FORWARDED_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "HF_DATASETS_CACHE",
    "HF_ENDPOINT",
    "HF_HOME",
    "HF_TOKEN",
    "HOME",
    "HUGGING_FACE_HUB_TOKEN",
    "LD_LIBRARY_PATH",
    "MODEL_PATH",
    "NCCL_DEBUG",
    "NCCL_IB_DISABLE",
    "NCCL_P2P_DISABLE",
    "PATH",
    "PYTHONPATH",
    "TENSORRT_LLM_CACHE_DIR",
    "TOKENIZERS_PARALLELISM",
    "TRANSFORMERS_CACHE",
    "TRTLLM_USE_UCX_KVCACHE",
    "USER",
)
# Flags whose value differs per pod or per pathway (rank, leader address): the operator alone sets them.
OPERATOR_OWNED_FLAGS = frozenset(
    {
        "--node-rank",
        "--master-addr",
        "--headless",
        "--dist-init-addr",
        "--data-parallel-address",
        "--data-parallel-start-rank",
    }
)
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})
# ``python[3[.x]] [opts] -m dynamo.<backend>``: where the backend starts, and which backend it is
BACKEND_INVOCATION = re.compile(r"python[0-9.]*\s+(?:\S+\s+)*?-m\s+dynamo\.(vllm|sglang|trtllm)\b")
_PYTHON = re.compile(r"^python[0-9.]*$")

# vLLM modes (the defaults document, "Multinode Deployment Probe Modifications")
VLLM_RAY = "ray"  # tensor/pipeline parallel over a Ray cluster
VLLM_MP = "mp"  # tensor/pipeline parallel with vLLM's multiprocessing executor (annotation opt-in)
VLLM_DP = "dp"  # data parallel, hybrid load balancing: every node serves its local DP ranks
# TP x PP x DP fits on one node: as upstream, no flag is added and every node runs the launch as written
# (one engine per node, each registering with Dynamo's discovery); the worker pods lose their probes
VLLM_PER_NODE = "per-node"


@dataclass(frozen=True)
class Problem:
    """Why a multinode component cannot launch; ``path`` is relative to the component spec."""

    path: tuple
    kind: str  # "invalid" | "required" | "forbidden"
    detail: str
    fix: str
    value: str | int | None = None  # the offending value, as the user wrote it

    def render_path(self) -> str:
        """The path as ``RenderError`` spells it (``errors.spec_path``)."""
        return spec_path(self.path)


class _Stop(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.detail)
        self.problem = problem


@dataclass(frozen=True)
class _Launch:
    """The user's launch as written, and where the dynamo invocation sits in it."""

    index: int  # of the main container in podTemplate.spec.containers
    command: tuple[str, ...]
    args: tuple[str, ...]
    shell: bool  # the invocation is inside a ``sh -c`` script
    script: str  # the script (shell form) or "" (exec form)
    script_at: int  # the script's position in command + args (shell form)
    span: tuple[int, int]  # the invocation's [start, end) in the script (shell form)
    words: tuple[str, ...]  # the invocation's words (shell form) or command + args split (exec form)
    backend: str | None  # detected from ``-m dynamo.<backend>``

    def path(self, *rest) -> tuple:
        return ("podTemplate", "spec", "containers", self.index, *rest)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _shell_script_at(words: list[str]) -> int | None:
    """Where the script is in ``words`` (command + args) when they read ``<shell> [-opts] -c <script>``."""
    if not words or os.path.basename(words[0]) not in SHELLS:
        return None
    for i, w in enumerate(words[1:], start=1):
        if w == "-c" or (w.startswith("-") and not w.startswith("--") and w.endswith("c")):  # -c, -ec, -lc
            return i + 1 if i + 1 < len(words) else None
        if not w.startswith("-"):
            return None
    return None


def _invocation_end(script: str, start: int) -> int:
    """Where the arguments of the command starting at ``start`` end: before the first unquoted ``;``, ``&``,
    ``|``, newline or redirection (``>``, ``<``, with its file-descriptor number, as in ``2>&1``)."""
    quote = None
    i = start
    while i < len(script):
        ch = script[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = None
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        elif ch in ";&|\n<>":
            break
        i += 1
    end = min(i, len(script))
    if end < len(script) and script[end] in "<>":
        digits = end
        while digits > start and script[digits - 1].isdigit():
            digits -= 1
        if digits < end and script[digits - 1] in " \t":
            end = digits
    while end > start and script[end - 1] in " \t":
        end -= 1
    return end


def _find_main(spec: dict) -> tuple[int, dict] | None:
    containers = ((spec.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
    for j, c in enumerate(containers):
        if isinstance(c, dict) and c.get("name") == MAIN_CONTAINER:
            return j, c
    return None


def _read_launch(spec: dict, main: dict | None = None) -> _Launch:
    """The launch of the main container (``main`` overrides the one in ``spec``, e.g. after merging)."""
    found = _find_main(spec)
    if found is None:
        raise _Stop(
            Problem(
                ("podTemplate", "spec", "containers"),
                "required",
                "a multinode component needs a container named 'main' that runs the backend",
                "add {name: main, image: ..., command: [python3, -m, dynamo.<backend>], args: [...]}",
            )
        )
    index, user_main = found
    main = main if main is not None else user_main
    command = [str(w) for w in main.get("command") or []]
    args = [str(w) for w in main.get("args") or []]
    if not command:
        raise _Stop(
            Problem(
                ("podTemplate", "spec", "containers", index, "command"),
                "required",
                "a multinode component needs an explicit command: the operator adds the distributed launch "
                "flags to it (the image's entrypoint is unknown to it)",
                "set command, e.g. [python3, -m, dynamo.vllm], and keep the engine flags in args",
            )
        )
    at = _shell_script_at(command + args)
    if at is not None:
        script = (command + args)[at]
        m = BACKEND_INVOCATION.search(script)
        if m is None:
            raise _Stop(
                Problem(
                    ("podTemplate", "spec", "containers", index, "args"),
                    "invalid",
                    "the shell script does not run `python3 -m dynamo.<vllm|sglang|trtllm>`, so the operator "
                    "cannot tell where to add the distributed launch flags",
                    "run the backend as `python3 -m dynamo.<backend> ...` in the script, or use command "
                    "[python3, -m, dynamo.<backend>]",
                )
            )
        end = _invocation_end(script, m.start())
        return _Launch(
            index, tuple(command), tuple(args), True, script, at, (m.start(), end),
            tuple(_split(script[m.start() : end])), m.group(1),
        )  # fmt: skip
    if not _PYTHON.match(os.path.basename(command[0])):
        raise _Stop(
            Problem(
                ("podTemplate", "spec", "containers", index, "command"),
                "invalid",
                "the operator can add distributed launch flags only to a python command or a `sh -c` "
                f"script, not to {command[0]!r}",
                "use command [python3, -m, dynamo.<backend>], or [sh, -c] with the python invocation in "
                "the script",
            )
        )
    words = [w for part in command + args for w in _split(part)]
    m = BACKEND_INVOCATION.search(" ".join(words))
    return _Launch(index, tuple(command), tuple(args), False, "", -1, (0, 0), tuple(words), m and m.group(1))


def _flag_value(words: tuple[str, ...], flag: str) -> tuple[bool, str | None]:
    """(present, value) of ``flag`` in ``words`` (``--flag value`` or ``--flag=value``)."""
    for i, w in enumerate(words):
        if w == flag:
            nxt = words[i + 1] if i + 1 < len(words) else None
            return True, None if nxt is None or nxt.startswith("--") else nxt
        if w.startswith(flag + "="):
            return True, w[len(flag) + 1 :]
    return False, None


def vllm_executor(annotations: dict, spec: dict | None = None) -> str:
    """Distributed executor of multinode TP/PP vLLM: Ray (the defaults document) unless annotated ``mp``,
    or, unannotated, for a component with failover (its standby engine cannot start a second Ray head on
    the leader's port, and moves the mp rendezvous port instead: ``render/gms.py``)."""
    chosen = annotations.get(ANN_VLLM_EXECUTOR)
    if chosen is None and spec is not None and failover_spec(spec) is not None:
        return VLLM_MP
    return VLLM_MP if chosen == VLLM_MP else VLLM_RAY


@dataclass(frozen=True)
class _Plan:
    backend: str
    mode: str  # vllm: VLLM_RAY | VLLM_MP | VLLM_DP; sglang: "sglang"; trtllm: "mpi"
    node_count: int
    gpus: int  # per node (0 when the backend does not need it)
    dp_local: int  # vLLM data-parallel ranks per node
    launch: _Launch | None  # None: a per-node vLLM launch the operator leaves as written


def _gpu_problem(launch: _Launch, backend: str, why: str) -> Problem:
    return Problem(
        launch.path("resources"),
        "required",
        f"multinode {backend} needs the GPU count of one node to {why}",
        "set resources.limits[nvidia.com/gpu] on the main container",
    )


def _vllm_plan(
    launch: _Launch, main: dict, node_count: int, annotations: dict, spec: dict
) -> tuple[str, int, int]:
    """(mode, GPUs per node, DP ranks per node) of multinode vLLM, by the defaults document's rules: Ray
    (or mp) tensor/pipeline parallel when TP x PP exceeds a node's GPUs, data parallel when TP x PP x DP
    does, else per node (upstream adds no flag then: each node runs its own engine as written)."""
    gpus = gpus_per_node(main)
    if gpus <= 0:
        raise _Stop(
            _gpu_problem(
                launch, "vLLM", "choose between the tensor/pipeline-parallel and data-parallel launch"
            )
        )
    sizes = parallel_sizes({"args": list(launch.words)})
    world = sizes["tensor-parallel-size"] * sizes["pipeline-parallel-size"]
    dp = sizes["data-parallel-size"]
    mode = vllm_multinode_mode({"args": list(launch.words), "resources": main.get("resources")})
    if mode == "tp-pp":
        if world > gpus * node_count:
            raise _Stop(
                Problem(
                    launch.path("args"),
                    "invalid",
                    f"tensor-parallel-size x pipeline-parallel-size = {world} needs more GPUs than "
                    f"{node_count} nodes x {gpus} GPUs",
                    f"raise multinode.nodeCount to {-(-world // gpus)} or lower the parallel sizes",
                    f"--tensor-parallel-size {sizes['tensor-parallel-size']} "
                    f"--pipeline-parallel-size {sizes['pipeline-parallel-size']}",
                )
            )
        return vllm_executor(annotations, spec), gpus, 0
    if mode == "dp":
        local = gpus // world
        if dp != local * node_count:
            nodes = f" or multinode.nodeCount to {dp // local}" if dp % local == 0 else ""
            raise _Stop(
                Problem(
                    launch.path("args"),
                    "invalid",
                    f"data-parallel-size {dp} does not fill {node_count} nodes of {local} data-parallel "
                    f"ranks each ({gpus} GPUs / tensor x pipeline parallel {world})",
                    f"set --data-parallel-size to {local * node_count}{nodes}",
                    f"--data-parallel-size {dp}",
                )
            )
        return VLLM_DP, gpus, local
    return VLLM_PER_NODE, gpus, 0


def _per_node_vllm(container: dict, backend: str | None) -> bool:
    """A vLLM main container whose TP x PP x DP fits on one node's GPUs: its launch is not rewritten, so
    it needs neither an explicit command nor a recognisable ``python3 -m dynamo.vllm`` invocation."""
    parts = (container.get("command") or []) + (container.get("args") or [])
    words = [w for part in parts for w in _split(str(part))]
    found = BACKEND_INVOCATION.search(" ".join(words))
    if (backend or (found and found.group(1))) != "vllm" or gpus_per_node(container) <= 0:
        return False
    return vllm_multinode_mode(container) is None


def _plan(
    spec: dict, node_count: int, backend: str | None, annotations: dict, main: dict | None = None
) -> _Plan:
    ctype = spec.get("type")
    if ctype not in WORKER_TYPES:
        raise _Stop(
            Problem(
                ("multinode",),
                "forbidden",
                f"only worker, prefill and decode components run across nodes (this one is "
                f"{ctype or 'untyped'})",
                "remove multinode, or set type to worker, prefill or decode",
            )
        )
    container = main if main is not None else (_find_main(spec) or (0, {}))[1]
    try:
        launch = _read_launch(spec, main)
    except _Stop:
        if _per_node_vllm(container, backend):
            return _Plan("vllm", VLLM_PER_NODE, node_count, gpus_per_node(container), 0, None)
        raise
    backend = backend or launch.backend
    if backend not in ("vllm", "sglang", "trtllm"):
        raise _Stop(
            Problem(
                ("multinode",),
                "required",
                "the backend is unknown, so the operator cannot tell how to launch it across nodes",
                "set backendFramework (vllm, sglang or trtllm), or run python3 -m dynamo.<backend>",
            )
        )
    if backend == "vllm":
        mode, gpus, local = _vllm_plan(launch, container, node_count, annotations, spec)
        return _Plan(backend, mode, node_count, gpus, local, launch)
    if backend == "sglang":
        return _Plan(backend, "sglang", node_count, 0, 0, launch)
    gpus = gpus_per_node(container)
    if gpus <= 0:
        raise _Stop(_gpu_problem(launch, "TensorRT-LLM", "start one MPI rank per GPU (mpirun -n)"))
    return _Plan(backend, "mpi", node_count, gpus, 0, launch)


def _flags(plan: _Plan, role: str, addr: Addressing) -> list[tuple[str, str | None]]:
    """The flags the operator adds to the backend's own command line (``None``: a switch without value)."""
    leader = role == "leader"
    rank = "0" if leader else addr.node_rank
    if plan.mode == VLLM_RAY:
        return [("--distributed-executor-backend", VLLM_RAY)] if leader else []
    if plan.mode == VLLM_MP:
        flags: list[tuple[str, str | None]] = [
            ("--distributed-executor-backend", VLLM_MP),
            ("--nnodes", str(plan.node_count)),
            ("--master-addr", addr.leader_host),
            ("--master-port", str(VLLM_MP_MASTER_PORT)),
            ("--node-rank", rank),
        ]
        return flags if leader else [*flags, ("--headless", None)]
    if plan.mode == VLLM_DP:
        if leader:
            start = "0"
        elif plan.dp_local == 1:
            start = addr.node_rank
        else:
            start = f"$(( {plan.dp_local} * ({addr.rank_arith}) ))"
        return [
            ("--data-parallel-hybrid-lb", None),
            ("--data-parallel-size-local", str(plan.dp_local)),
            ("--data-parallel-start-rank", start),
            ("--data-parallel-address", addr.leader_host),
            ("--data-parallel-rpc-port", str(VLLM_DP_RPC_PORT)),
        ]
    if plan.mode == "sglang":
        return [
            ("--dist-init-addr", f"{addr.leader_host}:{SGLANG_DIST_INIT_PORT}"),
            ("--nnodes", str(plan.node_count)),
            ("--node-rank", rank),
        ]
    return []


def _why(flag: str, plan: _Plan) -> str:
    if flag == "--nnodes":
        return f"multinode.nodeCount is {plan.node_count}"
    if flag == "--distributed-executor-backend":
        return f"the executor comes from the annotation {ANN_VLLM_EXECUTOR} (ray unless it says mp)"
    if flag == "--data-parallel-size-local":
        return f"{plan.gpus} GPUs per node hold {plan.dp_local} data-parallel ranks"
    return "the operator's multinode launch uses that port"


def _settle(
    plan: _Plan, flags: list[tuple[str, str | None]]
) -> tuple[list[tuple[str, str | None]], list[Problem]]:
    """(flags still to add, conflicts): a flag the user already passed with the same value is kept once;
    a different value, or any value of a per-pod flag, is a conflict."""
    keep, problems = [], []
    if plan.launch is None:
        return keep, problems
    path = plan.launch.path("args")
    for flag, value in flags:
        present, theirs = _flag_value(plan.launch.words, flag)
        if not present:
            keep.append((flag, value))
        elif flag in OPERATOR_OWNED_FLAGS:
            problems.append(
                Problem(
                    path,
                    "forbidden",
                    f"{flag} is set by the operator on each node of a multinode component (leader address "
                    "and node rank differ per pod and pathway)",
                    f"remove {flag} from the command",
                    flag if theirs is None else f"{flag} {theirs}",
                )
            )
        elif value is not None and theirs != value:
            problems.append(
                Problem(
                    path,
                    "invalid",
                    f"conflicts with the multinode launch, which needs {flag} {value} ({_why(flag, plan)})",
                    f"remove {flag} or set it to {value}",
                    f"{flag} {theirs}",
                )
            )
    return keep, problems


def launch_problems(spec: dict, node_count: int, backend: str | None, annotations: dict) -> list[Problem]:
    """Everything that keeps a multinode component (v1beta1 component spec) from launching; [] when it can.

    Admission reports these on the object; rendering raises the first as a ``RenderError``.
    """
    try:
        plan = _plan(spec, node_count, backend, annotations)
    except _Stop as stop:
        return [stop.problem]
    problems: list[Problem] = []
    for role in ("leader", "worker"):
        for p in _settle(plan, _flags(plan, role, lws_addressing()))[1]:
            if p not in problems:
                problems.append(p)
    return problems


# ---------------------------------------------------------------------------------------------------------
# rendering


def _flag_text(flags: list[tuple[str, str | None]]) -> str:
    return " ".join(f if v is None else f"{f} {v}" for f, v in flags)


def _needs_shell(flags: list[tuple[str, str | None]]) -> bool:
    """``$((...))`` / ``${...}`` are shell syntax; the kubelet expands only ``$(VAR)``."""
    return any(v is not None and ("$((" in v or "${" in v) for _, v in flags)


def _quoted(words) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _with_flags(launch: _Launch, flags: list[tuple[str, str | None]]) -> str:
    """The user's launch with ``flags`` added to the backend invocation, as one shell command line."""
    if launch.shell:
        end = launch.span[1]
        text = _flag_text(flags)
        if text and launch.script[end : end + 1] not in ("", " ", "\t", "\n"):
            text += " "  # a value like "0" must not touch a following ">" (that would read as "0>")
        return launch.script[:end] + (f" {text}" if text else "") + launch.script[end:]
    return f"exec {_quoted(launch.command + launch.args)}" + (f" {_flag_text(flags)}" if flags else "")


def _shell(script: str) -> tuple[list[str], list[str]]:
    return ["/bin/sh", "-c"], [script]


def _append(launch: _Launch, flags: list[tuple[str, str | None]]) -> tuple[list[str], list[str]]:
    """Command and args with ``flags`` added, keeping the user's form where it can."""
    if launch.shell:
        words = list(launch.command + launch.args)
        words[launch.script_at] = _with_flags(launch, flags)
        n = len(launch.command)
        return words[:n], words[n:]
    if _needs_shell(flags):
        return _shell(_with_flags(launch, flags))
    extra = [w for f, v in flags for w in ((f,) if v is None else (f, v))]
    return list(launch.command), list(launch.args) + extra


SSH_DIR = "$HOME/.ssh"
_KEYS = MPI_SSH_MOUNT_PATH
# Host keys are pinned, never trusted on first sight: known_hosts holds the Secret's ``known_hosts`` (the
# install hook's ECDSA host key, pattern ``*``) and the user key (the host key a worker uses when the
# Secret has none: one made by hand, or by upstream's keygen Job, with only private.key and
# private.key.pub). Either key is only in the Secret, so a peer without it cannot pass for a worker.
SSH_CLIENT_SETUP = " && ".join(
    (
        f"mkdir -p {SSH_DIR}",
        f"chmod 700 {SSH_DIR}",
        f"cp {_KEYS}/private.key {SSH_DIR}/id_rsa",
        f"cp {_KEYS}/private.key.pub {SSH_DIR}/id_rsa.pub",
        f"cp {_KEYS}/private.key.pub {SSH_DIR}/authorized_keys",
        f"chmod 600 {SSH_DIR}/id_rsa {SSH_DIR}/authorized_keys",
        f"{{ cat {_KEYS}/known_hosts 2>/dev/null; echo; "
        f"printf '* %s\\n' \"$(cat {_KEYS}/private.key.pub)\"; }} > {SSH_DIR}/known_hosts",
    )
)
SSHD = " && ".join(
    (
        SSH_CLIENT_SETUP,
        "(mkdir -p /run/sshd 2>/dev/null || true)",
        f"(cp {_KEYS}/host.key {SSH_DIR}/host_key 2>/dev/null || cp {_KEYS}/private.key {SSH_DIR}/host_key)",
        f"chmod 600 {SSH_DIR}/host_key",
        f"exec /usr/sbin/sshd -D -e -p {TRTLLM_SSH_PORT} -h {SSH_DIR}/host_key -o StrictModes=yes "
        f"-o PasswordAuthentication=no -o AuthorizedKeysFile={SSH_DIR}/authorized_keys "
        f"-o PidFile={SSH_DIR}/sshd.pid",
    )
)
MPI_RSH_ARGS = (
    f"-p {TRTLLM_SSH_PORT} -i {SSH_DIR}/id_rsa -o StrictHostKeyChecking=yes "
    f"-o UserKnownHostsFile={SSH_DIR}/known_hosts -o GlobalKnownHostsFile=/dev/null -o CheckHostIP=no"
)


def _dns_wait(hosts: list[str]) -> str:
    """A bounded wait until every worker has a DNS record (LWS starts the pods together)."""
    return (
        f'for h in {" ".join(hosts)}; do n=0; until getent hosts "$h" >/dev/null 2>&1; do n=$((n + 1)); '
        f'if [ "$n" -ge {MPI_HOST_DNS_WAIT_SECONDS} ]; then echo "multinode: no DNS record for $h after '
        f'{MPI_HOST_DNS_WAIT_SECONDS}s" >&2; exit 1; fi; sleep 1; done; done'
    )


def _mpirun(plan: _Plan, addr: Addressing, env_names: list[str]) -> str:
    launch = plan.launch
    if launch.shell:
        start, _ = launch.span
        inner = launch.script[:start] + "trtllm-llmapi-launch " + launch.script[start:]
    else:
        inner = f"trtllm-llmapi-launch {_quoted(launch.command + launch.args)}"
    hosts = ",".join(f"{h}:{plan.gpus}" for h in addr.hosts(plan.node_count))
    forwarded = " ".join(f"-x {n}" for n in sorted(set(env_names) | set(MPI_FORWARDED_ENV)))
    mpirun = (
        f"exec mpirun --allow-run-as-root -n {plan.node_count * plan.gpus} -H {hosts} --mca pml ob1 "
        f'--mca plm_rsh_args "{MPI_RSH_ARGS}" {forwarded} bash -c {shlex.quote(inner)}'
    )
    steps = [SSH_CLIENT_SETUP]
    if addr.needs_dns_wait:
        steps.append(_dns_wait([addr.worker_host(r) for r in range(1, plan.node_count)]))
    return " && ".join([*steps, mpirun])


_MPIRUN_FORWARDED = re.compile(r"(?<= )-x ([A-Za-z_][A-Za-z0-9_]*)")


def forward_env(container: dict) -> None:
    """A TensorRT-LLM leader's mpirun (``_mpirun``) forwards the container's env to the ranks it starts
    over SSH; env added after the launch was written (the GPU memory service's, a failover engine's) is
    added to its ``-x`` list here, in place. Other containers are left alone."""
    args = container.get("args") or []
    for i, word in enumerate(args):
        if not (isinstance(word, str) and "exec mpirun " in word and " bash -c " in word):
            continue
        have = set(_MPIRUN_FORWARDED.findall(word))
        names = [e["name"] for e in container.get("env") or [] if e.get("name") and e["name"] not in have]
        if names:
            extra = " ".join(f"-x {n}" for n in sorted(set(names)))
            args[i] = word.replace(" bash -c ", f" {extra} bash -c ", 1)
        return


def multinode_ports(plan_mode: str, role: str) -> list[dict]:
    """The port a leader listens on for its workers (or the SSH port of a TRT-LLM worker)."""
    table = {
        (VLLM_RAY, "leader"): (RAY_HEAD_PORT_NAME, VLLM_RAY_HEAD_PORT),
        (VLLM_MP, "leader"): (DIST_INIT_PORT_NAME, VLLM_MP_MASTER_PORT),
        (VLLM_DP, "leader"): (DP_RPC_PORT_NAME, VLLM_DP_RPC_PORT),
        ("sglang", "leader"): (DIST_INIT_PORT_NAME, SGLANG_DIST_INIT_PORT),
        ("mpi", "worker"): (SSH_PORT_NAME, TRTLLM_SSH_PORT),
    }
    port = table.get((plan_mode, role))
    return [{"name": port[0], "containerPort": port[1], "protocol": "TCP"}] if port else []


def rewrite_launch(info, main: dict, role: str, addr: Addressing) -> list[dict]:
    """Rewrite ``main`` (the merged main container) for ``role`` ("leader" | "worker") of a multinode
    component; returns the container ports the role listens on. Raises ``RenderError`` on a shape that
    cannot launch, with the same wording admission uses."""
    try:
        plan = _plan(info.spec, info.node_count, info.backend, info.annotations, main)
        flags, problems = _settle(plan, _flags(plan, role, addr))
    except _Stop as stop:
        problems = [stop.problem]
    if problems:
        p = problems[0]
        problem = f"{p.detail} (have {p.value})" if p.value is not None else p.detail
        raise RenderError(info.dcd, p.render_path(), problem, p.fix)
    launch = plan.launch
    if launch is None or plan.mode == VLLM_PER_NODE:
        return []  # every node runs the launch as written
    if plan.mode == VLLM_RAY:
        if role == "leader":
            head = f"ray start --head --port={VLLM_RAY_HEAD_PORT}"
            body = _with_flags(launch, flags)
            command, args = _shell(f"{head} && {body}" if not launch.shell else f"{head} || exit 1\n{body}")
        else:
            command, args = _shell(
                f"exec ray start --address={addr.leader_host}:{VLLM_RAY_HEAD_PORT} --block"
            )
    elif plan.mode == "mpi":
        if role == "leader":
            command, args = _shell(
                _mpirun(plan, addr, [e["name"] for e in main.get("env") or [] if "name" in e])
            )
        else:
            command, args = _shell(SSHD)
    else:
        command, args = _append(launch, flags)
    main["command"], main["args"] = command, args
    return multinode_ports(plan.mode, role)


_PORT_VALUE = re.compile(r"^([^\s:'\"]*:)?(\d+)$")  # a port, or host:port (--dist-init-addr)


def _bump_flag(words: list[str], flag: str, offset: int) -> bool:
    """Add ``offset`` to the port ``flag`` gives (a number, or the port of a host:port) in ``words`` (in
    place; a word may be a whole shell script); whether it was there."""
    inline = re.compile(rf"(?<![\w-]){re.escape(flag)}([ =])([^\s:'\"]*:)?(\d+)")
    for i, w in enumerate(words):
        m = _PORT_VALUE.match(words[i + 1]) if w == flag and i + 1 < len(words) else None
        if m:
            words[i + 1] = (m.group(1) or "") + str(int(m.group(2)) + offset)
            return True
        m = inline.search(w)
        if m:
            words[i] = w[: m.start(3)] + str(int(m.group(3)) + offset) + w[m.end(3) :]
            return True
    return False


def bump_launch_flag(container: dict, flag: str, offset: int) -> bool:
    """Move the port ``flag`` gives in ``container``'s command or args by ``offset`` (in place); whether the
    flag was there (intra-pod failover staggers the standby engine's rendezvous ports this way)."""
    command = [str(w) for w in container.get("command") or []]
    args = [str(w) for w in container.get("args") or []]
    words = command + args
    if not _bump_flag(words, flag, offset):
        return False
    if command:
        container["command"] = words[: len(command)]
    container["args"] = words[len(command) :]
    return True


def launch_mode(spec: dict, node_count: int, backend: str | None, annotations: dict) -> str | None:
    """How a multinode component launches across nodes (``VLLM_RAY``, ``VLLM_MP``, ``VLLM_DP``,
    ``VLLM_PER_NODE``, "sglang" or "mpi"); None when it cannot launch (``launch_problems`` says why)."""
    try:
        return _plan(spec, node_count, backend, annotations).mode
    except _Stop:
        return None


def add_launch_switch(spec: dict, container: dict, switch: str) -> tuple[list[str], list[str]]:
    """``container``'s (command, args) with ``switch`` (a flag without a value) added to its backend
    invocation; a launch without a command (the image's entrypoint runs the args) gets it in args."""
    command = [str(w) for w in container.get("command") or []]
    args = [str(w) for w in container.get("args") or []]
    try:
        launch = _read_launch(spec, container)
    except _Stop:
        return command, [*args, switch]
    return _append(launch, [(switch, None)])


def add_launch_flag(
    spec: dict, container: dict, flag: str, offset: int, default: int
) -> tuple[list[str], list[str]]:
    """``container``'s (command, args) with the numeric ``flag`` of its backend invocation moved by
    ``offset``, or set to ``default + offset`` when absent (intra-pod failover staggers vLLM's master port
    this way). A launch without a command (the image's entrypoint runs the args) gets the flag in args."""
    command = [str(w) for w in container.get("command") or []]
    args = [str(w) for w in container.get("args") or []]
    words = command + args
    if _bump_flag(words, flag, offset):
        return words[: len(command)], words[len(command) :]
    value = str(default + offset)
    try:
        launch = _read_launch(spec, container)
    except _Stop:
        return command, [*args, flag, value]
    return _append(launch, [(flag, value)])
