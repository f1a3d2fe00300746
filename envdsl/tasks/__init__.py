"""Stage 7, on the module codegen produced: task verification (the solution, the negative
controls, the grader's weak spots), the coverage of a task set, task files, `init from` files,
the values shown for a false check, and parameter defaults computed once at check time."""
