"""How the workflow meets a cluster: between-workflow caching that is opt-in, and the number of
processes a multi-GPU job starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CACHE_ENVVAR = "SNAKEMAKE_OUTPUT_CACHE"


def usable_cache_rules(
    requested: Sequence[str] | None, environ: Mapping[str, str]
) -> tuple[list[str] | None, str | None]:
    """The cached rules to keep and a one-line notice, given the rules that ``--cache`` (or the
    profile's ``cache:`` list) asked for and the environment.

    Snakemake turns caching on for every named rule and then, without ``$SNAKEMAKE_OUTPUT_CACHE``,
    has no backend and stops at the first cached rule (``RuntimeError: Cache backend unavailable``).
    Caching is opt-in here: no location means no caching, said once; a location keeps the request.
    """
    if requested is None:
        return None, None
    if environ.get(CACHE_ENVVAR, "").strip():
        return list(requested), None
    notice = (
        f"medbias: output caching is off ({CACHE_ENVVAR} is not set); to restore "
        f"{', '.join(requested) or 'the cached rules'} by content hash, "
        f"export {CACHE_ENVVAR}=/a/folder/every/job/can/reach"
    )
    return None, notice


def processes_for_gpus(gpus: int, visible_gpus: int) -> int:
    """The processes a data-parallel job starts: one per GPU it reserved (at least one).

    A job that reserved more GPUs than it can see would train on fewer than it holds; that stops
    with one line instead."""
    if gpus > 1 and visible_gpus < gpus:
        raise RuntimeError(
            f"the job reserved {gpus} GPUs but sees {visible_gpus} (CUDA_VISIBLE_DEVICES); "
            "check the cluster's GPU binding"
        )
    return max(1, gpus)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _process_main(rank: int, function, args: tuple, world_size: int, port: int) -> None:
    import os

    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size)
    )
    function(*args)


def run_in_processes(function, args: tuple, processes: int) -> None:
    """Run ``function(*args)`` here (one process) or in ``processes`` processes on this node, one
    per GPU, each with the torch.distributed environment (RANK, LOCAL_RANK, WORLD_SIZE and a free
    local MASTER_PORT) that accelerate reads to form one data-parallel group (NCCL on GPUs, gloo on
    the CPU). ``function`` must be importable (a module-level function of the library). A process
    that fails fails the job."""
    if processes == 1:
        function(*args)
        return
    import torch.multiprocessing

    torch.multiprocessing.spawn(
        _process_main, args=(function, args, processes, _free_port()), nprocs=processes, join=True
    )
