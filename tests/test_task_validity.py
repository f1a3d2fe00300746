"""One bad task does not block the others (issue 23, point 8): a task with errors of its own
(a type error in a check, a check its solution fails) is left out of the module and named;
every face that chooses a valid task grades it, and choosing the invalid one says why."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import envdsl
import envdsl.gym
from envdsl.adapters.trl import environment_factory
from envdsl.cli import main
from envdsl.generated.loader import CompileError
from envdsl.pipeline import compile_source
from envdsl.serve.sessions import Sessions
from envdsl.util.source import SourceFile

SPEC = '''env Counter {
  """A counter."""
  state {
    n: int = 0
  }
  action bump() -> int {
    """Add one."""
    n += 1
    return n
  }
  task good {
    """Bump the counter once."""
    init { n = 0 }
    solution { bump() }
    check "n is 1": n == 1
  }
  task typo {
    """Bump the counter twice."""
    init { n = 0 }
    solution { bump() }
    check "n is 2": m == 2
  }
  task short_solution {
    """Bump the counter twice."""
    init { n = 0 }
    solution { bump() }
    check "n is 2": n == 2
  }
}
'''
BUMP = '{"name": "bump", "arguments": {}}\n'


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "counter.env"
    path.write_text(SPEC, encoding="utf-8")
    (tmp_path / "bump.jsonl").write_text(BUMP, encoding="utf-8")
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_module_leaves_out_the_invalid_tasks_and_names_them() -> None:
    result = compile_source(SourceFile("counter.env", SPEC), formatted=False)
    assert not result.ok  # the errors stay errors
    assert "module" in result.artifacts
    assert list(result.invalid_tasks) == ["typo", "short_solution"]
    assert result.invalid_tasks["typo"] == "error[E1001]: unknown name 'm'"
    assert result.invalid_tasks["short_solution"].startswith("error[E4005]:")


def test_an_error_of_the_environment_still_gives_no_module() -> None:
    broken = SPEC.replace("n += 1", "n += true")
    result = compile_source(SourceFile("counter.env", broken), formatted=False)
    assert "module" not in result.artifacts and result.invalid_tasks == {}


def test_a_valid_spec_has_no_invalid_tasks() -> None:
    valid = SPEC.replace("m == 2", "n == 1").replace("n == 2", "n == 1")
    result = compile_source(SourceFile("counter.env", valid), formatted=False)
    assert result.ok and result.invalid_tasks == {}


def test_envdsl_load_warns_and_grades_the_valid_task(spec: Path) -> None:
    with pytest.warns(UserWarning, match="typo: error\\[E1001\\]"):
        env_class = envdsl.load(spec)
    assert list(env_class.TASKS) == ["good"]
    env = env_class()
    env.reset(task="good")
    assert env.evaluate()["reward"] == 0.0  # doing nothing
    env.call("bump", {})
    assert env.evaluate()["success"] is True
    with pytest.raises(KeyError, match="'typo' has errors and was left out.*E1001"):
        env.reset(task="typo")


def test_envdsl_load_of_a_broken_environment_still_raises(tmp_path: Path) -> None:
    path = tmp_path / "broken.env"
    path.write_text(SPEC.replace("n += 1", "n += true"), encoding="utf-8")
    with pytest.raises(CompileError):
        envdsl.load(path)


def test_run_grades_the_valid_task_and_reports_the_others(spec: Path) -> None:
    calls = str(spec.parent / "bump.jsonl")
    code, out, err = invoke("run", str(spec), "--task", "good", "--calls", calls)
    assert code == 0
    assert "reward: 1.000  success: true" in out
    assert "error[E1001]: unknown name 'm'" in err
    assert "task 'short_solution' left out for its errors: error[E4005]" in err
    code, out, err = invoke("run", str(spec), "--task", "good", "--calls", calls, "--strict")
    assert code == 1 and "success: true" in out


def test_run_of_the_invalid_task_says_why(spec: Path) -> None:
    calls = str(spec.parent / "bump.jsonl")
    code, out, err = invoke("run", str(spec), "--task", "typo", "--calls", calls)
    assert code == 1 and out == ""
    assert "task 'typo' has errors and was left out of the environment" in err
    code, _, err = invoke("run", str(spec), "--task", "nope", "--calls", calls)
    assert code == 2 and "unknown task 'nope'; tasks: good" in err


def test_state_and_serve_choose_tasks_the_same_way(spec: Path) -> None:
    code, out, _ = invoke("state", str(spec), "--task", "good")
    assert code == 0 and json.loads(out) == {"n": 0}
    code, _, err = invoke("serve", str(spec), "--task", "short_solution")
    assert code == 1 and "E4005" in err


def test_gymnasium_make_takes_the_valid_task(spec: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = envdsl.gym.make(spec, task="good")
        _, info = env.reset(seed=0)
        _, reward, terminated, _, info = env.step(BUMP)
        assert reward == 1.0 and terminated and info["evaluation"]["success"]
        with pytest.raises(ValueError, match="'typo' has errors"):
            envdsl.gym.make(spec, task="typo")


def test_trl_and_openenv_take_the_valid_task(spec: Path) -> None:
    # imported here, not when the module is collected: openenv-core loads gradio (4 s), which
    # every worker of the suite would pay
    from envdsl.serve.openenv import EnvdslOpenEnv, ToolCall

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env_class = envdsl.load(spec)
    trl_class = environment_factory(env_class, tasks=["good"])
    trl_env = trl_class()
    assert trl_env.reset(task="good") == "Bump the counter once."
    with pytest.raises(ValueError, match="'short_solution' has errors"):
        environment_factory(env_class, tasks=["short_solution"])
    openenv = EnvdslOpenEnv(Sessions(env_class))
    openenv.reset(task="good")
    observation = openenv.step(ToolCall(name="bump"))
    assert observation.reward == 1.0 and observation.done
    with pytest.raises(ValueError, match="'typo' has errors"):
        openenv.reset(task="typo")


def test_rollout_names_an_invalid_task_and_plans_only_valid_ones(
    spec: Path, tmp_path: Path
) -> None:
    from envdsl.cli.specs import env_source
    from envdsl.tasks.task_files import bundle_paths

    out = str(tmp_path / "traj.jsonl")
    code, _, err = invoke("rollout", str(spec), "--tasks", "typo", "--model", "m", "--out", out)
    assert code == 1 and "task 'typo' has errors" in err
    (bundle,) = bundle_paths([str(spec)])
    source = env_source(bundle)
    assert list(source.tasks) == ["good"]
    assert set(source.environment_class().INVALID_TASKS) == {"typo", "short_solution"}
