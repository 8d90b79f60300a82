"""One rank of :func:`mlcore.quant.run_tensor_parallel` or :func:`mlcore.quant.check_rewrite`,
started as ``python -m`` so that no caller's ``__main__`` is re-imported (a script or notebook
need no ``if __name__`` guard)."""

import os
import sys

import torch
import torch.distributed as dist

from mlcore._device import torch_generator
from mlcore.quant.collectives import CollectiveLog, allreduce_quantize, fused_allreduce_quantize
from mlcore.quant.sharded import tp_forward


def main(workdir: str, rank: int) -> None:
    """Run the forward passes described in ``workdir/job.pt`` as rank ``rank``."""
    torch.set_num_threads(1)
    job = torch.load(os.path.join(workdir, "job.pt"), weights_only=False)
    p = job["world_size"]
    dist.init_process_group(
        "gloo", init_method=f"file://{os.path.join(workdir, 'store')}", rank=rank, world_size=p
    )
    try:
        log = CollectiveLog(rank, p)
        if job["kind"] == "rewrite":
            _rewrite(job, rank, log, workdir)
            return
        with torch.no_grad():
            for step in range(job["repeats"]):
                log.step = step
                logits = tp_forward(
                    job["model"],
                    job["ids"],
                    bits=job["bits"],
                    group_size=job["group_size"],
                    activation_bits=job["activation_bits"],
                    log=log,
                )
        torch.save(
            {"log": log.records, "logits": logits if rank == 0 else None},
            os.path.join(workdir, f"rank{rank}.pt"),
        )
    finally:
        dist.destroy_process_group()


def _rewrite(job, rank, log, workdir):
    """Both paths on this rank's seeded partial sums."""
    gen = torch_generator(job["seed"] + rank)
    partial = torch.randn(job["shape"], generator=gen) * job["spread"]
    kwargs = {"group_size": job["group_size"], "log": log, "op": "rewrite"}
    fused = fused_allreduce_quantize(partial, job["bits"], **kwargs)
    kwargs["group_size"] = job["reference_group_size"]
    reference = allreduce_quantize(partial, job["bits"], **kwargs)
    torch.save(
        {"log": log.records, "fused": fused, "reference": reference},
        os.path.join(workdir, f"rank{rank}.pt"),
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
