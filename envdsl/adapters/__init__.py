"""In-process contracts over the episode layer (envdsl.episode): Gymnasium (envdsl.adapters.gymnasium_env, also
`envdsl.gym`), TRL-style environment classes (envdsl.adapters.trl) and dataset records of tasks
(envdsl.adapters.dataset_records). Each is a small module over the runtime; none reaches into codegen.
"""
