"""In-process contracts over envdsl.runtime.Environment: Gymnasium (envdsl.adapters.gym, also
`envdsl.gym`), TRL-style environment classes (envdsl.adapters.trl) and dataset records of tasks
(envdsl.adapters.records). Each is a small module over the runtime; none reaches into codegen."""
