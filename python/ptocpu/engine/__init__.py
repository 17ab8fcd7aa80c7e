"""The runtime around the ops: the dispatch point and its handlers (record / replay of
pypto.function, tracing, golden checks, debug switches). Imports the core only."""
