"""Rollouts: an agent (any OpenAI-compatible server) over a spec's tasks, recorded for SFT and RL.

`envdsl rollout` plans one job per task and sample (plan), runs each job's agent loop
(episode) on a backend (envdsl.util.backends: threads and processes here, or Ray), appends one
record per job to a JSONL file (records; a rerun skips what is there), and summarizes the
file (metrics). `envdsl run --rollout FILE --index N` replays a record (replay).
"""
