"""`envdsl.gym.make(spec, task=...)`: a gymnasium.Env (see envdsl.adapters.gymnasium_env)."""

from envdsl.adapters.gymnasium_env import ENV_ID, EnvdslEnv, JSONText, make

__all__ = ["ENV_ID", "EnvdslEnv", "JSONText", "make"]
