"""A plain-PyTorch DDP training script tuned by convtune through ``convtune.execution.session``.

convtune runs it under torchrun with each trial's world size::

    # studies/external.yaml
    workload: {script: ../examples/external_train.py, args: ["--hidden", "64"]}
    target: "val_loss<=0.5"
    cost: samples
    world_size: 2

It also runs on its own with an exported recipe::

    CONVTUNE_RECIPE=best.yaml torchrun --nproc-per-node 2 examples/external_train.py

Everything convtune tunes comes from the recipe: optimizer (weight decay off for biases and
norms), LR schedule, micro-batch size, accumulation, clipping, precision.
"""

from __future__ import annotations

import argparse
import contextlib
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from convtune import session


def make_data(seed: int = 0, n: int = 2048) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed synthetic classification task: 16 features, 4 classes, a nonlinear rule."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=g)
    y = ((x[:, 0] * x[:, 1] > 0).long() * 2 + (x[:, 2] + x[:, 3] > 0).long()).clamp(max=3)
    return x, y


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--max-steps", type=int, default=100_000)
    parser.add_argument("--fail-at-step", type=int, default=0, help="raise at this step (tests)")
    args = parser.parse_args()

    distributed = "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank() if distributed else 0
    device = torch.device(
        f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu"
    )
    threads = session.config().get("threads")
    if threads and device.type == "cpu":
        torch.set_num_threads(int(threads))

    recipe = session.recipe()
    eval_every = session.config().get("eval_every", 512)  # samples between reports
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 4)).to(device)
    ddp = DDP(model) if distributed else model
    optimizer = recipe.optimizer(model)
    scheduler = recipe.scheduler(optimizer)
    scaler = recipe.grad_scaler(device.type)
    x, y = make_data()
    x_train, y_train, x_val, y_val = x[:1536], y[:1536], x[1536:].to(device), y[1536:].to(device)
    g = torch.Generator().manual_seed(1000 + rank)  # each rank its own seeded shard

    samples, next_report = 0, eval_every
    for step in range(1, args.max_steps + 1):
        if step == args.fail_at_step:
            raise RuntimeError(f"deliberate failure at step {step}")
        for micro in range(recipe.grad_accum_steps):
            index = torch.randint(0, len(x_train), (recipe.micro_batch_size,), generator=g)
            xb, yb = x_train[index].to(device), y_train[index].to(device)
            last = micro == recipe.grad_accum_steps - 1
            sync = contextlib.nullcontext() if last or not distributed else ddp.no_sync()
            with sync, recipe.autocast(device.type):
                loss = F.cross_entropy(ddp(xb).float(), yb) / recipe.grad_accum_steps
            scaler.scale(loss).backward()
        if recipe.clip_norm is not None:
            scaler.unscale_(optimizer)
            recipe.clip(model)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if step < recipe.total_steps:
            scheduler.step()
        samples += recipe.effective_batch_size  # counted over all ranks

        if samples >= next_report:
            next_report += eval_every
            with torch.no_grad():
                val_loss = F.cross_entropy(model(x_val).float(), y_val).item()
            # Every rank reports at the same steps; all get the same answer.
            if session.report(step=step, samples=samples, metrics={"val_loss": val_loss}):
                break

    # A clean teardown: drop the DDP module before the process group. DDP holds the group and
    # gloo's last all-reduce work; destroyed after the group, that work can abort the rank at
    # exit ("terminate called without an active exception").
    del ddp
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
