"""A Hugging Face ``Trainer`` script, tuned by convtune with four changed lines (marked ``# convtune``).

A tiny GPT-2 built from its config learns a synthetic language (each token follows from the one
before it by a fixed rule, with some noise); nothing is downloaded. On its own it trains with the
arguments below::

    python examples/hf_trainer.py

Under convtune (``studies/hf_trainer.yaml``) every trial runs this script with its own recipe::

    convtune study create hf --config studies/hf_trainer.yaml
    convtune study run hf --n-trials 10

and the best recipe trains it again outside convtune, step for step::

    convtune study export hf -o best.yaml
    CONVTUNE_RECIPE=best.yaml python examples/hf_trainer.py
"""

from __future__ import annotations

import argparse
import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

from convtune.integrations import transformers as ct  # convtune

VOCAB, LENGTH = 32, 24


class RuleLanguage(torch.utils.data.Dataset):
    """Sequences where token t+1 = (3·token t + 1) mod VOCAB, with 10% random tokens."""

    def __init__(self, n: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        ids = torch.empty(n, LENGTH, dtype=torch.long)
        ids[:, 0] = torch.randint(0, VOCAB, (n,), generator=g)
        for t in range(1, LENGTH):
            ids[:, t] = (3 * ids[:, t - 1] + 1) % VOCAB
        noise = torch.rand(n, LENGTH, generator=g) < 0.1
        ids[noise] = torch.randint(0, VOCAB, (int(noise.sum()),), generator=g)
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--output-dir", default=os.environ.get("HF_OUTPUT_DIR", "hf_trainer_out"))
    parser.add_argument("--fail-at-step", type=int, default=0, help="raise at this step (tests)")
    options = parser.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    torch.manual_seed(0)

    config = GPT2Config(vocab_size=VOCAB, n_positions=LENGTH, n_embd=32, n_layer=1, n_head=2)
    model = GPT2LMHeadModel(config)
    args = TrainingArguments(
        output_dir=options.output_dir,
        per_device_train_batch_size=32,
        learning_rate=3e-3,
        max_steps=200,
        eval_strategy="steps",
        eval_steps=50,
        logging_steps=50,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    args = ct.training_arguments(args)  # convtune
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=RuleLanguage(4096, seed=1),
        eval_dataset=RuleLanguage(256, seed=2),
        **ct.trainer_kwargs(model),  # convtune
    )
    if options.fail_at_step:
        trainer.add_callback(FailAt(options.fail_at_step))
    trainer.train(**ct.train_kwargs())  # convtune
    print({"eval_loss": trainer.evaluate()["eval_loss"], "steps": trainer.state.global_step})


class FailAt(TrainerCallback):
    """Kills the process at one step, once (tests: a retried trial resumes from its checkpoint)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        marker = os.path.join(args.output_dir, "failed-once")
        if state.global_step == self.step and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(3)


if __name__ == "__main__":
    main()
