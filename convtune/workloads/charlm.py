"""A small causal transformer on bytes of the Python standard library's own source.

Every machine with Python has this data, so nothing is downloaded. Metric: ``val_loss`` in
nats per byte on a fixed held-out slice (a uniform guess scores ln 256 ≈ 5.55).
"""

from __future__ import annotations

import math
import sysconfig
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

# A fixed, ordered list of stdlib modules keeps the corpus identical across machines with the
# same Python minor version, and different versions differ only slightly.
_MODULES = (
    "argparse.py",
    "ast.py",
    "calendar.py",
    "collections/__init__.py",
    "configparser.py",
    "csv.py",
    "dataclasses.py",
    "datetime.py",
    "decimal.py",
    "difflib.py",
    "enum.py",
    "fractions.py",
    "functools.py",
    "heapq.py",
    "inspect.py",
    "ipaddress.py",
    "logging/__init__.py",
    "pathlib.py",
    "pickle.py",
    "pprint.py",
    "random.py",
    "shutil.py",
    "statistics.py",
    "string.py",
    "subprocess.py",
    "tarfile.py",
    "textwrap.py",
    "threading.py",
    "typing.py",
    "zipfile.py",
)


@lru_cache(maxsize=4)
def load_corpus(max_bytes: int) -> torch.Tensor:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    chunks = []
    for name in _MODULES:
        path = stdlib / name
        if not path.is_file():  # e.g. a package turned into a module in a newer Python
            path = stdlib / name.replace("/__init__.py", ".py")
        if path.is_file():
            chunks.append(path.read_bytes())
    data = b"\n".join(chunks)[:max_bytes]
    if len(data) < 100_000:
        raise RuntimeError(f"found only {len(data)} bytes of stdlib source under {stdlib}")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).long()


class TinyTransformer(nn.Module):
    """Pre-norm causal transformer built from torch's own encoder layers."""

    def __init__(self, context: int, width: int, depth: int, heads: int):
        super().__init__()
        self.token = nn.Embedding(256, width)
        self.position = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=4 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 256, bias=False)
        self.register_buffer(
            "mask", nn.Transformer.generate_square_subsequent_mask(context), persistent=False
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device)
        x = self.token(tokens) + self.position(positions)
        x = self.blocks(x, mask=self.mask[:length, :length], is_causal=True)
        return self.head(self.norm(x))


class CharLM:
    """Byte-level language model on stdlib source.

    Args:
        context: bytes per training sequence.
        width, depth, heads: transformer size (defaults: ~137k parameters).
        corpus_bytes: how much source to read; the last ``val_fraction`` is held out.
        eval_sequences: held-out sequences per evaluation (fixed, so evaluations are comparable).
    """

    metric = "val_loss"
    # What evaluate() returns and the range it lies in: a target outside it is refused at create.
    metrics = {"val_loss": (0.0, math.inf)}

    def __init__(
        self,
        context: int = 64,
        width: int = 64,
        depth: int = 2,
        heads: int = 4,
        corpus_bytes: int = 1_000_000,
        val_fraction: float = 0.1,
        eval_sequences: int = 128,
    ):
        self.context, self.width, self.depth, self.heads = context, width, depth, heads
        data = load_corpus(corpus_bytes)
        split = int(len(data) * (1 - val_fraction))
        self.train_data, self.val_data = data[:split], data[split:]
        count = min(eval_sequences, (len(self.val_data) - 1) // context)
        starts = torch.arange(count) * ((len(self.val_data) - context - 1) // max(1, count))
        self.val_batch = self._windows(self.val_data, starts)

    def _windows(self, data: torch.Tensor, starts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        index = starts[:, None] + torch.arange(self.context + 1)[None, :]
        window = data[index]
        return window[:, :-1], window[:, 1:]

    def build_model(self) -> nn.Module:
        return TinyTransformer(self.context, self.width, self.depth, self.heads)

    def train_batches(
        self, micro_batch_size: int, rank: int, world_size: int, seed: int
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        # One generator per rank, seeded apart: each rank draws its own shard of random windows.
        generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
        high = len(self.train_data) - self.context - 1
        while True:
            starts = torch.randint(0, high, (micro_batch_size,), generator=generator)
            yield self._windows(self.train_data, starts)

    def loss(self, model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        inputs, targets = batch
        device = next(model.parameters()).device
        logits = model(inputs.to(device, non_blocking=True))
        return F.cross_entropy(logits.reshape(-1, 256).float(), targets.to(device).reshape(-1))

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        loss = self.loss(model, self.val_batch).item()
        return {"val_loss": loss if math.isfinite(loss) else float("inf")}
