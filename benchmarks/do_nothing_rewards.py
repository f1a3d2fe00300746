"""The reward a do-nothing run gets on every example task (issue 23, point 2).

Usage: python benchmarks/do_nothing_rewards.py [compiled-dir]
Prints one line per task whose do-nothing reward is above 0, then the totals. The reward read
is `evaluate()["reward"]` right after `reset(task=...)`: what every face reports.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from envdsl.generated.modules import environment_class


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "compiled")
    tasks = rewarded = refusals = 0
    for path in sorted(folder.glob("*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
        env_class = environment_class(module)
        for task in env_class.TASKS:
            env = env_class()
            env.reset(task=task)
            reward = float(env.evaluate()["reward"])
            if getattr(env_class.TASKS[task], "counterexamples", ()):
                refusals += 1  # doing nothing is its reference: 1.0 is right
                print(f"{path.stem}/{task}: {reward:.2f} (a refusal)")
                continue
            tasks += 1
            if reward > 0:
                rewarded += 1
                print(f"{path.stem}/{task}: {reward:.2f}")
    print(
        f"{rewarded} of {tasks} example tasks that expect a change give a do-nothing run a reward above 0"
    )
    if refusals:
        print(f"(and {refusals} refusal tasks, where doing nothing is the reference)")


if __name__ == "__main__":
    main()
