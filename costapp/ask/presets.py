"""The open models the question form offers by name, with their sizes from their model cards, and
the patterns that find their hosted token prices in the catalog."""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelPreset:
    """A common open model: its size [billions of parameters] as its model card states it, and
    a pattern matching the catalog's token price rows that sell it (``model`` column)."""

    key: str
    label: str
    params_billion: float
    card: str
    token_pattern: str

    def sells(self, model: str) -> bool:
        """Whether a token price row's ``model`` is this model."""
        return re.search(self.token_pattern, model, re.IGNORECASE) is not None


MODEL_PRESETS: tuple[ModelPreset, ...] = (
    ModelPreset(
        "llama-3.1-8b", "Llama 3.1 8B", 8.03,
        "meta-llama/Llama-3.1-8B model card: 8.03B parameters",
        r"llama[-_ ]?v?3(p1|\.1|-1)[-_ ]?8b",
    ),
    ModelPreset(
        "llama-3.1-70b", "Llama 3.1 / 3.3 70B", 70.6,
        "meta-llama/Llama-3.1-70B model card: 70.6B parameters",
        r"llama[-_ ]?v?3(p1|p3|\.1|\.3|-1|-3)[-_ ]?70b",
    ),
    ModelPreset(
        "llama-3.1-405b", "Llama 3.1 405B", 405.0,
        "meta-llama/Llama-3.1-405B model card: 405B parameters",
        r"llama[-_ ]?v?3(p1|\.1|-1)[-_ ]?405b",
    ),
    ModelPreset(
        "mixtral-8x7b", "Mixtral 8x7B", 46.7,
        "mistralai/Mixtral-8x7B-v0.1 model card: 46.7B parameters (12.9B active)",
        r"mixtral[-_ ]?8x7b",
    ),
    ModelPreset(
        "qwen2-72b", "Qwen2 / Qwen2.5 72B", 72.7,
        "Qwen/Qwen2.5-72B model card: 72.7B parameters",
        r"qwen2(\.5)?[-_ ]?72b",
    ),
)  # fmt: skip


EXAMPLE_QUESTION: dict[str, object] = {
    "months": "39",
    "certainty": "medium",
    "sure": "average",
    "kinds": ["hyperscaler", "gpu-cloud", "marketplace"],
    "region": "any",
    "bridge": "on",
    "commitments": ["1", "3", "5"],
    "gpus": ["h100-sxm"],
    "serve": "on",
    "serve_model": "llama-3.1-70b",
    "tokens_per_day": "20000000",
    "prompt_tokens": "1",
    "peak_to_average": "2",
    "serve_start": "4",
    "train": "on",
    "train_model": "llama-3.1-70b",
    "train_method": "lora",
    "train_tokens_billion": "1",
    "runs_per_year": "12",
    "train_start": "1",
    "train_end": "3",
}
"""The question form's data for "fine-tune a 70B model for three months, then serve it at about
20 million tokens a day for three years" (1B tokens a fine-tuning run, one run a month): what
the benchmark and the tests ask."""


LEAD_QUESTIONS: dict[str, dict[str, object]] = {
    "Q1: fine-tune a 70B model, then serve it at 20 M tokens a day": EXAMPLE_QUESTION,
    "Q2: an 8B chat product at 2 B generated tokens a day, growing 50 % a year": {
        "months": "60",
        "growth_per_year": "50",
        "certainty": "medium",
        "sure": "average",
        "kinds": ["hyperscaler", "gpu-cloud", "marketplace"],
        "region": "any",
        "bridge": "on",
        "commitments": ["1", "3", "5"],
        "gpus": ["h100-sxm", "l40s"],
        "serve": "on",
        "serve_model": "llama-3.1-8b",
        "tokens_per_day": "2000000000",
        "prompt_tokens": "3",
        "peak_to_average": "2",
        "serve_start": "1",
    },
    "Q3: pre-train a 13B model on 2 T tokens twice a year on 512 H100s": {
        "months": "36",
        "certainty": "medium",
        "sure": "average",
        "kinds": ["hyperscaler", "gpu-cloud", "marketplace"],
        "region": "any",
        "bridge": "on",
        "commitments": ["1", "3", "5"],
        "gpus": ["h100-sxm"],
        "train": "on",
        "train_model": "custom",
        "train_params_billion": "13",
        "train_method": "full",
        "train_tokens_billion": "2000",
        "runs_per_year": "2",
        "train_start": "1",
        "train_cluster_gpus": "512",
        "failures": "on",
        "checkpoint_minutes": "5",
        "restart_minutes": "20",
    },
}
"""The three questions of a finance lead, as the form posts them: what ``bench/ask.py`` asks."""


def preset_get(key: str) -> ModelPreset | None:
    return next((preset for preset in MODEL_PRESETS if preset.key == key), None)
