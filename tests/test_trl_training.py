"""TRL itself trains on an envdsl environment (issue 25, point 5): GRPOTrainer with
`environment_factory` and `envdsl_reward`, on CPU, with a tiny Qwen3-shaped model and a
tokenizer this test builds (nothing is downloaded).  A model this small writes noise, so the
test also scripts what it would have written (tool calls, then an answer) through TRL's own
reward call, and checks that the reward is counted once."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

# the [trl] extra (part of .[dev]) installs TRL: a missing library must fail here, not skip
import trl  # noqa: F401

import envdsl
from envdsl.adapters.trl import envdsl_reward, environment_factory
from envdsl.runtime import Environment

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
SLEEP_TASKS = ROOT / "examples" / "sleep_tracking.tasks.env"
QUESTION = "nickname_and_tags_question"


@functools.cache
def sleep() -> type[Environment]:
    return envdsl.load(SLEEP, [SLEEP_TASKS])


def tiny_tokenizer() -> Any:
    """A byte-level BPE tokenizer with Qwen3's special tokens and chat template (TRL ships the
    template, and recognizes it to parse tool calls)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                "<tool_response>", "</tool_response>", "<think>", "</think>"]  # fmt: skip
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    corpus = [spec.instruction for spec in sleep().TASKS.values()]
    corpus += [json.dumps(s) for s in sleep()().tool_schemas()]
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    fast.chat_template = qwen3_chat_template
    return fast


def tiny_model(vocab_size: int) -> Any:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=vocab_size, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=512,
        tie_word_embeddings=True,
    )  # fmt: skip
    return Qwen3ForCausalLM(config)


def test_grpo_trains_with_the_environment_and_counts_the_reward_once(tmp_path: Path) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = tiny_tokenizer()
    model = tiny_model(len(tokenizer))
    # README "Plugging environments in" copies this block
    SleepEnv = environment_factory(SLEEP, [SLEEP_TASKS], tasks=[QUESTION])
    dataset = Dataset.from_list(
        [{"prompt": [{"role": "user", "content": ""}], "task": QUESTION}] * 2
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=envdsl_reward,
        environment_factory=SleepEnv,
        train_dataset=dataset,
        args=GRPOConfig(
            output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2,
            num_generations=2, max_completion_length=8, max_tool_calling_iterations=1,
            report_to=[], logging_steps=1, use_cpu=True, save_strategy="no",
        ),  # fmt: skip
    )
    trainer.train()
    logged = {k for entry in trainer.state.log_history for k in entry}
    rewards = sorted(k for k in logged if k.startswith("rewards/") and k.endswith("/mean"))
    # one reward source: envdsl's, not a second one from the environment class
    assert rewards == ["rewards/envdsl_reward/mean"], logged

    # what a model that can solve it would have written, scored by TRL's own reward call
    env = trainer._environment_pool[None][0]
    env.reset(task=QUESTION)
    env.get_user(user_id="U5")
    good = [{"role": "assistant", "content": "Owl, tagged insomnia and shift-work."}]
    [reward] = trainer.reward_funcs[0](
        prompts=[[]], completions=[good], completion_ids=[[]], environments=[env]
    )
    assert reward == env.env.evaluate(answer=good[0]["content"])["reward"] == 1.0
