"""Noise to pad the labelled corpus's texts with (tests/corpus/, read by corpus_scoring.py), for
the size tests and benchmarks/bench_match.py.

Noise is what surrounds a panic in a long paste: log lines (most of it), cargo's progress
lines, compiler warnings and a few sentences of prose. It goes before the text (after its
`Title:` line, which stays the title), so the panic comes after all of it.
"""

from __future__ import annotations

import random
from functools import lru_cache

_TARGETS = (
    "burn_train::learner::epoch",
    "burn_train::checkpoint",
    "wgpu_core::device::resource",
    "wgpu_hal::vulkan::instance",
    "cubecl_runtime::tune::tuner",
    "burn_fusion::stream::execution",
    "my_app::data::loader",
    "naga::back::spv::writer",
)
_LEVELS = ("INFO ", "DEBUG", "TRACE", "WARN ")
_CRATES = ("burn-core", "burn-tensor", "burn-autodiff", "cubecl-wgpu", "wgpu-core", "serde")
_PROSE = (
    "The model trains for a few epochs and the loss goes down as expected.",
    "I tried with a smaller batch size and with the default learning rate.",
    "Here is the full output of the training run, most of it is the logger.",
    "Inference on the same weights works on the CPU backend without problems.",
    "My dataset has about twelve thousand images resized to 224 by 224 pixels.",
    "Let me know if you need the model definition or the dataset loader code.",
)


def noise_line(rng: random.Random, number: int) -> str:
    kind = rng.random()
    if kind < 0.80:
        second = number % 60
        target = rng.choice(_TARGETS)
        return (
            f"[2025-06-14T09:{(number // 60) % 60:02d}:{second:02d}Z {rng.choice(_LEVELS)} "
            f"{target}] step {number} batch {rng.randint(0, 999)} loss {rng.random():.4f} "
            f"items {rng.randint(1, 64)}"
        )
    if kind < 0.88:
        crate = rng.choice(_CRATES)
        return f"   Compiling {crate} v0.{rng.randint(1, 20)}.{rng.randint(0, 9)}"
    if kind < 0.94:
        return f"warning: unused variable: `x{number}`"
    return rng.choice(_PROSE)


def noise(size: int, seed: int) -> str:
    """About `size` characters of noise lines, each ending with a newline."""
    block = _noise_block(seed)
    while len(block) < size:
        block = _noise_block(seed, 2 * len(block))
    end = block.find("\n", size)
    return block[: end + 1] if end >= 0 else block


@lru_cache(maxsize=16)
def _noise_block(seed: int, size: int = 1 << 16) -> str:
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    number = 0
    while total < size:
        line = noise_line(rng, number) + "\n"
        lines.append(line)
        total += len(line)
        number += 1
    return "".join(lines)


def pad(text: str, size: int, seed: int = 0) -> str:
    """`text` grown to at least `size` characters with noise before it (after its title)."""
    missing = size - len(text)
    if missing <= 0:
        return text
    filler = noise(missing, seed)
    if text.startswith("Title:"):
        first, _, rest = text.partition("\n")
        return f"{first}\n\n{filler}\n{rest}"
    return f"{filler}\n{text}"
