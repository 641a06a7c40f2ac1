"""How often a race gets a cause it does not have: replays whose outcomes follow nothing
(each fails at one rate, whatever its hash secret, seed, process or time), laid out as
`replay.plan_round` lays a review's rounds out, escalated as `evidence.escalation` says, and
probed in `replay.probe_passes`' passes, then read by `evidence.cause`. Anything but
`none_found` is a wrong cause, and `deterministic` also a wrong label (a race that fails
nearly always and failed every replay of two rounds: stated in docs/replay.md's Limits).

    python bench/false_causes.py --trials 1000 --seed 7

Pure: no process runs; the same seed prints the same figures. tests/reliability runs it at
CI scale.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runner"))

from witness_gate.evidence import Replay, cause, escalation  # noqa: E402
from witness_gate.lock import DEFAULT_REPLAY_CAP as CAP  # noqa: E402
from witness_gate.lock import DEFAULT_REPLAY_INTERPRETERS as INTERPRETERS  # noqa: E402
from witness_gate.lock import DEFAULT_REPLAYS as REPLAYS  # noqa: E402
from witness_gate.replay import PROBE_INTERPRETERS, plan_round, probe_passes  # noqa: E402

# A review under the defaults of `pin` (witness_gate.lock).
LOCK = {"seed_schedule": [12345], "replays": REPLAYS, "replay_interpreters": INTERPRETERS}
RATES = (0.02, 0.05, 0.1, 0.3, 0.7, 0.9, 0.93, 0.97)


def one_review(rate: float, draw: random.Random) -> str:
    """The cause one race failing at `rate` is given: its shrunk payload forked and called in
    one process in every slot of every round, then the probe."""
    by_variant: dict[str, list[Replay]] = {"shrunk": [], "in_process": []}
    per_round = REPLAYS * INTERPRETERS
    rounds = 0
    while True:
        for interpreter in plan_round(LOCK, rounds, search_secret=7, search_pid_offset=3):
            for slot, column in enumerate(interpreter.columns):
                for variant in by_variant:
                    by_variant[variant].append(
                        Replay(
                            interpreter.index,
                            interpreter.hash_secret,
                            interpreter.pid_offset,
                            column,
                            slot,
                            draw.random() < rate,
                        )
                    )
        rounds += 1
        more, _ = escalation(by_variant, False, rounds)
        if not more or per_round * (rounds + 1) > CAP:
            break
    probe_interpreter = rounds * INTERPRETERS
    for conditions in PROBE_INTERPRETERS:
        for (first, settings, passes, _), variant in zip(probe_passes(LOCK, conditions), conditions):
            by_variant[variant] = [
                Replay(probe_interpreter, 7, 3, 0, first + slot, draw.random() < rate, setting=slot % settings)
                for slot in range(settings * passes)
            ]
    return cause(by_variant, 0)[0]


def causes(rate: float, trials: int, seed: int) -> Counter[str]:
    draw = random.Random(f"{seed}/{rate}")
    return Counter(one_review(rate, draw) for _ in range(trials))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    arguments = parser.parse_args()
    print(f"seed: {arguments.seed}, {arguments.trials} races per failure rate")
    for rate in RATES:
        found = causes(rate, arguments.trials, arguments.seed)
        wrong = arguments.trials - found["none_found"]
        print(
            f"fails {rate:.0%} of replays: {wrong} of {arguments.trials} given a cause: {dict(sorted(found.items()))}"
        )


if __name__ == "__main__":
    main()
